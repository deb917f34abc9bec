//! An experiment's own lines between its runs' output: which run starts (with the time left)
//! and how each ended, so a log of an hours-long series reads as a table of points.

use crate::config::duration::format_duration;
use crate::event::{ExperimentRun, ExperimentRunDone};

/// `point 3/12 clients=16 repeat 2/3 (run 15 of 36, eta 41m)`.
pub fn starting(r: &ExperimentRun) -> String {
    let eta = r
        .eta
        .map(|d| format!(", eta {}", format_duration(round_to_minutes(d))))
        .unwrap_or_default();
    format!(
        "\n== point {}/{} {} repeat {}/{} (run {} of {}{eta})",
        r.point, r.points, r.values, r.repeat, r.repeats, r.run, r.runs
    )
}

/// `point 3/12 clients=16 repeat 2/3: 1234.5 tps, complete → DIR`.
pub fn done(d: &ExperimentRunDone) -> String {
    let r = &d.run;
    let tps = d.tps.map(|t| format!("{t:.1} tps, ")).unwrap_or_default();
    format!(
        "== point {}/{} {} repeat {}/{}: {tps}{} → {}",
        r.point, r.points, r.values, r.repeat, r.repeats, d.status, d.detail
    )
}

/// Whole minutes past ten minutes, whole seconds below: an ETA is an estimate.
fn round_to_minutes(d: std::time::Duration) -> std::time::Duration {
    let s = d.as_secs();
    std::time::Duration::from_secs(if s >= 600 { s / 60 * 60 } else { s })
}
