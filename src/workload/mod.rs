//! Workloads: one folder per benchmark with its schema, loader, transactions and checks.
//! The driver sees only this enum and its methods; it never branches on a workload's name
//! (STYLE.md rule 5). Each transaction type has an index into [`Workload::txn_types`].

pub mod pgbench;

use crate::config::{PreparePlan, WorkloadName};
use crate::target::ResolvedTarget;

/// The driver's random source: seeded per client from `--seed`, so runs are reproducible.
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// A workload ready to run against data of a known scale.
#[derive(Debug, Clone)]
pub enum Workload {
    Pgbench(pgbench::Pgbench),
}

/// Random parameters of one transaction, drawn before the first try so retries replay them
/// (pgbench 15 semantics).
#[derive(Debug, Clone)]
pub enum TxnArgs {
    Pgbench(pgbench::Args),
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
}

/// How a transaction that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnEnd {
    Committed,
    /// The workload rolled back on purpose (e.g. TPC-C New-Order's unused item): not a failure.
    ExpectedRollback,
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
    /// Builds the workload for data of `scale`.
    pub fn new(name: WorkloadName, scale: u32) -> Workload {
        Workload::Pgbench(pgbench::Pgbench::new(name, scale))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Workload::Pgbench(w) => w.name(),
        }
    }

    /// Names of the transaction types; a type's index is its id everywhere else.
    pub fn txn_types(&self) -> &'static [&'static str] {
        match self {
            Workload::Pgbench(w) => w.txn_types(),
        }
    }

    /// A client's own state, made once per (client, group) before the run.
    pub fn client_state(&self, _slot: ClientSlot) -> ClientState {
        match self {
            Workload::Pgbench(_) => ClientState::Stateless,
        }
    }

    /// Chooses the next transaction type with the workload's own mix (used when the phase
    /// gives none).
    pub fn draw_txn(&self, _state: &mut ClientState, rng: &mut Rng) -> usize {
        match self {
            Workload::Pgbench(w) => w.draw_txn(rng),
        }
    }

    /// Draws the random parameters of one transaction.
    pub fn draw_args(&self, txn: usize, _state: &mut ClientState, rng: &mut Rng) -> TxnArgs {
        match self {
            Workload::Pgbench(w) => TxnArgs::Pgbench(w.draw_args(txn, rng)),
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
        }
    }

    /// Checks that the target holds this workload's tables and returns the scale found there.
    pub async fn check_ready(
        name: WorkloadName,
        client: &tokio_postgres::Client,
    ) -> Result<u32, WorkloadError> {
        pgbench::check_ready(name, client).await
    }

    /// Creates the schema and loads the data of `plan` into `target`.
    pub async fn prepare(plan: &PreparePlan, target: &ResolvedTarget) -> Result<(), WorkloadError> {
        pgbench::prepare(plan, target).await
    }
}
