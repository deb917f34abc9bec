//! The collector: receives each driver thread's per-tick recorders, and once every thread has
//! reported a tick, folds it into the current interval, the progress and polling windows and
//! the run total. Intervals are aligned to the run's start. A transaction belongs to the phase
//! it started in: one that ends after its phase's last tick is folded into the interval holding
//! that last tick, so interval rows never reach past their phase.
//!
//! What it has to say live (progress lines, polling blocks, phase edges) goes to the run's
//! event sink as numbers; the terminal, if that is the sink, writes the text.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::event::{EmulatedBacklog, Event, PhaseEdge, Sink};
pub use crate::metrics::live::LiveTotals;
use crate::metrics::{KeySpace, Recorder};
use crate::workload::{Backlog, Emulator};

use super::outages::{down_windows, DownWindow, Outage};
use super::poll::Poller;
use super::progress;
use super::running::Running;
use super::session::{ConnectTime, EndCounts};
use super::thread::{ThreadEnd, TickReport, TICK};
use super::DriverError;
use crate::results::down::AbortedClient;
use crate::results::ResultsError;

/// How often the collector reports: intervals to the sink, progress lines, polling blocks
/// (zero turns the last two off).
#[derive(Debug, Clone, Copy)]
pub struct Cadence {
    pub interval: Duration,
    pub progress: Duration,
    pub poll: Duration,
}

/// Called with (interval start offset, interval length, what it holds).
pub type IntervalSink<'a> =
    dyn FnMut(Duration, Duration, &Recorder) -> Result<(), ResultsError> + 'a;

pub struct Collected {
    pub total: Recorder,
    /// When the last client finished (None if no thread finished cleanly).
    pub ended: Option<Instant>,
    pub reconnects: u64,
    /// With `-C`: sessions opened per transaction over all threads, and the time they took.
    pub connect_time: ConnectTime,
    /// Per global target, what became of the tries in flight at the end (over all threads).
    pub at_end: BTreeMap<usize, EndCounts>,
    /// Each target's down windows, as its clients saw them.
    pub down: Vec<DownWindow>,
    pub warnings: Vec<String>,
    /// Clients that panicked (each with its thread): the run failed.
    pub panics: Vec<String>,
    /// Clients an error ended, in the order they ended.
    pub aborted: Vec<AbortedClient>,
    /// Every kind of error met (see [`super::errors`]).
    pub errors: Vec<crate::results::errors::ErrorEntry>,
}

pub struct Collector<'k, 's> {
    keys: &'k KeySpace,
    threads: usize,
    start: Instant,
    duration_ticks: u64,
    interval_ticks: u64,
    progress_ticks: u64,
    poll_ticks: u64,
    poller: Poller,
    /// Per segment, the last tick inside it.
    segment_last_tick: Vec<u64>,
    sink: &'s mut IntervalSink<'s>,
    events: Arc<dyn Sink>,
    live: Option<LiveTotals>,
    /// The sets' emulators, whose backlog the progress line and polling block show.
    emulators: Vec<Arc<dyn Emulator>>,
    /// The tries in flight, whose long ones the progress line shows.
    running: Option<Arc<Running>>,
    /// Every thread has finished: the ticks still to fold end the run, and the last of them
    /// may be partial (a run by count, or a stop, ends between two ticks), so no interval is
    /// closed at its full length any more; the run's last one is written with its true length.
    ending: bool,
}

fn whole_ticks(d: Duration) -> u64 {
    (d.as_secs_f64() / TICK.as_secs_f64()).ceil() as u64
}

impl<'k, 's> Collector<'k, 's> {
    pub fn new(
        keys: &'k KeySpace,
        threads: usize,
        start: Instant,
        cadence: Cadence,
        poller: Poller,
        sink: &'s mut IntervalSink<'s>,
        events: Arc<dyn Sink>,
    ) -> Collector<'k, 's> {
        let end = keys
            .segments
            .last()
            .map_or(Duration::from_secs(1), |s| s.end);
        Collector {
            keys,
            threads,
            start,
            duration_ticks: whole_ticks(end).max(1),
            interval_ticks: whole_ticks(cadence.interval).max(1),
            progress_ticks: whole_ticks(cadence.progress),
            poll_ticks: whole_ticks(cadence.poll),
            poller,
            segment_last_tick: keys
                .segments
                .iter()
                .map(|s| whole_ticks(s.end).saturating_sub(1))
                .collect(),
            sink,
            events,
            live: None,
            emulators: Vec::new(),
            running: None,
            ending: false,
        }
    }

