//! Configuration in two stages (STYLE.md rule 2): raw values from a TOML file and from flags,
//! with no I/O beyond reading the file, then validation into a typed [`RunPlan`] or
//! [`PreparePlan`]. Flags and files meet in [`RawRun`], so `--clients 8 --duration 30s` and a file
//! saying the same compile into the same Plan.

pub mod catalog;
pub mod duration;
mod error;
mod extra;
pub mod groups;
pub mod instances;
pub mod options;
pub mod plan;
pub mod presets;
pub mod profile;
pub mod shard;
pub mod size;
pub mod target;
pub mod timeline;
pub mod transactions;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

pub use catalog::{Catalog, OptionKind, OptionSpec, OptionValues, WorkloadInfo, DEFAULT_ROLE};
pub use error::ConfigError;
pub use instances::InstancePlan;
pub use options::{GroupOptions, Isolation};
pub use plan::{
    DriveMode, GroupPlan, OnError, PhaseGroup, PhasePlan, PreparePlan, ProtocolName, RunPlan,
    SetPlan, WorkloadName,
};
pub use presets::PresetKnobs;
pub use target::TargetSpec;

/// Run settings before validation: every field optional. Deserialized from TOML and filled
/// from command-line flags. Keys that are not fields here are a workload's options (see
/// [`extra`]); any other key is an error.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RawRun {
    pub workload: Option<WorkloadName>,
    pub scale: Option<u32>,
    pub target: Option<String>,
    pub clients: Option<u32>,
    pub jobs: Option<u32>,
    pub duration: Option<String>,
    /// pgbench's `-t`: transactions per client, instead of a duration (see [`transactions`]).
    pub transactions: Option<u64>,
    /// pgbench's `-C`: a new session per transaction.
    pub connect: Option<bool>,
    pub protocol: Option<ProtocolName>,
    pub rate: Option<f64>,
    pub max_tries: Option<u32>,
    /// `--continue-on-error`: an error no retry helps is counted and the client goes on
    /// (`false` in a run file asks for pgbench's abort).
    pub continue_on_error: Option<bool>,
    /// `--exit-on-abort`: the first aborted client stops the run.
    pub exit_on_abort: Option<bool>,
    /// `--verbose-errors` (pgbench 15's): each try failed by a serialization failure or a
    /// deadlock is told on the terminal, with what the client does next.
    pub verbose_errors: Option<bool>,
    /// How long one transaction may take before it is abandoned as a `timeout` failure.
    pub txn_timeout: Option<String>,
    pub progress: Option<String>,
    pub interval: Option<String>,
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
    pub mode: Option<DriveMode>,
    pub iterations: Option<u32>,
    pub ramp_up: Option<String>,
    pub ramp_down: Option<String>,
    pub measure: Option<RawMeasure>,
    pub deck_size: Option<u32>,
    /// Transactions per drawn target card; absent = sized automatically.
    pub card_run: Option<u32>,
    /// Pin each driver thread to a CPU of its own (off when absent; see `driver::affinity`).
    pub pin_threads: Option<bool>,
    pub poll: Option<String>,
    pub mix_log: Option<bool>,
    /// pgbench's `-L`: transactions over this many ms are late (skipped when already late).
    pub latency_limit: Option<f64>,
    /// pgbench's `-l`: a transaction log per driver thread in the working dir.
    pub log: Option<bool>,
    /// pgbench's `--log-prefix` (default `pgbench_log`).
    pub log_prefix: Option<String>,
    /// pgbench's `--sampling-rate`: the share of transactions logged.
    pub sampling_rate: Option<f64>,
    /// pgbench's `--aggregate-interval`: seconds per aggregated log line.
    pub aggregate_interval: Option<u32>,
    /// The log's script numbers (pgbench's script_no): transaction types in command-line
    /// order. The pgbench drop-in's alone, so not a file's key.
    #[serde(skip)]
    pub log_scripts: Option<Vec<String>>,
    /// pgbench's `--failures-detailed`: the log names a failure's kind (drop-in only).
    #[serde(skip)]
    pub failures_detailed: Option<bool>,
    /// pgbench's branch count and vacuum before the run (drop-in only).
    #[serde(skip)]
    pub pgbench_before_run: Option<plan::PgbenchBeforeRun>,
    /// Sampling period of `system.csv`; 0 turns sampling off.
    pub sample: Option<String>,
    /// `pg_stat_activity` samples per second for the wait profiles; 0 turns them off.
    pub sample_waits: Option<u32>,
    /// Address to serve live Prometheus metrics on (`HOST:PORT` or a port on loopback).
    pub prometheus: Option<String>,
    /// `NAME=VALUE` settings every benchmark session starts with.
    pub session_set: Option<Vec<String>>,
    /// CPU profiles over the measured window: `instances`, `host` or `off` (see [`profile`]).
    pub profile: Option<String>,
    /// perf's sampling rate per CPU.
    pub profile_hz: Option<u32>,
    /// `fp` or `dwarf`.
    pub profile_call_graph: Option<String>,
    /// Sets every phase's duration (presets are written for 12-minute phases).
    pub phase_duration: Option<String>,
    /// Every group's default isolation level.
    pub isolation: Option<Isolation>,
    /// Workload options for every group whose workload declares them (file: extra top-level
    /// keys; command line: the workloads' own flags).
    #[serde(skip)]
    pub options: OptionValues,
    /// A generated preset's knobs (`--lu-base`...): flags only.
    #[serde(skip)]
    pub preset: PresetKnobs,
    /// `[[instance]]` tables: the managed instances the run creates and starts.
    #[serde(default)]
    pub instance: Vec<Spanned<instances::RawInstance>>,
    #[serde(default)]
    pub group: Vec<Spanned<groups::RawGroup>>,
    #[serde(default)]
    pub phase: Vec<Spanned<groups::RawPhase>>,
}

