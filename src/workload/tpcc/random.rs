//! TPC-C's random functions (clause 2.1.6 NURand, 4.3.2.2 random strings, 4.3.2.3 C_LAST,
//! 4.3.2.7 zip codes) and the NURand constants C with the load/run delta rule (2.1.6.1).

use std::fmt::Write as _;

use rand::Rng as _;

use crate::workload::Rng;

/// The syllables of clause 4.3.2.3; C_LAST is three of them picked by the digits of a number.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The run-time C of each NURand field. Fixed, so every client (and every run) uses the same
/// values as clause 2.1.6 requires; the loader picks C_LAST's load value against
/// [`C_LAST_RUN`] so that the delta rule holds (see [`c_last_load`]).
pub const C_LAST_RUN: i64 = 223;
pub const C_ID_RUN: i64 = 259;
pub const OL_I_ID_RUN: i64 = 7911;

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x (clause 2.1.6).
pub fn nurand(rng: &mut Rng, a: i64, x: i64, y: i64, c: i64) -> i64 {
    (((rng.gen_range(0..=a) | rng.gen_range(x..=y)) + c) % (y - x + 1)) + x
}

/// Clause 2.1.6.1: |C_run − C_load| for C_LAST must lie in [65, 119] and be neither 96 nor 112.
pub fn c_last_delta_ok(load: i64, run: i64) -> bool {
    let delta = (run - load).abs();
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// A load-time C for C_LAST, random among the values the delta rule allows with
/// [`C_LAST_RUN`].
pub fn c_last_load(rng: &mut Rng) -> i64 {
    loop {
        let c = rng.gen_range(0..=255);
        if c_last_delta_ok(c, C_LAST_RUN) {
            return c;
        }
    }
}

/// Appends the customer last name of `num` (0..=999) to `out`.
pub fn push_last_name(out: &mut String, num: i64) {
    let n = num.clamp(0, 999) as usize;
    out.push_str(SYLLABLES[n / 100]);
    out.push_str(SYLLABLES[n / 10 % 10]);
    out.push_str(SYLLABLES[n % 10]);
}

pub fn last_name(num: i64) -> String {
    let mut s = String::with_capacity(15);
    push_last_name(&mut s, num);
    s
}

/// Letters and digits only: no character needs escaping in COPY text format or in an array
/// literal.
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Appends an a-string of random length in `min..=max` (clause 4.3.2.2).
pub fn push_astring(out: &mut String, rng: &mut Rng, min: usize, max: usize) {
    let len = rng.gen_range(min..=max);
    for _ in 0..len {
        out.push(ALNUM[rng.gen_range(0..ALNUM.len())] as char);
    }
}

/// Appends an n-string (digits) of random length in `min..=max`.
pub fn push_nstring(out: &mut String, rng: &mut Rng, min: usize, max: usize) {
    let len = rng.gen_range(min..=max);
    for _ in 0..len {
        out.push(char::from(b'0' + rng.gen_range(0..10u8)));
    }
}

/// Appends I_DATA / S_DATA: an a-string of 26..50 characters, 10% of them holding "ORIGINAL"
/// at a random position (clause 4.3.3.1).
pub fn push_data(out: &mut String, rng: &mut Rng) {
    let len = rng.gen_range(26..=50usize);
    if rng.gen_range(0..10) == 0 {
        let at = rng.gen_range(0..=len - 8);
        push_astring(out, rng, at, at);
        out.push_str("ORIGINAL");
        push_astring(out, rng, len - 8 - at, len - 8 - at);
    } else {
        push_astring(out, rng, len, len);
    }
}

/// Appends a zip code: 4 random digits then "11111" (clause 4.3.2.7).
pub fn push_zip(out: &mut String, rng: &mut Rng) {
    push_nstring(out, rng, 4, 4);
    out.push_str("11111");
}

/// Appends a random decimal in `[lo, hi]` (hundredths or ten-thousandths given by `scale`).
pub fn push_decimal(out: &mut String, rng: &mut Rng, lo: i64, hi: i64, scale: u32) {
    let v = rng.gen_range(lo..=hi);
    let unit = 10i64.pow(scale);
    let _ = write!(
        out,
        "{}.{:0width$}",
        v / unit,
        v % unit,
        width = scale as usize
    );
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn nurand_stays_in_range() {
        let mut rng = Rng::seed_from_u64(7);
        for _ in 0..10_000 {
            assert!((1..=3000).contains(&nurand(&mut rng, 1023, 1, 3000, C_ID_RUN)));
            assert!((0..=999).contains(&nurand(&mut rng, 255, 0, 999, C_LAST_RUN)));
        }
    }

    #[test]
    fn last_names_follow_the_syllable_table() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn load_c_obeys_the_delta_rule() {
        let mut rng = Rng::seed_from_u64(3);
        for _ in 0..1000 {
            let c = c_last_load(&mut rng);
            assert!((0..=255).contains(&c) && c_last_delta_ok(c, C_LAST_RUN));
        }
        assert!(!c_last_delta_ok(C_LAST_RUN - 96, C_LAST_RUN));
    }

    #[test]
    fn data_has_original_about_one_time_in_ten() {
        let mut rng = Rng::seed_from_u64(9);
        let mut hits = 0;
        for _ in 0..10_000 {
            let mut s = String::new();
            push_data(&mut s, &mut rng);
            assert!((26..=50).contains(&s.len()));
            hits += usize::from(s.contains("ORIGINAL"));
        }
        assert!((850..=1150).contains(&hits), "{hits}");
    }

    #[test]
    fn decimals_are_formatted_with_fixed_places() {
        let mut rng = Rng::seed_from_u64(1);
        let mut s = String::new();
        push_decimal(&mut s, &mut rng, 5, 5, 4);
        assert_eq!(s, "0.0005");
    }
}
