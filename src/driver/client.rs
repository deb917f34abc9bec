//! One client: a loop that owns its session, in the spirit of pgbench's client state machine:
//! schedule → draw → start → (statement ⇄ wait)* → end; on error roll back, then retry with the
//! same parameters (serialization failure, deadlock) up to `max_tries`, or count the failure by
//! class and go on. A lost session is reopened with capped backoff; while the target is down
//! each attempt counts as a `connection` failure, so a dead target never stalls the run.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::metrics::{ErrorClass, Outcome, Recorder};
use crate::workload::{Rng, TxnEnd, Workload};

use super::schedule::Schedule;
use super::stop::Stop;

const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// What every client of a run shares.
pub struct ClientShared {
    pub workload: Workload,
    pub protocol: pgwire::Protocol,
    pub params: pgwire::ConnectParams,
    pub max_tries: u32,
    /// Number of transaction types: recorder key = target * types + txn.
    pub txn_types: usize,
    pub target: usize,
    pub stop: Stop,
}

/// One client's own state.
pub struct Client {
    pub shared: Arc<ClientShared>,
    pub conn: Option<pgwire::Connection>,
    pub rng: Rng,
    pub schedule: Option<Schedule>,
    pub recorder: Rc<RefCell<Recorder>>,
    backoff: Duration,
    next_connect: Option<Instant>,
    /// Sessions opened after the first (each counts one transaction at the server).
    pub reconnects: u64,
}

impl Client {
    pub fn new(
        shared: Arc<ClientShared>,
        conn: pgwire::Connection,
        rng: Rng,
        schedule: Option<Schedule>,
        recorder: Rc<RefCell<Recorder>>,
    ) -> Client {
        Client {
            shared,
            conn: Some(conn),
            rng,
            schedule,
            recorder,
            backoff: BACKOFF_FIRST,
            next_connect: None,
            reconnects: 0,
        }
    }

    /// Runs transactions until `deadline` or the stop signal; returns the client for closing.
    pub async fn run(mut self, deadline: Instant) -> Client {
        let shared = Arc::clone(&self.shared);
        let workload = &shared.workload;
        loop {
            let scheduled = match &mut self.schedule {
                Some(s) => {
                    let at = s.next(&mut self.rng);
                    if at >= deadline {
                        break;
                    }
                    tokio::time::sleep_until(at.into()).await;
                    at
                }
                None => Instant::now(),
            };
            if self.shared.stop.is_set() || Instant::now() >= deadline {
                break;
            }
            let txn = workload.draw_txn(&mut self.rng);
            let args = workload.draw_args(txn, &mut self.rng);
            let started = Instant::now();
            let (outcome, retries) = self.run_txn(workload, txn, &args, deadline).await;
            let ended = Instant::now();
            let latency_us = micros(ended - scheduled);
            let lag_us = self.schedule.as_ref().map(|_| micros(started - scheduled));
            let key = self.shared.target * self.shared.txn_types + txn;
            self.recorder
                .borrow_mut()
                .record(key, outcome, latency_us, lag_us, retries);
        }
        self
    }

    /// One transaction with its retries: (outcome, extra tries).
    async fn run_txn(
        &mut self,
        workload: &Workload,
        txn: usize,
        args: &crate::workload::TxnArgs,
        deadline: Instant,
    ) -> (Outcome, u32) {
        let mut tries = 0u32;
        loop {
            tries += 1;
            if !self.ensure_session(deadline).await {
                return (Outcome::Failed(ErrorClass::Connection), tries - 1);
            }
            let Some(conn) = self.conn.as_mut() else {
                return (Outcome::Failed(ErrorClass::Connection), tries - 1);
            };
            let result = workload
                .execute(conn, self.shared.protocol, txn, args)
                .await;
            let err = match result {
                Ok(TxnEnd::Committed) => return (Outcome::Committed, tries - 1),
                Ok(TxnEnd::ExpectedRollback) => return (Outcome::ExpectedRollback, tries - 1),
                Err(e) => e,
            };
            let class = ErrorClass::of(&err);
            if err.is_connection_lost() {
                self.conn = None;
                return (Outcome::Failed(ErrorClass::Connection), tries - 1);
            }
            if conn.tx_status() != pgwire::TxStatus::Idle {
                if let Err(e) = conn.simple_query("ROLLBACK").await {
                    if e.is_connection_lost() {
                        self.conn = None;
                    }
                    return (Outcome::Failed(class), tries - 1);
                }
            }
            let may_retry = class.is_retryable()
                && tries < self.shared.max_tries
                && !self.shared.stop.is_set()
                && Instant::now() < deadline;
            if !may_retry {
                return (Outcome::Failed(class), tries - 1);
            }
        }
    }

    /// Makes sure a session is open, reopening a lost one (capped exponential backoff between
    /// tries). False when none could be had before the deadline or the stop.
    async fn ensure_session(&mut self, deadline: Instant) -> bool {
        if self.conn.is_none() {
            if let Some(at) = self.next_connect {
                let wake = at.min(deadline);
                tokio::select! {
                    _ = tokio::time::sleep_until(wake.into()) => {}
                    _ = self.shared.stop.wait() => return false,
                }
                if Instant::now() >= deadline {
                    return false;
                }
            }
            match pgwire::Connection::connect(&self.shared.params).await {
                Ok(c) => {
                    self.conn = Some(c);
                    self.reconnects += 1;
                    self.backoff = BACKOFF_FIRST;
                    self.next_connect = None;
                }
                Err(_) => {
                    self.next_connect = Some(Instant::now() + self.backoff);
                    self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
                    return false;
                }
            }
        }
        true
    }

    /// Ends the session politely so the server flushes its statistics at exit.
    pub async fn close(mut self) -> u64 {
        if let Some(c) = self.conn.take() {
            c.close().await;
        }
        self.reconnects
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
