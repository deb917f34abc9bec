//! One client: a loop that owns its sessions, in the spirit of pgbench's client state machine:
//! find the segment → (sleep while inactive) → serve a due emulator job if there is one →
//! schedule → draw a target card and a transaction card → start → (statement ⇄ wait)* → end;
//! on error roll back, then retry with the same parameters (serialization failure, deadlock) up
//! to `max_tries`, or count the failure by class and go on; an error of the workload's own
//! (a script's runtime error) is counted and ends the client, as pgbench's. A lost session is reopened with
//! capped backoff; while a target is down its cards count as `connection` failures, so one dead
//! target never stalls the run. A card for a down target costs what a try on it typically
//! took: in shared mode a dead group's cards hold clients as its live ones did, instead of
//! failing at once and letting the other groups run ahead of their shares.
//!
//! Each try runs under the thread's watchdog ([`super::watchdog`]): one that outlives the
//! transaction timeout is abandoned as a `timeout` failure (its session dropped, a
//! CancelRequest sent, a new session opened for the next card); one still in flight at the
//! run's end or at a stop is cut and not counted, so the measured window never grows past the
//! duration and Ctrl-C ends the run at once. The server may still commit a try cut during its
//! COMMIT: those are counted per target as `cut_in_flight`, the margin of the server check.
//!
//! Emulated work (a workload's [`Emulator`] per set, e.g. TPC-E's market) is served by the
//! clients that reach the set, between their own transactions: first, before any card, the jobs
//! that must end before the customers start (Trade-Cleanup); then, before each card, a job that
//! has fallen due. The decks are not touched, so the drawn types keep their shares exactly.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::metrics::rollup::KeyShape;
use crate::metrics::{Outcome, Recorder};
use crate::workload::{Emulator, Job, Rng, Terminal};

use super::deck::Deck;
use super::layout::{ClientAssignment, Layout, Pace};
use super::outages::Outage;
use super::schedule::Schedule;
use super::session::{ConnectTime, EndCounts, Session};
use super::stop::Stop;
use super::watchdog::Watch;
use crate::metrics::mixlog::{MixLog, MixRecord};
use crate::metrics::txnlog::{TxnEntry, TxnLog};

mod attempt;
mod failure;

use attempt::{CANCEL_WITHIN, CLOSE_WITHIN};

/// What every client of a run shares.
pub struct ClientShared {
    pub layout: Layout,
    pub protocol: pgwire::Protocol,
    pub max_tries: u32,
    /// What a client does after an error no retry helps (pgbench's abort, or go on).
    pub on_error: crate::config::OnError,
    /// `--verbose-errors`: where a retryable error's tries are told; `None` (the default)
    /// costs nothing.
    pub verbose_errors: Option<Arc<dyn crate::event::Sink>>,
    /// How (segment, target, type) make a recorder key.
    pub keys: KeyShape,
    pub stop: Stop,
    /// How long one try may run before it is abandoned as a `timeout` failure.
    pub txn_timeout: Option<Duration>,
    /// pgbench's `-t`: transactions each client runs before it ends.
    pub transactions: Option<u64>,
    /// pgbench's `-C`: a new session for every transaction.
    pub connect_each: bool,
    /// pgbench's `-L`: a transaction over it is late; with a rate, one already later than it
    /// when due is skipped.
    pub latency_limit: Option<Duration>,
    /// Where the watchdogs publish the tries in flight, for the progress line.
    pub running: Arc<super::running::Running>,
}

/// One client's own state.
pub struct Client {
    pub id: u32,
    pub shared: Arc<ClientShared>,
    pub role: ClientAssignment,
    /// Global target index of each session.
    targets: Vec<usize>,
    /// Session index of each global target (`usize::MAX` where the client has none).
    session_of: Vec<usize>,
    pub sessions: Vec<Session>,
    /// Sets whose emulators this client serves.
    served: Vec<usize>,
    /// The workload's own state per group (index = group).
    terminals: Vec<Box<dyn Terminal>>,
    rng: Rng,
    recorder: Rc<RefCell<Recorder>>,
    mixlog: Option<Rc<RefCell<MixLog>>>,
    /// pgbench's transaction log (`-l`), and this client's transactions so far (its
    /// `transaction_no` column).
    txn_log: Option<Rc<RefCell<TxnLog>>>,
    txn_count: std::cell::Cell<u64>,
    /// What the thread's watchdog sees of this client's try in flight.
    watch: Rc<Watch>,
    /// CancelRequests sent for abandoned tries, awaited (bounded) before the client ends.
    cancels: Vec<evloop::JoinHandle<()>>,
    /// When and why a workload's own error ended this client (pgbench's runtime errors).
    aborted: Option<(Instant, String)>,
    /// With `-C`: the sessions opened per transaction and the time that took.
    connect_time: ConnectTime,
}

