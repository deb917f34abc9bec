//! The raw model of a run: every setting optional, as a TOML file or the flags give it
//! ([`RawRun`]), before validation; [`RawRun::overlay`] lays the flags over a file.

use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use super::catalog::OptionValues;
use super::options::Isolation;
use super::plan::{DriveMode, ProtocolName, WorkloadName};
use super::presets::PresetKnobs;
use super::{disruptions, groups, instances};

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
    pub pgbench_before_run: Option<super::plan::PgbenchBeforeRun>,
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
    /// `[[event]]` tables: what the run does to its instances, and when (see [`disruptions`]).
    #[serde(default)]
    pub event: Vec<Spanned<disruptions::RawEvent>>,
}

/// The measured window: phases counted over all iterations from 1.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMeasure {
    pub first: u32,
    pub count: u32,
}

impl RawRun {
    /// Values set in `over` win; the rest come from `self`. Groups, phases, events and instances come
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
                oltp_clients: over.preset.oltp_clients.or(self.preset.oltp_clients),
                streams: over.preset.streams.or(self.preset.streams),
                warehouses: over.preset.warehouses.or(self.preset.warehouses),
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
            event: if over.event.is_empty() {
                self.event
            } else {
                over.event
            },
        }
    }
}
