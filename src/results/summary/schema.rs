//! The schema of `summary.json`: the types it holds, their serde defaults for fields newer
//! than the first version 1 files, and the file's reading and writing with its version check.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::config::DriveMode;
use crate::metrics::DEFAULT_ROLE;
use crate::results::breakdown::{GroupStats, PhaseStats, RoleStats};
use crate::results::figure::{Figure, UnitTime};
use crate::results::headline::{Headline, HeadlineRate};
use crate::results::interference::Interference;
use crate::results::mix::TypeShare;
use crate::results::ratios::{RatioCheck, RatioRule};
use crate::results::rules::{IsolationLevels, RuleCheck, TypeRule};
use crate::results::{
    down, errors, guests, shard, waits, CommandStats, EmulatorEnd, Incident, Volume,
};
use crate::results::{ResultsError, SCHEMA_VERSION, SUMMARY_FILE};

/// Latency distribution in milliseconds, 3 decimals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
    /// Standard deviation (pgbench prints it with -P and -R); 0 in files older than it.
    #[serde(default)]
    pub stddev: f64,
}

/// Failed transactions by class (see `metrics::ErrorClass`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedByClass {
    pub serialization: u64,
    pub deadlock: u64,
    pub connection: u64,
    pub timeout: u64,
    pub other: u64,
}

/// Counts, throughput and latency of one slice of the run (all of it, or one key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub committed: u64,
    pub expected_rollback: u64,
    pub failed: u64,
    pub retried: u64,
    /// Transactions with at least one retry; absent (0) in files written before it was counted.
    #[serde(default)]
    pub retried_txns: u64,
    pub total: u64,
    pub tps: f64,
    pub failed_by_class: FailedByClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<LatencyStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<LatencyStats>,
}

/// Stats of one (target, transaction type) over the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetTypeStats {
    pub group: String,
    pub set: String,
    pub target: String,
    pub txn_type: String,
    /// The role of the set the type ran on.
    #[serde(default = "default_role")]
    pub role: String,
    #[serde(flatten)]
    pub stats: Stats,
}

fn default_role() -> String {
    DEFAULT_ROLE.to_string()
}

/// The server's own view of the whole run (ramps included): `pg_stat_database` deltas of one
/// database, beside what tidebench committed there over the same time. Negative only if
/// someone reset the statistics during the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerDelta {
    pub target: String,
    pub dbname: String,
    pub xact_commit_delta: i64,
    pub xact_rollback_delta: i64,
    /// Transactions tidebench committed on this database during the whole run, as the server
    /// counts them: the recorded commits, those of transactions in flight at the end that
    /// committed just after it, and one per session opened again during the run.
    #[serde(default)]
    pub client_committed: i64,
    /// The server's statistics were reset during the run: crash recovery after an OOM kill
    /// (or a crash) resets them (`pg_stat_bgwriter.stats_reset` moved, or the counters went
    /// back). The deltas are then the counts since the last reset, and are not compared with
    /// `client_committed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub restarted: bool,
    /// tidebench's transactions on this database cut in flight at the run's end: the server
    /// may have committed some (a cut during the COMMIT), so its count may exceed
    /// `client_committed` by up to this many and still agree.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub cut_in_flight: i64,
    /// The raw readings behind the deltas, for `merge` to check the server over every shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readings: Option<ServerReadings>,
}