/// What a client shares with the other clients of its driver thread.
pub struct OnThread {
    pub recorder: Rc<RefCell<Recorder>>,
    pub mixlog: Option<Rc<RefCell<MixLog>>>,
    pub txn_log: Option<Rc<RefCell<TxnLog>>>,
    /// This client's watch, which the thread's watchdog looks at.
    pub watch: Rc<Watch>,
}

/// What a client leaves when it ends: per global target, sessions reopened and tries cut in
/// flight at the end.
pub struct ClientEnd {
    pub reconnects: u64,
    pub at_end: Vec<(usize, EndCounts)>,
    /// The sessions' outages, with their global targets.
    pub outages: Vec<Outage>,
    /// This client's id, when and why an error of the workload's own ended it.
    pub aborted: Option<(u32, Instant, String)>,
    /// With `-C`: sessions opened per transaction, and the time they took.
    pub connect_time: ConnectTime,
}

/// What one try runs: the transaction a group's terminal drew (on a set whose emulator, if any,
/// gets what it produces), or an emulator's job.
#[derive(Clone, Copy)]
enum Work<'w> {
    Drawn {
        group: usize,
        emulator: Option<&'w dyn Emulator>,
    },
    Emulated {
        emulator: &'w dyn Emulator,
        job: &'w Job,
    },
}

/// When a transaction was due, started and ended, for its record.
struct Timing {
    /// The group, and the type's index in its workload (for pgbench's `script_no`).
    group: usize,
    script: usize,
    scheduled: Instant,
    started: Instant,
    ended: Instant,
    /// Whether it had a schedule to lag behind (a rate, or an emulator's due time).
    lagged: bool,
}

/// The run's clock: its common start and the end of its last segment.
struct Run {
    start: Instant,
    deadline: Instant,
}

/// What one draw gave: the set (target card), its group, and the group's transaction type.
#[derive(Clone, Copy)]
struct Card {
    set: usize,
    group: usize,
    txn: usize,
}

/// The client's settings for the segment it is in.
struct InSegment {
    index: usize,
    end: Instant,
    active: bool,
    deck: Deck<u16>,
    mixes: Vec<Option<Deck<u8>>>,
    pace: Pace,
}

impl Client {
    pub fn new(
        id: u32,
        shared: Arc<ClientShared>,
        role: ClientAssignment,
        sessions: Vec<Session>,
        rng: Rng,
        on_thread: OnThread,
    ) -> Client {
        let OnThread {
            recorder,
            mixlog,
            txn_log,
            watch,
        } = on_thread;
        let layout = &shared.layout;
        let targets = layout.client_targets(&role);
        let mut session_of = vec![usize::MAX; layout.targets.len()];
        for (local, t) in targets.iter().enumerate() {
            session_of[*t] = local;
        }
        let terminals = layout
            .groups
            .iter()
            .map(|g| Arc::clone(&g.workload).terminal(role.slot))
            .collect();
        let served = layout.served_sets(&role);
        Client {
            id,
            role,
            served,
            targets,
            session_of,
            sessions,
            terminals,
            rng,
            recorder,
            mixlog,
            txn_log,
            txn_count: std::cell::Cell::new(0),
            shared,
            watch,
            cancels: Vec::new(),
            aborted: None,
            connect_time: ConnectTime::default(),
        }
    }

    fn enter(&self, index: usize, start: Instant, run: u32) -> InSegment {
        let layout = &self.shared.layout;
        let seg = &layout.segments[index];
        InSegment {
            index,
            end: start + seg.end,
            active: layout.active(&self.role, seg.phase),
            deck: layout.set_deck(&self.role, seg.phase, run),
            mixes: (0..layout.groups.len())
                .map(|g| layout.mix_deck(seg.phase, g))
                .collect(),
            pace: layout.pace(&self.role, seg.phase),
        }
    }

