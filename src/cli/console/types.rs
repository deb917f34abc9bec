//! Per transaction type, after a run whose workload drew several (pgbench's "SQL script N"
//! block, one line each): its share of the mix, transactions, tps, failures and latency; and
//! per command of each script when the run timed them (pgbench's `-r`).

use std::fmt::Write as _;
use std::path::Path;

use crate::report::by::{self, Dim};
use crate::results::Summary;

/// The table, or None when fewer than two drawn types ran or the spec-rules table already
/// lists the types (TPC-C, tpce). A type run on several targets has its latency from the
/// histograms of results dir `dir` merged (issue 55), as `report --by type` merges them.
pub fn types_table(s: &Summary, dir: &Path) -> Option<String> {
    let drawn: Vec<_> = s.mix.iter().filter(|t| !t.emulated).collect();
    if drawn.len() < 2 || !s.type_rules.is_empty() {
        return None;
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<20} {:>8} {:>12} {:>10} {:>8} {:>10} {:>10}",
        "type", "mix %", "transactions", "tps", "failed", "mean ms", "p95 ms"
    );
    // Read only when some type ran on several targets: it streams every interval's histogram.
    let several = |t: &str| {
        s.by_target_and_type
            .iter()
            .filter(|r| r.txn_type == t)
            .count()
            > 1
    };
    let merged = if drawn.iter().any(|t| several(&t.txn_type)) {
        by::merged(dir, Dim::Type).unwrap_or_default()
    } else {
        Vec::new()
    };
    for t in drawn {
        let rows: Vec<_> = s
            .by_target_and_type
            .iter()
            .filter(|r| r.txn_type == t.txn_type)
            .collect();
        let failed: u64 = rows.iter().map(|r| r.stats.failed).sum();
        let none = || ("-".to_string(), "-".to_string());
        let (mean, p95) = match rows.as_slice() {
            [one] => one.stats.latency_ms.as_ref().map_or_else(none, |l| {
                (format!("{:.3}", l.mean), format!("{:.3}", l.p95))
            }),
            _ => merged
                .iter()
                .find(|m| m.name == t.txn_type)
                .and_then(|m| Some((m.latency.as_ref()?.mean() / 1000.0, m.ms_at(0.95)?)))
                .map_or_else(none, |(mean, p95)| {
                    (format!("{mean:.3}"), format!("{p95:.3}"))
                }),
        };
        let _ = writeln!(
            out,
            "{:<20} {:>8} {:>12} {:>10.1} {:>8} {:>10} {:>10}",
            t.txn_type,
            t.share_pct.map_or("-".to_string(), |p| format!("{p:.2}")),
            t.completed,
            t.tps,
            failed,
            mean,
            p95
        );
    }
    Some(out)
}

/// Each script's commands in order, with their counts and times; None when not timed.
pub fn commands_table(s: &Summary) -> Option<String> {
    if s.commands.is_empty() {
        return None;
    }
    let mut out =
        String::from("per command, over the whole run (ramps included, as pgbench -r):\n");
    let mut script = "";
    for c in &s.commands {
        if c.txn_type != script {
            script = &c.txn_type;
            let _ = writeln!(
                out,
                "script {script}\n{:>5} {:>10} {:>8} {:>10} {:>10}  command",
                "#", "count", "failed", "mean ms", "max ms"
            );
        }
        let _ = writeln!(
            out,
            "{:>5} {:>10} {:>8} {:>10.3} {:>10.3}  {}",
            c.command, c.count, c.failed, c.mean_ms, c.max_ms, c.text
        );
    }
    Some(out)
}
