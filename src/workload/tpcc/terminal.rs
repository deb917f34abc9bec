//! The spec's terminal model (clause 5.2.5): where a client's home is, and the keying and
//! think times a terminal spends around each transaction when `--think spec` is on.

use std::time::Duration;

use rand::Rng as _;

use super::{DELIVERY, DISTRICTS, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL};
use crate::workload::Rng;

/// Minimum keying time per type in seconds (clause 5.2.5.7), indexed by type.
pub const KEYING_S: [f64; 5] = key_by_type(18.0, 3.0, 2.0, 2.0, 2.0);

/// Mean think time per type in seconds (clause 5.2.5.7).
pub const THINK_MEAN_S: [f64; 5] = key_by_type(12.0, 12.0, 10.0, 5.0, 5.0);

/// A think time is drawn from a negative exponential and cut at ten times its mean
/// (clause 5.2.5.4).
const THINK_CAP: f64 = 10.0;

const fn key_by_type(no: f64, p: f64, os: f64, d: f64, sl: f64) -> [f64; 5] {
    let mut out = [0.0; 5];
    out[NEW_ORDER] = no;
    out[PAYMENT] = p;
    out[ORDER_STATUS] = os;
    out[DELIVERY] = d;
    out[STOCK_LEVEL] = sl;
    out
}

/// Home (warehouse, district) of client `index` over `warehouses`.
///
/// Round-robin (`per_warehouse` unset) puts consecutive clients on different warehouses, so a
/// few clients already spread over all of them. With `per_warehouse = n`, clients fill one
/// warehouse's n terminals before the next one, as the spec's 10 terminals per warehouse do;
/// clients beyond `warehouses × n` wrap around. Either way, two clients of one warehouse get
/// different districts while there are districts to go round.
pub fn home(index: u32, warehouses: u32, per_warehouse: Option<u32>) -> (i64, i64) {
    let w = warehouses.max(1);
    let (warehouse, nth) = match per_warehouse {
        None => (index % w, index / w),
        Some(n) => {
            let n = n.max(1);
            ((index / n) % w, (index % n) + n * (index / (n * w)))
        }
    };
    (i64::from(warehouse) + 1, i64::from(nth) % DISTRICTS + 1)
}

/// The keying time before a transaction of type `txn`.
pub fn keying(txn: usize) -> Duration {
    Duration::from_secs_f64(KEYING_S.get(txn).copied().unwrap_or(0.0))
}

/// A think time after a transaction of type `txn`: `-ln(r) × mean`, r uniform in (0, 1].
pub fn think(txn: usize, rng: &mut Rng) -> Duration {
    let mean = THINK_MEAN_S.get(txn).copied().unwrap_or(0.0);
    let r: f64 = 1.0 - rng.gen::<f64>();
    Duration::from_secs_f64((-r.ln() * mean).min(THINK_CAP * mean))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn round_robin_spreads_over_warehouses_first() {
        let homes: Vec<_> = (0..4).map(|i| home(i, 2, None)).collect();
        assert_eq!(homes, [(1, 1), (2, 1), (1, 2), (2, 2)]);
    }

    #[test]
    fn per_warehouse_fills_one_warehouse_before_the_next() {
        let homes: Vec<_> = (0..6).map(|i| home(i, 2, Some(2))).collect();
        assert_eq!(homes, [(1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (1, 4)]);
        // The spec's 10 terminals of a warehouse take its 10 districts.
        let tens: Vec<_> = (0..10).map(|i| home(i, 3, Some(10)).1).collect();
        assert_eq!(tens, (1..=10).collect::<Vec<_>>());
        assert_eq!(home(10, 3, Some(10)), (2, 1));
    }

    #[test]
    fn think_times_have_the_spec_mean_and_cap() {
        let mut rng = Rng::seed_from_u64(3);
        let n = 20_000;
        let draws: Vec<f64> = (0..n)
            .map(|_| think(NEW_ORDER, &mut rng).as_secs_f64())
            .collect();
        let mean = draws.iter().sum::<f64>() / f64::from(n);
        assert!((mean - 12.0).abs() < 0.4, "mean think {mean}");
        assert!(draws.iter().all(|&t| t <= 120.0));
        assert_eq!(keying(NEW_ORDER), Duration::from_secs(18));
        assert_eq!(keying(STOCK_LEVEL), Duration::from_secs(2));
    }
}
