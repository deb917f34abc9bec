//! Live polling in the format of the TPC-V reference kit (its Fig. 6): a block per transaction
//! type (rate, response time, share, passes, failures), a block per group (share achieved
//! against the phase's configured share, response time, failures), and the aggregate line
//! `Iteration i Phase p Aggregate Txn Rate: x`, preceded by a workload's headline per minute
//! when it has one (`NOTPM: x  total TPM: y`, committed transactions only, as in
//! `summary.json`'s `tpm`). Groups wrap every 8 columns so the block stays
//! within 100 columns even with 40 groups.

use std::fmt::Write as _;
use std::time::Duration;

use crate::metrics::{KeySpace, Recorder, Slot};

const GROUPS_PER_LINE: usize = 8;

pub struct Poller {
    /// Per segment: each group's configured share in percent (shared mode only).
    pub shares: Vec<Option<Vec<f64>>>,
    pub headline: Option<PerMinute>,
}

/// A transaction type whose committed transactions per minute the block prints under the
/// workload's name for them (TPC-C's NOTPM), beside every type's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerMinute {
    pub label: String,
    /// Index into the key space's transaction types.
    pub txn: usize,
}

impl Poller {
    /// The block for a window of `window` seconds that ended in segment `segment`.
    pub fn block(
        &self,
        keys: &KeySpace,
        rec: &Recorder,
        window: Duration,
        segment: usize,
    ) -> String {
        let secs = window.as_secs_f64().max(1e-9);
        let ntypes = keys.txn_types.len();
        let mut by_type = vec![Slot::default(); ntypes];
        let mut by_group = vec![Slot::default(); keys.groups.len()];
        for (key, slot) in rec.slots.iter().enumerate().take(keys.len()) {
            if slot.total() == 0 {
                continue;
            }
            let (_, target, txn) = keys.split(key);
            by_type[txn].merge(slot);
            by_group[keys.targets[target].group].merge(slot);
        }
        let all: u64 = by_type.iter().map(Slot::total).sum();
        let pct = |n: u64| {
            if all == 0 {
                0.0
            } else {
                n as f64 * 100.0 / all as f64
            }
        };
        let resp = |s: &Slot| {
            s.latency
                .as_ref()
                .filter(|h| !h.is_empty())
                .map_or(0.0, |h| h.mean() / 1e6)
        };
        let mut out = String::new();
        let _ = writeln!(out, "-----");
        let _ = writeln!(
            out,
            "{:<18} {:>10} {:>10} {:>8} {:>11} {:>11}",
            "", "Txn Rate", "Resp Time", "Txn Pct", "Pass Count", "Fail Count"
        );
        for (t, s) in by_type.iter().enumerate() {
            if s.total() == 0 {
                continue;
            }
            let name: String = keys.txn_types[t].chars().take(16).collect();
            let _ = writeln!(
                out,
                "{:<16} : {:>10.2} {:>10.4} {:>8.2} {:>11} {:>11}",
                name,
                (s.committed + s.expected_rollback) as f64 / secs,
                resp(s),
                pct(s.total()),
                s.committed + s.expected_rollback,
                s.failed_total()
            );
        }
        let target = self.shares.get(segment).and_then(|s| s.as_ref());
        for chunk in (0..keys.groups.len())
            .collect::<Vec<_>>()
            .chunks(GROUPS_PER_LINE)
        {
            let _ = writeln!(out, "-----");
            let mut line = format!("{:<11}", "Txn Total:");
            for g in chunk {
                let name: String = keys.groups[*g].chars().take(9).collect();
                let _ = write!(line, " {name:>9}");
            }
            let _ = writeln!(out, "{line}");
            let mut row = |label: &str, cell: &dyn Fn(usize) -> String| {
                let mut line = format!("{label:<11}");
                for g in chunk {
                    let _ = write!(line, " {:>9}", cell(*g));
                }
                let _ = writeln!(out, "{line}");
            };
            row("Txn Pct  :", &|g| {
                format!("{:.2}", pct(by_group[g].total()))
            });
            if let Some(shares) = target {
                row("Target % :", &|g| {
                    format!("{:.2}", shares.get(g).copied().unwrap_or(0.0))
                });
            }
            row("Resp Time:", &|g| format!("{:.4}", resp(&by_group[g])));
            row("Fail Cnt :", &|g| by_group[g].failed_total().to_string());
        }
        let _ = writeln!(out, "-----");
        if let Some(h) = self.headline.as_ref().filter(|h| h.txn < ntypes) {
            let per_min = |n: u64| n as f64 * 60.0 / secs;
            let all: u64 = by_type.iter().map(|s| s.committed).sum();
            let _ = writeln!(
                out,
                "{}: {:.1}  total TPM: {:.1}",
                h.label,
                per_min(by_type[h.txn].committed),
                per_min(all)
            );
        }
        let seg = &keys.segments[segment.min(keys.segments.len().saturating_sub(1))];
        let ok: u64 = by_type
            .iter()
            .map(|s| s.committed + s.expected_rollback)
            .sum();
        let _ = writeln!(
            out,
            "Iteration {} Phase {} Aggregate Txn Rate: {:.2}",
            seg.iteration,
            seg.label,
            ok as f64 / secs
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ErrorClass, Outcome};

    #[test]
    fn block_has_type_group_and_aggregate_lines_within_100_columns() {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let mut rec = Recorder::new(keys.len());
        for _ in 0..30 {
            rec.record(keys.key(1, 0, 0), Outcome::Committed, 1_000, None, 0);
        }
        for _ in 0..10 {
            rec.record(keys.key(1, 1, 1), Outcome::Committed, 3_000, None, 0);
        }
        rec.record(
            keys.key(1, 1, 1),
            Outcome::Failed(ErrorClass::Deadlock),
            0,
            None,
            0,
        );
        let mut p = Poller {
            shares: vec![None, Some(vec![100.0])],
            headline: None,
        };
        let b = p.block(&keys, &rec, Duration::from_secs(10), 1);
        assert!(b.contains("Txn Rate") && b.contains("Pass Count"), "{b}");
        assert!(
            b.lines().any(|l| l.starts_with("a ") && l.contains("3.00")),
            "{b}"
        );
        assert!(b.contains("Target % :"), "{b}");
        assert!(
            b.ends_with("Iteration 1 Phase p2 Aggregate Txn Rate: 4.00\n"),
            "{b}"
        );
        assert!(b.lines().all(|l| l.chars().count() <= 100), "{b}");
        assert!(!b.contains("TPM"), "no headline without one: {b}");

        p.headline = Some(PerMinute {
            label: "NOTPM".into(),
            txn: 0,
        });
        let b = p.block(&keys, &rec, Duration::from_secs(10), 1);
        // 30 and 10 committed in 10 s: 180 and 240 per minute; the failure does not count.
        assert!(b.contains("\nNOTPM: 180.0  total TPM: 240.0\n"), "{b}");
        assert!(b.ends_with("Aggregate Txn Rate: 4.00\n"), "{b}");
    }
}
