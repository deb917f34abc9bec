//! Recorders: one per driver thread, keyed by (target, transaction type). Every client of a
//! thread writes into the same recorder through a `RefCell` (single-threaded runtime, so no lock
//! on the hot path); the thread swaps it out once per tick and sends it to the collector.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::{ErrorClass, Outcome};
use crate::config::timeline::Segment;

/// Latencies are recorded in microseconds, from 1 µs to 100 s with 3 significant digits;
/// longer values are clamped to the maximum (and still counted).
pub const HIST_MAX_US: u64 = 100_000_000;
pub const HIST_SIGFIG: u8 = 3;

pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants known to be valid, so this cannot fail.
    Histogram::new_with_bounds(1, HIST_MAX_US, HIST_SIGFIG).expect("valid histogram bounds")
}

/// A (group, set) target as results name it.
#[derive(Debug, Clone, Serialize)]
pub struct TargetKey {
    /// The target spec, password redacted.
    pub label: String,
    pub group: usize,
    pub set: String,
}

/// The names behind a recorder's keys: key = (segment * targets + target) * types + txn.
#[derive(Debug, Clone, Serialize)]
pub struct KeySpace {
    pub segments: Vec<Segment>,
    pub targets: Vec<TargetKey>,
    pub groups: Vec<String>,
    pub txn_types: Vec<String>,
    /// The role (`oltp`, `dss`, ...) each transaction type runs on, index of `txn_types`.
    pub txn_roles: Vec<String>,
    /// Which types the workload's emulator issues (outside the mix shares), index of
    /// `txn_types`; a type past its end is drawn (see `KeySpace::is_emulated`).
    pub txn_emulated: Vec<bool>,
}

impl KeySpace {
    pub fn len(&self) -> usize {
        self.segments.len() * self.targets.len() * self.txn_types.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn key(&self, segment: usize, target: usize, txn: usize) -> usize {
        self.shape().key(segment, target, txn)
    }
    /// (segment, target, txn) of a key.
    pub fn split(&self, key: usize) -> (usize, usize, usize) {
        self.shape().split(key)
    }
}

/// Counters and histograms of one key.
#[derive(Debug, Clone)]
pub struct Slot {
    /// End minus scheduled start (coordinated-omission safe), µs; committed and expected rollbacks.
    pub latency: Option<Histogram<u64>>,
    /// Start minus scheduled start (rate-limited runs only), µs.
    pub lag: Option<Histogram<u64>>,
    pub committed: u64,
    pub expected_rollback: u64,
    pub failed: [u64; ErrorClass::ALL.len()],
    /// Extra tries after serialization failures or deadlocks; not part of the total.
    pub retried: u64,
    /// Transactions that needed at least one extra try, committed or failed in the end
    /// (pgbench 15's "number of transactions retried"); not part of the total.
    pub retried_txns: u64,
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            latency: None,
            lag: None,
            committed: 0,
            expected_rollback: 0,
            failed: [0; ErrorClass::ALL.len()],
            retried: 0,
            retried_txns: 0,
        }
    }
}

impl Slot {
    /// Transactions ended: committed + expected rollbacks + failed (the accounting invariant).
    pub fn total(&self) -> u64 {
        self.committed + self.expected_rollback + self.failed_total()
    }

    pub fn failed_total(&self) -> u64 {
        self.failed.iter().sum()
    }

    fn record(&mut self, outcome: Outcome, latency_us: u64, lag_us: Option<u64>, retries: u32) {
        self.retried += u64::from(retries);
        self.retried_txns += u64::from(retries > 0);
        match outcome {
            Outcome::Committed => self.committed += 1,
            Outcome::ExpectedRollback => self.expected_rollback += 1,
            Outcome::Failed(class) => {
                self.failed[class.index()] += 1;
                return;
            }
        }
        self.latency
            .get_or_insert_with(new_histogram)
            .saturating_record(latency_us.max(1));
        if let Some(lag) = lag_us {
            self.lag
                .get_or_insert_with(new_histogram)
                .saturating_record(lag.max(1));
        }
    }

