//! The generator's counter-based random source: every value is a pure function of
//! (seed, stream tag, entity id, field index), so a loader chunk, another loader session and the
//! driver all compute the same attribute of the same entity without sharing state or reading
//! the database (tpce.md §6, "every per-customer attribute … comes from an RNG jumped to a seed
//! derived from the entity id"; §9 "counter-based RNG per entity").
//!
//! The mixer is SplitMix64's finalizer applied once per input word; it is not EGen's generator
//! (tpce.md §6, License: EGen's code may not be reused), and it is not cryptographic, only
//! well spread. Also here: a keyed permutation of `0..n` ([`permute`]), which gives exact
//! shares (tiers 20/60/20 % per load unit) and unique codes (symbols, tax ids) without lists.

/// The stream of an attribute family. Distinct tags keep, say, a customer's tier and the same
/// customer's name independent even though both are keyed by C_ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Tag {
    Customer = 1,
    Tier = 2,
    Account = 3,
    Permission = 4,
    WatchList = 5,
    Company = 6,
    Security = 7,
    Price = 8,
    Broker = 9,
    Address = 10,
    TaxId = 11,
    CompanyName = 12,
    Symbol = 13,
    BrokerName = 14,
    /// Which securities an account trades.
    Holding = 15,
    /// The simulated initial trades.
    Trade = 16,
    /// DAILY_MARKET, FINANCIAL and other market rows.
    Market = 17,
    News = 18,
    /// Account attributes other than the broker (tax status, balance, name).
    AccountInfo = 19,
    /// Customer attributes other than names (birth date, phones, tax rates, address).
    CustomerInfo = 20,
}

/// SplitMix64's output function (Steele, Lea, Flood 2014): a bijection on u64 whose output
/// bits each depend on every input bit.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The raw 64-bit value of field `field` of entity `id` in stream `tag`. Each word is mixed in
/// turn (not XORed together first), so (id 1, field 2) and (id 2, field 1) differ.
pub fn value(seed: u64, tag: Tag, id: u64, field: u32) -> u64 {
    let h = mix(seed);
    let h = mix(h ^ tag as u64);
    let h = mix(h ^ id);
    mix(h ^ u64::from(field))
}

/// The draws of one entity: a cheap handle so call sites read `e.range(FIELD, 1, 4)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entity {
    seed: u64,
    tag: Tag,
    id: u64,
}

impl Entity {
    pub fn new(seed: u64, tag: Tag, id: u64) -> Entity {
        Entity { seed, tag, id }
    }

    pub fn raw(&self, field: u32) -> u64 {
        value(self.seed, self.tag, self.id, field)
    }

