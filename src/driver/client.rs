//! One client: a loop that owns its sessions, in the spirit of pgbench's client state machine:
//! find the segment → (sleep while inactive) → schedule → draw a target card and a transaction
//! card → start → (statement ⇄ wait)* → end; on error roll back, then retry with the same
//! parameters (serialization failure, deadlock) up to `max_tries`, or count the failure by
//! class and go on. A lost session is reopened with capped backoff; while a target is down its
//! cards count as `connection` failures, so one dead target never stalls the run.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::metrics::rollup::KeyShape;
use crate::metrics::{ErrorClass, Outcome, Recorder};
use crate::workload::{Rng, Terminal, TxnEnd};

use super::deck::Deck;
use super::layout::{ClientAssignment, Layout, Pace};
use super::schedule::Schedule;
use super::session::Session;
use super::stop::Stop;
use crate::metrics::mixlog::{MixLog, MixRecord};

/// What every client of a run shares.
pub struct ClientShared {
    pub layout: Layout,
    pub protocol: pgwire::Protocol,
    pub max_tries: u32,
    /// How (segment, target, type) make a recorder key.
    pub keys: KeyShape,
    pub stop: Stop,
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
    /// The workload's own state per group (index = group).
    terminals: Vec<Box<dyn Terminal>>,
    rng: Rng,
    recorder: Rc<RefCell<Recorder>>,
    mixlog: Option<Rc<RefCell<MixLog>>>,
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
        recorder: Rc<RefCell<Recorder>>,
        mixlog: Option<Rc<RefCell<MixLog>>>,
    ) -> Client {
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
        Client {
            id,
            role,
            targets,
            session_of,
            sessions,
            terminals,
            rng,
            recorder,
            mixlog,
            shared,
        }
    }

    fn enter(&self, index: usize, start: Instant) -> InSegment {
        let layout = &self.shared.layout;
        let seg = &layout.segments[index];
        InSegment {
            index,
            end: start + seg.end,
            active: layout.active(&self.role, seg.phase),
            deck: layout.set_deck(&self.role, seg.phase),
            mixes: (0..layout.groups.len())
                .map(|g| layout.mix_deck(seg.phase, g))
                .collect(),
            pace: layout.pace(&self.role, seg.phase),
        }
    }

    /// Runs transactions from `start` to the end of the last segment, or until the stop.
    pub async fn run(mut self, start: Instant) -> Client {
        let shared = Arc::clone(&self.shared);
        let layout = &shared.layout;
        let Some(last) = layout.segments.last() else {
            return self;
        };
        let deadline = start + last.end;
        let mut seg = self.enter(0, start);
        let mut schedule: Option<Schedule> = seg.pace.rate.map(|r| Schedule::new(start, r));
        loop {
            let now = Instant::now();
            if now >= seg.end {
                let mut next = seg.index + 1;
                while next < layout.segments.len() && now >= start + layout.segments[next].end {
                    next += 1;
                }
                if next >= layout.segments.len() {
                    break;
                }
                seg = self.enter(next, start);
                if !layout.pace_is_constant(&self.role) {
                    let seg_start = start + layout.segments[next].start;
                    schedule = seg.pace.rate.map(|r| Schedule::new(seg_start.max(now), r));
                }
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
            let scheduled = match &mut schedule {
                Some(s) => {
                    let at = s.next(&mut self.rng);
                    if at >= deadline {
                        break;
                    }
                    if at > now && !self.pause_until(at).await {
                        break;
                    }
                    at
                }
                None => now,
            };
            let Some(card) = seg.deck.draw(&mut self.rng) else {
                continue;
            };
            let set = &layout.sets[card as usize];
            let group = set.group;
            let g = &layout.groups[group];
            let txn = match &mut seg.mixes[group] {
                Some(deck) => deck.draw(&mut self.rng).map_or(0, usize::from),
                None => self.terminals[group].next_type(&mut self.rng),
            };
            self.terminals[group].draw(txn, &mut self.rng);
            // The set's target for the type's role, and this client's session to it.
            let role = g.txn_role.get(txn).copied().unwrap_or(0);
            let target = set.targets.get(role).copied().unwrap_or(set.targets[0]);
            let local = self.session_of[target];
            // A workload's keying time (TPC-C's terminal model) is not part of the response
            // time: the clock starts when the keying ends.
            let keying = g.workload.keying_time(txn);
            let scheduled = if keying.is_zero() {
                scheduled
            } else {
                let until = (Instant::now() + keying).min(deadline);
                if !self.pause_until(until).await || Instant::now() >= deadline {
                    break;
                }
                Instant::now()
            };
            let started = Instant::now();
            let (outcome, retries) = self.run_txn(local, group, deadline).await;
            let ended = Instant::now();
            let latency_us = micros(ended - scheduled);
            let lag_us = schedule.as_ref().map(|_| micros(started - scheduled));
            let global_txn = g.txn_map.get(txn).copied().unwrap_or(0);
            let key = shared.keys.key(seg.index, target, global_txn);
            self.recorder
                .borrow_mut()
                .record(key, outcome, latency_us, lag_us, retries);
            if let Some(log) = &self.mixlog {
                log.borrow_mut().write(&MixRecord {
                    end_us: micros(ended.saturating_duration_since(start)),
                    latency_us: u32::try_from(latency_us).unwrap_or(u32::MAX),
                    client: self.id,
                    segment: seg.index as u16,
                    target: target as u16,
                    txn: global_txn as u8,
                    outcome: MixRecord::outcome_code(outcome),
                    retries: retries.min(255) as u8,
                });
            }
            let think = seg.pace.think + g.workload.think_time(txn, &mut self.rng);
            // Pauses end at the deadline, so a long think time cannot hold the run open.
            if !think.is_zero()
                && !self
                    .pause_until((Instant::now() + think).min(deadline))
                    .await
            {
                break;
            }
        }
        self
    }

    /// Sleeps until `at`; false when the stop came first.
    async fn pause_until(&self, at: Instant) -> bool {
        tokio::select! {
            _ = tokio::time::sleep_until(at.into()) => !self.shared.stop.is_set(),
            _ = self.shared.stop.wait() => false,
        }
    }

    /// The transaction `group`'s terminal drew, with its retries on session `local`:
    /// (outcome, extra tries).
    async fn run_txn(&mut self, local: usize, group: usize, deadline: Instant) -> (Outcome, u32) {
        let shared = Arc::clone(&self.shared);
        let mut tries = 0u32;
        loop {
            tries += 1;
            if !self.ready(local, deadline).await {
                return (Outcome::Failed(ErrorClass::Connection), tries - 1);
            }
            let Some(conn) = self.sessions[local].conn.as_mut() else {
                return (Outcome::Failed(ErrorClass::Connection), tries - 1);
            };
            let err = match self.terminals[group].execute(conn, shared.protocol).await {
                Ok(TxnEnd::Committed) => return (Outcome::Committed, tries - 1),
                Ok(TxnEnd::ExpectedRollback) => return (Outcome::ExpectedRollback, tries - 1),
                Err(e) => e,
            };
            let class = ErrorClass::of(&err);
            if err.is_connection_lost() {
                self.sessions[local].lost();
                return (Outcome::Failed(ErrorClass::Connection), tries - 1);
            }
            if conn.tx_status() != pgwire::TxStatus::Idle {
                if let Err(e) = conn.simple_query("ROLLBACK").await {
                    if e.is_connection_lost() {
                        self.sessions[local].lost();
                    }
                    return (Outcome::Failed(class), tries - 1);
                }
            }
            let may_retry = class.is_retryable()
                && tries < shared.max_tries
                && !shared.stop.is_set()
                && Instant::now() < deadline;
            if !may_retry {
                return (Outcome::Failed(class), tries - 1);
            }
        }
    }

    /// Makes sure session `local` is open. A client with other sessions does not wait for a
    /// down target's backoff (its card fails at once); a client whose every session is down
    /// waits for the earliest retry, so it never spins.
    async fn ready(&mut self, local: usize, deadline: Instant) -> bool {
        if self.sessions[local].conn.is_some() {
            return true;
        }
        let now = Instant::now();
        if !self.sessions[local].may_try(now) {
            let all_down = self.sessions.iter().all(|s| s.conn.is_none());
            if !all_down {
                return false;
            }
            let wake = self.sessions[local].next_try().min(deadline);
            if !self.pause_until(wake).await || Instant::now() >= deadline {
                return false;
            }
        }
        let params = &self.shared.layout.targets[self.targets[local]].params;
        self.sessions[local].reconnect(params).await
    }

    /// Ends every session politely so the server flushes its statistics at exit; returns the
    /// number of sessions reopened during the run.
    pub async fn close(self) -> u64 {
        let mut reconnects = 0;
        for s in self.sessions {
            reconnects += s.close().await;
        }
        reconnects
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
