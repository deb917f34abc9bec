//! The typed Plan: what a run will do, with every default resolved. Built only by `config`;
//! serialized verbatim into the results dir's `runtime.toml`.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::duration::serde_duration;
use super::target::TargetSpec;

/// The built-in workloads. Names are the ones users type (`--workload select-only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadName {
    /// pgbench's default TPC-B-like script (7 statements per transaction).
    Tpcb,
    /// pgbench -S: one primary-key lookup on pgbench_accounts.
    SelectOnly,
    /// pgbench -N: TPC-B-like without the tellers and branches updates.
    SimpleUpdate,
}

impl WorkloadName {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadName::Tpcb => "tpcb",
            WorkloadName::SelectOnly => "select-only",
            WorkloadName::SimpleUpdate => "simple-update",
        }
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

/// A validated benchmark run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunPlan {
    pub workload: WorkloadName,
    /// Scale the data was prepared with; `None` means read it from the data (as pgbench does).
    pub scale: Option<u32>,
    pub target: TargetSpec,
    pub clients: u32,
    /// Driver threads; clients are sharded over them (pgbench's `-j`).
    pub jobs: u32,
    #[serde(with = "serde_duration")]
    pub duration: Duration,
    pub protocol: ProtocolName,
    /// Total scheduled transactions per second over all clients (Poisson arrivals); `None` = as fast as possible.
    pub rate: Option<f64>,
    /// Tries per transaction for serialization failures and deadlocks (1 = no retry).
    pub max_tries: u32,
    /// Live progress line period; zero turns it off.
    #[serde(with = "serde_duration")]
    pub progress: Duration,
    /// Reporting bucket of `intervals.csv` and `latency.hlog`.
    #[serde(with = "serde_duration")]
    pub interval: Duration,
    pub seed: u64,
    /// Results dir; `None` means `./results/<UTC timestamp>-<workload>/`.
    pub out: Option<PathBuf>,
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
}
