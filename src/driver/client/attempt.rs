//! One try of a client's transaction, and its retries: open the session if it is down (a
//! card for a down target costs its typical try time), run the work under the thread's
//! watchdog, roll back on error, retry what may be retried; give up a try the watchdog cut
//! (a timeout, the run's end, a stop) with a CancelRequest, and keep what the server check
//! needs to know about it.

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::metrics::{ErrorClass, Outcome};
use crate::workload::TxnEnd;

use super::super::watchdog::Cut;
use super::{Client, Work};

/// How one try ended when the watchdog did not cut it.
enum Tried {
    Done(Outcome),
    /// Failed; retried when the class allows it.
    Failed(ErrorClass),
    /// Failed in a way no retry can help (the session is gone, or could not roll back).
    Final(ErrorClass),
}

fn end_grace(cut: Cut) -> Duration {
    match cut {
        Cut::Stop => STOP_END_GRACE,
        _ => END_GRACE,
    }
}

/// How a try under the watchdog ended.
enum Ending {
    /// By itself, in time.
    Tried(Tried),
    /// Cut by the transaction timeout.
    TimedOut,
    /// By itself, within [`END_GRACE`] (after a stop [`STOP_END_GRACE`]) after the run's end: outside the measured window.
    AfterEnd(Tried),
    /// Cut at the run's end after [`END_GRACE`], its fate unknown.
    Cut,
}

/// How long a try in flight at the run's end may go on (outside the measured window) so the
/// server check learns whether it committed; one still running then is cancelled.
const END_GRACE: Duration = Duration::from_millis(300);
/// The same after a stop: shorter, since Ctrl-C must end the run within a second.
const STOP_END_GRACE: Duration = Duration::from_millis(200);
/// How long sending one CancelRequest may take (a stopped postmaster never answers).
pub(super) const CANCEL_WITHIN: Duration = Duration::from_millis(500);
/// How long saying goodbye on one session may take at the end.
pub(super) const CLOSE_WITHIN: Duration = Duration::from_millis(300);

/// pgbench 15's words for a client whose script ended inside a transaction block (the
/// drop-in matches them at the start of an abort message).
pub const LEFT_OPEN: &str = "end of script reached without completing the last transaction";

/// The fewest tries an emulator's job gets on a serialization failure or deadlock.
const JOB_MAX_TRIES: u32 = 10;