/// The measured window: phases counted over all iterations from 1.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMeasure {
    pub first: u32,
    pub count: u32,
}

impl RawRun {
    /// Values set in `over` win; the rest come from `self`. Groups, phases and instances come
    /// only from files, preset knobs only from flags.
    pub fn overlay(self, over: RawRun) -> RawRun {
        RawRun {
            workload: over.workload.or(self.workload),
            scale: over.scale.or(self.scale),
            target: over.target.or(self.target),
            clients: over.clients.or(self.clients),
            jobs: over.jobs.or(self.jobs),
            duration: over.duration.or(self.duration),
            transactions: over.transactions.or(self.transactions),
            connect: over.connect.or(self.connect),
            protocol: over.protocol.or(self.protocol),
            rate: over.rate.or(self.rate),
            max_tries: over.max_tries.or(self.max_tries),
            continue_on_error: over.continue_on_error.or(self.continue_on_error),
            exit_on_abort: over.exit_on_abort.or(self.exit_on_abort),
            verbose_errors: over.verbose_errors.or(self.verbose_errors),
            txn_timeout: over.txn_timeout.or(self.txn_timeout),
            progress: over.progress.or(self.progress),
            interval: over.interval.or(self.interval),
            seed: over.seed.or(self.seed),
            out: over.out.or(self.out),
            mode: over.mode.or(self.mode),
            iterations: over.iterations.or(self.iterations),
            ramp_up: over.ramp_up.or(self.ramp_up),
            ramp_down: over.ramp_down.or(self.ramp_down),
            measure: over.measure.or(self.measure),
            deck_size: over.deck_size.or(self.deck_size),
            card_run: over.card_run.or(self.card_run),
            pin_threads: over.pin_threads.or(self.pin_threads),
            poll: over.poll.or(self.poll),
            mix_log: over.mix_log.or(self.mix_log),
            latency_limit: over.latency_limit.or(self.latency_limit),
            log: over.log.or(self.log),
            log_prefix: over.log_prefix.or(self.log_prefix),
            sampling_rate: over.sampling_rate.or(self.sampling_rate),
            aggregate_interval: over.aggregate_interval.or(self.aggregate_interval),
            log_scripts: over.log_scripts.or(self.log_scripts),
            failures_detailed: over.failures_detailed.or(self.failures_detailed),
            pgbench_before_run: over.pgbench_before_run.or(self.pgbench_before_run),
            sample: over.sample.or(self.sample),
            sample_waits: over.sample_waits.or(self.sample_waits),
            prometheus: over.prometheus.or(self.prometheus),
            session_set: over.session_set.or(self.session_set),
            profile: over.profile.or(self.profile),
            profile_hz: over.profile_hz.or(self.profile_hz),
            profile_call_graph: over.profile_call_graph.or(self.profile_call_graph),
            phase_duration: over.phase_duration.or(self.phase_duration),
            isolation: over.isolation.or(self.isolation),
            options: {
                let mut options = self.options;
                options.extend(over.options);
                options
            },
            preset: PresetKnobs {
                lu_base: over.preset.lu_base.or(self.preset.lu_base),
                sets: over.preset.sets.or(self.preset.sets),
                target_tpsv: over.preset.target_tpsv.or(self.preset.target_tpsv),
                hypervisor: over.preset.hypervisor.or(self.preset.hypervisor),
                accel: over.preset.accel.or(self.preset.accel),
            },
            instance: if over.instance.is_empty() {
                self.instance
            } else {
                over.instance
            },
            group: if over.group.is_empty() {
                self.group
            } else {
                over.group
            },
            phase: if over.phase.is_empty() {
                self.phase
            } else {
                over.phase
            },
        }
    }
}

