//! Workloads as plug-ins: one folder per benchmark (schema, loader, one file per transaction,
//! checks) and one line in [`registry`]. Nothing outside this room names a workload or a
//! transaction type; the rest of tidebench sees three traits:
//!
//! - [`Kind`] (with [`WorkloadInfo`], what config validates against): a workload before its
//!   data is known — its name, options, roles, `prepare`, readiness and consistency checks,
//!   and [`Kind::build`] once the data's scale is read. A workload writes it as a [`Plugin`]
//!   (plain `async fn`s) and loads its data with the shared [`kit`].
//! - [`Workload`]: a workload ready to run on data of a known scale — its transaction types
//!   (owned names, each with the role it runs on), pauses, headline metric, spec rules, notes.
//! - [`Terminal`]: one client's own state (e.g. TPC-C's home warehouse and mix deck), which
//!   draws a transaction's random inputs once and executes them as often as retries need.
//!
//! Dispatch is dynamic (`dyn`): one virtual call and one boxed future per transaction, which
//! `make bench` shows costs nothing measurable beside a round trip to the server.

pub mod ch;
pub mod emulator;
pub mod kit;
pub mod pgbench;
mod plugin;
pub mod probe;
pub mod registry;
pub mod retail;
pub mod script;
pub mod streams;
pub mod tpcc;
pub mod tpce;
pub mod tpch;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use crate::config::{OptionValues, WorkloadInfo};
/// A workload's headline throughput: committed transactions of one type per minute, under the
/// name its specification gives it (TPC-C's NOTPM); the results carry it as is.
pub use crate::results::Headline;
use crate::results::TypeRule;

pub use emulator::{Backlog, Emulator, Job};
pub use plugin::{AsInfo, Kind, Plugin};
pub use registry::Registry;

/// The driver's random source: seeded per client from `--seed`, so runs are reproducible.
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// PostgreSQL's generator and `splitmix` live in the shared leaf `crate::prng` (so metrics can
/// draw from them too); the workloads' many users keep reaching them here.
pub use crate::prng::{pg_prng, splitmix};

/// A future of the workload room: run on the caller's thread, never sent across threads.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// One transaction's execution: its end, or the error that ended it.
pub type TxnFuture<'a> = Pending<'a, Result<TxnEnd, pgwire::Error>>;

/// Which of a group's clients this is: TPC-C derives a client's home warehouse from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSlot {
    pub index: u32,
    pub count: u32,
}

/// How a transaction that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnEnd {
    Committed,
    /// The workload rolled back on purpose (e.g. TPC-C New-Order's unused item): not a failure.
    ExpectedRollback,
    /// A script ran to its end inside a transaction block it opened: pgbench 15 counts the
    /// transaction as processed, then ends the client (the server rolls the block back).
    LeftOpen,
}

/// A transaction type: its name (as results and `mix` tables write it), the role of the
/// set's target it runs on, and who issues it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnType {
    pub name: String,
    pub role: String,
    /// Issued by the workload's [`Emulator`] (TPC-E's Trade-Result, Market-Feed,
    /// Data-Maintenance, Trade-Cleanup), never drawn from a deck: outside the mix shares.
    pub emulated: bool,
    /// The isolation level the type's transactions begin at when the workload fixes it per
    /// type (tpce: TPC-E's §3.1 levels), as SQL spells it; `None`: the session's default, the
    /// group's `isolation`. The report shows it per type.
    pub isolation: Option<String>,
}

impl TxnType {
    /// A type clients draw from their decks.
    pub fn new(name: impl Into<String>, role: impl Into<String>) -> TxnType {
        TxnType {
            name: name.into(),
            role: role.into(),
            emulated: false,
            isolation: None,
        }
    }

    /// A type only the workload's emulator issues.
    pub fn emulated(name: impl Into<String>, role: impl Into<String>) -> TxnType {
        TxnType {
            emulated: true,
            ..TxnType::new(name, role)
        }
    }

    /// The same type, beginning its transactions at `level` (as SQL spells it).
    pub fn at_isolation(self, level: Option<String>) -> TxnType {
        TxnType {
            isolation: level,
            ..self
        }
    }
}

