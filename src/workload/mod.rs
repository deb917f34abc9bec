//! Workloads: one folder per benchmark with its schema, loader, transactions and checks.
//! The driver sees only this enum and its methods; it never branches on a workload's name
//! (STYLE.md rule 5). Each transaction type has an index into [`Workload::txn_types`].

mod load_lock;
pub mod pgbench;
pub mod tpcc;

use std::sync::Arc;
use std::time::Duration;

use crate::config::{PreparePlan, WorkloadName, WorkloadOptions};
use crate::event::Sink;
use crate::results::TypeRule;
use crate::target::ResolvedTarget;

/// The driver's random source: seeded per client from `--seed`, so runs are reproducible.
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// A workload ready to run against data of a known scale.
#[derive(Debug, Clone)]
pub enum Workload {
    Pgbench(pgbench::Pgbench),
    Tpcc(tpcc::Tpcc),
}

/// Random parameters of one transaction, drawn before the first try so retries replay them
/// (pgbench 15 semantics).
#[derive(Debug, Clone)]
pub enum TxnArgs {
    Pgbench(pgbench::Args),
    Tpcc(tpcc::Args),
}

/// Which of a group's clients this is: TPC-C derives a client's home warehouse from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSlot {
    pub index: u32,
    pub count: u32,
}

/// What a workload keeps per client between transactions (e.g. TPC-C's own mix deck).
#[derive(Debug, Clone)]
pub enum ClientState {
    Stateless,
    Tpcc(tpcc::Client),
}

/// How a transaction that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnEnd {
    Committed,
    /// The workload rolled back on purpose (e.g. TPC-C New-Order's unused item): not a failure.
    ExpectedRollback,
}

/// A workload's headline throughput: committed transactions of one type per minute, under the
/// name its specification gives it (TPC-C's NOTPM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headline {
    pub label: &'static str,
    pub txn_type: &'static str,
}

/// Why a target is not ready for a workload, or why preparing it failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The tables are missing or incomplete; the message says which `prepare` to run.
    #[error("{0}")]
    NotPrepared(String),
    /// Tables exist and `--force` was not given.
    #[error("{0}")]
    AlreadyPrepared(String),
    #[error("{0}")]
    Database(String),
    #[error("interrupted")]
    Interrupted,
}

impl Workload {
    /// Builds the workload for data of `scale` (TPC-C: warehouses). Options a workload does
    /// not have were refused by config; isolation is the session's, not the workload's.
    pub fn new(name: WorkloadName, scale: u32, options: &WorkloadOptions) -> Workload {
        match name {
            WorkloadName::Tpcc => Workload::Tpcc(tpcc::Tpcc::new(scale, options)),
            _ => Workload::Pgbench(pgbench::Pgbench::new(name, scale)),
        }
    }

    /// Pause before transaction type `txn` that is not part of its response time (TPC-C's
    /// keying time); zero for most runs.
    pub fn keying_time(&self, txn: usize) -> Duration {
        match self {
            Workload::Tpcc(w) => w.keying_time(txn),
            Workload::Pgbench(_) => Duration::ZERO,
        }
    }

    /// Pause after a transaction of type `txn` (TPC-C's think time), on top of a phase's think.
    pub fn think_time(&self, txn: usize, rng: &mut Rng) -> Duration {
        match self {
            Workload::Tpcc(w) => w.think_time(txn, rng),
            Workload::Pgbench(_) => Duration::ZERO,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Workload::Pgbench(w) => w.name(),
            Workload::Tpcc(_) => WorkloadName::Tpcc.as_str(),
        }
    }

