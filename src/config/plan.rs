//! The typed Plan: what a run will do, with every default resolved. Built only by `config`;
//! serialized verbatim into the results dir's `runtime.toml`.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use super::catalog::OptionValues;
use super::duration::serde_duration;
use super::instances::InstancePlan;
use super::options::{GroupOptions, Isolation};
use super::target::TargetSpec;

/// A workload's name as users type it (`--workload select-only`); which names exist is the
/// workload registry's business, checked through a [`Catalog`](super::Catalog).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkloadName(pub String);

impl WorkloadName {
    pub fn new(name: impl Into<String>) -> WorkloadName {
        WorkloadName(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for WorkloadName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// pgbench's `-M`: how statements are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ProtocolName {
    Simple,
    Extended,
    Prepared,
}

impl ProtocolName {
    pub fn wire(self) -> pgwire::Protocol {
        match self {
            ProtocolName::Simple => pgwire::Protocol::Simple,
            ProtocolName::Extended => pgwire::Protocol::Extended,
            ProtocolName::Prepared => pgwire::Protocol::Prepared,
        }
    }
}

/// What a client does after an error no retry can help (class `other`: a typo in a script, a
/// missing table, a constraint violation), issue 38. Serialization failures and deadlocks
/// are retried per `max_tries` and counted in every mode; lost sessions and timeouts are
/// reconnected and counted in every mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnError {
    /// pgbench 15: the client ends (aborted), the others go on, the run exits 2.
    AbortClient,
    /// pgbench 17's `--exit-on-abort`: the first aborted client stops the whole run (exit 2).
    ExitRun,
    /// Count the failure by class and go on (a later pgbench's `--continue-on-error`); what
    /// runs written before the modes existed did.
    #[default]
    Continue,
}

impl OnError {
    /// Whether an error of `other` class ends the client.
    pub fn aborts(self) -> bool {
        self != OnError::Continue
    }

    /// The flag that gives this mode, for messages.
    pub fn name(self) -> &'static str {
        match self {
            OnError::AbortClient => "abort the client (pgbench's default)",
            OnError::ExitRun => "--exit-on-abort",
            OnError::Continue => "--continue-on-error",
        }
    }
}

/// How clients are assigned to targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriveMode {
    /// TPC-V: one pool of clients, each connected to every target, drawing (group, set) cards
    /// from a deck made of the phase's shares.
    Shared,
    /// DBT-2 style: each group has its own clients; each phase sets every group's client count.
    Independent,
}

/// One copy of a group's databases: the target of each role its workload declares (`oltp`,
/// `dss`, ...). A set written with a single target has that target under every role.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SetPlan {
    pub name: String,
    /// Role name -> target; written flat (`oltp = "..."`) in `runtime.toml`.
    #[serde(flatten)]
    pub targets: BTreeMap<String, TargetSpec>,
}

impl SetPlan {
    /// The target of `role`.
    pub fn target(&self, role: &str) -> Option<&TargetSpec> {
        self.targets.get(role)
    }

    /// The set's distinct targets, each with the roles it serves, in role order.
    pub fn distinct_targets(&self) -> Vec<(&TargetSpec, Vec<&str>)> {
        let mut out: Vec<(&TargetSpec, Vec<&str>)> = Vec::new();
        for (role, spec) in &self.targets {
            match out.iter_mut().find(|(t, _)| *t == spec) {
                Some((_, roles)) => roles.push(role),
                None => out.push((spec, vec![role])),
            }
        }
        out
    }
}

/// A group: its workload, the scale its data is prepared with, and its sets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupPlan {
    pub name: String,
    pub workload: WorkloadName,
    /// Scale to prepare; `None` at run time means read it from the data (as pgbench does).
    pub scale: Option<u32>,
    pub sets: Vec<SetPlan>,
    /// Isolation and the workload's own settings (plans written before them used defaults).
    #[serde(default)]
    pub options: GroupOptions,
}