/// The verdict on one consistency condition of `tidebench check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOutcome {
    pub name: String,
    /// Rows breaking the condition (all of them counted, the first few described).
    pub offending: u64,
    pub examples: Vec<String>,
}

impl CheckOutcome {
    pub fn passed(&self) -> bool {
        self.offending == 0
    }
}

/// The option the runner adds to those [`Kind::build`] gets: the run's seed (`--seed`), for a
/// workload whose own variables derive from it (pgbench's `:random_seed`, `:default_seed`).
pub const RUN_SEED: &str = "run_seed";
/// Another such option: the run's statement protocol (`simple`, `extended`, `prepared`), for a
/// workload that cannot run on every one (pgbench's pipelines need extended or prepared).
pub const RUN_PROTOCOL: &str = "run_protocol";
/// Another: the run's client count (pgbench's `-c`), on which pgbench's `:default_seed` rests.
pub const RUN_CLIENTS: &str = "run_clients";
/// Another: the run's driver threads (pgbench's `-j`), on which pgbench's script choice rests.
pub const RUN_THREADS: &str = "run_threads";

/// The run's seed, client count and threads as [`RUN_SEED`], [`RUN_CLIENTS`] and
/// [`RUN_THREADS`] give them to [`Kind::build`], for pgbench's seeding of its states.
pub fn pgbench_seeds(options: &OptionValues) -> pg_prng::PgbenchSeeds {
    let get = |key: &str, default: i64| {
        options
            .get(key)
            .and_then(|v| v.as_integer())
            .unwrap_or(default)
    };
    // The seed travels as the TOML integer of its 64 bits.
    let seed = get(RUN_SEED, 0) as u64;
    let clients = u32::try_from(get(RUN_CLIENTS, 1)).unwrap_or(1);
    let threads = u32::try_from(get(RUN_THREADS, 1)).unwrap_or(1);
    pg_prng::PgbenchSeeds::new(seed, clients, threads)
}

/// What a readiness check found in a database: the data's scale and the facts of its load a
/// run must use (e.g. tpce's trade days and generator seed, which the driver needs to draw
/// inputs that exist); the runner merges `facts` into the options [`Kind::build`] gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub scale: u32,
    pub facts: OptionValues,
}

impl Loaded {
    /// Data of `scale` with nothing else a run needs to know.
    pub fn scale(scale: u32) -> Loaded {
        Loaded {
            scale,
            facts: OptionValues::new(),
        }
    }
}

/// Why a target is not ready for a workload, or why preparing it failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The tables are missing, incomplete or were loaded for another run: `problem` says
    /// which, `fix` the `prepare` (or run flag) that mends it.
    #[error("{problem}; {fix}")]
    NotPrepared { problem: String, fix: String },
    /// Tables exist and `--force` was not given.
    #[error(
        "target '{target}' already has {what}{}; add `--force` to drop and reload them",
        listed(.tables)
    )]
    AlreadyPrepared {
        target: String,
        what: &'static str,
        tables: Vec<String>,
    },
    /// pgbench's `--init-steps` create tables (t) that exist, without dropping them (d).
    #[error(
        "target '{target}' already has pgbench tables ({}) and --init-steps creates them (t) \
         without dropping them first (d), which fails in pgbench too; start the steps with d \
         and add `--force` to replace them",
        .tables.join(", ")
    )]
    CreateOverExisting { target: String, tables: Vec<String> },
    /// A load knob that makes no rows (`--scale 0`, `--warehouses 0`).
    #[error("{flag} 0 has no rows; pass {flag} 1 or more{alias}")]
    NoRows {
        flag: &'static str,
        /// The peer's name for the flag, as ` (pgbench's -s)`, or empty.
        alias: &'static str,
    },
    /// A load option the workload cannot take (its parser's message names the option and fix).
    #[error("{message}")]
    LoadOption {
        option: &'static str,
        message: String,
    },
    /// No load here: the workload's meta table is missing.
    #[error("target has no complete {load} load (no {table} table); run `{prepare}` first")]
    NoLoad {
        load: &'static str,
        table: &'static str,
        prepare: &'static str,
    },
    /// A load that did not finish: its meta table has no row.
    #[error(
        "{table} is empty, so the {load} load is incomplete; run `{prepare}` first (add \
         `--force` to reload)"
    )]
    IncompleteLoad {
        load: &'static str,
        table: &'static str,
        prepare: &'static str,
    },
    /// A query the check or the load needs failed; `message` is the server's.
    #[error("{what} failed: {message}")]
    Query { what: String, message: String },
    /// What only tpce's load can get wrong (its knobs), in tpce's own enum.
    #[error(transparent)]
    Tpce(#[from] tpce::TpceError),
    /// A blocking task of the load panicked or was cancelled: a defect, not bad input.
    #[error("an internal task of the load failed ({0}); please report it")]
    Task(#[from] tokio::task::JoinError),
    /// The target cannot be resolved or connected to (its message names the fix).
    #[error(transparent)]
    Target(Box<crate::target::TargetError>),
    /// A statement failed on the server: `message` is the server's, with its detail and hint.
    #[error("target '{target}': {what} failed: {message}")]
    Server {
        target: String,
        what: String,
        message: String,
    },
    /// Another `tidebench prepare` holds this database's load lock.
    #[error(
        "target '{target}': another `tidebench prepare` is loading {what} into this database; \
         wait for it to finish (or stop it) and retry"
    )]
    LoadLocked { target: String, what: String },
    /// The session's `search_path` names no schema a load could go to.
    #[error(
        "target '{target}': the session's search_path names no schema to load into; set it to \
         an existing schema (e.g. public) and retry"
    )]
    NoSchema { target: String },
    /// What only retail's load can get wrong (its segments), in retail's own enum.
    #[error(transparent)]
    Retail(#[from] retail::RetailError),
    #[error("interrupted")]
    Interrupted,
}

