//! `intervals.csv`: one row per (interval, target, transaction type) that had transactions.
//!
//! Columns, in order ([`HEADER`]):
//!
//! | column | meaning |
//! |---|---|
//! | `interval_start_s` | start of the interval, seconds since the measured window began (3 decimals) |
//! | `interval_length_s` | its length in seconds (the last one of an interrupted run is shorter) |
//! | `target`, `txn_type` | the key; targets are labels with passwords redacted |
//! | `count` | `committed + expected_rollback + failed` (the accounting invariant) |
//! | `committed`, `expected_rollback`, `failed` | outcomes |
//! | `retried` | extra tries after serialization failures or deadlocks; not part of `count` |
//! | `tps` | `(committed + expected_rollback) / interval_length_s` |
//! | `lat_mean_ms` … `lat_max_ms` | latency (end − scheduled start) of the transactions that did not fail; empty when all failed |
//!
//! RFC 4180 quoting applies to fields holding a comma, quote or line break (labels are free text).
//! The schema version of this file is the results dir's (`summary.json`, `runtime.toml`).

use std::fmt::Write as _;
use std::time::Duration;

use crate::metrics::{KeySpace, Recorder, Slot};

use super::summary::{micros_to_ms, round3, tps};

pub const HEADER: &str = "interval_start_s,interval_length_s,target,txn_type,count,committed,\
expected_rollback,failed,retried,tps,lat_mean_ms,lat_p50_ms,lat_p95_ms,lat_p99_ms,lat_max_ms";

/// The rows of one interval, each ending in `\n`, for the keys that had transactions.
pub fn rows(start_offset: Duration, length: Duration, keys: &KeySpace, rec: &Recorder) -> String {
    let mut out = String::new();
    for (key, slot) in rec.slots.iter().enumerate().take(keys.len()) {
        if slot.total() == 0 {
            continue;
        }
        let (target, txn) = keys.split(key);
        push_row(
            &mut out,
            start_offset,
            length,
            &keys.targets[target],
            &keys.txn_types[txn],
            slot,
        );
    }
    out
}

/// Appends one row (with its `\n`) to `out`.
pub fn push_row(
    out: &mut String,
    start: Duration,
    length: Duration,
    target: &str,
    txn_type: &str,
    slot: &Slot,
) {
    // Writing into a String cannot fail, so the fmt::Results below are ignored.
    let _ = write!(
        out,
        "{:.3},{:.3},{},{},{},{},{},{},{},{:.3}",
        start.as_secs_f64(),
        length.as_secs_f64(),
        csv_field(target),
        csv_field(txn_type),
        slot.total(),
        slot.committed,
        slot.expected_rollback,
        slot.failed_total(),
        slot.retried,
        tps(slot.committed + slot.expected_rollback, length),
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
    out.push('\n');
}

/// A CSV field, quoted only when it must be.
pub fn csv_field(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ErrorClass, Outcome};

    #[test]
    fn header_is_stable() {
        // Readers (report, users' scripts) depend on these names and their order.
        assert_eq!(
            HEADER,
            "interval_start_s,interval_length_s,target,txn_type,count,committed,expected_rollback,\
             failed,retried,tps,lat_mean_ms,lat_p50_ms,lat_p95_ms,lat_p99_ms,lat_max_ms"
                .replace(' ', "")
        );
    }

    #[test]
    fn rows_follow_the_accounting_invariant() {
        let keys = KeySpace {
            targets: vec!["instance:vm1/db".into(), "host=/tmp dbname=x,y".into()],
            txn_types: vec!["tpcb".into()],
        };
        let mut rec = Recorder::new(keys.len());
        rec.record(0, Outcome::Committed, 1_500, None, 0);
        rec.record(0, Outcome::Committed, 2_000, None, 0);
        rec.record(0, Outcome::ExpectedRollback, 1_000, None, 0);
        rec.record(0, Outcome::Failed(ErrorClass::Serialization), 0, None, 2);
        rec.record(1, Outcome::Failed(ErrorClass::Other), 0, None, 0);
        let text = rows(
            Duration::from_secs(30),
            Duration::from_millis(2_500),
            &keys,
            &rec,
        );
        assert_eq!(
            text,
            "30.000,2.500,instance:vm1/db,tpcb,4,2,1,1,2,1.200,1.500,1.500,2.000,2.000,2.000\n\
             30.000,2.500,\"host=/tmp dbname=x,y\",tpcb,1,0,0,1,0,0.000,,,,,\n"
        );
        for line in text.lines() {
            assert_eq!(
                line.matches(',').count() - usize::from(line.contains("x,y")),
                HEADER.matches(',').count(),
                "{line}"
            );
        }
    }

    #[test]
    fn keys_without_transactions_have_no_row() {
        let keys = KeySpace {
            targets: vec!["t".into()],
            txn_types: vec!["a".into(), "b".into()],
        };
        let rec = Recorder::new(keys.len());
        assert_eq!(
            rows(Duration::ZERO, Duration::from_secs(1), &keys, &rec),
            ""
        );
    }

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a\"b"), "\"a\"\"b\"");
    }
}