    /// Shows the long tries in flight on `running` on the progress line.
    pub fn show_running(mut self, running: Arc<Running>) -> Self {
        self.running = Some(running);
        self
    }

    /// Shows the backlog of `emulators` on the progress line and in the polling block.
    pub fn watch(mut self, emulators: Vec<Arc<dyn Emulator>>) -> Self {
        self.emulators = emulators;
        self
    }

    /// The emulators' backlog now, summed; None without emulators.
    fn backlog(&self) -> Option<EmulatedBacklog> {
        if self.emulators.is_empty() {
            return None;
        }
        let now = Instant::now();
        let mut sum = Backlog::default();
        for e in &self.emulators {
            sum.add(&e.backlog(now));
        }
        Some(EmulatedBacklog {
            due: sum.due,
            lag_ms: sum.lag.as_secs_f64() * 1e3,
            waiting: sum.waiting,
            abandoned: sum.abandoned,
        })
    }

    /// Publishes the run's totals to `live` after every tick.
    pub fn publish_to(mut self, live: Option<LiveTotals>) -> Self {
        self.live = live;
        self
    }

    /// Runs until every thread has sent its last report (or all senders are gone).
    pub async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<TickReport>,
    ) -> Result<Collected, DriverError> {
        let keys = self.keys.len();
        let mut pending: BTreeMap<u64, Recorder> = BTreeMap::new();
        let mut threads = ThreadTicks::new(self.threads);
        let mut ends = Ends::default();
        let mut state = Folding::new(keys);
        let mut announced = super::errors::Announced::default();
        while let Some(rep) = rx.recv().await {
            if !rep.recorder.errors.is_empty() {
                announced.announce(&rep.recorder.errors, self.keys, self.start, &*self.events);
            }
            pending
                .entry(rep.tick)
                .or_insert_with(|| Recorder::new(keys))
                .merge(&rep.recorder);
            threads.reported(rep.thread, rep.tick);
            if let Some(end) = rep.finished {
                threads.finished(rep.thread);
                ends.absorb(rep.thread, end, self.start);
            }
            self.ending = threads.all_done();
            let complete_below = threads.complete_below();
            while let Some(entry) = pending.first_entry() {
                if *entry.key() >= complete_below {
                    break;
                }
                let (tick, rec) = entry.remove_entry();
                self.fold(&mut state, tick, &rec)?;
            }
            if threads.all_done() {
                break;
            }
        }
        for (tick, rec) in std::mem::take(&mut pending) {
            self.fold(&mut state, tick, &rec)?;
        }
        self.write_last_interval(&state, ends.ended)?;
        let errors = super::errors::entries(&state.total.errors, self.keys, self.start);
        Ok(Collected {
            total: state.total,
            ended: ends.ended,
            reconnects: ends.reconnects,
            connect_time: ends.connect_time,
            at_end: ends.at_end,
            down: down_windows(ends.outages, self.start),
            aborted: ends.aborted,
            errors,
            warnings: ends.warnings,
            panics: ends.panics,
        })
    }

    /// Writes the interval the run ended in. Tries in flight at the end were cut there, so
    /// the last interval ends at the duration even when closing the sessions took longer.
    fn write_last_interval(
        &mut self,
        state: &Folding,
        ended: Option<Instant>,
    ) -> Result<(), DriverError> {
        let end_offset = ended
            .map(|e| e.saturating_duration_since(self.start))
            .unwrap_or_else(|| self.start.elapsed())
            .min(self.planned_end());
        let last_start = TICK * (state.interval * self.interval_ticks) as u32;
        let last_len = end_offset
            .saturating_sub(last_start)
            .max(Duration::from_millis(1));
        // Not when the run ended right where an interval already written ended.
        let anything = state.interval_acc.slots.iter().any(|s| s.total() > 0);
        if end_offset > last_start || anything {
            self.write(last_start, last_len, &state.interval_acc)?;
        }
        Ok(())
    }

    /// The run's planned length: the end of its last segment.
    fn planned_end(&self) -> Duration {
        self.keys
            .segments
            .last()
            .map_or(Duration::from_secs(1), |s| s.end)
    }

    fn interval_of(&self, tick: u64) -> u64 {
        tick.min(self.duration_ticks - 1) / self.interval_ticks
    }

    fn fold(&mut self, s: &mut Folding, tick: u64, rec: &Recorder) -> Result<(), DriverError> {
        let interval = self.interval_of(tick);
        if interval > s.interval {
            // Transactions of a phase that ended before this tick go to that phase's last
            // interval, which is still open here (they are at most a few ticks late).
            for (key, slot) in rec.slots.iter().enumerate().take(self.keys.len()) {
                if slot.total() == 0 {
                    continue;
                }
                let last = self
                    .segment_last_tick
                    .get(self.keys.parts(key).segment)
                    .copied()
                    .unwrap_or(u64::MAX);
                if last < tick && self.interval_of(last) <= s.interval {
                    s.interval_acc.slots[key].merge(slot);
                    s.routed[key] = true;
                }
            }
        }
        while interval > s.interval {
            let start = TICK * (s.interval * self.interval_ticks) as u32;
            let len = TICK * self.interval_ticks as u32;
            self.write(start, len, &s.interval_acc)?;
            s.interval_acc.clear();
            s.interval += 1;
        }
        for (key, slot) in rec.slots.iter().enumerate() {
            if slot.total() == 0 {
                continue;
            }
            if !std::mem::take(&mut s.routed[key]) {
                s.interval_acc.slots[key].merge(slot);
            }
        }
        s.total.merge(rec);
        self.write_if_complete(s, tick)?;
        if let Some(live) = &self.live {
            live.publish(TICK * (tick + 1) as u32, &s.total);
        }
        if tick < self.duration_ticks {
            self.live(s, tick, rec);
        }
        Ok(())
    }

    /// Writes the open interval as soon as `tick`, its last, is in: a driver killed later loses
    /// only the interval in flight. An interval holding a phase's last tick waits for the next
    /// tick (transactions that began in the phase and ended just after it still belong there),
    /// and the run's last one is written at the end with its true length.
    fn write_if_complete(&mut self, s: &mut Folding, tick: u64) -> Result<(), DriverError> {
        let first = s.interval * self.interval_ticks;
        let ends_a_phase = self
            .segment_last_tick
            .iter()
            .any(|last| (first..=tick).contains(last));
        if !(tick + 1).is_multiple_of(self.interval_ticks)
            || tick + 1 >= self.duration_ticks
            || self.ending
            || ends_a_phase
            || self.interval_of(tick) != s.interval
        {
            return Ok(());
        }
        let start = TICK * (s.interval * self.interval_ticks) as u32;
        let len = TICK * self.interval_ticks as u32;
        self.write(start, len, &s.interval_acc)?;
        s.interval_acc.clear();
        s.interval += 1;
        Ok(())
    }

    /// Hands the interval at `start` to the sink.
    fn write(&mut self, start: Duration, len: Duration, rec: &Recorder) -> Result<(), DriverError> {
        (self.sink)(start, len, rec).map_err(|source| DriverError::Interval { start, source })
    }

    /// The phase edge, the progress line and the polling block, each over its own window.
    fn live(&mut self, s: &mut Folding, tick: u64, rec: &Recorder) {
        let at = TICK * tick as u32;
        let segment = self
            .keys
            .segments
            .iter()
            .position(|g| at < g.end)
            .unwrap_or(0);
        if s.segment != Some(segment) {
            s.segment = Some(segment);
            if let Some(g) = self.keys.segments.get(segment) {
                self.events.send(Event::PhaseEdge(PhaseEdge {
                    iteration: g.iteration,
                    phase: g.label.clone(),
                    measured: g.measured,
                    at: g.start,
                }));
            }
        }
        if self.progress_ticks > 0 {
            s.progress_acc.merge(rec);
            if tick + 1 >= s.progress_from + self.progress_ticks {
                let window = TICK * (tick + 1 - s.progress_from) as u32;
                let mut line = progress::line(
                    TICK * (tick + 1) as u32,
                    window,
                    &s.progress_acc,
                    self.keys,
                    self.poller.headline.as_ref(),
                );
                line.backlog = self.backlog();
                if let Some(board) = &self.running {
                    let (long, more) = board.longest(Instant::now());
                    line.running = long
                        .into_iter()
                        .map(|(txn, d)| {
                            let name = self.keys.txn_types.get(txn as usize);
                            (name.cloned().unwrap_or_default(), d.as_secs_f64())
                        })
                        .collect();
                    line.running_more = more;
                }
                self.events.send(Event::Progress(line));
                s.progress_acc.clear();
                s.progress_from = tick + 1;
            }
        }
        if self.poll_ticks > 0 {
            s.poll_acc.merge(rec);
            if tick + 1 >= s.poll_from + self.poll_ticks {
                let window = TICK * (tick + 1 - s.poll_from) as u32;
                let mut block = self.poller.block(self.keys, &s.poll_acc, window, segment);
                block.backlog = self.backlog();
                self.events.send(Event::Poll(block));
                s.poll_acc.clear();
                s.poll_from = tick + 1;
            }
        }
    }
}

