//! The number rules of `summary.json`: rates and milliseconds rounded to 3 decimals.

use std::time::Duration;

/// Transactions per second over a window, 3 decimals; zero for an empty window.
pub fn tps(count: u64, window: Duration) -> f64 {
    let secs = window.as_secs_f64();
    if secs > 0.0 {
        round3(count as f64 / secs)
    } else {
        0.0
    }
}

pub fn micros_to_ms(us: u64) -> f64 {
    round3(us as f64 / 1000.0)
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
