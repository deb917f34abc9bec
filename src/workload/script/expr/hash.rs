//! pgbench's deterministic functions of integers: `hash_murmur2` (also `hash`),
//! `hash_fnv1a`, and `permute`, which must give pgbench's exact outputs for the same inputs
//! and seed. `permute` draws from PostgreSQL's own PRNG (`pg_prng`: xoroshiro128** seeded
//! through splitmix64), which is therefore reimplemented here, privately, bit for bit.

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
/// `MM2_MUL * 8` (the length of the hashed int64 in bytes), as pgbench precomputes it.
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// FNV-1a over the 8 bytes of `val`, least significant first, from a seeded offset basis.
pub(super) fn hash_fnv1a(val: i64, seed: i64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed as u64;
    let mut rest = val as u64;
    for _ in 0..8 {
        result ^= rest & 0xff;
        result = result.wrapping_mul(FNV_PRIME);
        rest >>= 8;
    }
    result as i64
}

/// MurmurHash64A of the int64 `val` (one 8-byte block), as pgbench computes it.
pub(super) fn hash_murmur2(val: i64, seed: i64) -> i64 {
    let mut result = seed as u64 ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// pgbench's `:default_seed` for `--random-seed=seed` and `-c clients`: its base random
/// sequence, seeded with `seed`, first gives each client's function seed, then this.
pub fn default_seed(seed: u64, clients: u32) -> i64 {
    let mut base = PgPrng::seeded(seed);
    for _ in 0..clients {
        base.next_u64();
    }
    base.next_u64() as i64
}

/// PostgreSQL's `pg_prng`: xoroshiro128** 1.0.
struct PgPrng {
    s0: u64,
    s1: u64,
}

impl PgPrng {
    /// `pg_prng_seed`: two splitmix64 outputs, and a fixed state should both be zero.
    fn seeded(seed: u64) -> Self {
        let mut sm = seed;
        let s0 = splitmix64(&mut sm);
        let s1 = splitmix64(&mut sm);
        if s0 == 0 && s1 == 0 {
            // Knuth's LCG constants, as pg_prng_seed_check puts them.
            PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            }
        } else {
            PgPrng { s0, s1 }
        }
    }

    fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// `pg_prng_uint64_range(state, 0, max)`: bitmask rejection, on the high bits.
    fn below_or_eq(&mut self, max: u64) -> u64 {
        super::random::bitmask_below_or_eq(max, || self.next_u64())
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

/// pgbench's `permute(i, size, seed)`: the position of `i mod size` in a pseudorandom
/// permutation of `[0, size)` chosen by `seed`. `size` must be positive (checked by the
/// caller); `i` is taken modulo `size` as an unsigned number, as pgbench does.
pub(super) fn permute(val: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut prng = PgPrng::seeded(seed as u64);
    let size = size as u64;
    let mut v = val as u64 % size;
    // Work modulo the largest power of two not above size, on overlapping lower and upper
    // halves of the range, then add a random offset modulo size: six rounds of this.
    let mask_len = 63 - size.leading_zeros();
    let mask = (1u64 << mask_len) - 1;
    for _ in 0..6 {
        let m = (prng.next_u64() & mask) | 1;
        let r = prng.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (mask_len - 1));
        }
        let m = (prng.next_u64() & mask) | 1;
        let r = prng.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (mask_len - 1));
            v = size - 1 - t;
        }
        let r = prng.below_or_eq(size - 1);
        // v and r are below size <= 2^63, so the sum cannot wrap.
        v = (v + r) % size;
    }
    v as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pg_prng_matches_xoroshiro128_starstar_seeded_by_splitmix64() {
        // splitmix64's published first output for seed 0, then the generator's first output
        // from that state, computed by hand from the algorithm's definition.
        let mut sm = 0u64;
        assert_eq!(splitmix64(&mut sm), 0xE220_A839_7B1D_CDAF);
        let mut p = PgPrng { s0: 1, s1: 0 };
        assert_eq!(p.next_u64(), 5760); // rotl(5, 7) * 9
        assert_eq!(p.below_or_eq(0), 0);
        let mut p = PgPrng::seeded(42);
        for _ in 0..1000 {
            assert!(p.below_or_eq(6) <= 6);
        }
    }

    #[test]
    fn default_seed_is_pgbench_s_draw_after_one_per_client() {
        // What pgbench 15 set :default_seed to with --random-seed=7 and one client.
        assert_eq!(default_seed(7, 1), -2_715_325_821_952_477_995);
        assert_eq!(default_seed(7, 0), 7_735_655_662_133_668_289);
    }

    #[test]
    fn permute_of_one_or_less_is_zero() {
        assert_eq!(permute(5, 1, 3), 0);
        assert_eq!(permute(i64::MIN, 1, 0), 0);
    }

    #[test]
    fn permute_is_a_permutation() {
        for (size, seed) in [
            (2, 0),
            (3, 1),
            (10, 5432),
            (17, -1),
            (64, 7),
            (100, 12345),
            (1000, i64::MIN),
        ] {
            let mut seen = vec![false; size as usize];
            for i in 0..size {
                let p = permute(i, size, seed);
                assert!((0..size).contains(&p), "permute({i}, {size}, {seed}) = {p}");
                assert!(!seen[p as usize], "permute(_, {size}, {seed}) repeats {p}");
                seen[p as usize] = true;
            }
        }
    }

    #[test]
    fn permute_takes_the_value_modulo_size_unsigned() {
        // -1 as u64 is 2^64 - 1; modulo 100 that is 15.
        assert_eq!(permute(-1, 100, 12345), permute(15, 100, 12345));
        assert_eq!(permute(150, 100, 12345), permute(50, 100, 12345));
    }
}
