//! Configuration in two stages (STYLE.md rule 2): raw values from a TOML file and from flags,
//! with no I/O beyond reading the file, then validation into a typed [`RunPlan`] or
//! [`PreparePlan`]. Flags and files meet in [`RawRun`], so `--clients 8 --duration 30s` and a file
//! saying the same compile into the same Plan.
//!
//! Config is the floor of the rooms (docs/DESIGN.md): it imports no other room of the crate.
//! The raw model is in `raw`, reading files and presets in `read`, run validation in `run`
//! (with the caps in `limits` and pgbench's `-l` in `txnlog`), prepare's in `prepare`.

pub mod catalog;
pub mod defaults;
pub mod disruptions;
pub mod duration;
mod error;
mod extra;
pub mod groups;
pub mod instances;
mod limits;
pub mod options;
pub mod plan;
mod prepare;
pub mod presets;
pub mod profile;
mod raw;
mod read;
mod run;
pub mod shard;
pub mod size;
pub mod target;
pub mod timeline;
pub mod transactions;
mod txnlog;

pub use catalog::{Catalog, OptionKind, OptionSpec, OptionValues, WorkloadInfo, DEFAULT_ROLE};
pub use disruptions::{instances_used, Action, Disruption, Noise};
pub use error::ConfigError;
pub use instances::InstancePlan;
pub use limits::{
    MAX_CARD_RUN, MAX_CLIENTS, MAX_DECK_SIZE, MAX_GROUPS, MAX_SAMPLE_WAITS, MAX_SETS,
};
pub use options::{GroupOptions, Isolation};
pub use plan::{
    DriveMode, GroupPlan, OnError, PhaseGroup, PhasePlan, PreparePlan, ProtocolName, RunPlan,
    SetPlan, WorkloadName,
};
pub use prepare::{default_load_jobs, load_options, load_plans, validate_prepare, PrepareRequest};
pub use presets::PresetKnobs;
pub use raw::{RawMeasure, RawRun};
pub use read::{build_run_plan, parse_run_text, parse_toml, read_toml, run_text, RunSource};
pub use run::validate_run;
pub use target::TargetSpec;
pub use txnlog::TxnLogPlan;

/// A run's default seed when none is given: the clock's nanoseconds, so runs differ.
pub fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
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

#[cfg(test)]
mod tests;