    /// Runs transactions from `start` to the end of the last segment, or until the stop: the
    /// state machine of the module's header, one named step each.
    pub async fn run(mut self, start: Instant) -> Client {
        let shared = Arc::clone(&self.shared);
        let Some(last) = shared.layout.segments.last() else {
            return self;
        };
        let run = Run {
            start,
            deadline: start + last.end,
        };
        let mut seg = self.enter(0, start, 1);
        if !self.serve_startup(start, run.deadline).await {
            return self;
        }
        let mut schedule: Option<Schedule> = seg.pace.rate.map(|r| Schedule::new(start, r));
        // A card whose work never waits (a script of `\set` lines) would keep the thread to
        // this client; pgbench's threads take their clients in turn (issue 38).
        let mut fair = evloop::FairShare::new();
        let mut left = shared
            .transactions
            .or_else(|| shared.layout.units_per_client(&self.role));
        loop {
            fair.take_turn().await;
            if left == Some(0) {
                break;
            }
            let now = Instant::now();
            if now >= seg.end && !self.next_segment(&mut seg, &mut schedule, &run, now) {
                break;
            }
            if self.aborted.is_some() {
                // pgbench 17's --exit-on-abort: the first aborted client ends the run.
                if shared.on_error == crate::config::OnError::ExitRun {
                    shared.stop.trigger();
                }
                break;
            }
            if shared.stop.is_set() {
                break;
            }
            if !seg.active || seg.deck.is_empty() {
                if !self.pause_until(seg.end).await {
                    break;
                }
                continue;
            }
            if let Some((set, job)) = self.take_due(now) {
                self.run_job(set, job, seg.index, start, run.deadline).await;
                continue;
            }
            let Some(scheduled) = self.when_due(&mut schedule, &run, now).await else {
                break;
            };
            let Some(card) = self.draw(&mut seg) else {
                continue;
            };
            let lagged = schedule.is_some();
            // pgbench's -t counts every transaction a client ends, failed ones too.
            left = left.map(|n| n - 1);
            if lagged && self.skip_late(&shared, scheduled, &run) {
                continue;
            }
            if !self
                .play(&shared, card, &seg, scheduled, lagged, &run)
                .await
            {
                break;
            }
        }
        self
    }

    /// Moves on to the segment the clock is in (skipping any passed meanwhile), with its deck,
    /// mixes and pace; false when the last one has ended.
    fn next_segment(
        &mut self,
        seg: &mut InSegment,
        schedule: &mut Option<Schedule>,
        run: &Run,
        now: Instant,
    ) -> bool {
        let shared = Arc::clone(&self.shared);
        let layout = &shared.layout;
        let mut next = seg.index + 1;
        while next < layout.segments.len() && now >= run.start + layout.segments[next].end {
            next += 1;
        }
        if next >= layout.segments.len() {
            return false;
        }
        *seg = self.enter(next, run.start, seg.deck.run());
        if !layout.pace_is_constant(&self.role) {
            let seg_start = run.start + layout.segments[next].start;
            *schedule = seg.pace.rate.map(|r| Schedule::new(seg_start.max(now), r));
        }
        true
    }

    /// The instant the next transaction is due: now without a rate, else the schedule's next
    /// arrival, slept until; `None` when that is past the run's end or the stop came first.
    async fn when_due(
        &mut self,
        schedule: &mut Option<Schedule>,
        run: &Run,
        now: Instant,
    ) -> Option<Instant> {
        let Some(s) = schedule else {
            return Some(now);
        };
        let at = s.next(&mut self.rng);
        if at >= run.deadline || (at > now && !self.pause_until(at).await) {
            return None;
        }
        Some(at)
    }

    /// Draws the target card (a set) and, from the group's mix deck or its terminal, the
    /// transaction type, and lets the terminal draw its inputs.
    fn draw(&mut self, seg: &mut InSegment) -> Option<Card> {
        let set = seg.deck.draw(&mut self.rng)? as usize;
        let group = self.shared.layout.sets[set].group;
        let txn = match &mut seg.mixes[group] {
            Some(deck) => deck.draw(&mut self.rng).map_or(0, usize::from),
            None => self.terminals[group].next_type(&mut self.rng),
        };
        self.terminals[group].draw(txn, &mut self.rng);
        Some(Card { set, group, txn })
    }

