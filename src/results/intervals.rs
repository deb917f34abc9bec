//! `intervals.csv`: one row per (interval, segment, target, transaction type) that had
//! transactions. Intervals are aligned to the run's start; a phase edge inside an interval
//! splits it, so no row mixes two phases (each row's window is the interval cut to its phase).
//!
//! Columns, in order ([`HEADER`]):
//!
//! | column | meaning |
//! |---|---|
//! | `interval_start_s` | start of the row's window, seconds since the run started (ramp-up included; 3 decimals) |
//! | `interval_length_s` | its length in seconds |
//! | `iteration`, `phase` | the phase (its name, or `ramp-up` / `ramp-down`) and the pass over the phase list, from 1 |
//! | `measured` | `true` when the phase is in the measured window |
//! | `group`, `set`, `target` | where the transactions ran; targets are labels with passwords redacted |
//! | `txn_type` | the transaction type |
//! | `count` | `committed + expected_rollback + failed` (the accounting invariant) |
//! | `committed`, `expected_rollback`, `failed` | outcomes |
//! | `retried` | extra tries after serialization failures or deadlocks; not part of `count` |
//! | `tps` | `(committed + expected_rollback) / interval_length_s` |
//! | `lat_mean_ms` … `lat_max_ms` | latency (end − scheduled start) of the transactions that did not fail; empty when all failed |
//! | `failed_serialization` … `failed_other` | `failed` by class (serialization, deadlock, connection, timeout, other) |
//! | `role` | the role of the set the type ran on (`oltp`, `dss`, ...) |
//! | `retried_txns` | transactions that needed at least one retry (pgbench's "transactions retried"); not part of `count` |
//!
//! `role` came last, after schema version 1 was first written: appended so that scripts
//! reading columns by position keep working, and without a version bump because readers find
//! columns by name and take a file without it as all `oltp` (the only role there was).
//! `retried_txns` was appended after it likewise; a file without it reads as 0.
//! A transaction belongs to the phase it started in and to the interval it ended in (cut to
//! its phase's end). RFC 4180 quoting applies to fields holding a comma, quote or line break.
//! The schema version of this file is the results dir's (`summary.json`, `runtime.toml`).

use std::fmt::Write as _;
use std::time::Duration;

use crate::metrics::{KeySpace, Recorder, Slot};

pub use super::csv::csv_field;
use super::summary::{micros_to_ms, round3, tps};

pub const HEADER: &str = "interval_start_s,interval_length_s,iteration,phase,measured,group,set,\
target,txn_type,count,committed,expected_rollback,failed,retried,tps,lat_mean_ms,lat_p50_ms,\
lat_p95_ms,lat_p99_ms,lat_max_ms,failed_serialization,failed_deadlock,failed_connection,failed_timeout,\
failed_other,role,retried_txns";

/// One row: a key with transactions, and its window (the interval cut to the key's phase).
pub struct Row<'a> {
    pub segment: usize,
    pub target: usize,
    pub txn: usize,
    pub start: Duration,
    pub length: Duration,
    pub slot: &'a Slot,
}

/// The rows of one interval in key order; `intervals.csv` and `latency.hlog` both follow it,
/// so the n-th CSV row and the n-th log entry describe the same transactions.
pub fn rows_of<'a>(
    start: Duration,
    length: Duration,
    keys: &'a KeySpace,
    rec: &'a Recorder,
) -> Vec<Row<'a>> {
    let last = keys.segments.len().saturating_sub(1);
    let mut out = Vec::new();
    for (parts, slot) in keys.slots(rec) {
        let (segment, target, txn) = (parts.segment, parts.target, parts.txn);
        let Some(seg) = keys.segments.get(segment) else {
            continue;
        };
        let end = start + length;
        // The last segment also holds what finished after the planned end.
        let seg_end = if segment == last {
            seg.end.max(end)
        } else {
            seg.end
        };
        let row_start = start.max(seg.start).min(seg_end);
        let row_end = end.min(seg_end).max(row_start);
        out.push(Row {
            segment,
            target,
            txn,
            start: row_start,
            length: (row_end - row_start).max(Duration::from_millis(1)),
            slot,
        });
    }
    out
}

/// The CSV text of one interval's rows, each ending in `\n`.
pub fn rows(start: Duration, length: Duration, keys: &KeySpace, rec: &Recorder) -> String {
    let mut out = String::new();
    for row in rows_of(start, length, keys, rec) {
        push_row(&mut out, keys, &row);
    }
    out
}