/// A run's default seed when none is given: the clock's nanoseconds, so runs differ.
pub fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// Most sessions a run opens (each client holds one per database it reaches): a server takes
/// a few thousand at most, and each costs the driver memory before any is refused.
pub const MAX_CLIENTS: u32 = 10_000;
/// Most cards in one deck (4 bytes each, one deck per set).
pub const MAX_DECK_SIZE: u32 = 1_000_000;
/// Most groups in a run, and most sets in one group: each set is a database to prepare and a
/// deck per client; past these, a typo (`sets = 4000000000`) would only exhaust memory.
pub const MAX_GROUPS: usize = 1_000;
pub const MAX_SETS: usize = 1_000;

/// Values that size the driver's memory, against their caps.
fn check_sizes(
    clients: u32,
    deck_size: Option<u32>,
    phases: &[PhasePlan],
) -> Result<(), ConfigError> {
    if clients > MAX_CLIENTS {
        return Err(ConfigError::OverCap {
            setting: "clients",
            value: u64::from(clients),
            cap: u64::from(MAX_CLIENTS),
            how: " (--clients / -c)",
        });
    }
    for p in phases {
        let sum: u64 = p.groups.iter().map(|g| u64::from(g.clients)).sum();
        if sum > u64::from(MAX_CLIENTS) {
            return Err(ConfigError::PhaseOverCap {
                phase: p.name.clone(),
                clients: sum,
                cap: MAX_CLIENTS,
            });
        }
    }
    match deck_size {
        Some(0) => Err(ConfigError::TooSmall {
            setting: "deck-size",
            least: 1,
            how: "",
        }),
        Some(d) if d > MAX_DECK_SIZE => Err(ConfigError::OverCap {
            setting: "deck-size",
            value: u64::from(d),
            cap: u64::from(MAX_DECK_SIZE),
            how: " cards; leave it out for the smallest exact deck",
        }),
        _ => Ok(()),
    }
}

/// Longest fixed run of one target card.
pub const MAX_CARD_RUN: u32 = 1_000_000;

fn check_card_run(card_run: Option<u32>) -> Result<(), ConfigError> {
    match card_run {
        Some(0) => Err(ConfigError::TooSmall {
            setting: "card-run",
            least: 1,
            how: " (1 = one card per transaction, as the TPC-V kit); leave it out to size runs \
                  automatically",
        }),
        Some(n) if n > MAX_CARD_RUN => Err(ConfigError::OverCap {
            setting: "card-run",
            value: u64::from(n),
            cap: u64::from(MAX_CARD_RUN),
            how: "; leave it out to size runs automatically",
        }),
        _ => Ok(()),
    }
}

/// Defaults of a run, chosen to match pgbench where pgbench has one.
pub mod defaults {
    pub const CLIENTS: u32 = 1;
    pub const DURATION: &str = "30s";
    pub const MAX_TRIES: u32 = 1;
    pub const PROGRESS: &str = "5s";
    pub const INTERVAL: &str = "30s";
    pub const POLL: &str = "10s";
    pub const SAMPLE: &str = "1s";
    /// Wait samples a second: reading `pg_stat_activity` 10 times a second costs the
    /// servers too little to measure (README, "Wait profiles").
    pub const SAMPLE_WAITS: u32 = 10;
    /// A run over several targets abandons a transaction after this long: far above any
    /// OLTP transaction's response time (TPC-E's limits are 1-3 s at p90), short enough that
    /// a hung server does not hold the clients the other targets need for long.
    pub const MULTI_TARGET_TXN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
    /// The shortest `--txn-timeout`: below it a busy 2-core machine's scheduling hiccups
    /// would turn into timeouts.
    pub const MIN_TXN_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);
}

/// Where a run's file settings come from: a file on disk, a built-in preset, or nothing.
pub enum RunSource<'a> {
    None,
    File(&'a Path),
    Preset(&'a str),
    /// A preset sized for a host with this much memory (bytes): what the CLI passes, so a
    /// preset with instances (`tpcv`) can size their memory limits. `Preset` knows none.
    PresetOnHost(&'a str, Option<u64>),
}

/// The run file's or preset's text and its name for messages (`flags` and an empty text when
/// there is neither): what [`build_run_plan`] parses, and what an experiment edits per point.
pub fn run_text(
    source: RunSource,
    flags: &RawRun,
    cores: u32,
) -> Result<(String, String), ConfigError> {
    Ok(match source {
        RunSource::None => {
            presets::refuse_knobs(&flags.preset).map_err(setting("preset"))?;
            (String::from("flags"), String::new())
        }
        RunSource::Preset(name) => presets::text(name, flags, cores, None)?,
        RunSource::PresetOnHost(name, memory) => presets::text(name, flags, cores, memory)?,
        RunSource::File(path) => {
            presets::refuse_knobs(&flags.preset).map_err(setting("preset"))?;
            let file = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                file: file.clone(),
                source,
            })?;
            (file, text)
        }
    })
}

