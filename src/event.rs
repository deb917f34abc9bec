//! What a run or a load has to say while it works, as typed values sent to a [`Sink`]: the
//! runner's description and notes, warnings, the driver's progress lines and polling blocks,
//! phase edges, the interruption, and a loader's progress. Nothing below `cli` prints: the
//! terminal is one sink (`cli::terminal`), [`Recorded`] another (tests, experiments that run
//! quietly and read what happened afterwards).
//!
//! Events carry numbers, not text, so a sink decides how (or whether) to show them. This room
//! imports nothing from the others, so any of them may send.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A script's statement that failed at its PREPARE (see [`Event::PrepareFailed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PrepareFailed {
    pub client: u32,
    /// The transaction type (the script's name) and the command, as the client's abort
    /// names them.
    pub txn_type: String,
    pub command: u32,
    /// pgbench's name of the statement (`P_0`).
    pub statement: String,
    /// The server's error as libpq words it, its `LINE n:` and caret included.
    pub text: String,
}

/// One thing a run or a load reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The run is about to start its clients.
    RunStarting(RunDescription),
    /// Something the user should know about the plan (e.g. a rule of the workload's spec).
    Note(String),
    /// A problem that does not stop the work (shown as `warning: ...`).
    Warning(String),
    /// The first error of a kind the run met (issue 38: no failure is silent); later ones of
    /// the kind are only counted (summary.json's `errors`).
    FirstError(ErrorNotice),
    /// A script's `debug()` value, in pgbench's words (`debug(script=0,command=2): int 5`),
    /// shown on stderr as pgbench shows it.
    ScriptDebug(String),
    /// A server's notice to a script's statement, as libpq prints it by default (`NOTICE:
    /// ...`): the pgbench drop-in shows it on stderr as pgbench does; elsewhere it is dropped
    /// (a notice per transaction would drown the terminal).
    ServerNotice(String),
    /// pgbench's `-d` trace: one client's step (`client 0 sending SELECT 1;`), sent only with
    /// the trace on (the drop-in prints it after pgbench's `pgbench: `).
    Trace(String),
    /// Under `-M prepared`, a script's statement the server would not prepare (its Parse
    /// failed), before the client is aborted on that error. pgbench 15 logs the PREPARE's
    /// error and then aborts on its own execution of the statement that does not exist; the
    /// drop-in says both, other terminals nothing more than the abort.
    PrepareFailed(PrepareFailed),
    /// `--verbose-errors` (pgbench 15's): a try that failed in a way a retry may help
    /// (serialization failure, deadlock), and what the client does next. Sent only with the
    /// flag on, and only on such an error: never on the hot path.
    TryError(TryError),
    /// The live progress line (pgbench's `-P`).
    Progress(ProgressLine),
    /// pgbench's vacuum before a run (the drop-in's), step by step.
    Vacuum(VacuumStep),
    /// What pgbench 15 learns of its tables before a run of a built-in script (the
    /// drop-in's): its warning about `-s`, the partitioning its summary block reports.
    PgbenchTables(PgbenchTables),
    /// The live polling block (the TPC-V reference kit's Fig. 6).
    Poll(PollBlock),
    /// The measured clock entered another segment (phase, ramp) of the timeline.
    PhaseEdge(PhaseEdge),
    /// Ctrl-C or SIGTERM: clients stop and what was measured is written.
    Interrupted,
    /// A loader starts counting rows.
    LoadStarted { what: String, total: u64 },
    /// Rows loaded so far, sent a few times a second while rows are loaded.
    LoadProgress(LoadProgress),
    /// The row count is over; the loader does `what` next (vacuum, keys, ...).
    LoadStep(String),
    /// The loader stopped counting: done, failed or interrupted.
    LoadStopped,
    /// A load completed.
    LoadFinished(LoadSummary),
    /// An experiment starts one of its runs (or finds it already done).
    ExperimentRun(ExperimentRun),
    /// An experiment's run ended.
    ExperimentRunDone(ExperimentRunDone),
    /// What one sampling round found wrong with the managed instances: OOM kills, backends
    /// killed, crash-recovery restarts, a server gone (shown as warnings; kept in
    /// `summary.json`).
    Incidents(Vec<Incident>),
}