impl Client {
    /// `work` (due at `scheduled`) with its retries on session `local`: (outcome, extra
    /// tries); `None` when the run ended (or stopped) with it in flight, so it is not counted.
    pub(super) async fn run_txn(
        &mut self,
        local: usize,
        work: Work<'_>,
        scheduled: Instant,
        deadline: Instant,
    ) -> Option<(Outcome, u32)> {
        let max_tries = match work {
            // The emulated market resubmits what the brokerage could not serialize, as TPC-E
            // harnesses do (DBT-5 tries 10 times); each retry is counted.
            Work::Emulated { .. } => self.shared.max_tries.max(JOB_MAX_TRIES),
            Work::Drawn { .. } => self.shared.max_tries,
        };
        let watch = Rc::clone(&self.watch);
        let mut tries = 0u32;
        loop {
            tries += 1;
            let began = Instant::now();
            watch.begin(began);
            let ending = {
                let mut attempt = std::pin::pin!(self.try_once(local, work, deadline));
                match watch.guard(attempt.as_mut()).await {
                    Ok(tried) => Ending::Tried(tried),
                    Err(Cut::Timeout) => Ending::TimedOut,
                    // Out of the measured window, the try may finish for a moment, so the
                    // server check knows whether it committed; past that it is cut.
                    Err(end) => match evloop::timeout(end_grace(end), attempt).await {
                        Ok(tried) => Ending::AfterEnd(tried),
                        Err(_) => Ending::Cut,
                    },
                }
            };
            watch.end();
            let class = match ending {
                Ending::Tried(Tried::Done(outcome)) => {
                    self.sessions[local].note_try(began.elapsed());
                    return Some((outcome, tries - 1));
                }
                Ending::Tried(Tried::Final(class)) => {
                    return Some((Outcome::Failed(class), tries - 1))
                }
                Ending::Tried(Tried::Failed(class)) => class,
                Ending::TimedOut => {
                    self.on_timeout();
                    self.sessions[local].mark_down();
                    if self.abandon(local, true) {
                        self.sessions[local].at_end.cut_in_flight += 1;
                    }
                    return Some((Outcome::Failed(ErrorClass::Timeout), tries - 1));
                }
                Ending::AfterEnd(Tried::Done(Outcome::Committed)) => {
                    self.sessions[local].at_end.committed_after_end += 1;
                    return None;
                }
                Ending::AfterEnd(_) => return None,
                Ending::Cut => {
                    if self.abandon(local, true) {
                        self.sessions[local].at_end.cut_in_flight += 1;
                    }
                    return None;
                }
            };
            let past_end = Instant::now() >= deadline;
            if class.is_retryable() && past_end {
                // pgbench 15 finishes a client whose transaction failed in a retryable way
                // after the run's end (its tries spent or not) without counting or telling
                // it: the transaction never ended within the run.
                return None;
            }
            let may_retry = class.is_retryable() && tries < max_tries && !self.shared.stop.is_set();
            if class.is_retryable() {
                self.tell_next(tries, max_tries, may_retry, scheduled);
            }
            if !may_retry {
                return Some((Outcome::Failed(class), tries - 1));
            }
        }
    }

    /// One try of `work` on session `local`, opening the session first if it is down; on an
    /// error the transaction is rolled back so the session can go on.
    async fn try_once(&mut self, local: usize, work: Work<'_>, deadline: Instant) -> Tried {
        if !self.ready(local, deadline).await {
            return Tried::Final(ErrorClass::Connection);
        }
        // Copied, not borrowed through an `Arc` clone: every client of every driver thread
        // shares `shared`, and a reference count bumped per transaction from two CPUs
        // bounces its cache line between them.
        let protocol = self.shared.protocol;
        let Some(conn) = self.sessions[local].conn.as_mut() else {
            return Tried::Final(ErrorClass::Connection);
        };
        let run = match work {
            Work::Drawn { group, emulator } => {
                self.terminals[group].execute(conn, protocol, emulator)
            }
            Work::Emulated { emulator, job } => emulator.execute(job, conn, protocol),
        };
        let err = match run.await {
            Ok(TxnEnd::Committed) => {
                self.sessions[local].note_commit();
                return Tried::Done(Outcome::Committed);
            }
            Ok(TxnEnd::ExpectedRollback) => return Tried::Done(Outcome::ExpectedRollback),
            Ok(TxnEnd::LeftOpen) => return self.left_open(local, work).await,
            Err(e) => e,
        };
        let class = ErrorClass::of(&err);
        // Kept if first of its kind; may end the client (rolled back below first, so the
        // session is left clean).
        self.on_failure(&err, class, work);
        if err.is_connection_lost() {
            // The server may have committed it before the session broke (a fail-over).
            self.sessions[local].note_unknown();
            self.sessions[local].lost();
            return Tried::Final(ErrorClass::Connection);
        }
        let Some(conn) = self.sessions[local].conn.as_mut() else {
            return Tried::Final(class);
        };
        if conn.tx_status() != pgwire::TxStatus::Idle {
            if let Err(e) = conn.simple_query("ROLLBACK").await {
                if e.is_connection_lost() {
                    self.sessions[local].lost();
                }
                return Tried::Final(class);
            }
        }
        if self.aborted.is_some() {
            return Tried::Final(class);
        }
        Tried::Failed(class)
    }

