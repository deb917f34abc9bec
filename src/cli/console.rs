//! What a finished run prints on the terminal: pgbench's summary block, plus the server's count.

use std::path::Path;

use crate::results::Summary;

/// The end-of-run summary, pgbench-like, as lines of text.
pub fn run_summary(s: &Summary, dir: &Path, target: &str, scale: u32) -> String {
    let t = &s.totals;
    let mut out = String::new();
    let state = if s.complete {
        "complete"
    } else {
        "INTERRUPTED (complete: false)"
    };
    out.push_str(&format!(
        "workload: {}  scale: {scale}  target: {target}\n",
        s.workload
    ));
    out.push_str(&format!("duration: {:.1} s ({state})\n", s.duration_s));
    out.push_str(&format!(
        "transactions: {} ({} committed, {} expected rollbacks, {} failed, {} retried)\n",
        t.total, t.committed, t.expected_rollback, t.failed, t.retried
    ));
    if t.failed > 0 {
        let f = &t.failed_by_class;
        out.push_str(&format!(
            "failed by class: serialization {} deadlock {} connection {} timeout {} other {}\n",
            f.serialization, f.deadlock, f.connection, f.timeout, f.other
        ));
    }
    out.push_str(&format!("tps: {:.1}\n", t.tps));
    if let Some(l) = &t.latency_ms {
        out.push_str(&format!(
            "latency ms: mean {:.3}  p50 {:.3}  p95 {:.3}  p99 {:.3}  max {:.3}\n",
            l.mean, l.p50, l.p95, l.p99, l.max
        ));
    }
    if let Some(l) = &t.lag_ms {
        out.push_str(&format!(
            "schedule lag ms: mean {:.3}  p95 {:.3}  max {:.3}\n",
            l.mean, l.p95, l.max
        ));
    }
    for d in &s.server {
        let verdict = if d.xact_commit_delta == t.committed as i64 {
            "agrees"
        } else {
            "differs"
        };
        out.push_str(&format!(
            "server: {} xact_commit +{} ({verdict} with {} committed)\n",
            d.dbname, d.xact_commit_delta, t.committed
        ));
    }
    out.push_str(&format!("results: {}\n", dir.display()));
    out
}
