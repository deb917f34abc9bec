//! Live polling in the format of the TPC-V reference kit (its Fig. 6), built here as numbers:
//! a row per transaction type (rate, response time, share, passes, failures), a row per group
//! (share achieved against the phase's configured share, response time, failures), the
//! aggregate rate, and a workload's headline per minute when it has one (committed
//! transactions only, as in `summary.json`'s `tpm`). `cli::terminal` lays the block out.

use std::time::Duration;

use crate::event::{GroupRow, HeadlineRates, PollBlock, TypeRow};
use crate::metrics::{KeySpace, Recorder, Slot};

pub struct Poller {
    /// Per segment: each group's configured share in percent (shared mode only).
    pub shares: Vec<Option<Vec<f64>>>,
    pub headline: Option<PerMinute>,
}

/// A transaction type whose committed transactions per minute the block shows under the
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
    ) -> PollBlock {
        let secs = window.as_secs_f64().max(1e-9);
        let by_type = keys.by_type(rec);
        let by_group = keys.by_group(rec);
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
        let passed = |s: &Slot| s.committed + s.expected_rollback;
        let types = by_type
            .iter()
            .zip(&keys.txn_types)
            .filter(|(s, _)| s.total() > 0)
            .map(|(s, name)| TypeRow {
                name: name.clone(),
                rate: passed(s) as f64 / secs,
                resp_s: resp(s),
                pct: pct(s.total()),
                passed: passed(s),
                failed: s.failed_total(),
            })
            .collect();
        let shares = self.shares.get(segment).and_then(|s| s.as_ref());
        let groups = by_group
            .iter()
            .zip(&keys.groups)
            .enumerate()
            .map(|(g, (s, name))| GroupRow {
                name: name.clone(),
                pct: pct(s.total()),
                target_pct: shares.map(|sh| sh.get(g).copied().unwrap_or(0.0)),
                resp_s: resp(s),
                failed: s.failed_total(),
            })
            .collect();
        let per_min = |n: u64| n as f64 * 60.0 / secs;
        let headline = self
            .headline
            .as_ref()
            .and_then(|h| Some((h, by_type.get(h.txn)?)))
            .map(|(h, s)| HeadlineRates {
                label: h.label.clone(),
                per_minute: per_min(s.committed),
                total_per_minute: per_min(by_type.iter().map(|s| s.committed).sum()),
            });
        let seg = keys
            .segments
            .get(segment.min(keys.segments.len().saturating_sub(1)));
        PollBlock {
            iteration: seg.map_or(0, |s| s.iteration),
            phase: seg.map(|s| s.label.clone()).unwrap_or_default(),
            window,
            types,
            groups,
            headline,
            aggregate_rate: by_type.iter().map(passed).sum::<u64>() as f64 / secs,
        }
    }
}
