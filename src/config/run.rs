//! Run validation: raw settings (file and flags laid together) into a typed [`RunPlan`];
//! every message names the setting and the fix.

use std::time::Duration;

use super::catalog::{self, Catalog};
use super::limits::{check_card_run, check_sizes, latency_limit, sample_waits};
use super::options::{self, GroupOptions};
use super::plan::{
    DriveMode, GroupPlan, OnError, PhaseGroup, PhasePlan, ProtocolName, RunPlan, SetPlan,
};
use super::raw::{RawMeasure, RawRun};
use super::target::TargetSpec;
use super::txnlog::txn_log;
use super::{
    defaults, disruptions, duration, groups, instances, profile, setting, transactions, value,
    ConfigError,
};

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

/// A workload whose clients each run a fixed number of units (TPC-H's streams) needs clients
/// of its own: in shared mode with other groups, a card would hand its units to any client.
fn check_units(
    groups: &[GroupPlan],
    shared: bool,
    catalog: &dyn Catalog,
) -> Result<(), ConfigError> {
    if !shared || groups.len() < 2 {
        return Ok(());
    }
    let fixed = groups.iter().find(|g| {
        catalog
            .find(g.workload.as_str())
            .is_some_and(|w| w.units_per_client().is_some())
    });
    match fixed {
        Some(g) => Err(ConfigError::UnitsNeedIndependent {
            group: g.name.clone(),
            workload: g.workload.as_str().to_string(),
        }),
        None => Ok(()),
    }
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
    check_units(&groups, shared, catalog)?;
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
    let raw_events = raw.event.clone();
    let mut plan = RunPlan {
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
        protocol_default: raw.protocol.is_none(),
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
        events: Vec::new(),
    };
    plan.events = disruptions::disruptions(src, &raw_events, &plan)?;
    Ok(plan)
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
        // Clients that end after their units (TPC-H's streams): the run lasts until they do.
        (None, None)
            if raw.duration.is_none() && info.units_per_client_for(&raw.options).is_some() =>
        {
            transactions::CAP
        }
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

fn parse_setting(key: &str, value: Option<&str>, default: &str) -> Result<Duration, ConfigError> {
    duration::parse_duration(value.unwrap_or(default)).map_err(|message| ConfigError::Value {
        setting: key.to_string(),
        message,
    })
}
