//! pgbench's deterministic functions of integers: `hash_murmur2` (also `hash`),
//! `hash_fnv1a`, and `permute`, which must give pgbench's exact outputs for the same inputs
//! and seed. `permute` draws from PostgreSQL's own PRNG ([`PgPrng`]).

use crate::workload::pg_prng::PgPrng;

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