/// A warning a finished run hands back with its outcome (shown as `warning: ...` after the
/// run). An aborted client is typed, so a caller that words it its own way (the pgbench
/// drop-in, from summary.json's `aborted_clients`) leaves it out by its kind, not its text.
#[derive(Debug, Clone, PartialEq)]
pub enum RunWarning {
    /// Client `client` aborted `at_s` seconds into the run; the other clients went on.
    ClientAborted {
        client: u32,
        at_s: f64,
        message: String,
    },
    /// Any other warning, as a sentence.
    Other(String),
}

impl std::fmt::Display for RunWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // As pgbench's "client N aborted" (aborted_clients in summary.json).
            RunWarning::ClientAborted {
                client,
                at_s,
                message,
            } => write!(
                f,
                "client {client} aborted at {at_s:.1} s: {message}; its other transactions \
                 were not run"
            ),
            RunWarning::Other(text) => f.write_str(text),
        }
    }
}

/// What pgbench 15 reads of its tables before a run of a built-in script.
#[derive(Debug, Clone, PartialEq)]
pub enum PgbenchTables {
    /// `-s` was given: the scale is pgbench_branches' count, `count`, as pgbench warns.
    ScaleIgnored { count: i64 },
    /// pgbench_accounts is partitioned by `method` (`range` or `hash`) into `count` parts:
    /// two lines of the summary block.
    Partitioned { method: &'static str, count: i64 },
}

/// A step of pgbench's vacuum before a run, told as pgbench tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum VacuumStep {
    /// A round starts: branches, tellers and history; with `accounts`, pgbench_accounts (-v).
    Started { accounts: bool },
    /// A statement failed (the server's words): passed over, as pgbench passes over it.
    Failed(String),
    /// The round is over.
    Done,
}

/// One step of a failed try's story under `--verbose-errors`, in the order pgbench tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum TryError {
    /// The error as the server wrote it (`ERROR:  could not serialize access ...`), in
    /// transaction type `txn_type`'s command `command` (counted from 0, as pgbench counts).
    Got {
        client: u32,
        txn_type: String,
        command: Option<u32>,
        text: String,
    },
    /// After try `try_no` of at most `max_tries`: the client tries again (`again`) or ends the
    /// transaction as failed; with a latency limit, the share of it used since the
    /// transaction was due, in percent.
    Next {
        client: u32,
        try_no: u32,
        max_tries: u32,
        again: bool,
        limit_used: Option<f64>,
    },
}

/// The first error of its kind: the kind (`other, SQLSTATE 42P01`), where (`client 0,
/// "bad.sql" command 1`), when, and the error as the server wrote it (`ERROR:  ...` with
/// DETAIL, HINT and CONTEXT lines).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorNotice {
    pub kind: String,
    pub place: String,
    pub at_s: f64,
    pub text: String,
}

/// Something that happened to a managed instance during a run: the kernel's OOM killer struck
/// in its cgroup, a server process was killed, the server went through crash recovery, or it
/// stopped.
/// `summary.json` keeps them as written here (see `results::incidents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    /// Seconds since the run started (3 decimals), the clock of `system.csv`'s `t_s`: the
    /// sampling round that saw it, so at most one sampling period after it happened.
    pub t_s: f64,
    /// The managed instance's name.
    pub instance: String,
    pub kind: IncidentKind,
    /// How many were seen in that round (never 0).
    pub count: u64,
    /// One line saying what was seen (a server.log line, the counter's values).
    pub detail: String,
}

/// What kind of [`Incident`]. Results files write it in snake case (`"oom_kill"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IncidentKind {
    /// The kernel's OOM killer killed a process in the instance's cgroup (its `oom_kill`
    /// counter grew).
    OomKill,
    /// server.log says a server process was terminated by a signal (9 after an OOM kill).
    BackendKilled,
    /// The postmaster reinitialized after a crash (server.log), or its pid changed.
    CrashRestart,
    /// The postmaster is gone (its process or its pid file): the server stopped, e.g. after
    /// crash recovery itself was OOM-killed ("startup process failure"), or was stopped.
    ServerDown,
}

impl IncidentKind {
    pub const ALL: [IncidentKind; 4] = [
        IncidentKind::OomKill,
        IncidentKind::BackendKilled,
        IncidentKind::CrashRestart,
        IncidentKind::ServerDown,
    ];

