//! The end summary's interference curve (issue 52): one row per placement and phase, the
//! neighbours' queries per hour beside the tenant's headline and p90, when the run has two
//! placements or one at several loads (preset `ch-interference`); report.html draws it.

use std::fmt::Write as _;

use crate::results::interference::curve::{curves, worth_drawing};
use crate::results::Summary;

/// The table, or `None` when the pairs' own lines say it all.
pub fn curve_table(s: &Summary) -> Option<String> {
    let all = curves(&s.interference);
    if !worth_drawing(&all) {
        return None;
    }
    let first = all.first()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "interference curve of {} ({} and {} p90 against the neighbours' queries per hour):",
        first.tenant, first.label, first.txn_type
    );
    let _ = writeln!(
        out,
        "{:<16} {:<14} {:>8} {:>12} {:>12} {:>10}",
        "beside", "phase", "clients", "per hour", first.label, "p90 ms"
    );
    for c in &all {
        for p in &c.points {
            let _ = writeln!(
                out,
                "{:<16} {:<14} {:>8} {:>12.1} {:>12.1} {:>10}",
                c.neighbours,
                p.phase,
                p.clients,
                p.per_hour,
                p.headline,
                p.p90_ms.map_or("-".to_string(), |v| format!("{v:.1}"))
            );
        }
    }
    Some(out)
}