    /// A script that ended inside its own transaction block: counted as pgbench counts it
    /// (processed), then the client ends with pgbench's words. The block is rolled back, so
    /// the server check leaves the transaction out of the server's commits.
    async fn left_open(&mut self, local: usize, work: Work<'_>) -> Tried {
        let name = match work {
            Work::Drawn { .. } => self.txn_name(self.watch.what()).to_string(),
            Work::Emulated { .. } => String::new(),
        };
        self.aborted = Some((
            Instant::now(),
            format!(
                "{LEFT_OPEN} (script \"{name}\"); end the script with COMMIT (or END) after \
                 its BEGIN"
            ),
        ));
        self.sessions[local].at_end.left_open += 1;
        if let Some(conn) = self.sessions[local].conn.as_mut() {
            if let Err(e) = conn.simple_query("ROLLBACK").await {
                if e.is_connection_lost() {
                    self.sessions[local].lost();
                }
            }
        }
        Tried::Done(Outcome::Committed)
    }

    /// Gives up session `local` half-way through a try: drops it (the next card opens a new
    /// one) and, with `cancel`, asks the server to cancel what it was running. True when a
    /// session was open, i.e. a transaction may have been in flight.
    fn abandon(&mut self, local: usize, cancel: bool) -> bool {
        let Some(conn) = self.sessions[local].conn.take() else {
            self.sessions[local].abandon_connect();
            return false;
        };
        self.sessions[local].note_unknown();
        if cancel {
            // To the server the session is on: after a fail-over, the new primary.
            let slot = &self.shared.layout.targets[self.targets[local]];
            let params = self.sessions[local]
                .server(&slot.params, &slot.follow)
                .clone();
            let key = conn.cancel_key();
            self.cancels.push(evloop::spawn(async move {
                // Best effort: a server that cannot be reached has nothing running for us.
                let _ = pgwire::cancel(&params, key, CANCEL_WITHIN).await;
            }));
        }
        // Dropping closes the socket; the server ends the session when it next reads.
        drop(conn);
        true
    }

    /// pgbench's `-C`: says goodbye to session `local` (bounded, as at the end) and opens a
    /// new one, timing both as pgbench's connection time. Each new session is one commit at
    /// the server, counted as a reopened session for the server check. A connect that fails
    /// leaves the session down: the transaction then fails as `connection` and the next
    /// opens it with the usual backoff.
    pub(super) async fn fresh_session(&mut self, local: usize) {
        let began = Instant::now();
        if let Some(c) = self.sessions[local].conn.take() {
            let _ = evloop::timeout(CLOSE_WITHIN, c.close()).await;
        }
        let slot = &self.shared.layout.targets[self.targets[local]];
        if self.sessions[local].may_try(began) {
            self.sessions[local]
                .reconnect(&slot.params, &slot.follow)
                .await;
        }
        self.connect_time.connects += 1;
        self.connect_time.total += began.elapsed();
    }

    /// Makes sure session `local` is open. While its target is down (between reconnection
    /// attempts), a client with other sessions spends on the card what a try on that target
    /// typically took and fails it, so in shared mode a dead group's cards hold clients as
    /// its live ones did and the other groups keep their shares and their rate; a client
    /// whose every session is down waits for the next attempt, so it never spins.
    async fn ready(&mut self, local: usize, deadline: Instant) -> bool {
        if self.sessions[local].conn.is_some() {
            return true;
        }
        let now = Instant::now();
        if !self.sessions[local].may_try(now) {
            let session = &self.sessions[local];
            let all_down = self.sessions.iter().all(|s| s.conn.is_none());
            let wake = if all_down {
                session.next_try()
            } else {
                session.next_try().min(now + session.typical())
            };
            if !self.pause_until(wake.min(deadline)).await
                || Instant::now() >= deadline
                || !self.sessions[local].may_try(Instant::now())
            {
                return false;
            }
        }
        let slot = &self.shared.layout.targets[self.targets[local]];
        self.sessions[local]
            .reconnect(&slot.params, &slot.follow)
            .await
    }
}
