//! The "Test cases" tables of `report.html`, for runs of a few long operations (the Greenplum study's
//! analytic reports and loads, any type whose median is a second or more): each type's
//! executions and response time in seconds (min, median, max) with what it loaded, and beside
//! them what each database read over the measured window, from `system.csv`'s
//! `pg_stat_database` counters: rows returned, MB read from disk and from shared buffers, MB
//! of temporary files (a sort or hash that spilled).

use crate::report::load::{delta, RunData};
use crate::results::Summary;

/// Under the tables.
pub const NOTE: &str = "Response time per execution over the measured window, in seconds. \
    Loaded MB count COPY text over the whole run (ramps included): per stream is the bytes \
    over the time the loads took, over the run the bytes over the run's length. Reads are the \
    database's own counters; over segments, the coordinator's (the segments read the rest).";

/// Counters read per database, and how each is shown.
const READS: [(&str, &str, f64); 4] = [
    ("tup_returned", "rows returned", 1.0),
    ("blks_read", "MB read from disk", 8192.0 / 1e6),
    ("blks_hit", "MB read from buffers", 8192.0 / 1e6),
    ("temp_bytes", "MB of temp files", 1.0 / 1e6),
];

/// Rows of a table, as cells.
type Rows = Vec<Vec<String>>;

/// The tables' rows: (test cases, reads); None when the run is not one of long operations.
pub fn tables(d: &RunData) -> Option<(Rows, Rows)> {
    let s = &d.summary;
    if !long_operations(s) {
        return None;
    }
    let mut cases = Vec::new();
    for t in &s.by_target_and_type {
        let Some(l) = &t.stats.latency_ms else {
            continue;
        };
        let loaded = s.volumes.iter().find(|v| v.txn_type == t.txn_type);
        cases.push(vec![
            t.txn_type.clone(),
            t.target.clone(),
            t.stats.committed.to_string(),
            secs(l.min),
            secs(l.p50),
            secs(l.max),
            loaded.map_or(String::new(), |v| format!("{:.1}", v.bytes as f64 / 1e6)),
            loaded.map_or(String::new(), |v| format!("{:.1}", v.stream_mb_s())),
            loaded.map_or(String::new(), |v| format!("{:.1}", v.run_mb_s(s.elapsed_s))),
        ]);
    }
    let (start, end) = d.measured_window();
    let mut reads = Vec::new();
    let mut sources: Vec<&str> = d
        .system_series(|src| src.starts_with("db:"), READS[0].0)
        .map(|x| x.source.as_str())
        .collect();
    sources.dedup();
    for source in sources {
        let mut row = vec![source.trim_start_matches("db:").to_string()];
        for (metric, _, scale) in READS {
            let v = d
                .system_series(|src| src == source, metric)
                .next()
                .and_then(|x| delta(&x.points, start, end));
            row.push(v.map_or("-".into(), |v| format!("{:.0}", v * scale)));
        }
        reads.push(row);
    }
    Some((cases, reads))
}

/// The columns of the reads table.
pub fn read_heads() -> Vec<&'static str> {
    std::iter::once("database")
        .chain(READS.iter().map(|r| r.1))
        .collect()
}

/// A run whose types load, or take a second or more at the median.
fn long_operations(s: &Summary) -> bool {
    !s.volumes.is_empty()
        || s.by_target_and_type
            .iter()
            .any(|t| t.stats.latency_ms.as_ref().is_some_and(|l| l.p50 >= 1000.0))
}

fn secs(ms: f64) -> String {
    format!("{:.3}", ms / 1000.0)
}
