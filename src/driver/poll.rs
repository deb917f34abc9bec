//! Live polling in the format of the TPC-V reference kit (its Fig. 6), built here as numbers:
//! a row per transaction type (rate, response time, share of the mix, passes, failures), a
//! row per group (share achieved against the phase's configured share, response time,
//! failures, and its headline rate: its part of tpsV), the aggregate rate, and a workload's
//! headline when it has one (committed transactions only, as in `summary.json`).
//! `cli::terminal` lays the block out.
//!
//! A type's share is over the window's drawn types: types the workload's emulator issues
//! (TPC-E's Trade-Result, Market-Feed) show their rate and counts but no share, so the
//! drawn types' shares read as the deck's (TPC-E's CE mix).

use std::time::Duration;

use crate::event::{GroupRow, HeadlineRates, Per, PollBlock, TypeRow};
use crate::metrics::{KeySpace, Recorder, Slot};

pub struct Poller {
    /// Per segment: each group's configured share in percent (shared mode only).
    pub shares: Vec<Option<Vec<f64>>>,
    pub headline: Option<LiveHeadline>,
}

/// A transaction type whose committed transactions per minute or second the live output
/// shows under the workload's name for them (TPC-C's NOTPM, tpce's tpsE or tpsV).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveHeadline {
    pub label: String,
    /// Index into the key space's transaction types.
    pub txn: usize,
    pub per: Per,
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
        let all: u64 = by_type.iter().map(Slot::total).sum();
        let seg = keys
            .segments
            .get(segment.min(keys.segments.len().saturating_sub(1)));
        PollBlock {
            iteration: seg.map_or(0, |s| s.iteration),
            phase: seg.map(|s| s.label.clone()).unwrap_or_default(),
            window,
            types: type_rows(keys, &by_type, secs),
            groups: self.group_rows(keys, rec, all, secs, segment),
            headline: self.headline_rates(&by_type, secs),
            aggregate_rate: by_type.iter().map(passed).sum::<u64>() as f64 / secs,
            backlog: None,
        }
    }

    /// A row per group: its share of the window's transactions against the segment's
    /// configured share, and its part of the headline rate; `all` is the window's count.
    fn group_rows(
        &self,
        keys: &KeySpace,
        rec: &Recorder,
        all: u64,
        secs: f64,
        segment: usize,
    ) -> Vec<GroupRow> {
        let by_group = keys.by_group(rec);
        let pct = |n: u64| {
            if all == 0 {
                0.0
            } else {
                n as f64 * 100.0 / all as f64
            }
        };
        let headline_by_group = self.headline.as_ref().map(|h| {
            let per_group = keys.roll_up(rec, keys.groups.len(), |p| {
                (p.txn == h.txn).then_some(p.group)
            });
            (h.per, per_group)
        });
        let shares = self.shares.get(segment).and_then(|s| s.as_ref());
        by_group
            .iter()
            .zip(&keys.groups)
            .enumerate()
            .map(|(g, (s, name))| GroupRow {
                name: name.clone(),
                pct: pct(s.total()),
                target_pct: shares.map(|sh| sh.get(g).copied().unwrap_or(0.0)),
                resp_s: resp_s(s),
                failed: s.failed_total(),
                headline: headline_by_group
                    .as_ref()
                    .map(|(per, slots)| per.rate(slots.get(g).map_or(0, |s| s.committed), secs)),
            })
            .collect()
    }

    /// The workload's headline rate in the window, and the rate of all committed
    /// transactions in the same unit.
    fn headline_rates(&self, by_type: &[Slot], secs: f64) -> Option<HeadlineRates> {
        let h = self.headline.as_ref()?;
        let s = by_type.get(h.txn)?;
        Some(HeadlineRates {
            label: h.label.clone(),
            per: h.per,
            value: h.per.rate(s.committed, secs),
            total: h.per.rate(by_type.iter().map(|s| s.committed).sum(), secs),
        })
    }
}

/// A row per transaction type met in the window.
fn type_rows(keys: &KeySpace, by_type: &[Slot], secs: f64) -> Vec<TypeRow> {
    by_type
        .iter()
        .zip(&keys.txn_types)
        .enumerate()
        .filter(|(_, (s, _))| s.total() > 0)
        .map(|(t, (s, name))| TypeRow {
            name: name.clone(),
            rate: passed(s) as f64 / secs,
            resp_s: resp_s(s),
            pct: keys.mix_share(by_type, t, Slot::total),
            passed: passed(s),
            failed: s.failed_total(),
        })
        .collect()
}

/// Mean response time in seconds (0 with nothing recorded).
fn resp_s(s: &Slot) -> f64 {
    s.latency
        .as_ref()
        .filter(|h| !h.is_empty())
        .map_or(0.0, |h| h.mean() / 1e6)
}

/// Transactions that did what they should: committed, or rolled back as the workload meant.
fn passed(s: &Slot) -> u64 {
    s.committed + s.expected_rollback
}