/// Reads the run file or preset (if any), lays the flags over it, and validates the result.
/// `cores` decides the default number of driver threads (and sizes a generated preset's
/// instances); `catalog` names the workloads.
pub fn build_run_plan(
    source: RunSource,
    flags: RawRun,
    cores: u32,
    default_seed: u64,
    catalog: &dyn Catalog,
) -> Result<RunPlan, ConfigError> {
    let (preset, run_file) = match &source {
        RunSource::None => (None, None),
        RunSource::File(path) => (None, Some(path.to_path_buf())),
        RunSource::Preset(name) | RunSource::PresetOnHost(name, _) => {
            (Some(name.to_string()), None)
        }
    };
    let (file, text) = run_text(source, &flags, cores)?;
    let src = groups::Source {
        file: &file,
        text: &text,
    };
    let from_file = parse_run_text(&src, catalog)?;
    let mut plan = validate_run(&src, from_file.overlay(flags), cores, default_seed, catalog)?;
    plan.preset = preset;
    plan.run_file = run_file;
    Ok(plan)
}

/// Parses a run file's text, workload options included.
pub fn parse_run_text(src: &groups::Source, catalog: &dyn Catalog) -> Result<RawRun, ConfigError> {
    let mut raw: RawRun = parse_toml(src.file, src.text)?;
    let extra = extra::workload_options::<RawRun, groups::RawGroup>(src, catalog)?;
    raw.options = extra.top;
    for (g, options) in raw.group.iter_mut().zip(extra.groups) {
        g.get_mut().options = options;
    }
    Ok(raw)
}

/// The run's groups and phases: the one of a flag-style run, or the file's tables (where the
/// one-group flags have no place).
fn groups_and_phases(
    src: &groups::Source,
    raw: &RawRun,
    shared: bool,
    phase_duration: Option<Duration>,
    catalog: &dyn Catalog,
) -> Result<(Vec<GroupPlan>, Vec<PhasePlan>), ConfigError> {
    if raw.group.is_empty() {
        return single_group(raw, phase_duration, catalog);
    }
    if raw.workload.is_some() || raw.target.is_some() || raw.scale.is_some() {
        return Err(ConfigError::OneGroupFlags {
            file: src.file.to_string(),
        });
    }
    if raw.duration.is_some() && phase_duration.is_none() {
        return Err(ConfigError::DurationWithPhases {
            file: src.file.to_string(),
        });
    }
    let g = groups::groups(src, &raw.group, &raw.options, raw.isolation, catalog)?;
    let p = groups::phases(src, &raw.phase, &g, shared, phase_duration, catalog)?;
    Ok((g, p))
}

/// `--rate`: a positive total for the shared pool (independent groups rate per phase).
fn check_rate(rate: Option<f64>, shared: bool) -> Result<(), ConfigError> {
    match rate {
        Some(r) if !(r.is_finite() && r > 0.0) => Err(ConfigError::Rate { rate: r }),
        Some(_) if !shared => Err(ConfigError::RateInIndependentMode),
        _ => Ok(()),
    }
}