/// `xact_commit` of one database as one driver process read it: idle before its clients
/// connected, the sessions it opened (one commit each), and after its clients had closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerReadings {
    pub idle_commit: i64,
    pub sessions: i64,
    pub final_commit: i64,
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What the summary states about the run as a whole (the rest comes from the recorders).
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub workload: String,
    /// Wall-clock start of the run (ramp-up included).
    pub started_at: SystemTime,
    /// From the start until the last client finished.
    pub elapsed: Duration,
    /// False when the run was interrupted or a target failed.
    pub complete: bool,
    /// The run had a `--rate`, so lag was recorded and is reported.
    pub rate_limited: bool,
    /// The workloads' rules per transaction type (empty for workloads without any).
    pub type_rules: Vec<TypeRule>,
    /// The workload's headline rate (TPC-C's NOTPM), when it has one, its label already
    /// chosen for the run's shape (`Headline::for_databases`).
    pub headline: Option<Headline>,
    /// The workloads' expected ratios between two types' counts (empty for most).
    pub ratio_rules: Vec<RatioRule>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    pub tidebench_version: String,
    pub complete: bool,
    /// Why the run failed (a client or driver thread panicked); `complete` is false then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub workload: String,
    pub mode: DriveMode,
    /// Seconds of the measured window (3 decimals).
    pub duration_s: f64,
    /// Seconds of the whole run, ramps included.
    pub elapsed_s: f64,
    /// UTC, RFC 3339, whole seconds.
    pub started_at: String,
    /// The measured window.
    pub totals: Stats,
    /// Measured window, per (target, transaction type) that had transactions.
    pub by_target_and_type: Vec<TargetTypeStats>,
    /// Measured window, per group, with configured and achieved shares.
    pub groups: Vec<GroupStats>,
    /// Every phase of every iteration (ramps too, marked unmeasured), per group inside; the
    /// mix log's segment numbers index this list.
    pub phases: Vec<PhaseStats>,
    /// What the other groups cost a group running the headline's type: a phase it ran alone
    /// against one beside them (independent mode; see `interference`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interference: Vec<Interference>,
    pub server: Vec<ServerDelta>,
    /// Per host of a target over a primary and its standbys (issue 54): where the clients'
    /// commits landed against each server's own count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<crate::results::HostAgreement>,
    /// Every target in index order (the mix log's target numbers index this list).
    pub target_names: Vec<TargetName>,
    /// Transaction types in index order (the mix log's type numbers index this list).
    pub txn_types: Vec<String>,
    /// Committed transactions per minute of the measured window, per type over all targets
    /// (expected rollbacks are not counted); `headline` names the one the workload reports.
    #[serde(default)]
    pub tpm: BTreeMap<String, f64>,
    /// Per transaction type the workload has a rule for: p90 against its limit, share of the
    /// mix against its minimum (TPC-C).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub type_rules: Vec<RuleCheck>,
    /// The isolation level the groups' sessions ran at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<IsolationLevels>,
    /// The workload's headline over the measured window (TPC-C's NOTPM); absent for workloads
    /// without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<HeadlineRate>,
    /// Measured window, per role the run's types ran on, in the order the types name them.
    /// Always written (one row when every type ran on `oltp`); empty in older files.
    #[serde(default)]
    pub by_role: Vec<RoleStats>,
    /// Measured window, per type that ran: completed transactions, rate and share of the
    /// drawn types; emulated types marked and without a share. Empty in older files.
    #[serde(default)]
    pub mix: Vec<TypeShare>,
    /// The workload's expected ratios between two types, with verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratio_rules: Vec<RatioCheck>,
    /// Each emulated set's market work at the end of the run (tpce); empty for workloads
    /// without an emulator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emulators: Vec<EmulatorEnd>,
    /// Per command of each script, with `--report-per-command` (the script workload).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandStats>,
    /// Bytes moved by test cases that load (retail's `load`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// Figures the workloads computed from their own record of the run (TPC-H's
    /// Power@Size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// Each unit a stream ran to its end, timed by its workload (TPC-H's queries and refresh
    /// functions per stream), in the workload's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unit_times: Vec<UnitTime>,
    /// What happened to the managed instances during the run (OOM kills, server processes
    /// killed, crash restarts), in time order; see `incidents`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<Incident>,
    /// What the run's sessions waited on (`--sample-waits`); see `waits`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<waits::WaitsSummary>,
    /// How long after a commit on a primary a query on its hot standby sees it, per phase,
    /// or why that is n/a; absent for a run of one group (see `freshness`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness: Option<crate::results::freshness::Freshness>,
    /// Each VM instance's guest and its QEMU over the measured window (means of
    /// `guests.csv`); see `guests`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guests: Vec<guests::GuestMeans>,
    /// Transactions in flight at the run's end (or its stop) given up half-way, their fate
    /// unknown (also those the transaction timeout cut): not counted.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub cut_in_flight: u64,
    /// Transactions in flight at the run's end that committed within a moment after it:
    /// outside the measured window, but in each database's `client_committed`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub committed_after_end: u64,
    /// Seconds the clients took to finish after the planned end, when over a second
    /// (closing sessions on a hung server): said, and never part of the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrun_s: Option<f64>,
    /// When each target was down for its clients (see `down`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub down_windows: Vec<down::DownWindow>,
    /// The run's events (`[[event]]`) as played, with the recovery around each (see
    /// `disruptions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<crate::results::disruptions::EventAccount>,
    /// Clients a script's runtime error ended (see `down`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aborted_clients: Vec<down::AbortedClient>,
    /// Every kind of error met, with its count and its first error in full (see `errors`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<errors::ErrorEntry>,
    /// What a client did after an error no retry helps: `abort-client` (pgbench's),
    /// `exit-run` (`--exit-on-abort`) or `continue` (`--continue-on-error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<crate::config::OnError>,
    /// The part of a sharded run this dir holds (see `shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<shard::ShardFacts>,
    /// With `-C` (pgbench's `--connect`): the sessions opened for transactions and their
    /// mean connection time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
    /// With pgbench's `-L`: the limit, the transactions over it and those skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_limit: Option<LatencyLimit>,
}

/// pgbench's `-L` figures over the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyLimit {
    pub limit_ms: f64,
    /// Transactions that ended over the limit.
    pub late: u64,
    /// Transactions not run: already later than the limit when due (with a rate).
    pub skipped: u64,
}

/// pgbench's `-C` figures: each transaction's session opened (and the previous one closed)
/// before it; `mean_ms` is pgbench's "average connection time".
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Connections {
    pub opened: u64,
    pub total_s: f64,
    pub mean_ms: f64,
}

/// A target's place in the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetName {
    pub group: String,
    pub set: String,
    pub target: String,
}

impl Summary {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> Result<String, ResultsError> {
        let mut text = serde_json::to_string_pretty(self).map_err(|e| ResultsError::Encode {
            file: SUMMARY_FILE,
            message: e.to_string(),
        })?;
        text.push('\n');
        Ok(text)
    }

    /// Reads `summary.json` from a results dir, refusing other schema versions.
    pub fn read(dir: &Path) -> Result<Summary, ResultsError> {
        let path = dir.join(SUMMARY_FILE);
        let text = std::fs::read_to_string(&path).map_err(ResultsError::io("read", &path))?;
        let decode = |message: String| ResultsError::Decode {
            file: SUMMARY_FILE,
            path: path.clone(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| decode(e.to_string()))?;
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        if version != Some(u64::from(SCHEMA_VERSION)) {
            return Err(decode(format!(
                "schema version {version:?}; this tidebench reads version {SCHEMA_VERSION}"
            )));
        }
        serde_json::from_value(value).map_err(|e| decode(e.to_string()))
    }
}
