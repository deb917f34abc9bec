//! The run's counters so far, shared with live readers (the Prometheus endpoint) while the
//! driver's collector writes them: a snapshot type below both, so neither imports the other.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{ErrorClass, Recorder};

/// The run's counters so far. The collector replaces them once per tick, never per
/// transaction, so the lock is never contended by clients.
#[derive(Clone, Default)]
pub struct LiveTotals(Arc<Mutex<LiveSnapshot>>);

/// Counters per key (the run's [`KeySpace`](super::KeySpace)), ramps included, as of `elapsed`.
#[derive(Debug, Clone, Default)]
pub struct LiveSnapshot {
    pub elapsed: Duration,
    pub slots: Vec<LiveSlot>,
}

/// One key's counters (no histograms: a scrape shows counts only).
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveSlot {
    pub committed: u64,
    pub expected_rollback: u64,
    pub failed: [u64; ErrorClass::ALL.len()],
    pub retried: u64,
}

impl LiveTotals {
    pub fn snapshot(&self) -> LiveSnapshot {
        match self.0.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces the snapshot with `total` as of `elapsed`.
    pub fn publish(&self, elapsed: Duration, total: &Recorder) {
        let mut g = match self.0.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        g.elapsed = elapsed;
        g.slots.resize(total.slots.len(), LiveSlot::default());
        for (live, s) in g.slots.iter_mut().zip(&total.slots) {
            *live = LiveSlot {
                committed: s.committed,
                expected_rollback: s.expected_rollback,
                failed: s.failed,
                retried: s.retried,
            };
        }
    }
}