impl From<crate::target::TargetError> for WorkloadError {
    fn from(e: crate::target::TargetError) -> WorkloadError {
        WorkloadError::Target(Box::new(e))
    }
}

impl WorkloadError {
    /// Maps a failed query to [`WorkloadError::Query`] with the server's message, saying
    /// `what` the query was for.
    pub fn query(what: &str) -> impl Fn(tokio_postgres::Error) -> WorkloadError + '_ {
        move |e| WorkloadError::Query {
            what: what.to_string(),
            message: crate::target::describe_pg_error(&e),
        }
    }

    /// A prepare's missing or stale data: `problem`, then the `fix` that mends it.
    pub fn not_prepared(problem: impl Into<String>, fix: impl Into<String>) -> WorkloadError {
        WorkloadError::NotPrepared {
            problem: problem.into(),
            fix: fix.into(),
        }
    }

    /// The target lacks the workload's data (or holds another load): `prepare` fixes it.
    pub fn is_not_prepared(&self) -> bool {
        matches!(
            self,
            WorkloadError::NotPrepared { .. }
                | WorkloadError::AlreadyPrepared { .. }
                | WorkloadError::CreateOverExisting { .. }
                | WorkloadError::NoLoad { .. }
                | WorkloadError::IncompleteLoad { .. }
        )
    }
}

/// ` (a, b)` for a list of tables, nothing for none.
fn listed(tables: &[String]) -> String {
    if tables.is_empty() {
        return String::new();
    }
    format!(" ({})", tables.join(", "))
}

/// A workload ready to run on data of a known scale. Shared by every driver thread.
pub trait Workload: Send + Sync + std::fmt::Debug {
    /// The transaction types; a type's index is its id in every other call.
    fn txn_types(&self) -> &[TxnType];

    /// A client's own state, made once per (client, group) on the client's driver thread.
    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal>;
    /// Where the workload may send what its clients have to say during the run (a script's
    /// `debug()`); given once, before any terminal is made.
    fn attach(&self, _events: &Arc<dyn crate::event::Sink>) {}

    /// Pause before transaction type `txn` that is not part of its response time (TPC-C's
    /// keying time).
    fn keying_time(&self, _txn: usize) -> Duration {
        Duration::ZERO
    }

    /// Pause after a transaction of type `txn` (TPC-C's think time), on top of a phase's think.
    fn think_time(&self, _txn: usize, _rng: &mut Rng) -> Duration {
        Duration::ZERO
    }

    /// The type whose committed transactions per minute are the workload's headline, if any.
    fn headline(&self) -> Option<Headline> {
        None
    }

