//! The price curve every security follows, in the loader's simulated market and in the run's
//! market emulator alike: a triangle wave between $20.00 and $30.00 with a 900 s period
//! (tpce.md §5, "Price curve"; §6 "Initial trades … using the same price curve as the MEE").
//! Each security's phase is a draw of its own (EGen derives it from the security index,
//! tpce.md §5; ours comes from [`super::rng`]).
//!
//! Time is integer milliseconds of market time and prices are integer cents, so the loader
//! and the driver agree to the cent and the crossing times are exact: the price moves one cent
//! every 450 ms, up for 450 s, then down for 450 s.
//!
//! Triggers (tpce.md §5, "Limit / stop order"): a limit buy or a stop-loss fires when the
//! price is at or below its limit, a limit sell when it is at or above; an order not yet in
//! the money fires when the curve next reaches the limit.

use super::rng::{Entity, Tag};

pub const LOW_CENTS: i64 = 2_000;
pub const HIGH_CENTS: i64 = 3_000;
pub const PERIOD_MS: i64 = 900_000;
const HALF_MS: i64 = PERIOD_MS / 2;
/// Market time per cent of price movement: half a period over the $10 range.
const MS_PER_CENT: i64 = HALF_MS / (HIGH_CENTS - LOW_CENTS);

/// The order types whose execution waits for the price (tpce.md §5: TLB, TLS, TSL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trigger {
    LimitBuy,
    LimitSell,
    StopLoss,
}

impl Trigger {
    /// True when the order fires at `price` for its `limit`.
    pub fn in_the_money(self, price: i64, limit: i64) -> bool {
        match self {
            Trigger::LimitBuy | Trigger::StopLoss => price <= limit,
            Trigger::LimitSell => price >= limit,
        }
    }
}

/// One security's curve: the triangle wave shifted by the security's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Curve {
    phase_ms: i64,
}

impl Curve {
    /// The curve of security `s_id`, its phase a pure draw in `0..PERIOD_MS`.
    pub fn for_security(seed: u64, s_id: u64) -> Curve {
        Curve::with_phase(Entity::new(seed, Tag::Price, s_id).range(0, 0, PERIOD_MS - 1))
    }

    pub fn with_phase(phase_ms: i64) -> Curve {
        Curve {
            phase_ms: phase_ms.rem_euclid(PERIOD_MS),
        }
    }

    pub fn phase_ms(&self) -> i64 {
        self.phase_ms
    }

    /// Where `t_ms` falls in the wave's period: 0 at the $20.00 trough, `HALF_MS` at the peak.
    fn position(&self, t_ms: i64) -> i64 {
        // i128 so that no market time, however far from the base, overflows.
        ((i128::from(t_ms) + i128::from(self.phase_ms)).rem_euclid(i128::from(PERIOD_MS))) as i64
    }

    /// The price in cents at market time `t_ms`, always within `LOW_CENTS..=HIGH_CENTS`.
    pub fn price_at(&self, t_ms: i64) -> i64 {
        let u = self.position(t_ms);
        if u < HALF_MS {
            LOW_CENTS + u / MS_PER_CENT
        } else {
            HIGH_CENTS - (u - HALF_MS) / MS_PER_CENT
        }
    }

    /// The first time at or after `t_ms` when the price is at or above `limit` (it reaches it
    /// rising); `None` when the curve never gets there.
    pub fn next_at_or_above(&self, t_ms: i64, limit: i64) -> Option<i64> {
        if self.price_at(t_ms) >= limit {
            return Some(t_ms);
        }
        if limit > HIGH_CENTS {
            return None;
        }
        // The rising half is at `limit` from position (limit − LOW) × MS_PER_CENT on.
        Some(self.next_position(t_ms, (limit - LOW_CENTS) * MS_PER_CENT))
    }

    /// The first time at or after `t_ms` when the price is at or below `limit` (it reaches it
    /// falling); `None` when the curve never gets there.
    pub fn next_at_or_below(&self, t_ms: i64, limit: i64) -> Option<i64> {
        if self.price_at(t_ms) <= limit {
            return Some(t_ms);
        }
        if limit < LOW_CENTS {
            return None;
        }
        // The falling half is at `limit` from position HALF + (HIGH − limit) × MS_PER_CENT on.
        Some(self.next_position(t_ms, HALF_MS + (HIGH_CENTS - limit) * MS_PER_CENT))
    }