/// Validates raw run settings into a Plan; every message names the setting and the fix.
pub fn validate_run(
    src: &groups::Source,
    raw: RawRun,
    cores: u32,
    default_seed: u64,
    catalog: &dyn Catalog,
) -> Result<RunPlan, ConfigError> {
    let shared = raw.mode.unwrap_or(DriveMode::Shared) == DriveMode::Shared;
    let phase_duration = match raw.phase_duration.as_deref() {
        Some(t) => Some(duration::parse_duration(t).map_err(value("phase-duration"))?),
        None => None,
    };
    let transactions = transactions::check(&raw, phase_duration)?;
    let (groups, phases) = groups_and_phases(src, &raw, shared, phase_duration, catalog)?;
    let instances = instances::instances(src, &raw.instance)?;
    instances::check_used(src, &raw.instance, &groups)?;
    let clients = raw.clients.unwrap_or(defaults::CLIENTS);
    if clients == 0 {
        return Err(ConfigError::TooSmall {
            setting: "clients",
            least: 1,
            how: " (--clients / -c)",
        });
    }
    check_sizes(clients, raw.deck_size, &phases)?;
    check_card_run(raw.card_run)?;
    let jobs = driver_threads(&raw, shared, clients, &phases, cores)?;
    let cadence = cadence(&raw, groups.len() > 1 || phases.len() > 1)?;
    check_rate(raw.rate, shared)?;
    let max_tries = raw.max_tries.unwrap_or(defaults::MAX_TRIES);
    if max_tries == 0 {
        return Err(ConfigError::TooSmall {
            setting: "max-tries",
            least: 1,
            how: " (1 = no retries)",
        });
    }
    let txn_timeout = txn_timeout(raw.txn_timeout.as_deref(), &groups)?;
    let on_error = on_error(&raw, src, &groups)?;
    let iterations = raw.iterations.unwrap_or(1);
    if iterations == 0 {
        return Err(ConfigError::TooSmall {
            setting: "iterations",
            least: 1,
            how: "",
        });
    }
    let (measure_first, measure_count) = measured_phases(raw.measure, phases.len(), iterations)?;
    Ok(RunPlan {
        mode: if shared {
            DriveMode::Shared
        } else {
            DriveMode::Independent
        },
        groups,
        instances,
        phases,
        iterations,
        ramp_up: cadence.ramp_up,
        ramp_down: cadence.ramp_down,
        measure_first,
        measure_count,
        clients,
        jobs,
        protocol: raw.protocol.unwrap_or(ProtocolName::Prepared),
        rate: raw.rate,
        transactions,
        connect: raw.connect.unwrap_or(false),
        latency_limit_ms: latency_limit(raw.latency_limit).map_err(setting("latency-limit"))?,
        max_tries,
        on_error,
        verbose_errors: raw.verbose_errors.unwrap_or(false),
        txn_timeout,
        progress: cadence.progress,
        poll: cadence.poll,
        interval: cadence.interval,
        seed: raw.seed.unwrap_or(default_seed),
        deck_size: raw.deck_size,
        card_run: raw.card_run,
        pin_threads: raw.pin_threads.unwrap_or(false),
        mix_log: raw.mix_log.unwrap_or(false),
        txn_log: txn_log(&raw).map_err(setting("log"))?,
        pgbench_before_run: raw.pgbench_before_run,
        sample: cadence.sample,
        sample_waits: sample_waits(raw.sample_waits).map_err(setting("sample-waits"))?,
        prometheus: raw.prometheus,
        session_settings: options::session_settings(raw.session_set.as_deref().unwrap_or(&[]))
            .map_err(setting("session-set"))?,
        profile: profile::validate(
            raw.profile.as_deref(),
            raw.profile_hz,
            raw.profile_call_graph.as_deref(),
        )?,
        out: raw.out,
        shard: None,
        preset: None,
        run_file: None,
    })
}

/// What a client does after an error no retry helps (issue 38): the flags or run-file keys
/// when given; else pgbench's abort for a run in pgbench's style (flags only: no run file
/// or preset, one group on one database), and counting and going on for run files, presets
/// and runs over several databases, where one tenant's trouble must not end the others' work.
fn on_error(
    raw: &RawRun,
    src: &groups::Source,
    groups: &[GroupPlan],
) -> Result<OnError, ConfigError> {
    match (raw.continue_on_error, raw.exit_on_abort) {
        (Some(true), Some(true)) => Err(ConfigError::ContinueAndExit),
        (_, Some(true)) => Ok(OnError::ExitRun),
        (Some(true), _) => Ok(OnError::Continue),
        (Some(false), _) => Ok(OnError::AbortClient),
        (None, _) => {
            // A set maps each of its roles to a database, often one under every role.
            let one_database = match groups {
                [g] => {
                    g.sets.len() == 1
                        && g.sets[0]
                            .targets
                            .values()
                            .map(|t| format!("{t:?}"))
                            .collect::<std::collections::BTreeSet<_>>()
                            .len()
                            <= 1
                }
                _ => false,
            };
            Ok(if src.text.trim().is_empty() && one_database {
                OnError::AbortClient
            } else {
                OnError::Continue
            })
        }
    }
}

/// The transaction timeout: `--txn-timeout` (0 turns it off), else
/// [`defaults::MULTI_TARGET_TXN_TIMEOUT`] when the run reaches more than one target (one hung
/// server must not hold clients the other targets need), else none, as pgbench.
fn txn_timeout(given: Option<&str>, groups: &[GroupPlan]) -> Result<Option<Duration>, ConfigError> {
    if let Some(text) = given {
        let d = duration::parse_duration(text).map_err(|m| ConfigError::Value {
            setting: "txn-timeout".into(),
            message: format!("{m} (0 turns the timeout off; e.g. --txn-timeout 10s)"),
        })?;
        if !d.is_zero() && d < defaults::MIN_TXN_TIMEOUT {
            return Err(ConfigError::TxnTimeoutTooShort {
                given: text.to_string(),
                least: defaults::MIN_TXN_TIMEOUT,
            });
        }
        return Ok((!d.is_zero()).then_some(d));
    }
    let targets: std::collections::BTreeSet<String> = groups
        .iter()
        .flat_map(|g| g.sets.iter())
        .flat_map(|s| s.targets.values().map(|t| format!("{t:?}")))
        .collect();
    Ok((targets.len() > 1).then_some(defaults::MULTI_TARGET_TXN_TIMEOUT))
}