/// What one group gets in one phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseGroup {
    /// Percent of all transactions (shared mode); the shares of a phase sum to 100.
    pub share: f64,
    /// Active clients (independent mode).
    pub clients: u32,
    /// Pause after each transaction (independent mode).
    #[serde(with = "serde_duration")]
    pub think: Duration,
    /// Transactions per second over the group's active clients (independent mode).
    pub rate: Option<f64>,
    /// Weight per transaction type index of the group's workload; empty = the workload's own.
    pub mix: Vec<(String, f64)>,
}

/// A stretch of time with fixed shares, client counts and mix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhasePlan {
    pub name: String,
    #[serde(with = "serde_duration")]
    pub duration: Duration,
    /// One entry per group, in group order.
    pub groups: Vec<PhaseGroup>,
}

/// A validated benchmark run. A flag-only run is one group with one set and one phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunPlan {
    pub mode: DriveMode,
    pub groups: Vec<GroupPlan>,
    /// Managed instances the run file declares: created and started before the targets are
    /// resolved, with these limits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<InstancePlan>,
    pub phases: Vec<PhasePlan>,
    /// Passes over the phase list.
    pub iterations: u32,
    /// Run with the first phase's settings before measuring.
    #[serde(with = "serde_duration")]
    pub ramp_up: Duration,
    /// Run with the last phase's settings after measuring.
    #[serde(with = "serde_duration")]
    pub ramp_down: Duration,
    /// Measured phases, counted over all iterations from 1: `[first, first + count)`.
    pub measure_first: u32,
    pub measure_count: u32,
    /// Shared mode: the client pool.
    pub clients: u32,
    /// Driver threads; clients are sharded over them (pgbench's `-j`).
    pub jobs: u32,
    pub protocol: ProtocolName,
    /// The protocol was not asked for (`protocol` holds the default, `prepared`): behind a
    /// connection pooler that shares server sessions, the runner sends unnamed statements
    /// (`extended`) instead (issue 57). Not written: `runtime.toml` records the protocol run.
    #[serde(default, skip_serializing)]
    pub protocol_default: bool,
    /// Shared mode: total scheduled transactions per second over all clients (Poisson arrivals).
    pub rate: Option<f64>,
    /// pgbench's `-t`: each client runs this many transactions, then ends; the run ends
    /// when every client has (its one phase lasts `config::transactions::CAP` at most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions: Option<u64>,
    /// pgbench's `-C`: every transaction on a new session (the time to open it reported as
    /// the connection time).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub connect: bool,
    /// pgbench's `-L`: the latency limit, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit_ms: Option<f64>,
    /// Tries per transaction for serialization failures and deadlocks (1 = no retry).
    pub max_tries: u32,
    /// What a client does after an error no retry can help; runs written before the modes
    /// existed went on.
    #[serde(default)]
    pub on_error: OnError,
    /// `--verbose-errors`: tell each try a retryable error failed (see `event::TryError`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verbose_errors: bool,
    /// How long one try of a transaction may run before the client abandons it as a `timeout`
    /// failure (also sent as the server's `statement_timeout`); `None`: no limit.
    #[serde(
        default,
        with = "serde_duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub txn_timeout: Option<Duration>,
    /// Live progress line period; zero turns it off.
    #[serde(with = "serde_duration")]
    pub progress: Duration,
    /// Live polling block (TPC-V Fig. 6) period; zero turns it off.
    #[serde(with = "serde_duration")]
    pub poll: Duration,
    /// Reporting bucket of `intervals.csv` and `latency.hlog`.
    #[serde(with = "serde_duration")]
    pub interval: Duration,
    pub seed: u64,
    /// Cards per target deck; `None` = the smallest exact deck.
    pub deck_size: Option<u32>,
    /// Transactions per drawn target card; `None` = sized automatically (see `driver::deck`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_run: Option<u32>,
    /// Pin each driver thread to its own CPU when the process may use at least as many CPUs
    /// as there are threads (see `driver::affinity`); off unless asked for.
    #[serde(default)]
    pub pin_threads: bool,
    /// Write every transaction to `mix-*.bin`.
    pub mix_log: bool,
    /// pgbench's `-l`: per-thread transaction logs in the working dir.
    #[serde(default)]
    pub txn_log: Option<super::TxnLogPlan>,
    /// The pgbench drop-in's step before the run; not recorded (it measures nothing).
    #[serde(skip)]
    pub pgbench_before_run: Option<PgbenchBeforeRun>,
    /// Sampling period of `system.csv`; zero turns sampling off.
    #[serde(with = "serde_duration", default = "default_sample")]
    pub sample: Duration,
    /// `pg_stat_activity` samples a second for the wait profiles; 0: none (older plans).
    #[serde(default)]
    pub sample_waits: u32,
    /// Serve live metrics in the Prometheus text format on this address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<String>,
    /// Settings every benchmark session starts with (`--session-set NAME=VALUE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_settings: Vec<(String, String)>,
    /// CPU profiles of the measured window (`--profile`); `None`: none taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<super::profile::ProfilePlan>,
    /// Results dir; `None` means `./results/<UTC timestamp>-<name>/`.
    pub out: Option<PathBuf>,
    /// This process's part of a run spread over several driver processes (`--shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<super::shard::ShardPlan>,
    /// The preset that ran (`--preset tpcv`): the report's title and the default results dir
    /// call the run by it rather than by its workload or "elastic" (issue 43).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// The run file that ran, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_file: Option<PathBuf>,
    /// What the run does to its instances and when (`[[event]]`), in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<super::Disruption>,
}