/// Which tick each driver thread has reported up to, and which threads have finished.
struct ThreadTicks {
    reported: Vec<Option<u64>>,
    done: Vec<bool>,
}

impl ThreadTicks {
    fn new(threads: usize) -> Self {
        ThreadTicks {
            reported: vec![None; threads],
            done: vec![false; threads],
        }
    }

    fn reported(&mut self, thread: usize, tick: u64) {
        if let Some(slot) = self.reported.get_mut(thread) {
            *slot = Some(slot.map_or(tick, |t| t.max(tick)));
        }
    }

    fn finished(&mut self, thread: usize) {
        if let Some(d) = self.done.get_mut(thread) {
            *d = true;
        }
    }

    fn all_done(&self) -> bool {
        self.done.iter().all(|d| *d)
    }

    /// Ticks below this are complete: every thread has finished or reported them.
    fn complete_below(&self) -> u64 {
        self.reported
            .iter()
            .zip(&self.done)
            .map(|(r, d)| if *d { u64::MAX } else { r.map_or(0, |t| t + 1) })
            .min()
            .unwrap_or(u64::MAX)
    }
}

/// What the threads' last reports said, summed over the threads.
#[derive(Default)]
struct Ends {
    ended: Option<Instant>,
    reconnects: u64,
    connect_time: ConnectTime,
    at_end: BTreeMap<usize, EndCounts>,
    outages: Vec<Outage>,
    warnings: Vec<String>,
    panics: Vec<String>,
    aborted: Vec<AbortedClient>,
}