/// Maps a setting's own parser's message to [`ConfigError::Setting`].
fn setting(setting: &'static str) -> impl Fn(String) -> ConfigError {
    move |message| ConfigError::Setting { setting, message }
}

/// Maps a shared parser's message (a duration, a target) to [`ConfigError::Value`].
fn value(setting: &'static str) -> impl Fn(String) -> ConfigError {
    move |message| ConfigError::Value {
        setting: setting.into(),
        message,
    }
}

/// Driver threads: `--jobs`, or one per core, never more than the clients that can be active.
fn driver_threads(
    raw: &RawRun,
    shared: bool,
    clients: u32,
    phases: &[PhasePlan],
    cores: u32,
) -> Result<u32, ConfigError> {
    let most_clients = if shared {
        clients
    } else {
        let groups = phases.first().map_or(0, |p| p.groups.len());
        (0..groups)
            .map(|g| {
                phases
                    .iter()
                    .map(|p| p.groups[g].clients)
                    .max()
                    .unwrap_or(0)
            })
            .sum()
    };
    match raw.jobs {
        Some(0) => Err(ConfigError::TooSmall {
            setting: "jobs",
            least: 1,
            how: " (--jobs / -j)",
        }),
        Some(j) => Ok(j.min(most_clients.max(1))),
        None => Ok(cores.max(1).min(most_clients.max(1))),
    }
}

/// The run's clocks: reporting, live output, sampling and ramps.
struct Cadence {
    progress: Duration,
    poll: Duration,
    interval: Duration,
    sample: Duration,
    ramp_up: Duration,
    ramp_down: Duration,
}

fn cadence(raw: &RawRun, elastic: bool) -> Result<Cadence, ConfigError> {
    let poll_default = if elastic { defaults::POLL } else { "0s" };
    let poll = parse_setting("poll", raw.poll.as_deref(), poll_default)?;
    // The polling block already shows the rate; the one-line progress is for simple runs.
    let progress_default = if poll.is_zero() {
        defaults::PROGRESS
    } else {
        "0s"
    };
    let progress = parse_setting("progress", raw.progress.as_deref(), progress_default)?;
    let interval = parse_setting("interval", raw.interval.as_deref(), defaults::INTERVAL)?;
    if interval < Duration::from_secs(1) || interval.subsec_nanos() != 0 {
        return Err(ConfigError::Interval);
    }
    for (key, d) in [("progress", progress), ("poll", poll)] {
        if !d.is_zero() && (d < Duration::from_secs(1) || d.subsec_nanos() != 0) {
            return Err(ConfigError::WholeSecondsOrOff { setting: key });
        }
    }
    let sample = parse_setting("sample", raw.sample.as_deref(), defaults::SAMPLE)?;
    if !sample.is_zero() && sample < Duration::from_millis(100) {
        return Err(ConfigError::Sample);
    }
    let ramp_up = parse_setting("ramp_up", raw.ramp_up.as_deref(), "0s")?;
    let ramp_down = parse_setting("ramp_down", raw.ramp_down.as_deref(), "0s")?;
    for (key, d) in [("ramp_up", ramp_up), ("ramp_down", ramp_down)] {
        if d.subsec_nanos() != 0 {
            return Err(ConfigError::WholeSeconds { setting: key });
        }
    }
    Ok(Cadence {
        progress,
        poll,
        interval,
        sample,
        ramp_up,
        ramp_down,
    })
}

/// `--sample-waits`: 0 (off) up to [`crate::sampler::waits::MAX_PER_SECOND`].
fn sample_waits(asked: Option<u32>) -> Result<u32, String> {
    let most = crate::sampler::waits::MAX_PER_SECOND;
    match asked {
        None => Ok(defaults::SAMPLE_WAITS),
        Some(n) if n <= most => Ok(n),
        Some(n) => Err(format!(
            "sample_waits {n} is too many samples a second; give 0 (off) to {most} (--sample-waits)"
        )),
    }
}