    /// Names of the transaction types; a type's index is its id everywhere else.
    pub fn txn_types(&self) -> &'static [&'static str] {
        match self {
            Workload::Pgbench(w) => w.txn_types(),
            Workload::Tpcc(w) => w.txn_types(),
        }
    }

    /// What the workload's specification demands of each transaction type (a 90th-percentile
    /// response-time limit, a minimum share of the mix); empty when it demands nothing.
    pub fn type_rules(&self) -> Vec<TypeRule> {
        match self {
            Workload::Tpcc(_) => tpcc::rules::type_rules(),
            Workload::Pgbench(_) => Vec::new(),
        }
    }

    /// The type whose committed transactions per minute are the workload's headline, if any.
    pub fn headline(&self) -> Option<Headline> {
        match self {
            Workload::Tpcc(_) => Some(tpcc::rules::HEADLINE),
            Workload::Pgbench(_) => None,
        }
    }

    /// A client's own state, made once per (client, group) before the run.
    pub fn client_state(&self, slot: ClientSlot) -> ClientState {
        match self {
            Workload::Pgbench(_) => ClientState::Stateless,
            Workload::Tpcc(w) => ClientState::Tpcc(w.client(slot)),
        }
    }

    /// Chooses the next transaction type with the workload's own mix (used when the phase
    /// gives none).
    pub fn draw_txn(&self, state: &mut ClientState, rng: &mut Rng) -> usize {
        match (self, state) {
            (Workload::Tpcc(w), ClientState::Tpcc(c)) => w.draw_txn(c, rng),
            (Workload::Tpcc(_), _) => tpcc::NEW_ORDER,
            (Workload::Pgbench(w), _) => w.draw_txn(rng),
        }
    }

    /// Draws the random parameters of one transaction.
    pub fn draw_args(&self, txn: usize, state: &mut ClientState, rng: &mut Rng) -> TxnArgs {
        match (self, state) {
            (Workload::Pgbench(w), _) => TxnArgs::Pgbench(w.draw_args(txn, rng)),
            (Workload::Tpcc(w), ClientState::Tpcc(c)) => TxnArgs::Tpcc(w.draw_args(txn, c, rng)),
            // A state made by another workload: a terminal of warehouse 1, district 1.
            (Workload::Tpcc(w), _) => {
                let c = w.client(ClientSlot { index: 0, count: 1 });
                TxnArgs::Tpcc(w.draw_args(txn, &c, rng))
            }
        }
    }

    /// Runs one transaction. On `Err` the session may be inside a failed transaction block:
    /// the caller rolls back (or reconnects) before the next try.
    pub async fn execute(
        &self,
        conn: &mut pgwire::Connection,
        protocol: pgwire::Protocol,
        txn: usize,
        args: &TxnArgs,
    ) -> Result<TxnEnd, pgwire::Error> {
        match (self, args) {
            (Workload::Pgbench(w), TxnArgs::Pgbench(a)) => w.execute(conn, protocol, txn, a).await,
            (Workload::Tpcc(w), TxnArgs::Tpcc(a)) => w.execute(conn, protocol, a).await,
            _ => Err(pgwire::Error {
                kind: pgwire::ErrorKind::Protocol(
                    "transaction arguments drawn by another workload".into(),
                ),
            }),
        }
    }

    /// Checks that the target holds this workload's tables (and whatever else `options` need,
    /// e.g. TPC-C's functions for `--procedures`) and returns the scale found there.
    pub async fn check_ready(
        name: WorkloadName,
        options: &WorkloadOptions,
        client: &tokio_postgres::Client,
    ) -> Result<u32, WorkloadError> {
        match name.family() {
            "tpcc" => tpcc::check_ready(client, options.procedures).await,
            _ => pgbench::check_ready(name, client).await,
        }
    }

    /// Creates the schema and loads the data of `plan` into `target`; load progress and the
    /// summary go to `events`.
    pub async fn prepare(
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        match plan.workload.family() {
            "tpcc" => tpcc::prepare(plan, target, events).await,
            _ => pgbench::prepare(plan, target, events).await,
        }
    }

    /// Runs the workload's consistency checks (`tidebench check`); `None` when it has none.
    pub async fn check(
        name: WorkloadName,
        client: &tokio_postgres::Client,
    ) -> Option<Result<Vec<tpcc::check::Outcome>, WorkloadError>> {
        match name.family() {
            "tpcc" => Some(tpcc::check(client).await),
            _ => None,
        }
    }
}
