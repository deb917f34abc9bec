//! The live progress line (pgbench's `-P`): elapsed, tps, a workload's headline rate when it
//! has one (TPC-C's NOTPM per minute, tpce's tpsE or tpsV per second), latency mean and p95,
//! failures. Built here as numbers; `cli::terminal` writes it as text.

use std::time::Duration;

use crate::event::{Latency, ProgressLine, Rate};
use crate::metrics::{KeySpace, Recorder};

use super::poll::LiveHeadline;

/// The line for the window of `window` that ended at `elapsed`.
pub fn line(
    elapsed: Duration,
    window: Duration,
    rec: &Recorder,
    keys: &KeySpace,
    headline: Option<&LiveHeadline>,
) -> ProgressLine {
    let t = rec.total();
    let secs = window.as_secs_f64().max(1e-9);
    let headline = headline.map(|h| Rate {
        label: h.label.clone(),
        value: h
            .per
            .rate(keys.sum_where(rec, |p| p.txn == h.txn).committed, secs),
        per: h.per,
    });
    ProgressLine {
        elapsed,
        window,
        tps: (t.committed + t.expected_rollback) as f64 / secs,
        headline,
        latency: t
            .latency
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| Latency {
                mean_ms: h.mean() / 1000.0,
                p95_ms: h.value_at_quantile(0.95) as f64 / 1000.0,
                stddev_ms: h.stdev() / 1000.0,
            }),
        lag_ms: t
            .lag
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.mean() / 1000.0),
        failed: t.failed_total(),
        retried: t.retried,
        retried_txns: t.retried_txns,
        backlog: None,
        running: Vec::new(),
        running_more: 0,
    }
}