/// The measured window `[first, first + count)` over all iterations' phases, counted from 1.
fn measured_phases(
    measure: Option<RawMeasure>,
    phases: usize,
    iterations: u32,
) -> Result<(u32, u32), ConfigError> {
    let total_phases = iterations * phases as u32;
    let Some(m) = measure else {
        return Ok((1, total_phases));
    };
    if m.first == 0 || m.count == 0 || m.first + m.count - 1 > total_phases {
        return Err(ConfigError::Measure {
            first: m.first,
            count: m.count,
            total: total_phases,
            phases,
            iterations,
        });
    }
    Ok((m.first, m.count))
}

/// The one group, one set, one phase of a flag-style run (`--workload tpcb --duration 30s`).
fn single_group(
    raw: &RawRun,
    phase_duration: Option<Duration>,
    catalog: &dyn Catalog,
) -> Result<(Vec<GroupPlan>, Vec<PhasePlan>), ConfigError> {
    let names: Vec<&str> = catalog.all().iter().map(|w| w.name()).collect();
    let workload = raw
        .workload
        .clone()
        .ok_or_else(|| ConfigError::NoWorkload {
            names: names.join("|"),
        })?;
    let info = catalog
        .get(workload.as_str())
        .map_err(setting("workload"))?;
    if raw.scale == Some(0) {
        return Err(ConfigError::TooSmall {
            setting: "scale",
            least: 1,
            how: " (--scale / -s)",
        });
    }
    if raw.mode == Some(DriveMode::Independent) {
        return Err(ConfigError::IndependentNeedsGroups);
    }
    let duration = match (phase_duration, raw.transactions) {
        (Some(d), _) => d,
        (None, Some(_)) => transactions::CAP,
        (None, None) => parse_setting("duration", raw.duration.as_deref(), defaults::DURATION)?,
    };
    if duration < Duration::from_secs(1) {
        return Err(ConfigError::DurationTooShort {
            given: duration::format_duration(duration),
        });
    }
    let target = match raw.target.as_deref() {
        Some(t) => TargetSpec::parse(t).map_err(value("target"))?,
        None => TargetSpec::default_instance(),
    };
    let options = GroupOptions {
        isolation: raw.isolation.unwrap_or_default(),
        workload: catalog::validate_options(catalog, info, &raw.options)
            .map_err(setting("workload option"))?,
    };
    let group = GroupPlan {
        name: workload.as_str().to_string(),
        scale: raw.scale,
        options,
        sets: vec![SetPlan {
            name: "1".into(),
            targets: info
                .roles()
                .iter()
                .map(|r| (r.to_string(), target.clone()))
                .collect(),
        }],
        workload,
    };
    let phase = PhasePlan {
        name: "run".into(),
        duration,
        groups: vec![PhaseGroup {
            share: 100.0,
            clients: 0,
            think: Duration::ZERO,
            rate: None,
            mix: Vec::new(),
        }],
    };
    Ok((vec![group], vec![phase]))
}

/// `prepare`'s settings as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct PrepareRequest<'a> {
    pub workload: Option<&'a str>,
    pub scale: Option<u32>,
    pub target: Option<&'a str>,
    pub jobs: Option<u32>,
    pub force: bool,
    /// Workload options the data depends on (`--trade-days`).
    pub options: OptionValues,
}

/// Validates `prepare` settings.
pub fn validate_prepare(
    request: &PrepareRequest,
    cores: u32,
    catalog: &dyn Catalog,
) -> Result<PreparePlan, ConfigError> {
    let PrepareRequest {
        workload,
        scale,
        target,
        jobs,
        force,
        ref options,
    } = *request;
    let workload = workload.ok_or_else(|| {
        let families: Vec<&str> = catalog.all().iter().map(|w| w.name()).collect();
        ConfigError::NoPrepareWorkload {
            families: families.join(", "),
        }
    })?;
    let info = catalog.get(workload).map_err(setting("workload"))?;
    let options = load_options(
        info,
        &catalog::validate_options(catalog, info, options).map_err(setting("workload option"))?,
    );
    let workload = WorkloadName::new(info.name());
    let scale = scale.unwrap_or(info.default_scale());
    if scale == 0 {
        return Err(ConfigError::TooSmall {
            setting: "scale",
            least: 1,
            how: " (--scale / -s)",
        });
    }
    let jobs = match jobs {
        Some(0) => {
            return Err(ConfigError::TooSmall {
                setting: "jobs",
                least: 1,
                how: " (--jobs / -j)",
            })
        }
        Some(j) => j,
        None => default_load_jobs(cores),
    };
    let target = match target {
        Some(t) => TargetSpec::parse(t).map_err(value("target"))?,
        None => TargetSpec::default_instance(),
    };
    Ok(PreparePlan {
        workload,
        scale,
        target,
        jobs,
        force,
        options,
    })
}

