//! What can be wrong with a run's configuration (flags, a run file, a preset), each variant
//! carrying the setting and values at fault and its message naming the fix. The messages are
//! the ones users and tests know; the variants let callers tell the causes apart.

use std::time::Duration;

/// A configuration problem, always naming where it is and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}:{line}: {message}")]
    File {
        file: String,
        line: usize,
        message: String,
    },
    #[error("cannot read config file {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// A run file or preset that is not TOML.
    #[error("{file}: {message}")]
    Toml { file: String, message: String },
    /// A setting whose own parser refused the value: `message` is that parser's, which names
    /// the value and what to give (`--latency-limit`, `--session-set`, a workload option).
    #[error("{message}")]
    Setting {
        setting: &'static str,
        message: String,
    },
    /// A value a shared parser (durations, targets) refused, prefixed with its setting.
    #[error("{setting}: {message}")]
    Value { setting: String, message: String },
    /// A count below its least value (`clients 0`).
    #[error("{setting} must be at least {least}{how}")]
    TooSmall {
        setting: &'static str,
        least: u32,
        /// Where it is set or what the least means, as ` (--clients / -c)`.
        how: &'static str,
    },
    /// A count over tidebench's cap, which keeps a typo from exhausting memory.
    #[error("{setting} {value} is more than tidebench's cap of {cap}{how}")]
    OverCap {
        setting: &'static str,
        value: u64,
        cap: u64,
        how: &'static str,
    },
    #[error(
        "phase '{phase}' gives its groups {clients} clients, more than tidebench's cap of {cap}"
    )]
    PhaseOverCap {
        phase: String,
        clients: u64,
        cap: u32,
    },
    #[error("{file}: {groups} [[group]] tables, more than tidebench's cap of {cap}; merge groups or use sets")]
    TooManyGroups {
        file: String,
        groups: usize,
        cap: usize,
    },
    #[error("{file}: {key} sets {declaring} groups, and this run has none; remove it")]
    GroupKeyWithoutGroups {
        file: String,
        key: String,
        declaring: String,
    },
    #[error("{file}: no [[phase]]; add at least one with a duration and {what}")]
    NoPhase { file: String, what: &'static str },
    #[error("{file}: no phase gives any group a client")]
    NoPhaseClients { file: String },
    #[error("{file}: --workload, --target and --scale describe a one-group run; this run has [[group]] tables, set them there")]
    OneGroupFlags { file: String },
    #[error("{file}: --duration applies to one-phase runs; use --phase-duration to change every phase's length")]
    DurationWithPhases { file: String },
    #[error("mode = \"independent\" needs [[group]] and [[phase]] tables with clients per group")]
    IndependentNeedsGroups,
    #[error(
        "group '{group}': {workload}'s clients each run a fixed list of units (its streams), \
         which shared mode's cards would deal to any client; add mode = \"independent\" and \
         give the group its own clients per phase"
    )]
    UnitsNeedIndependent { group: String, workload: String },
    #[error("duration {given} is too short; runs last at least 1s (--duration / -T)")]
    DurationTooShort { given: String },
    #[error("rate {rate} is not a positive number of transactions per second (--rate / -R)")]
    Rate { rate: f64 },
    #[error(
        "--rate is the shared pool's total; in independent mode give each group a rate per phase"
    )]
    RateInIndependentMode,
    #[error(
        "--continue-on-error and --exit-on-abort contradict each other (one goes on after an \
         error, the other stops the run at the first); give one of them"
    )]
    ContinueAndExit,
    #[error("txn-timeout {given} is shorter than {least:?}, too short to tell a slow transaction from a hung one; give e.g. 1s, or 0 to turn it off")]
    TxnTimeoutTooShort { given: String, least: Duration },
    #[error("interval must be a whole number of seconds, at least 1s (--interval)")]
    Interval,
    #[error("{setting} must be 0 (off) or a whole number of seconds (--{setting})")]
    WholeSecondsOrOff { setting: &'static str },
    #[error("{setting} must be a whole number of seconds")]
    WholeSeconds { setting: &'static str },
    #[error("sample must be 0 (off) or at least 100ms (--sample)")]
    Sample,
    #[error("measure = {{ first = {first}, count = {count} }} is outside the run's {total} phases ({phases} per iteration x {iterations}); phases count from 1")]
    Measure {
        first: u32,
        count: u32,
        total: u32,
        phases: usize,
        iterations: u32,
    },
    #[error("no workload given; use --workload {names}, a run file with [[group]] tables, or --preset NAME")]
    NoWorkload { names: String },
    #[error("no workload given; use --workload NAME ({families}; workloads of one family load the same tables)")]
    NoPrepareWorkload { families: String },
    #[error("no preset named '{name}'; `tidebench presets` lists them ({names})")]
    UnknownPreset { name: String, names: String },
    #[error("transactions {given} is out of range: each client runs 1..{most} transactions (-t / --transactions), as pgbench's -t")]
    Transactions { given: u64, most: u64 },
    #[error("specify either a number of transactions (-t) or a duration (-T), not both: drop -T/--duration (or the file's duration key), or -t")]
    TransactionsAndDuration,
    #[error("-t / --transactions runs one group in one phase, and this run has {has}: give it a duration instead (--duration, or each phase's duration), or drop them")]
    TransactionsNeedOnePhase { has: String },
    #[error(
        "profile-hz and profile-call-graph tune a profile, and none is asked for: add \
         --profile (or profile = \"instances\" in the file)"
    )]
    ProfileTuningWithoutProfile,
    #[error(
        "profile '{given}' is not a scope: give instances (each instance's processes), host \
         (the whole host as well) or off (--profile takes an optional value: put a run file \
         before it, or write --profile=instances)"
    )]
    ProfileScope { given: String },
    #[error(
        "profile-hz {given} is out of range: give 1..{most} samples per second per CPU (99 is \
         perf's default and costs well under 1 % of a CPU)"
    )]
    ProfileHz { given: u32, most: u32 },
    #[error(
        "profile-call-graph '{given}' is unknown: give fp (frame pointers, the default) or \
         dwarf (for binaries built without frame pointers)"
    )]
    ProfileCallGraph { given: String },
}
