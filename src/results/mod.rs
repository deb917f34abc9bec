//! Results dirs: the on-disk record of one run, and the only thing `report` and the experiments
//! read back, through [`read::ResultsDir`]. Every file carries a schema version ([`SCHEMA_VERSION`]).
//!
//! ```text
//! <out>/
//!   runtime.toml   what ran: tidebench version, the full RunPlan (passwords redacted), the host,
//!                  each server's version and settings
//!                                  (RuntimeInfo, written at the start and again at finish)
//!   run-start.json the recorder's keys and the workload's rules: what `recover` needs to
//!                  rebuild summary.json from the intervals     (RunStart, written at the start)
//!   summary.json   totals over the measured window, per (target, transaction type), the
//!                  workload's per-type limits against what was achieved, each group's
//!                  isolation, the servers' own pg_stat_database deltas, and the managed
//!                  instances' incidents (OOM kills, crash restarts; see `incidents`)
//!                                                                     (Summary, written at finish)
//!   intervals.csv  one row per (interval, target, transaction type) with transactions
//!                  (columns: see `intervals`; appended and flushed every interval)
//!   latency.hlog   HdrHistogram interval log, one latency histogram per row of intervals.csv
//!                  (format: see `hlog`; appended and flushed every interval)
//!   system.csv     host, instance, device and PostgreSQL counters sampled beside the run
//!                  (format: see `system`; appended every sampling round, absent with --sample 0)
//!   waits.csv      what the run's sessions waited on, per segment, group, set and class;
//!   locks.csv      who blocked them (format: see `waits`; absent with --sample-waits 0)
//!   guests.csv     each VM instance's guest beside its QEMU over the measured window
//!                  (format: see `guests`; made from system.csv at finish, only with VMs)
//! ```
//!
//! An experiment (`tidebench sweep`, `tidebench density`) is a dir of such results dirs plus
//! `experiment.json` ([`experiment`]) and `experiment.html`.
//!
//! Completeness is visible from the outside: everything is written under `<out>.partial/` and
//! renamed to `<out>/` by [`ResultsWriter::finish`]. A Ctrl-C still calls `finish` (with
//! `summary.complete = false`), so what was measured is kept; a process that dies hard leaves
//! only `<out>.partial/`, which no reader mistakes for a finished run; `tidebench report` on it
//! rebuilds its summary from the intervals on disk ([`recover`]), marked incomplete, and the
//! dir keeps its `.partial` name. A run that cannot write its results (a full disk) stops its
//! clients at once and leaves its `.partial` too. Whole files are written through a temp file
//! and a rename ([`atomic`]), so none is ever half there.

pub mod atomic;
pub mod breakdown;
pub mod commands;
pub mod csv;
pub mod disruptions;
pub mod down;
pub mod emulators;
pub mod errors;
pub mod experiment;
pub mod figure;
pub mod freshness;
pub mod guests;
pub mod headline;
pub mod hlog;
pub mod hosts;
pub mod incidents;
pub mod interference;
pub mod intervals;
pub mod merge;
pub mod mix;
pub mod profile;
pub mod ratios;
pub mod read;
pub mod recover;
pub mod rules;
pub mod runtime;
pub mod shard;
pub mod start;
pub mod summary;
mod syncer;
pub mod synthetic;
pub mod system;
pub mod volume;
pub mod waits;
pub mod writer;

use std::path::{Path, PathBuf};

pub use breakdown::{GroupStats, PhaseStats, RoleStats};
pub use commands::{CommandStats, CommandSums};
pub use emulators::EmulatorEnd;
pub use figure::{Figure, UnitTime};
pub use headline::{Headline, HeadlineRate, Per};
pub use hosts::{HostAgreement, HostSource};
pub use incidents::{Incident, IncidentKind};
pub use interference::Interference;
pub use mix::TypeShare;
pub use ratios::{RatioCheck, RatioRule, Verdict};
pub use read::{IntervalRow, IntervalRows, ResultsDir, SystemSeries};
pub use recover::{recover, Recovered};
pub use rules::{GroupIsolation, IsolationLevels, RuleCheck, TypeRule};
pub use runtime::{HostFacts, RuntimeInfo, ServerFacts, TxnTypeFacts, VmFacts};
pub use start::{RunStart, START_FILE};
pub use summary::{
    FailedByClass, LatencyStats, RunFacts, ServerDelta, ServerReadings, Stats, Summary,
    TargetTypeStats,
};
pub use volume::Volume;
pub use writer::{default_dir, ResultsWriter};

/// Version of every file format in a results dir; bump it when a reader would misread old files.
pub const SCHEMA_VERSION: u32 = 1;

/// The version of tidebench that wrote a file.
pub const TIDEBENCH_VERSION: &str = env!("CARGO_PKG_VERSION");

pub const SUMMARY_FILE: &str = "summary.json";
pub const RUNTIME_FILE: &str = "runtime.toml";
pub const INTERVALS_FILE: &str = "intervals.csv";
pub const HLOG_FILE: &str = "latency.hlog";
pub const SYSTEM_FILE: &str = "system.csv";

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("results dir {} already exists; choose another --out or remove it", .0.display())]
    Exists(PathBuf),
    #[error(
        "{} is left over from an interrupted run (`tidebench report {}` rebuilds what it \
         measured); remove it or choose another --out",
        .0.display(), .0.display()
    )]
    LeftOver(PathBuf),
    #[error(
        "{} is being written by a running tidebench (pid {pid}); wait for it to finish or choose another --out",
        .staging.display()
    )]
    InUse { staging: PathBuf, pid: u32 },
    #[error(
        "{} cannot be a results dir; give --out the name of a new directory",
        .0.display()
    )]
    BadPath(PathBuf),
    #[error(
        "cannot finish: {} appeared during the run; the results are in {}, rename it yourself",
        final_dir.display(),
        staging.display()
    )]
    Taken {
        final_dir: PathBuf,
        staging: PathBuf,
    },
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A whole file (or an append) could not be written: names the file and the free space.
    #[error(transparent)]
    Write(#[from] atomic::WriteError),
    /// The run could not write its results to the end (a full disk): what it holds is in the
    /// error, what was written stays in the `.partial` dir.
    #[error(
        "the results could not be written: {why}\n  totals held in memory: {totals}\n  \
         what was written is in {} (left .partial: it is incomplete; `tidebench report {}` \
         draws what it holds)",
        staging.display(), staging.display()
    )]
    Unfinished {
        staging: PathBuf,
        why: String,
        totals: String,
    },
    /// A `.partial` dir without `run-start.json`: nothing to rebuild a summary from.
    #[error(
        "cannot rebuild a summary: {} is missing (the run died before its measured window \
         started, or an older tidebench wrote it); `tidebench report --by type DIR` still \
         reads its intervals",
        .0.display()
    )]
    Unrecoverable(PathBuf),
    #[error("cannot encode {file}: {message}")]
    Encode { file: &'static str, message: String },
    #[error("{} is not a valid {file}: {message}", path.display())]
    Decode {
        file: &'static str,
        path: PathBuf,
        message: String,
    },
}

impl ResultsError {
    fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError {
        let path = path.to_path_buf();
        move |source| ResultsError::Io { what, path, source }
    }
}

/// UTC time as RFC 3339 with whole seconds, e.g. `2026-11-22T03:15:00Z`.
pub fn utc_rfc3339(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}