/// The options of `resolved` that `workload`'s data depends on: what a load records.
pub fn load_options(workload: &dyn WorkloadInfo, resolved: &OptionValues) -> OptionValues {
    resolved
        .iter()
        .filter(|(k, _)| {
            workload
                .options()
                .iter()
                .any(|o| o.load && o.key == k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What `prepare` loads for a run: every distinct database of every set (a set's `oltp` and
/// `dss` databases are independent copies, loaded alike), once, with its group's workload,
/// scale and load options. `scale_asked` is false when the group names no scale (the data's
/// own scale is then used by a run, whatever it is).
pub fn load_plans(
    run: &RunPlan,
    jobs: u32,
    force: bool,
    catalog: &dyn Catalog,
) -> Result<Vec<(PreparePlan, bool)>, ConfigError> {
    let mut plans: Vec<(PreparePlan, bool)> = Vec::new();
    for g in &run.groups {
        let info = catalog
            .get(g.workload.as_str())
            .map_err(setting("workload"))?;
        for set in &g.sets {
            for (target, _) in set.distinct_targets() {
                if plans.iter().any(|(p, _)| p.target == *target) {
                    continue;
                }
                let plan = PreparePlan {
                    workload: g.workload.clone(),
                    scale: g.scale.unwrap_or(info.default_scale()),
                    target: target.clone(),
                    jobs,
                    force,
                    options: load_options(info, &g.options.workload),
                };
                plans.push((plan, g.scale.is_some()));
            }
        }
    }
    Ok(plans)
}

/// COPY sessions when `--jobs` is not given: half the cores, since the server's backends need the
/// other half. With one session the loader can use `COPY FREEZE` (as `pgbench -i` does), which
/// on 2 cores beat two parallel sessions plus the vacuum that unfrozen rows then need.
pub fn default_load_jobs(cores: u32) -> u32 {
    (cores / 2).max(1)
}

fn parse_setting(key: &str, value: Option<&str>, default: &str) -> Result<Duration, ConfigError> {
    duration::parse_duration(value.unwrap_or(default)).map_err(|message| ConfigError::Value {
        setting: key.to_string(),
        message,
    })
}

/// Reads and deserializes a TOML file; errors carry file and line.
pub fn read_toml<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    parse_toml(&file, &text)
}

/// Deserializes TOML text; `file` is only used in messages.
pub fn parse_toml<T: for<'de> Deserialize<'de>>(file: &str, text: &str) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        ConfigError::File {
            file: file.to_string(),
            line,
            message: e.message().trim().to_string(),
        }
    })
}

#[cfg(test)]
mod tests;

/// pgbench's `-l` and its options, checked as pgbench checks them (with the fix).
fn txn_log(raw: &RawRun) -> Result<Option<crate::metrics::txnlog::TxnLogPlan>, String> {
    let on = raw.log.unwrap_or(false);
    if let Some(rate) = raw.sampling_rate {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(format!(
                "invalid sampling rate: \"{rate}\" (give --sampling-rate a share in (0, 1], e.g. 0.01)"
            ));
        }
        if !on {
            return Err(
                "log sampling (--sampling-rate) is allowed only when logging \
                        transactions (-l): add --log"
                    .into(),
            );
        }
    }
    if raw.aggregate_interval == Some(0) {
        return Err("--aggregate-interval must be at least 1 (seconds)".into());
    }
    if raw.sampling_rate.is_some() && raw.aggregate_interval.is_some() {
        return Err(
            "log sampling (--sampling-rate) and aggregation (--aggregate-interval) \
                    cannot be used at the same time: give one of them"
                .into(),
        );
    }
    if !on && (raw.aggregate_interval.is_some() || raw.log_prefix.is_some()) {
        return Err(
            "--aggregate-interval and --log-prefix are allowed only when logging \
                    transactions (-l): add --log"
                .into(),
        );
    }
    Ok(on.then(|| crate::metrics::txnlog::TxnLogPlan {
        prefix: raw
            .log_prefix
            .clone()
            .unwrap_or_else(|| crate::metrics::txnlog::DEFAULT_PREFIX.into()),
        sampling_rate: raw.sampling_rate,
        aggregate_interval: raw.aggregate_interval,
        scripts: raw.log_scripts.clone().unwrap_or_default(),
        failures_detailed: raw.failures_detailed.unwrap_or(false),
    }))
}

/// pgbench's `-L`, in ms: a positive number.
fn latency_limit(ms: Option<f64>) -> Result<Option<f64>, String> {
    match ms {
        Some(ms) if !(ms.is_finite() && ms > 0.0) => Err(format!(
            "invalid latency limit: \"{ms}\" (give --latency-limit a positive number of ms)"
        )),
        other => Ok(other),
    }
}
