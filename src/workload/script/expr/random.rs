//! pgbench's random distributions (`getrand`, `getExponentialRand`, `getGaussianRand`,
//! `getZipfianRand`), with its formulas on the client's own pg_prng state, so the same seed
//! gives pgbench's very values (the caller seeds and saves the state as pgbench does). The
//! caller has checked the range (`max - min + 1` fits an int64) and the parameter.

use crate::workload::pg_prng::PgPrng;

/// C's conversion of a double to int64 as x86-64 does it: truncation, and the "integer
/// indefinite" value `i64::MIN` for NaN or out of range (where `as` would saturate).
fn c_trunc(x: f64) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// `random(min, max)`: uniform over `[min, max]`.
pub(super) fn uniform(rng: &mut PgPrng, min: i64, max: i64) -> i64 {
    rng.getrand(min, max)
}

/// Scales `r` in `[0, 1)` onto `[min, max]` as pgbench does: `min + (int64) ((max - min + 1)
/// * r)`, where a NaN `r` (from a NaN parameter) gives C's indefinite value.
fn scale(min: i64, max: i64, r: f64) -> i64 {
    min.wrapping_add(c_trunc((max - min + 1) as f64 * r))
}

/// `random_exponential(min, max, param)`, `param > 0`: the density at `max` is
/// `exp(-param)` times that at `min`.
pub(super) fn exponential(rng: &mut PgPrng, min: i64, max: i64, param: f64) -> i64 {
    let cut = (-param).exp();
    let uniform = 1.0 - rng.double(); // (0, 1]
    let r = -(cut + (1.0 - cut) * uniform).ln() / param;
    scale(min, max, r)
}

/// `random_gaussian(min, max, param)`, `param >= 2`: a normal variate cut to
/// `[-param, param)`, mapped onto the range.
pub(super) fn gaussian(rng: &mut PgPrng, min: i64, max: i64, param: f64) -> i64 {
    let mut stdev;
    loop {
        stdev = rng.double_normal();
        // Written as pgbench's loop condition, so that a NaN parameter ends it as there.
        if !(stdev < -param || stdev >= param) {
            break;
        }
    }
    scale(min, max, (stdev + param) / (param * 2.0))
}

/// `random_zipfian(min, max, s)`, `s` in `[1.001, 1000]`: Devroye's rejection method
/// ("Non-Uniform Random Variate Generation", p. 550), as pgbench's
/// `computeIterativeZipfian`.
pub(super) fn zipfian(rng: &mut PgPrng, min: i64, max: i64, s: f64) -> i64 {
    let n = max - min + 1;
    let x = if n <= 1 {
        1
    } else {
        let b = 2f64.powf(s - 1.0);
        loop {
            let u = rng.double();
            let v = rng.double();
            let x = u.powf(-1.0 / (s - 1.0)).floor();
            let t = (1.0 + 1.0 / x).powf(s - 1.0);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
                break x as i64;
            }
        }
    };
    (min - 1).wrapping_add(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_range_and_cover_it() {
        let mut rng = PgPrng::seeded(7);
        let mut seen = [false; 6];
        for _ in 0..2000 {
            let u = uniform(&mut rng, 5, 10);
            assert!((5..=10).contains(&u));
            seen[(u - 5) as usize] = true;
            assert!((1..=10).contains(&exponential(&mut rng, 1, 10, 2.5)));
            assert!((1..=10).contains(&gaussian(&mut rng, 1, 10, 2.0)));
            assert!((1..=10).contains(&zipfian(&mut rng, 1, 10, 1.5)));
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(uniform(&mut rng, i64::MIN + 1, i64::MIN + 1), i64::MIN + 1);
        assert!(uniform(&mut rng, -9_223_372_036_854_775_807, -1) < 0);
        assert_eq!(zipfian(&mut rng, 3, 3, 2.0), 3);
    }

    #[test]
    fn distributions_lean_the_way_pgbench_describes() {
        let mut rng = PgPrng::seeded(11);
        let (mut low_exp, mut mid_gauss, mut one_zipf) = (0, 0, 0);
        for _ in 0..10_000 {
            low_exp += (exponential(&mut rng, 1, 100, 5.0) <= 50) as u32;
            mid_gauss += (26..=75).contains(&gaussian(&mut rng, 1, 100, 2.0)) as u32;
            one_zipf += (zipfian(&mut rng, 1, 100, 2.0) == 1) as u32;
        }
        // exponential: P(first half) = (1 - e^-2.5) / (1 - e^-5) ~ 0.92.
        assert!((8900..9500).contains(&low_exp), "{low_exp}");
        // gaussian cut at 2 sigma: P(|z| < 1) / P(|z| < 2) ~ 0.716.
        assert!((6900..7400).contains(&mid_gauss), "{mid_gauss}");
        // zipfian s = 2 on 100 values: 1 / H(100, 2) ~ 0.61.
        assert!((5800..6400).contains(&one_zipf), "{one_zipf}");
    }

    #[test]
    fn nan_scaling_gives_c_indefinite_value() {
        // pgbench 15: random_gaussian(1, 10, 0.0/0) = -9223372036854775807 (1 + INT64_MIN).
        let mut rng = PgPrng::seeded(1);
        assert_eq!(
            gaussian(&mut rng, 1, 10, f64::NAN),
            -9_223_372_036_854_775_807
        );
        assert_eq!(c_trunc(1e19), i64::MIN);
        assert_eq!(c_trunc(-2.9), -2);
    }
}