    /// The name results files use.
    pub fn name(self) -> &'static str {
        match self {
            IncidentKind::OomKill => "oom_kill",
            IncidentKind::BackendKilled => "backend_killed",
            IncidentKind::CrashRestart => "crash_restart",
            IncidentKind::ServerDown => "server_down",
        }
    }

    /// `n` of this kind, for people: "2 OOM kills", "1 crash restart".
    pub fn counted(self, n: u64) -> String {
        let (one, many) = match self {
            IncidentKind::OomKill => ("OOM kill", "OOM kills"),
            IncidentKind::BackendKilled => ("server process killed", "server processes killed"),
            IncidentKind::CrashRestart => ("crash restart", "crash restarts"),
            IncidentKind::ServerDown => ("server stop", "server stops"),
        };
        format!("{n} {}", if n == 1 { one } else { many })
    }
}

/// Which run of an experiment this is.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRun {
    /// 1-based, in the order runs are made, of `runs`.
    pub run: usize,
    pub runs: usize,
    /// 1-based point of `points`.
    pub point: usize,
    pub points: usize,
    /// `clients=16 protocol=simple`.
    pub values: String,
    pub repeat: u32,
    pub repeats: u32,
    /// Time left for this run and the ones after it, when it can be estimated.
    pub eta: Option<Duration>,
}

/// How an experiment's run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRunDone {
    pub run: ExperimentRun,
    /// `complete`, `interrupted`, `failed`, or `done before` (resumed).
    pub status: String,
    pub tps: Option<f64>,
    /// The results dir, or why the run could not be made.
    pub detail: String,
}

/// What the run is about to do.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDescription {
    pub name: String,
    pub groups: usize,
    pub targets: usize,
    pub phases: usize,
    pub iterations: u32,
    /// `Some(n)`: `n` clients shared by every group; `None`: clients per group and phase.
    pub shared_clients: Option<u32>,
    pub threads: u32,
    pub duration: Duration,
    /// pgbench's `-t`: transactions per client, when the run is by count (then `duration`
    /// is only its cap).
    pub transactions: Option<u64>,
    /// How long opening every client's sessions took (pgbench's "initial connection time").
    pub connect: Duration,
}

/// One progress line: the window of `window` that ended `elapsed` after the start.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressLine {
    pub elapsed: Duration,
    pub window: Duration,
    /// Committed and expected rollbacks per second.
    pub tps: f64,
    /// The workload's headline (TPC-C's NOTPM per minute, tpce's tpsE per second), when it
    /// has one.
    pub headline: Option<Rate>,
    /// Latency in ms; `None` when nothing finished in the window.
    pub latency: Option<Latency>,
    /// Mean schedule lag in ms, when transactions were scheduled (rate limit).
    pub lag_ms: Option<f64>,
    pub failed: u64,
    pub retried: u64,
    /// Transactions in the window that needed a retry (pgbench's "N retried").
    pub retried_txns: u64,
    /// The emulators' work (tpce's market) at the end of the window, when the run has any.
    pub backlog: Option<EmulatedBacklog>,
    /// The transactions running for a second or more, longest first (type, seconds so far),
    /// and how many more there are: a run of a few long operations shows them here.
    pub running: Vec<(String, f64)>,
    pub running_more: usize,
}

/// What the run's emulators (tpce's markets, one per set) hold: work due and not yet run by a
/// client, how late the oldest is, work waiting for its time, work given up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EmulatedBacklog {
    pub due: u64,
    pub lag_ms: f64,
    pub waiting: u64,
    pub abandoned: u64,
}

/// A named rate (label, value) counted `per` minute or second.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub label: String,
    pub value: f64,
    pub per: Per,
}

/// What a headline rate counts its transactions per: TPC-C's NOTPM is per minute, TPC-E's tpsE
/// and TPC-V's tpsV per second. Results files write it in lower case (`"second"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    #[default]
    Minute,
    Second,
}

impl Per {
    /// Seconds in one unit.
    pub fn seconds(self) -> f64 {
        match self {
            Per::Minute => 60.0,
            Per::Second => 1.0,
        }
    }

    /// `count` transactions over `secs` seconds in this unit; zero for an empty window.
    pub fn rate(self, count: u64, secs: f64) -> f64 {
        if secs > 0.0 {
            count as f64 * self.seconds() / secs
        } else {
            0.0
        }
    }

    /// True for the default, which results files leave out.
    pub fn is_minute(&self) -> bool {
        *self == Per::Minute
    }