    /// When an order of kind `trigger` with `limit`, placed at `t_ms`, fires: `t_ms` itself if
    /// it is already in the money (queued for the next ticker batch, tpce.md §5), else the
    /// next crossing; `None` if the curve never reaches the limit.
    pub fn trigger_time(&self, trigger: Trigger, t_ms: i64, limit: i64) -> Option<i64> {
        match trigger {
            Trigger::LimitBuy | Trigger::StopLoss => self.next_at_or_below(t_ms, limit),
            Trigger::LimitSell => self.next_at_or_above(t_ms, limit),
        }
    }

    /// The first time at or after `t_ms` whose position in the period is `target`.
    fn next_position(&self, t_ms: i64, target: i64) -> i64 {
        let wait = (target - self.position(t_ms)).rem_euclid(PERIOD_MS);
        t_ms.saturating_add(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_stay_within_20_and_30_dollars() {
        for s_id in 1..=20 {
            let c = Curve::for_security(3, s_id);
            let mut seen = (i64::MAX, i64::MIN);
            for t in (0..PERIOD_MS).step_by(7) {
                let p = c.price_at(t);
                assert!((LOW_CENTS..=HIGH_CENTS).contains(&p), "{p}");
                seen = (seen.0.min(p), seen.1.max(p));
            }
            assert_eq!(seen, (LOW_CENTS, HIGH_CENTS));
        }
        assert_eq!(Curve::with_phase(0).price_at(0), 2000);
        assert_eq!(Curve::with_phase(0).price_at(450_000), 3000);
        assert_eq!(Curve::with_phase(0).price_at(225_000), 2500);
        assert_eq!(Curve::with_phase(0).price_at(675_000), 2500);
    }

    #[test]
    fn the_period_is_900_seconds() {
        let c = Curve::for_security(5, 17);
        for t in [-1_000_000, -1, 0, 1, 123_456, 10_000_000] {
            assert_eq!(c.price_at(t), c.price_at(t + PERIOD_MS));
            assert_eq!(c.price_at(t), c.price_at(t + 7 * PERIOD_MS));
        }
        assert_eq!(c.price_at(i64::MAX), c.price_at(i64::MAX - PERIOD_MS));
    }

    #[test]
    fn phases_differ_between_securities() {
        let phases: std::collections::HashSet<i64> = (1..=100)
            .map(|s| Curve::for_security(1, s).phase_ms())
            .collect();
        assert!(phases.len() > 95);
        assert_eq!(Curve::with_phase(-1).phase_ms(), PERIOD_MS - 1);
    }

    /// The first millisecond at or after `t` when the order is in the money, by stepping.
    fn brute(c: &Curve, trigger: Trigger, t: i64, limit: i64) -> Option<i64> {
        (t..t + PERIOD_MS).find(|&x| trigger.in_the_money(c.price_at(x), limit))
    }

    #[test]
    fn trigger_times_match_stepping_the_curve() {
        let c = Curve::for_security(9, 4);
        let cases = [
            (Trigger::LimitBuy, 2_100),
            (Trigger::LimitBuy, 2_000),
            (Trigger::LimitBuy, 2_999),
            (Trigger::LimitSell, 2_900),
            (Trigger::LimitSell, 3_000),
            (Trigger::LimitSell, 2_001),
            (Trigger::StopLoss, 2_450),
        ];
        for (trigger, limit) in cases {
            for t in [0, 123_457, 450_000, 899_999] {
                let got = c.trigger_time(trigger, t, limit);
                assert_eq!(
                    got,
                    brute(&c, trigger, t, limit),
                    "{trigger:?} {limit} at {t}"
                );
                let when = got.unwrap_or(t);
                assert!(trigger.in_the_money(c.price_at(when), limit));
                if when > t {
                    // A crossing, not a jump: a cent away just before it.
                    assert!(!trigger.in_the_money(c.price_at(when - 1), limit));
                }
            }
        }
    }

    #[test]
    fn orders_in_the_money_fire_at_once_and_unreachable_ones_never() {
        let c = Curve::with_phase(0);
        // At t = 0 the price is $20.00.
        assert_eq!(c.trigger_time(Trigger::LimitBuy, 0, 2_500), Some(0));
        assert_eq!(c.trigger_time(Trigger::StopLoss, 0, 2_000), Some(0));
        // Rising from the trough: a limit sell at $25.00 fires at 225 s.
        assert_eq!(c.trigger_time(Trigger::LimitSell, 0, 2_500), Some(225_000));
        // From the peak, a limit buy at $25.00 fires 225 s into the fall.
        assert_eq!(
            c.trigger_time(Trigger::LimitBuy, 450_000, 2_500),
            Some(675_000)
        );
        assert_eq!(c.trigger_time(Trigger::LimitSell, 0, 3_001), None);
        assert_eq!(c.trigger_time(Trigger::StopLoss, 450_000, 1_999), None);
    }
}