/// Plans written before sampling existed sampled nothing.
fn default_sample() -> Duration {
    Duration::ZERO
}

/// What pgbench does on the server before a run (the drop-in's alone), which the runner has
/// the pgbench workload do before anything else touches the tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgbenchBeforeRun {
    /// A built-in script runs: count pgbench_branches, refusing as pgbench does without it.
    pub count_branches: bool,
    /// -s given: say that the count wins.
    pub scale_given: bool,
    /// pgbench's vacuum (not -n): branches and tellers, history emptied.
    pub vacuum: bool,
    /// -v: pgbench_accounts too.
    pub vacuum_accounts: bool,
}

impl RunPlan {
    /// The name used for the default results dir: the workload of a one-group run, else "elastic".
    pub fn name(&self) -> &str {
        match self.groups.as_slice() {
            [g] => g.workload.as_str(),
            _ => "elastic",
        }
    }

    /// What ran, in a word: the preset's name, else the run file's stem, else [`RunPlan::name`].
    pub fn title(&self) -> String {
        let stem = self
            .run_file
            .as_deref()
            .and_then(|f| f.file_stem())
            .map(|s| s.to_string_lossy().into_owned());
        self.preset
            .clone()
            .or(stem)
            .unwrap_or_else(|| self.name().to_string())
    }

    /// Advice on run settings that are valid but probably not meant, printed before the run
    /// (a workload adds its own once its data's scale is known).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let strict = self
            .groups
            .iter()
            .find(|g| g.options.isolation != Isolation::ReadCommitted);
        if let (Some(g), 1) = (strict, self.max_tries) {
            notes.push(format!(
                "note: group '{}' runs at {}, where concurrent clients get serialization \
                 failures; with --max-tries 1 they count as failed. Add e.g. --max-tries 10 to \
                 retry them with the same parameters",
                g.name,
                g.options.isolation.as_sql()
            ));
        }
        notes
    }

    /// The most clients group `g` has at once: the pool in shared mode, else its largest
    /// phase count.
    pub fn most_clients(&self, g: usize) -> u32 {
        match self.mode {
            DriveMode::Shared => self.clients,
            DriveMode::Independent => self
                .phases
                .iter()
                .map(|p| p.groups.get(g).map_or(0, |pg| pg.clients))
                .max()
                .unwrap_or(0),
        }
    }

    /// Planned length of the whole run, ramps included.
    pub fn total_duration(&self) -> Duration {
        let phases: Duration = self.phases.iter().map(|p| p.duration).sum();
        self.ramp_up + phases * self.iterations + self.ramp_down
    }
}

/// A validated data preparation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PreparePlan {
    pub workload: WorkloadName,
    pub scale: u32,
    pub target: TargetSpec,
    /// Parallel COPY connections.
    pub jobs: u32,
    /// Drop and reload existing tables.
    pub force: bool,
    /// The workload's options the data depends on (resolved, defaults filled in).
    pub options: OptionValues,
}