    /// Plays a drawn card: the keying time, the transaction with its retries on the set's
    /// target for the type's role, its record, then the think time; false when the run ended
    /// or stopped meanwhile. `shared` is the run loop's own clone of `self.shared`: cloning
    /// it here, per transaction, would bounce its reference count between the CPUs.
    async fn play(
        &mut self,
        shared: &ClientShared,
        card: Card,
        seg: &InSegment,
        scheduled: Instant,
        lagged: bool,
        run: &Run,
    ) -> bool {
        let set = &shared.layout.sets[card.set];
        let g = &shared.layout.groups[card.group];
        // The set's target for the type's role, and this client's session to it.
        let target = set.target_for(g, card.txn);
        let local = self.session_of[target];
        // A workload's keying time (TPC-C's terminal model) is not part of the response
        // time: the clock starts when the keying ends.
        let keying = g.workload.keying_time(card.txn);
        let scheduled = if keying.is_zero() {
            scheduled
        } else {
            let until = (Instant::now() + keying).min(run.deadline);
            if !self.pause_until(until).await || Instant::now() >= run.deadline {
                return false;
            }
            Instant::now()
        };
        let global_txn = g.txn_map.get(card.txn).copied().unwrap_or(0);
        // pgbench's -C: a new session, whose opening is connection time, not the
        // transaction's (unless a rate's schedule counts it, as pgbench's -R does).
        let scheduled = if shared.connect_each {
            self.fresh_session(local).await;
            if lagged {
                scheduled
            } else {
                Instant::now()
            }
        } else {
            scheduled
        };
        self.watch.doing(global_txn);
        let started = Instant::now();
        let work = Work::Drawn {
            group: card.group,
            emulator: set.emulator.as_deref(),
        };
        let Some((outcome, retries)) = self.run_txn(local, work, scheduled, run.deadline).await
        else {
            return false;
        };
        let timing = Timing {
            group: card.group,
            script: card.txn,
            scheduled,
            started,
            ended: Instant::now(),
            lagged,
        };
        self.record(
            seg.index, target, global_txn, outcome, retries, &timing, run.start,
        );
        let think = seg.pace.think + g.workload.think_time(card.txn, &mut self.rng);
        // Pauses end at the deadline, so a long think time cannot hold the run open.
        think.is_zero()
            || self
                .pause_until((Instant::now() + think).min(run.deadline))
                .await
    }

    /// pgbench's `-L` with a rate: a transaction already later than the limit when it would
    /// start is not run but counted (and logged) as skipped; true when skipped.
    fn skip_late(&self, shared: &ClientShared, scheduled: Instant, run: &Run) -> bool {
        let Some(limit) = shared.latency_limit else {
            return false;
        };
        let now = Instant::now();
        if now.saturating_duration_since(scheduled) <= limit {
            return false;
        }
        self.recorder.borrow_mut().skipped += 1;
        if let Some(log) = &self.txn_log {
            let count = self.txn_count.get() + 1;
            self.txn_count.set(count);
            log.borrow_mut().write(&TxnEntry {
                client: self.id,
                count,
                latency_us: 0,
                lag_us: micros(now - scheduled),
                group: 0,
                script: 0,
                end_us: micros(now.saturating_duration_since(run.start)),
                retries: 0,
                failed: None,
                skipped: true,
            });
        }
        true
    }