    /// A uniform value in `lo..=hi`; `lo` when the range is empty. Lemire's multiply-shift:
    /// the bias is at most span / 2^64, far below anything a benchmark can see.
    pub fn range(&self, field: u32, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi as i128 - lo as i128 + 1) as u128;
        let offset = (u128::from(self.raw(field)) * span) >> 64;
        (lo as i128 + offset as i128) as i64
    }

    /// A percent draw in `1..=100`: `e.percent(f) <= 20` holds 20 % of the time.
    pub fn percent(&self, field: u32) -> u32 {
        self.range(field, 1, 100) as u32
    }

    /// True with probability `pct` %.
    pub fn chance(&self, field: u32, pct: u32) -> bool {
        self.percent(field) <= pct
    }

    /// One element of `items`, uniformly; `None` only for an empty slice.
    pub fn pick<'a, T>(&self, field: u32, items: &'a [T]) -> Option<&'a T> {
        let last = items.len().checked_sub(1)?;
        items.get(self.range(field, 0, last as i64) as usize)
    }

    /// A uniform value in `[0, 1)` with 53 random bits.
    pub fn unit(&self, field: u32) -> f64 {
        (self.raw(field) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// TPC-C-style NURand(A, x, y) with constant `c` (the non-uniform choice TPC-E's driver
    /// also uses for customers); it takes fields `field` and `field + 1`.
    pub fn nurand(&self, field: u32, a: i64, x: i64, y: i64, c: i64) -> i64 {
        if y <= x {
            return x;
        }
        let r = self.range(field, 0, a) | self.range(field.wrapping_add(1), x, y);
        (r + c).rem_euclid(y - x + 1) + x
    }
}

/// The image of `index` under a keyed permutation of `0..n` (a 4-round Feistel network on the
/// smallest even number of bits covering `n`, cycle-walked back into range). `index` itself
/// when `index >= n`. Used where shares must be exact or codes unique, not merely likely.
pub fn permute(seed: u64, tag: Tag, key: u64, n: u64, index: u64) -> u64 {
    if index >= n || n < 2 {
        return index;
    }
    let bits = (64 - (n - 1).leading_zeros()).max(2);
    let half = bits.div_ceil(2);
    let mask = (1u64 << half) - 1;
    let keys = [0u32, 1, 2, 3].map(|round| value(seed, tag, key, round));
    let mut x = index;
    // A permutation of 0..2^(2·half) maps each point of 0..n back into 0..n after at most a
    // few steps on average (n ≥ a quarter of the domain), and always terminates because every
    // cycle through `index` returns to it.
    loop {
        let (mut l, mut r) = (x >> half, x & mask);
        for k in keys {
            (l, r) = (r, l ^ (mix(k ^ r) & mask));
        }
        x = (l << half) | r;
        if x < n {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ (observed − expected)² / expected over equal-probability buckets.
    fn chi_square(counts: &[u64]) -> f64 {
        let total: u64 = counts.iter().sum();
        let expected = total as f64 / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    #[test]
    fn same_inputs_give_same_values() {
        let a = Entity::new(42, Tag::Customer, 7);
        let b = Entity::new(42, Tag::Customer, 7);
        for f in 0..100 {
            assert_eq!(a.raw(f), b.raw(f));
            assert_eq!(a.range(f, 1, 4), b.range(f, 1, 4));
        }
        assert_ne!(a.raw(0), Entity::new(43, Tag::Customer, 7).raw(0));
        assert_ne!(a.raw(0), Entity::new(42, Tag::Account, 7).raw(0));
        assert_ne!(value(1, Tag::Customer, 1, 2), value(1, Tag::Customer, 2, 1));
    }

    #[test]
    fn consecutive_ids_look_independent() {
        // 10 buckets, 9 degrees of freedom: 30 is beyond the 0.9995 quantile (27.9).
        let mut single = [0u64; 10];
        // Pairs of neighbours: 100 buckets, 99 degrees of freedom, 0.9995 quantile ≈ 150.
        let mut pairs = [0u64; 100];
        let mut prev = 0;
        for id in 0..100_000u64 {
            let v = Entity::new(5, Tag::Tier, id).range(0, 0, 9) as usize;
            single[v] += 1;
            if id > 0 {
                pairs[prev * 10 + v] += 1;
            }
            prev = v;
        }
        assert!(chi_square(&single) < 30.0, "{single:?}");
        assert!(chi_square(&pairs) < 160.0, "{}", chi_square(&pairs));
    }

    #[test]
    fn fields_of_one_entity_look_independent() {
        let mut pairs = [0u64; 100];
        for id in 0..50_000u64 {
            let e = Entity::new(9, Tag::Account, id);
            pairs[(e.range(0, 0, 9) * 10 + e.range(1, 0, 9)) as usize] += 1;
        }
        assert!(chi_square(&pairs) < 160.0, "{}", chi_square(&pairs));
    }

    #[test]
    fn chunked_loaders_get_the_values_of_one_pass() {
        let draw = |id: u64| Entity::new(11, Tag::Customer, id).range(3, 1, 1_000_000);
        let one_pass: Vec<i64> = (1..=3000).map(draw).collect();
        // Three chunks of one load unit each, computed last chunk first.
        let mut chunked = vec![0; 3000];
        for chunk in (0..3u64).rev() {
            for id in chunk * 1000 + 1..=(chunk + 1) * 1000 {
                chunked[(id - 1) as usize] = draw(id);
            }
        }
        assert_eq!(one_pass, chunked);
    }

    #[test]
    fn helpers_stay_in_their_ranges() {
        let items = ["a", "b", "c"];
        let mut seen = [false; 3];
        let mut hits = 0;
        for id in 0..10_000 {
            let e = Entity::new(1, Tag::Company, id);
            assert!((-3..=3).contains(&e.range(0, -3, 3)));
            assert!((1..=100).contains(&e.percent(1)));
            let u = e.unit(2);
            assert!((0.0..1.0).contains(&u));
            let picked = e.pick(3, &items).map(|s| s.as_bytes()[0] - b'a');
            seen[usize::from(picked.unwrap_or(0))] = true;
            hits += u32::from(e.chance(4, 20));
            assert!((1..=3000).contains(&e.nurand(5, 1023, 1, 3000, 259)));
        }
        assert!(seen.iter().all(|&s| s));
        assert!((1800..=2200).contains(&hits), "{hits}");
        assert_eq!(Entity::new(1, Tag::Company, 1).pick::<u8>(0, &[]), None);
        assert_eq!(Entity::new(1, Tag::Company, 1).range(0, 5, 5), 5);
    }

    #[test]
    fn permute_is_a_bijection() {
        for n in [2u64, 3, 1000, 1024, 1025, 4099] {
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let p = permute(7, Tag::Tier, 3, n, i);
                assert!(p < n);
                assert!(!seen[p as usize], "n {n}: {p} twice");
                seen[p as usize] = true;
            }
        }
        assert_ne!(
            (0..1000)
                .map(|i| permute(7, Tag::Tier, 1, 1000, i))
                .collect::<Vec<_>>(),
            (0..1000)
                .map(|i| permute(7, Tag::Tier, 2, 1000, i))
                .collect::<Vec<_>>()
        );
    }
}
