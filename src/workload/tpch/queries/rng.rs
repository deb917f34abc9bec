//! The small deterministic random source behind TPC-H's substitution parameters (each query's
//! clause 2.4.x.3 gives them as values "randomly selected" within a range or list). QGEN draws
//! them with DBGEN's generator; tidebench draws them from the run's seed with this one, so the
//! values follow qgen's rules but not its exact sequence. Each (seed, stream, query) has its
//! own sequence, so a query's parameters do not depend on which queries its stream ran before
//! it, and a rerun with the same seed repeats them.
//!
//! The generator is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014): 64 bits of state, statistically fine for picking parameters.

/// A SplitMix64 sequence for one query of one stream.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The sequence for query `query` of stream `stream` under the run's `seed`.
    pub fn new(seed: u64, stream: u32, query: u8) -> Self {
        // Mixing each part through the generator's own step keeps nearby inputs (stream 1 vs
        // 2) from giving nearby starting states.
        let mut r = Rng(seed);
        let a = r.next_u64();
        let mut r = Rng(a ^ u64::from(stream).wrapping_mul(0xA24B_AED4_963E_E407));
        let b = r.next_u64();
        Rng(b ^ u64::from(query).wrapping_mul(0x9FB2_1C65_1E98_DF25))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `lo..=hi` (`lo` when the range is empty). The multiply-shift
    /// reduction's bias is below 2^-50 for these ranges, far under anything a run could see.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u128 + 1;
        lo + ((u128::from(self.next_u64()) * span) >> 64) as i64
    }

    /// A uniform index into a slice of `len` items (`len` > 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.int(0, len.saturating_sub(1) as i64) as usize
    }

    /// One item of `items`, uniformly (`items` must not be empty).
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.index(items.len())]
    }

    /// `n` distinct integers of `lo..=hi` in random order (a partial Fisher-Yates shuffle),
    /// as qgen's `permute` draws Q16's sizes and Q22's country codes.
    pub fn distinct(&mut self, lo: i64, hi: i64, n: usize) -> Vec<i64> {
        let mut pool: Vec<i64> = (lo..=hi).collect();
        let n = n.min(pool.len());
        for i in 0..n {
            let j = self.int(i as i64, pool.len() as i64 - 1) as usize;
            pool.swap(i, j);
        }
        pool.truncate(n);
        pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_inputs_same_sequence_and_neighbours_differ() {
        let draw = |seed, stream, q| {
            let mut r = Rng::new(seed, stream, q);
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 1, 3), draw(7, 1, 3));
        assert_ne!(draw(7, 1, 3), draw(7, 2, 3));
        assert_ne!(draw(7, 1, 3), draw(7, 1, 4));
        assert_ne!(draw(7, 1, 3), draw(8, 1, 3));
    }

    #[test]
    fn ints_stay_in_range_and_reach_both_ends() {
        let mut r = Rng::new(1, 0, 1);
        let draws: Vec<i64> = (0..2000).map(|_| r.int(60, 120)).collect();
        assert!(draws.iter().all(|v| (60..=120).contains(v)));
        assert!(draws.contains(&60) && draws.contains(&120));
    }

    #[test]
    fn distinct_values_are_distinct() {
        let mut r = Rng::new(3, 4, 16);
        let mut v = r.distinct(1, 50, 8);
        assert_eq!(v.len(), 8);
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 8);
        assert!(v.iter().all(|x| (1..=50).contains(x)));
    }
}