    /// Records one transaction in the thread's recorder and, when on, the mix log.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        segment: usize,
        target: usize,
        global_txn: usize,
        outcome: Outcome,
        retries: u32,
        t: &Timing,
        start: Instant,
    ) {
        let latency_us = micros(t.ended - t.scheduled);
        let lag_us = t
            .lagged
            .then(|| micros(t.started.saturating_duration_since(t.scheduled)));
        let key = self.shared.keys.key(segment, target, global_txn);
        let late = !matches!(outcome, Outcome::Failed(_))
            && self
                .shared
                .latency_limit
                .is_some_and(|l| latency_us > micros(l));
        {
            let mut rec = self.recorder.borrow_mut();
            rec.record(key, outcome, latency_us, lag_us, retries);
            rec.late += u64::from(late);
        }
        if let Some(log) = &self.mixlog {
            log.borrow_mut().write(&MixRecord {
                end_us: micros(t.ended.saturating_duration_since(start)),
                latency_us: u32::try_from(latency_us).unwrap_or(u32::MAX),
                client: self.id,
                segment: segment as u16,
                target: target as u16,
                txn: global_txn as u8,
                outcome: MixRecord::outcome_code(outcome),
                retries: retries.min(255) as u8,
            });
        }
        if let Some(log) = &self.txn_log {
            let count = self.txn_count.get() + 1;
            self.txn_count.set(count);
            log.borrow_mut().write(&TxnEntry {
                client: self.id,
                count,
                latency_us,
                lag_us: lag_us.unwrap_or(0),
                group: t.group,
                script: t.script,
                end_us: micros(t.ended.saturating_duration_since(start)),
                retries,
                failed: match outcome {
                    Outcome::Failed(class) => Some(class),
                    _ => None,
                },
                skipped: false,
            });
        }
    }

    /// A job due at `now` from the emulators this client serves, with its set. Emulators are
    /// asked in turn from a point that moves with the client's id, so no set is always last.
    fn take_due(&self, now: Instant) -> Option<(usize, Job)> {
        let n = self.served.len();
        let sets = &self.shared.layout.sets;
        (0..n)
            .map(|k| self.served[(k + self.id as usize) % n])
            .find_map(|s| {
                let e = sets[s].emulator.as_ref()?;
                if !e.has_due(now) {
                    return None;
                }
                e.take_due(now).map(|job| (s, job))
            })
    }

    /// Before its first card, serves the jobs that must end before any drawn transaction of
    /// the sets it reaches (Trade-Cleanup), waiting while other clients run them; false when
    /// the run ended or stopped meanwhile.
    async fn serve_startup(&mut self, start: Instant, deadline: Instant) -> bool {
        let shared = Arc::clone(&self.shared);
        let starting = |s: &usize| {
            shared.layout.sets[*s]
                .emulator
                .as_ref()
                .is_some_and(|e| e.starting())
        };
        while self.served.iter().any(starting) {
            let now = Instant::now();
            if now >= deadline || shared.stop.is_set() {
                return false;
            }
            match self.take_due(now) {
                Some((set, job)) => self.run_job(set, job, 0, start, deadline).await,
                None => {
                    if !self.pause_until(now + STARTUP_POLL).await {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Runs an emulator's job on its set's target for the job type's role, with retries, and
    /// records it (response time and lag from its due instant); a job that did not commit goes
    /// back to its emulator.
    async fn run_job(
        &mut self,
        set: usize,
        job: Job,
        segment: usize,
        start: Instant,
        deadline: Instant,
    ) {
        let shared = Arc::clone(&self.shared);
        let slot = &shared.layout.sets[set];
        let Some(emulator) = slot.emulator.as_deref() else {
            return;
        };
        let g = &shared.layout.groups[slot.group];
        let target = slot.target_for(g, job.txn);
        let local = self.session_of[target];
        let global_txn = g.txn_map.get(job.txn).copied().unwrap_or(0);
        self.watch.doing(global_txn);
        let started = Instant::now();
        let work = Work::Emulated {
            emulator,
            job: &job,
        };
        let scheduled = job.due.min(started);
        let Some((outcome, retries)) = self.run_txn(local, work, scheduled, deadline).await else {
            return;
        };
        let timing = Timing {
            group: slot.group,
            script: job.txn,
            scheduled,
            started,
            ended: Instant::now(),
            lagged: true,
        };
        self.record(
            segment, target, global_txn, outcome, retries, &timing, start,
        );
        if let Outcome::Failed(class) = outcome {
            emulator.failed(job, class, timing.ended);
        }
    }

    /// Sleeps until `at`; false when the stop came first.
    async fn pause_until(&self, at: Instant) -> bool {
        tokio::select! {
            _ = evloop::sleep_until(at) => !self.shared.stop.is_set(),
            _ = self.shared.stop.wait() => false,
        }
    }

    /// Ends every session politely so the server flushes its statistics at exit (each
    /// goodbye bounded: a hung server must not hold the run's end), after the CancelRequests
    /// still on their way.
    pub async fn close(self) -> ClientEnd {
        for c in self.cancels {
            let _ = evloop::timeout(CANCEL_WITHIN, c).await;
        }
        let mut end = ClientEnd {
            reconnects: 0,
            at_end: Vec::new(),
            outages: Vec::new(),
            aborted: self.aborted.map(|(at, why)| (self.id, at, why)),
            connect_time: self.connect_time,
        };
        for (s, target) in self.sessions.into_iter().zip(self.targets) {
            if !s.at_end.is_empty() {
                end.at_end.push((target, s.at_end.clone()));
            }
            end.reconnects += s.reconnects;
            end.outages
                .extend(s.outages.iter().map(|(lost, back)| (target, *lost, *back)));
            if let Some(c) = s.conn {
                let _ = evloop::timeout(CLOSE_WITHIN, c.close()).await;
            }
        }
        end
    }
}

/// How often a client waiting for another's startup job looks again.
const STARTUP_POLL: Duration = Duration::from_millis(2);

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