/// Appends one row (with its `\n`) to `out`.
pub fn push_row(out: &mut String, keys: &KeySpace, row: &Row) {
    let seg = &keys.segments[row.segment];
    let target = &keys.targets[row.target];
    let slot = row.slot;
    // Writing into a String cannot fail, so the fmt::Results below are ignored.
    let _ = write!(
        out,
        "{:.3},{:.3},{},{},{},{},{},{},{},{},{},{},{},{},{:.3}",
        row.start.as_secs_f64(),
        row.length.as_secs_f64(),
        seg.iteration,
        csv_field(&seg.label),
        seg.measured,
        csv_field(&keys.groups[target.group]),
        csv_field(&target.set),
        csv_field(&target.label),
        csv_field(&keys.txn_types[row.txn]),
        slot.total(),
        slot.committed,
        slot.expected_rollback,
        slot.failed_total(),
        slot.retried,
        tps(slot.committed + slot.expected_rollback, row.length),
    );
    match slot.latency.as_ref().filter(|h| !h.is_empty()) {
        Some(h) => {
            let q = |quantile: f64| micros_to_ms(h.value_at_quantile(quantile));
            let _ = write!(
                out,
                ",{:.3},{:.3},{:.3},{:.3},{:.3}",
                round3(h.mean() / 1000.0),
                q(0.50),
                q(0.95),
                q(0.99),
                micros_to_ms(h.max()),
            );
        }
        None => out.push_str(",,,,,"),
    }
    for n in slot.failed {
        let _ = write!(out, ",{n}");
    }
    let _ = writeln!(
        out,
        ",{},{}",
        csv_field(keys.role_of(row.txn)),
        slot.retried_txns
    );
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::config::timeline::{Segment, SegmentKind};
    use crate::metrics::{ErrorClass, Outcome, TargetKey};

    /// Two 10 s phases; one group with two targets; types a and b.
    pub fn two_phase_keys() -> KeySpace {
        let seg = |phase: usize, start: u64| Segment {
            kind: SegmentKind::Phase,
            iteration: 1,
            phase,
            label: format!("p{}", phase + 1),
            start: Duration::from_secs(start),
            end: Duration::from_secs(start + 10),
            measured: true,
        };
        KeySpace {
            segments: vec![seg(0, 0), seg(1, 10)],
            targets: vec![
                TargetKey {
                    label: "instance:vm1/db".into(),
                    group: 0,
                    set: "1".into(),
                },
                TargetKey {
                    label: "host=/tmp dbname=x,y".into(),
                    group: 0,
                    set: "2".into(),
                },
            ],
            groups: vec!["A".into()],
            txn_types: vec!["a".into(), "b".into()],
            txn_roles: vec!["oltp".into(), "oltp".into()],
            txn_emulated: Vec::new(),
        }
    }

    #[test]
    fn header_is_stable() {
        // Readers (report, users' scripts) depend on these names and their order.
        assert_eq!(HEADER.split(',').count(), 27);
        assert!(HEADER.ends_with(
            ",failed_serialization,failed_deadlock,failed_connection,failed_timeout,failed_other,role,retried_txns"
        ));
        assert!(HEADER.starts_with("interval_start_s,interval_length_s,iteration,phase,measured,group,set,target,txn_type,count,"));
    }

    #[test]
    fn rows_follow_the_accounting_invariant_and_split_at_phase_edges() {
        let keys = two_phase_keys();
        let mut rec = Recorder::new(keys.len());
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 1_500, None, 0);
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 2_000, None, 0);
        rec.record(keys.key(0, 0, 0), Outcome::ExpectedRollback, 1_000, None, 0);
        rec.record(
            keys.key(0, 0, 0),
            Outcome::Failed(ErrorClass::Serialization),
            0,
            None,
            2,
        );
        rec.record(
            keys.key(1, 1, 1),
            Outcome::Failed(ErrorClass::Other),
            0,
            None,
            0,
        );
        // Interval [5 s, 15 s) crosses the edge at 10 s: two rows of 5 s each.
        let text = rows(Duration::from_secs(5), Duration::from_secs(10), &keys, &rec);
        assert_eq!(
            text,
            "5.000,5.000,1,p1,true,A,1,instance:vm1/db,a,4,2,1,1,2,0.600,1.500,1.500,2.000,2.000,2.000,1,0,0,0,0,oltp,1\n\
             10.000,5.000,1,p2,true,A,2,\"host=/tmp dbname=x,y\",b,1,0,0,1,0,0.000,,,,,,0,0,0,0,1,oltp,0\n"
        );
    }

    #[test]
    fn keys_without_transactions_have_no_row() {
        let keys = two_phase_keys();
        let rec = Recorder::new(keys.len());
        assert_eq!(
            rows(Duration::ZERO, Duration::from_secs(1), &keys, &rec),
            ""
        );
    }
}
