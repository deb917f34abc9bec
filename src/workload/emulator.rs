//! A workload's emulator of what lies outside its database: TPC-E's market exchange (which
//! turns submitted orders into Trade-Results and Market-Feeds) and its timed work
//! (Data-Maintenance once a minute, Trade-Cleanup before the customers start). The driver makes
//! one per (group, set), because what it issues must go back to the database its input came
//! from, and never looks inside.
//!
//! The emulator keeps its own queue of [`Job`]s, each due at an instant. The driver's clients
//! serve them: before drawing its next card, a client takes a job that is due from the
//! emulators of the sets it reaches and runs it on the set's target of the job type's role, so
//! emulated work uses no sessions of its own and leaves the card decks' shares untouched. A
//! job's response time runs from its due instant (the wait for a free client is part of it,
//! and is recorded as lag too), and a job that cannot run is requeued or counted, never lost
//! without a trace: [`Backlog`] says what waits, how late, and what was given up.

use std::any::Any;
use std::time::{Duration, Instant};

use crate::metrics::ErrorClass;

use super::TxnFuture;

/// One piece of emulated work: a transaction of the workload's type `txn` (an index of
/// `Workload::txn_types`), due at `due`, with inputs only its emulator reads.
pub struct Job {
    pub txn: usize,
    pub due: Instant,
    pub inputs: Box<dyn Any + Send>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("txn", &self.txn)
            .field("due", &self.due)
            .finish_non_exhaustive()
    }
}

/// What an emulator holds and has done, at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Backlog {
    /// Jobs due and not yet taken by a client.
    pub due: u64,
    /// How late the most overdue of them is.
    pub lag: Duration,
    /// Work waiting for its time: scheduled jobs and armed triggers (limit orders waiting for
    /// their price).
    pub waiting: u64,
    /// Jobs handed to clients so far.
    pub issued: u64,
    /// Jobs given up after failing (their inputs no longer valid), so they will never run.
    pub abandoned: u64,
}

impl Backlog {
    /// The sum of several emulators' backlogs (the lag is the worst).
    pub fn add(&mut self, other: &Backlog) {
        self.due += other.due;
        self.lag = self.lag.max(other.lag);
        self.waiting += other.waiting;
        self.issued += other.issued;
        self.abandoned += other.abandoned;
    }
}

/// A workload's emulator for one (group, set). Shared by the clients of every driver thread,
/// so it locks inside; [`Emulator::has_due`] must be cheap (no lock), since every client asks
/// it before every transaction.
pub trait Emulator: Send + Sync + std::fmt::Debug {
    /// For the workload's own terminals, which hand it what their transactions produced (a
    /// committed Trade-Order's order).
    fn as_any(&self) -> &dyn Any;

    /// The run's clock starts at `at`: jobs due "at the start" become due, timers count from
    /// here.
    fn start(&self, at: Instant);

    /// True until the jobs that must end before the set's drawn transactions run (Trade-Cleanup)
    /// have ended; clients hold the set's cards meanwhile and serve those jobs.
    fn starting(&self) -> bool;

    /// Whether a job may be due at `now` (a hint; [`Emulator::take_due`] decides).
    fn has_due(&self, now: Instant) -> bool;

    /// Takes the most overdue job due at or before `now`.
    fn take_due(&self, now: Instant) -> Option<Job>;

    /// Runs one try of `job` on `conn`, the set's target for the role of the job's type. On a
    /// commit it hands what the transaction produced back to the emulator itself (the requests
    /// a Market-Feed triggered become orders).
    fn execute<'a>(
        &'a self,
        job: &'a Job,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
    ) -> TxnFuture<'a>;

    /// `job` ended without a commit after its tries, failing with `class` at `now`: the
    /// emulator requeues it when another try can succeed (a lost connection, a conflict), or
    /// counts it abandoned.
    fn failed(&self, job: Job, class: ErrorClass, now: Instant);

    /// What waits and what was given up, at `now`.
    fn backlog(&self, now: Instant) -> Backlog;
}
