//! The live progress line (pgbench's `-P`): elapsed, tps, a workload's headline rate per
//! minute when it has one (TPC-C's NOTPM), latency mean and p95, failures.

use std::time::Duration;

use crate::metrics::{KeySpace, Recorder};

use super::poll::PerMinute;

/// One line for the window that ended at `elapsed`.
pub fn line(
    elapsed: Duration,
    window: Duration,
    rec: &Recorder,
    keys: &KeySpace,
    headline: Option<&PerMinute>,
) -> String {
    let t = rec.total();
    let secs = window.as_secs_f64().max(1e-9);
    let tps = (t.committed + t.expected_rollback) as f64 / secs;
    let mut out = format!("progress: {:.1} s, {:.1} tps", elapsed.as_secs_f64(), tps);
    if let Some(h) = headline {
        let committed: u64 = rec
            .slots
            .iter()
            .enumerate()
            .take(keys.len())
            .filter(|(key, _)| keys.split(*key).2 == h.txn)
            .map(|(_, s)| s.committed)
            .sum();
        out.push_str(&format!(
            ", {} {:.0}",
            h.label,
            committed as f64 * 60.0 / secs
        ));
    }
    match &t.latency {
        Some(h) if !h.is_empty() => out.push_str(&format!(
            ", lat {:.3} ms p95 {:.3} ms",
            h.mean() / 1000.0,
            h.value_at_quantile(0.95) as f64 / 1000.0
        )),
        _ => out.push_str(", lat - ms"),
    }
    if let Some(h) = &t.lag {
        if !h.is_empty() {
            out.push_str(&format!(", lag {:.3} ms", h.mean() / 1000.0));
        }
    }
    out.push_str(&format!(", {} failed", t.failed_total()));
    if t.retried > 0 {
        out.push_str(&format!(", {} retried", t.retried));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ErrorClass, Outcome};

    #[test]
    fn shows_rate_latency_and_failures() {
        let mut r = Recorder::new(1);
        for _ in 0..10 {
            r.record(0, Outcome::Committed, 2000, None, 0);
        }
        r.record(0, Outcome::Failed(ErrorClass::Deadlock), 0, None, 1);
        let keys = one_type_keys();
        let l = line(
            Duration::from_secs(10),
            Duration::from_secs(5),
            &r,
            &keys,
            None,
        );
        assert_eq!(
            l,
            "progress: 10.0 s, 2.0 tps, lat 2.000 ms p95 2.000 ms, 1 failed, 1 retried"
        );
        let notpm = PerMinute {
            label: "NOTPM".into(),
            txn: 0,
        };
        let l = line(
            Duration::from_secs(10),
            Duration::from_secs(5),
            &r,
            &keys,
            Some(&notpm),
        );
        assert!(
            l.starts_with("progress: 10.0 s, 2.0 tps, NOTPM 120, lat"),
            "{l}"
        );
    }

    fn one_type_keys() -> KeySpace {
        KeySpace {
            segments: vec![crate::config::timeline::Segment {
                kind: crate::config::timeline::SegmentKind::Phase,
                phase: 0,
                iteration: 1,
                label: "run".into(),
                measured: true,
                start: Duration::ZERO,
                end: Duration::from_secs(10),
            }],
            targets: vec![crate::metrics::TargetKey {
                label: "t".into(),
                group: 0,
                set: "1".into(),
            }],
            groups: vec!["g".into()],
            txn_types: vec!["new_order".into()],
            txn_roles: vec!["oltp".into()],
        }
    }
}