impl Ends {
    /// Adds thread `thread`'s last report; times are taken relative to the run's `start`.
    fn absorb(&mut self, thread: usize, end: ThreadEnd, start: Instant) {
        self.ended = Some(self.ended.map_or(end.at, |e| e.max(end.at)));
        self.reconnects += end.reconnects;
        self.connect_time.add(end.connect_time);
        for (target, counts) in end.at_end {
            self.at_end.entry(target).or_default().add(&counts);
        }
        self.outages.extend(end.outages);
        self.aborted.extend(
            end.aborted
                .into_iter()
                .map(|(client, at, message)| AbortedClient {
                    client,
                    at_s: (at.saturating_duration_since(start).as_secs_f64() * 1e3).round() / 1e3,
                    message,
                }),
        );
        self.panics.extend(
            end.panics
                .into_iter()
                .map(|p| format!("driver thread {thread}: {p}")),
        );
        if let Some(e) = end.mixlog_error {
            self.warnings.push(format!(
                "the mix log of driver thread {thread} is incomplete: {e}"
            ));
        }
    }
}

/// Running sums while ticks are folded in order.
struct Folding {
    interval: u64,
    interval_acc: Recorder,
    /// Keys of the current tick already folded into an earlier interval.
    routed: Vec<bool>,
    progress_acc: Recorder,
    progress_from: u64,
    poll_acc: Recorder,
    poll_from: u64,
    /// The segment of the last tick shown live, for phase edges.
    segment: Option<usize>,
    total: Recorder,
}

