//! What the terminal shows after a run (pgbench's summary block, plus groups and phases when
//! there are several, and the server's count), and the list of presets.

use std::fmt::Write as _;
use std::path::Path;

use crate::config::presets::PRESETS;
use crate::results::Summary;

/// The end-of-run summary as lines of text.
pub fn run_summary(s: &Summary, dir: &Path, scales: &[u32]) -> String {
    let t = &s.totals;
    let mut out = String::new();
    let state = if s.complete {
        "complete"
    } else {
        "INTERRUPTED (complete: false)"
    };
    let scales: Vec<String> = scales.iter().map(u32::to_string).collect();
    let _ = writeln!(
        out,
        "workload: {}  scale: {}  targets: {}",
        s.workload,
        scales.join("/"),
        s.target_names.len()
    );
    let _ = writeln!(
        out,
        "measured: {:.1} s of {:.1} s ({state})",
        s.duration_s, s.elapsed_s
    );
    let _ = writeln!(
        out,
        "transactions: {} ({} committed, {} expected rollbacks, {} failed, {} retried)",
        t.total, t.committed, t.expected_rollback, t.failed, t.retried
    );
    if t.failed > 0 {
        let f = &t.failed_by_class;
        let _ = writeln!(
            out,
            "failed by class: serialization {} deadlock {} connection {} timeout {} other {}",
            f.serialization, f.deadlock, f.connection, f.timeout, f.other
        );
    }
    let _ = writeln!(out, "tps: {:.1}", t.tps);
    if let Some(notpm) = s.tpm.get("new_order") {
        // TPC-C's headline: new orders committed per minute, beside all types per minute.
        let total: f64 = s.tpm.values().sum();
        let _ = writeln!(out, "NOTPM: {notpm:.1}  total TPM: {total:.1}");
    }
    if let Some(l) = &t.latency_ms {
        let _ = writeln!(
            out,
            "latency ms: mean {:.3}  p50 {:.3}  p95 {:.3}  p99 {:.3}  max {:.3}",
            l.mean, l.p50, l.p95, l.p99, l.max
        );
    }
    if let Some(l) = &t.lag_ms {
        let _ = writeln!(
            out,
            "schedule lag ms: mean {:.3}  p95 {:.3}  max {:.3}",
            l.mean, l.p95, l.max
        );
    }
    if s.groups.len() > 1 {
        let _ = writeln!(
            out,
            "{:<12} {:>10} {:>10} {:>10} {:>10}",
            "group", "share %", "target %", "tps", "p95 ms"
        );
        for g in &s.groups {
            let _ = writeln!(
                out,
                "{:<12} {:>10.2} {:>10} {:>10.1} {:>10}",
                g.group,
                g.achieved_share,
                g.configured_share
                    .map_or("-".to_string(), |c| format!("{c:.2}")),
                g.stats.tps,
                g.stats
                    .latency_ms
                    .as_ref()
                    .map_or("-".to_string(), |l| format!("{:.3}", l.p95))
            );
        }
    }
    for d in &s.server {
        let diff = d.xact_commit_delta - d.client_committed;
        let verdict = match diff {
            0 => "agrees with".to_string(),
            // Other sessions and autovacuum's workers commit in the same database.
            n => format!(
                "{n:+} beside other sessions, autovacuum or parallel workers; tidebench committed"
            ),
        };
        let _ = writeln!(
            out,
            "server: {} xact_commit +{} ({verdict} {} over the run)",
            d.dbname, d.xact_commit_delta, d.client_committed
        );
    }
    let _ = writeln!(out, "results: {}", dir.display());
    let report = dir.join(crate::report::html::REPORT_FILE);
    if report.is_file() {
        let _ = writeln!(out, "report:  {}", report.display());
    }
    out
}

/// `tidebench presets`: one line each.
pub fn presets() -> String {
    let mut out = String::new();
    for p in PRESETS {
        let _ = writeln!(out, "{:<18} {}", p.name, p.description);
    }
    out.push_str("\nrun one with `tidebench prepare --preset NAME` then `tidebench run --preset NAME [--phase-duration 10s]`\n");
    out
}