    pub fn merge(&mut self, other: &Slot) {
        self.committed += other.committed;
        self.expected_rollback += other.expected_rollback;
        self.retried += other.retried;
        self.retried_txns += other.retried_txns;
        for (a, b) in self.failed.iter_mut().zip(other.failed.iter()) {
            *a += b;
        }
        merge_hist(&mut self.latency, &other.latency);
        merge_hist(&mut self.lag, &other.lag);
    }

    fn clear(&mut self) {
        self.committed = 0;
        self.expected_rollback = 0;
        self.retried = 0;
        self.retried_txns = 0;
        self.failed = [0; ErrorClass::ALL.len()];
        if let Some(h) = &mut self.latency {
            h.reset();
        }
        if let Some(h) = &mut self.lag {
            h.reset();
        }
    }
}

fn merge_hist(into: &mut Option<Histogram<u64>>, from: &Option<Histogram<u64>>) {
    if let Some(src) = from {
        if src.is_empty() {
            return;
        }
        // Same bounds everywhere, so adding cannot fail.
        let _ = into.get_or_insert_with(new_histogram).add(src);
    }
}

/// All slots of one driver thread (or of a merge of threads).
#[derive(Debug, Clone)]
pub struct Recorder {
    pub slots: Vec<Slot>,
    /// The kinds of error met, each with its first (see [`super::errors`]).
    pub errors: super::errors::ErrorTally,
    /// pgbench's `-L`: transactions over the latency limit, and those skipped because they
    /// were already later than it when due (with a rate).
    pub late: u64,
    pub skipped: u64,
}

impl Recorder {
    pub fn new(keys: usize) -> Recorder {
        Recorder {
            slots: vec![Slot::default(); keys],
            errors: Default::default(),
            late: 0,
            skipped: 0,
        }
    }

    #[inline]
    pub fn record(
        &mut self,
        key: usize,
        outcome: Outcome,
        latency_us: u64,
        lag_us: Option<u64>,
        retries: u32,
    ) {
        if let Some(slot) = self.slots.get_mut(key) {
            slot.record(outcome, latency_us, lag_us, retries);
        }
    }

    pub fn merge(&mut self, other: &Recorder) {
        if self.slots.len() < other.slots.len() {
            self.slots.resize_with(other.slots.len(), Slot::default);
        }
        for (a, b) in self.slots.iter_mut().zip(other.slots.iter()) {
            a.merge(b);
        }
        if !other.errors.is_empty() {
            self.errors.merge(&other.errors);
        }
        self.late += other.late;
        self.skipped += other.skipped;
    }

    /// Empties counters and histograms, keeping their allocations.
    pub fn clear(&mut self) {
        for s in &mut self.slots {
            s.clear();
        }
        self.errors.clear();
        self.late = 0;
        self.skipped = 0;
    }

    /// Sum over all keys.
    pub fn total(&self) -> Slot {
        let mut t = Slot::default();
        for s in &self.slots {
            t.merge(s);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_invariant_holds_after_merge() {
        let mut a = Recorder::new(2);
        a.record(0, Outcome::Committed, 100, None, 0);
        a.record(0, Outcome::Failed(ErrorClass::Serialization), 100, None, 2);
        a.record(1, Outcome::ExpectedRollback, 300, Some(5), 0);
        let mut b = Recorder::new(2);
        b.record(1, Outcome::Committed, 1_000_000_000, None, 1);
        b.merge(&a);
        let t = b.total();
        assert_eq!(t.total(), 4);
        assert_eq!(
            (
                t.committed,
                t.expected_rollback,
                t.failed_total(),
                t.retried,
                t.retried_txns
            ),
            (2, 1, 1, 3, 2),
            "a transaction tried three times is one retried transaction with two retries"
        );
        let lat = t.latency.unwrap();
        assert_eq!(lat.len(), 3, "failures carry no latency");
        assert!(
            lat.max() >= HIST_MAX_US * 99 / 100,
            "over-range values are clamped, not lost"
        );
        a.clear();
        assert_eq!(a.total().total(), 0);
    }
}