    /// What the workload's specification demands of each transaction type (a 90th-percentile
    /// response-time limit, a minimum share of the mix); empty when it demands nothing.
    fn type_rules(&self) -> Vec<TypeRule> {
        Vec::new()
    }

    /// Advice before a run of group `group` with at most `clients` clients (valid settings
    /// that are probably not meant).
    fn notes(&self, _group: &str, _clients: u32) -> Vec<String> {
        Vec::new()
    }

    /// The emulator of one (group, set), whose jobs are this workload's emulated types (see
    /// [`emulator`]); `seed` makes its random draws reproducible. `once_per_database`: this
    /// process also runs the work a database needs once per run however many driver processes
    /// share it (TPC-E's Trade-Cleanup, Data-Maintenance); false on all shards of a run but
    /// the first. None: the workload has none.
    fn emulator(&self, _seed: u64, _once_per_database: bool) -> Option<Arc<dyn Emulator>> {
        None
    }

    /// Ratios the specification expects between two types' counts over the measured window
    /// (TPC-E: Trade-Result / Trade-Order ≈ 0.99); empty when it expects none.
    fn ratio_rules(&self) -> Vec<crate::results::RatioRule> {
        Vec::new()
    }

    /// Per-command figures the workload kept over the run (the script workload with
    /// `--report-per-command`), read once every client has ended; empty when it keeps none.
    fn command_stats(&self) -> Vec<crate::results::CommandStats> {
        Vec::new()
    }

    /// Bytes the workload's loading types moved over the run (retail's `load`), read once
    /// every client has ended; empty when none loads.
    fn volumes(&self) -> Vec<crate::results::Volume> {
        Vec::new()
    }

    /// The SQL each type sends, as (type, text with `$n` where a value goes), for the wait
    /// sampler to tell a session's type by its query (issue 41); empty: its sessions count
    /// under `unknown`.
    fn statements(&self) -> Vec<(usize, &str)> {
        Vec::new()
    }

    /// Transactions each client runs before it ends (TPC-H: a stream's 22 queries), the same
    /// as its kind's [`WorkloadInfo::units_per_client`]; `None`: clients run for the duration.
    fn units_per_client(&self) -> Option<u64> {
        None
    }

    /// The transactions client `slot` runs before it ends, where clients differ (TPC-H's
    /// refresh stream runs its pairs, a query stream its 22 queries); by default every
    /// client's [`Workload::units_per_client`].
    fn units_for(&self, _slot: ClientSlot) -> Option<u64> {
        self.units_per_client()
    }

    /// Figures the workload computes from its own record of the run (TPC-H's Power@Size),
    /// read once every client has ended; empty when it has none.
    fn figures(&self) -> Vec<crate::results::Figure> {
        Vec::new()
    }

    /// The time of each unit its streams ran to their end (TPC-H's query and refresh times
    /// per stream), read once every client has ended; empty when it times none.
    fn unit_times(&self) -> Vec<crate::results::UnitTime> {
        Vec::new()
    }

    /// Files the workload leaves in the results dir (TPC-H's executed query texts), as
    /// (path relative to the dir, contents), read once every client has ended.
    fn files(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The types the workload's own mix draws (used when a phase gives no mix): all of them
    /// unless the workload says fewer.
    fn own_types(&self) -> Vec<usize> {
        (0..self.txn_types().len()).collect()
    }
}

/// One client's state for one group's workload. It lives on its client's driver thread.
pub trait Terminal {
    /// The next transaction type by the workload's own mix (used when a phase gives none).
    fn next_type(&mut self, rng: &mut Rng) -> usize;

    /// Draws the random inputs of a transaction of type `txn`, kept for [`Terminal::execute`]
    /// so retries replay them (pgbench 15 semantics).
    fn draw(&mut self, txn: usize, rng: &mut Rng);

    /// Runs the drawn transaction once on a set whose emulator is `emulator` (the workload's
    /// own, to hand it what the transaction produced). On `Err` the session may be inside a
    /// failed transaction block: the caller rolls back (or reconnects) before the next try.
    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
        emulator: Option<&'a dyn Emulator>,
    ) -> TxnFuture<'a>;

    /// The command (counted from 0, as pgbench's abort line does) whose server error ended
    /// the last try, for workloads made of commands (scripts); read only after an error.
    fn failed_command(&self) -> Option<u32> {
        None
    }
}