impl Folding {
    fn new(keys: usize) -> Folding {
        Folding {
            interval: 0,
            interval_acc: Recorder::new(keys),
            routed: vec![false; keys],
            progress_acc: Recorder::new(keys),
            progress_from: 0,
            poll_acc: Recorder::new(keys),
            poll_from: 0,
            segment: None,
            total: Recorder::new(keys),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::thread::ThreadEnd;
    use crate::event::{Event, Recorded};
    use crate::metrics::Outcome;

    /// One driver thread's reports of ticks 0..=`last`, each tick's recorder made by `record`;
    /// the thread finishes with the last tick, one second after it began.
    fn one_thread(
        start: Instant,
        last: u64,
        mut record: impl FnMut(u64) -> Recorder,
    ) -> mpsc::UnboundedReceiver<TickReport> {
        let (tx, rx) = mpsc::unbounded_channel();
        for tick in 0..=last {
            let finished = (tick == last).then(|| ThreadEnd {
                at: start + Duration::from_secs(last + 1),
                reconnects: 0,
                connect_time: Default::default(),
                at_end: Vec::new(),
                outages: Vec::new(),
                mixlog_error: None,
                panics: Vec::new(),
                aborted: Vec::new(),
            });
            let report = TickReport {
                thread: 0,
                tick,
                recorder: record(tick),
                finished,
            };
            let _ = tx.send(report);
        }
        rx
    }

    /// Runs one thread's `ticks` (tick, segment, transactions) through the collector with
    /// `interval`; returns each interval's (start s, length s, committed per segment).
    async fn intervals_of(ticks: &[(u64, usize, u64)], interval: u64) -> Vec<(u64, u64, [u64; 2])> {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let start = Instant::now();
        let last = ticks.iter().map(|t| t.0).max().unwrap_or(0);
        let rx = one_thread(start, last, |tick| {
            let mut rec = Recorder::new(keys.len());
            for (_, segment, n) in ticks.iter().filter(|t| t.0 == tick) {
                for _ in 0..*n {
                    rec.record(keys.key(*segment, 0, 0), Outcome::Committed, 1_000, None, 0);
                }
            }
            rec
        });
        let mut out = Vec::new();
        let mut sink = |at: Duration, len: Duration, rec: &Recorder| {
            let per_segment = [0, 1].map(|s| keys.sum_where(rec, |p| p.segment == s).committed);
            out.push((at.as_secs(), len.as_secs(), per_segment));
            Ok(())
        };
        let cadence = Cadence {
            interval: Duration::from_secs(interval),
            progress: Duration::ZERO,
            poll: Duration::ZERO,
        };
        let poller = Poller {
            shares: vec![None, None],
            headline: None,
        };
        let sink_events: Arc<dyn Sink> = Arc::new(crate::event::Discard);
        Collector::new(&keys, 1, start, cadence, poller, &mut sink, sink_events)
            .run(rx)
            .await
            .unwrap();
        out
    }

    /// A transaction of phase 1 (which ends at 10 s) reported at tick 12 belongs to the
    /// interval holding phase 1's last tick ([8, 12) s), not to [12, 16): interval rows never
    /// reach past their phase, and nothing is lost.
    #[tokio::test]
    async fn late_transactions_are_routed_to_their_phases_last_interval() {
        let mut ticks: Vec<(u64, usize, u64)> =
            (0..16).map(|t| (t, usize::from(t >= 10), 1)).collect();
        ticks.push((12, 0, 5));
        let rows = intervals_of(&ticks, 4).await;
        let starts: Vec<u64> = rows.iter().map(|r| r.0).collect();
        assert_eq!(starts, [0, 4, 8, 12], "{rows:?}");
        // [8, 12): ticks 8, 9 of phase 1, plus the 5 late ones; ticks 10, 11 of phase 2.
        assert_eq!(rows[2].2, [2 + 5, 2], "{rows:?}");
        // [12, 16): phase 2 only.
        assert_eq!(rows[3].2, [0, 4], "{rows:?}");
        let total: u64 = rows.iter().map(|r| r.2[0] + r.2[1]).sum();
        assert_eq!(total, 16 + 5);
    }

    /// Once the phase's last interval is written, a later straggler stays in its own tick's
    /// interval rather than being dropped.
    #[tokio::test]
    async fn stragglers_after_their_phases_interval_closed_are_kept() {
        let mut ticks: Vec<(u64, usize, u64)> =
            (0..20).map(|t| (t, usize::from(t >= 10), 1)).collect();
        ticks.push((17, 0, 3));
        let rows = intervals_of(&ticks, 4).await;
        assert_eq!(rows[2].2, [2, 2], "{rows:?}");
        assert_eq!(rows[4].2, [3, 4], "{rows:?}");
        let total: u64 = rows.iter().map(|r| r.2[0] + r.2[1]).sum();
        assert_eq!(total, 20 + 3);
    }

    /// A run by count (`-t`) ends between two ticks, well before its planned end: the ticks
    /// before are whole intervals, and the last one, which the thread's final report holds,
    /// is written once with its true length, not as a whole second.
    #[tokio::test]
    async fn a_run_that_ends_early_writes_its_last_interval_with_its_true_length() {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let start = Instant::now();
        let (tx, rx) = mpsc::unbounded_channel();
        for tick in 0..=2u64 {
            let mut rec = Recorder::new(keys.len());
            rec.record(keys.key(0, 0, 0), Outcome::Committed, 1_000, None, 0);
            let finished = (tick == 2).then(|| ThreadEnd {
                at: start + Duration::from_millis(2_700),
                reconnects: 0,
                connect_time: Default::default(),
                at_end: Vec::new(),
                outages: Vec::new(),
                mixlog_error: None,
                panics: Vec::new(),
                aborted: Vec::new(),
            });
            let _ = tx.send(TickReport {
                thread: 0,
                tick,
                recorder: rec,
                finished,
            });
        }
        drop(tx);
        let mut rows = Vec::new();
        let mut sink = |at: Duration, len: Duration, rec: &Recorder| {
            rows.push((at.as_millis(), len.as_millis(), rec.total().committed));
            Ok(())
        };
        let cadence = Cadence {
            interval: Duration::from_secs(1),
            progress: Duration::ZERO,
            poll: Duration::ZERO,
        };
        let poller = Poller {
            shares: vec![None, None],
            headline: None,
        };
        let events: Arc<dyn Sink> = Arc::new(crate::event::Discard);
        Collector::new(&keys, 1, start, cadence, poller, &mut sink, events)
            .run(rx)
            .await
            .unwrap();
        assert_eq!(rows, [(0, 1000, 1), (1000, 1000, 1), (2000, 700, 1)]);
    }

    /// One driver thread's 20 ticks over two 10 s phases, through the real collector: the
    /// progress lines, polling blocks and phase edges arrive as events, nothing is printed.
    #[tokio::test]
    async fn sends_progress_poll_and_phase_edges_to_the_sink() {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let start = Instant::now();
        let rx = one_thread(start, 19, |tick| {
            let mut rec = Recorder::new(keys.len());
            let segment = (tick / 10) as usize;
            for _ in 0..3 {
                rec.record(keys.key(segment, 0, 0), Outcome::Committed, 1_000, None, 0);
            }
            rec
        });
        let recorded = Recorded::new();
        let mut intervals = 0;
        let mut sink = |_: Duration, _: Duration, _: &Recorder| {
            intervals += 1;
            Ok(())
        };
        let cadence = Cadence {
            interval: Duration::from_secs(10),
            progress: Duration::from_secs(5),
            poll: Duration::from_secs(10),
        };
        let poller = Poller {
            shares: vec![Some(vec![100.0]), Some(vec![100.0])],
            headline: None,
        };
        let collected = Collector::new(
            &keys,
            1,
            start,
            cadence,
            poller,
            &mut sink,
            recorded.clone(),
        )
        .run(rx)
        .await
        .unwrap();
        assert_eq!(collected.total.total().committed, 60);

        let events = recorded.events();
        let progress: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Progress(p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(progress.len(), 4, "{events:?}");
        assert_eq!(progress[0].elapsed, Duration::from_secs(5));
        assert!((progress[0].tps - 3.0).abs() < 1e-9, "{:?}", progress[0]);
        assert_eq!((progress[0].failed, progress[0].retried), (0, 0));

        let polls: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Poll(b) => Some(b),
                _ => None,
            })
            .collect();
        assert_eq!(polls.len(), 2, "{events:?}");
        assert_eq!(
            polls.iter().map(|b| b.phase.as_str()).collect::<Vec<_>>(),
            ["p1", "p2"]
        );
        assert_eq!(polls[0].types.len(), 1);
        assert_eq!(polls[0].types[0].passed, 30);
        assert_eq!(polls[1].groups[0].target_pct, Some(100.0));

        let edges: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::PhaseEdge(p) => Some((p.phase.as_str(), p.at)),
                _ => None,
            })
            .collect();
        assert_eq!(
            edges,
            [("p1", Duration::ZERO), ("p2", Duration::from_secs(10))]
        );
    }
}