    /// All transactions in this unit, as polling and the console name it beside a headline.
    pub fn total_label(self) -> &'static str {
        match self {
            Per::Minute => "total TPM",
            Per::Second => "total TPS",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub mean_ms: f64,
    pub p95_ms: f64,
    /// Standard deviation (pgbench's `-P` line shows it).
    pub stddev_ms: f64,
}

/// One polling block over a window that ended in segment (`iteration`, `phase`).
#[derive(Debug, Clone, PartialEq)]
pub struct PollBlock {
    pub iteration: u32,
    /// The segment's label (phase name, or ramp).
    pub phase: String,
    pub window: Duration,
    /// The transaction types that ran in the window, in key-space order.
    pub types: Vec<TypeRow>,
    /// Every group, in plan order.
    pub groups: Vec<GroupRow>,
    /// The workload's headline (committed only) and all committed transactions, in the
    /// headline's unit.
    pub headline: Option<HeadlineRates>,
    /// Committed and expected rollbacks per second, over all types.
    pub aggregate_rate: f64,
    /// The emulators' work at the end of the window, when the run has any.
    pub backlog: Option<EmulatedBacklog>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TypeRow {
    pub name: String,
    /// Passed (committed and expected rollbacks) per second.
    pub rate: f64,
    /// Mean response time in seconds.
    pub resp_s: f64,
    /// Share of the window's drawn transactions (every type but the emulated ones), in
    /// percent; `None` for a type the workload's emulator issues, which is outside the mix.
    pub pct: Option<f64>,
    pub passed: u64,
    pub failed: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    pub name: String,
    /// Share of all the window's transactions, in percent.
    pub pct: f64,
    /// The phase's configured share in percent (shared mode only).
    pub target_pct: Option<f64>,
    /// Mean response time in seconds.
    pub resp_s: f64,
    pub failed: u64,
    /// The group's headline rate in the headline's unit (its Trade-Results per second: its
    /// part of tpsV), when the workload has a headline.
    pub headline: Option<f64>,
}

/// The headline over a polling window, and every committed transaction in the same unit.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlineRates {
    pub label: String,
    pub per: Per,
    /// Committed transactions of the headline's type per `per`.
    pub value: f64,
    /// Committed transactions of every type per `per`.
    pub total: f64,
}

/// The segment the run entered at `at` (offset from the start).
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseEdge {
    pub iteration: u32,
    pub phase: String,
    pub measured: bool,
    pub at: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoadProgress {
    pub what: String,
    pub done: u64,
    pub total: u64,
    /// Since the row count started.
    pub elapsed: Duration,
}

/// What a completed load did: `what` (e.g. "pgbench scale 10") into `target`.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSummary {
    pub what: String,
    pub target: String,
    pub rows: u64,
    pub elapsed: Duration,
    /// Time per step, in order (copy, vacuum, keys, ...).
    pub steps: Vec<(String, Duration)>,
}

/// Where events go. Sends come from the runner, the collector, driver threads and spawned
/// tasks alike, hence `Send + Sync`; a sink must not block for long (the collector waits).
pub trait Sink: Send + Sync {
    fn send(&self, event: Event);
}

/// A sink that keeps every event, in order, and shows nothing.
#[derive(Debug, Default)]
pub struct Recorded {
    events: Mutex<Vec<Event>>,
}

impl Recorded {
    pub fn new() -> Arc<Recorded> {
        Arc::new(Recorded::default())
    }

    /// The events so far.
    pub fn events(&self) -> Vec<Event> {
        match self.events.lock() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Sink for Recorded {
    fn send(&self, event: Event) {
        // A panic elsewhere while holding the lock leaves a usable Vec: keep recording.
        match self.events.lock() {
            Ok(mut g) => g.push(event),
            Err(poisoned) => poisoned.into_inner().push(event),
        }
    }
}

/// A sink that drops everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Discard;

impl Sink for Discard {
    fn send(&self, _event: Event) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_keeps_events_in_order() {
        let r = Recorded::new();
        let sink: Arc<dyn Sink> = r.clone();
        sink.send(Event::Note("a".into()));
        sink.send(Event::Interrupted);
        assert_eq!(
            r.events(),
            vec![Event::Note("a".into()), Event::Interrupted]
        );
    }

    #[test]
    fn an_aborted_client_reads_as_the_sentence_it_was() {
        let w = RunWarning::ClientAborted {
            client: 3,
            at_s: 1.25,
            message: "end of script reached".into(),
        };
        assert_eq!(
            w.to_string(),
            "client 3 aborted at 1.2 s: end of script reached; its other transactions were not run"
        );
        assert_eq!(RunWarning::Other("x".into()).to_string(), "x");
    }
}
