//! The collector: receives each driver thread's per-tick recorders, and once every thread has
//! reported a tick, folds it into the current interval, the progress window and the run total.
//! Intervals are aligned to the run's start; transactions that end after the deadline belong to
//! the last interval.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::metrics::Recorder;

use super::progress;
use super::shard::{TickReport, TICK};

/// Called with (interval start offset, interval length, what it holds).
pub type IntervalSink<'a> = dyn FnMut(Duration, Duration, &Recorder) -> Result<(), String> + 'a;

pub struct Collected {
    pub total: Recorder,
    /// When the last client finished (None if no thread finished cleanly).
    pub ended: Option<Instant>,
    pub reconnects: u64,
}

pub struct Collector<'a> {
    keys: usize,
    shards: usize,
    start: Instant,
    duration_ticks: u64,
    interval_ticks: u64,
    progress_ticks: u64,
    sink: &'a mut IntervalSink<'a>,
}

impl<'a> Collector<'a> {
    pub fn new(
        keys: usize,
        shards: usize,
        start: Instant,
        duration: Duration,
        interval: Duration,
        progress: Duration,
        sink: &'a mut IntervalSink<'a>,
    ) -> Collector<'a> {
        let ticks = |d: Duration| d.as_secs().max(1) / TICK.as_secs();
        Collector {
            keys,
            shards,
            start,
            duration_ticks: duration.as_secs_f64().ceil().max(1.0) as u64,
            interval_ticks: ticks(interval).max(1),
            progress_ticks: if progress.is_zero() {
                0
            } else {
                ticks(progress).max(1)
            },
            sink,
        }
    }

    /// Runs until every thread has sent its last report (or all senders are gone).
    pub async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<TickReport>,
    ) -> Result<Collected, String> {
        let mut pending: BTreeMap<u64, Recorder> = BTreeMap::new();
        let mut reported: Vec<Option<u64>> = vec![None; self.shards];
        let mut done = vec![false; self.shards];
        let mut ended: Option<Instant> = None;
        let mut reconnects = 0;
        let mut state = Folding::new(self.keys);
        while let Some(rep) = rx.recv().await {
            pending
                .entry(rep.tick)
                .or_insert_with(|| Recorder::new(self.keys))
                .merge(&rep.recorder);
            if let Some(slot) = reported.get_mut(rep.shard) {
                *slot = Some(slot.map_or(rep.tick, |t| t.max(rep.tick)));
            }
            if let Some(end) = rep.finished {
                if let Some(d) = done.get_mut(rep.shard) {
                    *d = true;
                }
                ended = Some(ended.map_or(end.at, |e| e.max(end.at)));
                reconnects += end.reconnects;
            }
            // A tick is complete once every thread has finished or reported it.
            let complete_below = reported
                .iter()
                .zip(&done)
                .map(|(r, d)| if *d { u64::MAX } else { r.map_or(0, |t| t + 1) })
                .min()
                .unwrap_or(u64::MAX);
            while let Some(entry) = pending.first_entry() {
                if *entry.key() >= complete_below {
                    break;
                }
                let (tick, rec) = entry.remove_entry();
                self.fold(&mut state, tick, &rec)?;
            }
            if done.iter().all(|d| *d) {
                break;
            }
        }
        for (tick, rec) in std::mem::take(&mut pending) {
            self.fold(&mut state, tick, &rec)?;
        }
        let end_offset = ended
            .map(|e| e.saturating_duration_since(self.start))
            .unwrap_or_else(|| self.start.elapsed());
        let last_start = TICK * (state.interval * self.interval_ticks) as u32;
        let last_len = end_offset
            .saturating_sub(last_start)
            .max(Duration::from_millis(1));
        (self.sink)(last_start, last_len, &state.interval_acc)?;
        Ok(Collected {
            total: state.total,
            ended,
            reconnects,
        })
    }

    fn fold(&mut self, s: &mut Folding, tick: u64, rec: &Recorder) -> Result<(), String> {
        let interval = tick.min(self.duration_ticks - 1) / self.interval_ticks;
        while interval > s.interval {
            let start = TICK * (s.interval * self.interval_ticks) as u32;
            let len = TICK * self.interval_ticks as u32;
            (self.sink)(start, len, &s.interval_acc)?;
            s.interval_acc.clear();
            s.interval += 1;
        }
        s.interval_acc.merge(rec);
        s.total.merge(rec);
        if self.progress_ticks > 0 && tick < self.duration_ticks {
            s.progress_acc.merge(rec);
            if tick + 1 >= s.progress_from + self.progress_ticks {
                let window = TICK * (tick + 1 - s.progress_from) as u32;
                let elapsed = TICK * (tick + 1) as u32;
                eprintln!("{}", progress::line(elapsed, window, &s.progress_acc));
                s.progress_acc.clear();
                s.progress_from = tick + 1;
            }
        }
        Ok(())
    }
}

/// Running sums while ticks are folded in order.
struct Folding {
    interval: u64,
    interval_acc: Recorder,
    progress_acc: Recorder,
    progress_from: u64,
    total: Recorder,
}

impl Folding {
    fn new(keys: usize) -> Folding {
        Folding {
            interval: 0,
            interval_acc: Recorder::new(keys),
            progress_acc: Recorder::new(keys),
            progress_from: 0,
            total: Recorder::new(keys),
        }
    }
}
