//! Rate limiting as pgbench's `--rate` does it: each client schedules its transactions as a
//! Poisson process (exponential gaps) of rate/clients, independent of how long they take, so
//! latency measured from the scheduled time includes any waiting (no coordinated omission).

use std::time::{Duration, Instant};

use rand::Rng as _;

use crate::workload::Rng;

pub struct Schedule {
    next: Instant,
    mean_gap_us: f64,
}

impl Schedule {
    /// `rate` is this client's share of the total rate, in transactions per second.
    pub fn new(start: Instant, rate: f64) -> Schedule {
        Schedule {
            next: start,
            mean_gap_us: 1_000_000.0 / rate,
        }
    }

    /// The scheduled start of the next transaction.
    pub fn next(&mut self, rng: &mut Rng) -> Instant {
        // Inverse transform of U(0,1]; capped like pgbench so one draw cannot stall a client.
        let u: f64 = 1.0 - rng.gen::<f64>();
        // A tiny rate (1e-30 tps) must not push the clock past what `Instant` can hold: no gap
        // is longer than the longest run.
        let longest = crate::config::duration::MAX_DURATION.as_micros() as f64;
        let gap = ((-u.ln()).min(20.0) * self.mean_gap_us).min(longest);
        self.next += Duration::from_micros(gap as u64);
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_tiny_rate_schedules_far_away_without_overflow() {
        let mut rng = Rng::seed_from_u64(1);
        let start = Instant::now();
        let mut s = Schedule::new(start, 1e-30);
        for _ in 0..3 {
            assert!(s.next(&mut rng) > start);
        }
    }

    #[test]
    fn mean_gap_matches_the_rate() {
        let start = Instant::now();
        let mut s = Schedule::new(start, 1000.0);
        let mut rng = Rng::seed_from_u64(1);
        let mut last = start;
        for _ in 0..100_000 {
            last = s.next(&mut rng);
        }
        let mean_us = (last - start).as_micros() as f64 / 100_000.0;
        assert!((mean_us - 1000.0).abs() < 20.0, "mean gap {mean_us} µs");
    }
}
