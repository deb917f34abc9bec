//! `summary.json`: the totals of the measured window, per (target, transaction type), and the
//! servers' own transaction counters over the same window.
//!
//! Counting rules (DESIGN.md's accounting invariant):
//! - `total = committed + expected_rollback + failed`; `retried` counts extra tries and
//!   `retried_txns` the transactions that needed any (pgbench's "transactions retried"); neither
//!   is part of `total`.
//! - `tps = (committed + expected_rollback) / duration_s`: transactions that ended as the
//!   workload meant them to (pgbench's tps likewise excludes failed transactions).
//! - Latency is end − scheduled start in milliseconds (3 decimals), over committed and
//!   expected-rollback transactions only; `lag_ms` (start − scheduled start) appears only in
//!   rate-limited runs. Either is absent when nothing was measured.
//! - `type_rules` holds the workload's per-type limits against what was achieved (see
//!   `rules`); `isolation` is each group's level, one value when all agree.
//!
//! - `headline` is the workload's own headline rate (TPC-C's NOTPM per minute, tpce's tpsE or
//!   tpsV per second) when it has one, and each group, phase and group within a phase carries
//!   its `headline` rate in the same unit (see `headline`); `by_role` holds the measured
//!   window per role (always written, one row for a single-role run), and each
//!   `by_target_and_type` row names its type's `role`.
//! - `mix` is each type's completed transactions and share of the drawn types (emulated
//!   types apart, see `mix`); `ratio_rules` the workload's expected ratios between two types
//!   with their verdicts (see `ratios`).
//!
//! - `incidents` lists what happened to the managed instances during the run (OOM kills,
//!   server processes killed, crash restarts) with their times (see `incidents`); a `server`
//!   row's `restarted` says the server's statistics were reset during the run (crash
//!   recovery does that): its deltas count since the reset and cannot be compared with the
//!   client's.
//!
//! Fields added after schema version 1 was first written (`tpm`, `type_rules`, `isolation`,
//! `headline`, `by_role`, `role`, `mix`, `ratio_rules`, the `headline` of groups and phases,
//! a headline's `per` and `per_second`, `incidents`, a server row's `restarted`) default when
//! absent (`role` to `oltp`, `per` to minute, `incidents` empty, `restarted` false), so older
//! results dirs stay readable without a version bump.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::breakdown::{self, GroupStats, PhaseStats, RoleStats};
use super::headline::{self, Headline, HeadlineRate};
use super::mix::{self, TypeShare};
use super::ratios::{self, RatioCheck, RatioRule};
use super::rules::{self, GroupIsolation, IsolationLevels, RuleCheck, TypeRule};
use super::{ResultsError, SCHEMA_VERSION, SUMMARY_FILE, TIDEBENCH_VERSION};
use crate::config::{DriveMode, RunPlan};
use crate::metrics::{ErrorClass, KeySpace, Recorder, Slot, DEFAULT_ROLE};

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

impl LatencyStats {
    /// Stats of a µs histogram; `None` when it holds no values.
    pub fn from_micros(h: &Histogram<u64>) -> Option<LatencyStats> {
        if h.is_empty() {
            return None;
        }
        let q = |quantile: f64| micros_to_ms(h.value_at_quantile(quantile));
        Some(LatencyStats {
            min: micros_to_ms(h.min()),
            mean: round3(h.mean() / 1000.0),
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p99_9: q(0.999),
            max: micros_to_ms(h.max()),
            stddev: round3(h.stdev() / 1000.0),
        })
    }
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

impl FailedByClass {
    fn from_slot(slot: &Slot) -> FailedByClass {
        let n = |class: ErrorClass| slot.failed[class.index()];
        FailedByClass {
            serialization: n(ErrorClass::Serialization),
            deadlock: n(ErrorClass::Deadlock),
            connection: n(ErrorClass::Connection),
            timeout: n(ErrorClass::Timeout),
            other: n(ErrorClass::Other),
        }
    }
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

impl Stats {
    pub fn from_slot(slot: &Slot, measured: Duration, rate_limited: bool) -> Stats {
        let stats_of = |h: &Option<Histogram<u64>>| h.as_ref().and_then(LatencyStats::from_micros);
        Stats {
            committed: slot.committed,
            expected_rollback: slot.expected_rollback,
            failed: slot.failed_total(),
            retried: slot.retried,
            retried_txns: slot.retried_txns,
            total: slot.total(),
            tps: tps(slot.committed + slot.expected_rollback, measured),
            failed_by_class: FailedByClass::from_slot(slot),
            latency_ms: stats_of(&slot.latency),
            lag_ms: if rate_limited {
                stats_of(&slot.lag)
            } else {
                None
            },
        }
    }
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
    pub server: Vec<ServerDelta>,
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
    pub emulators: Vec<super::EmulatorEnd>,
    /// Per command of each script, with `--report-per-command` (the script workload).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<super::CommandStats>,
    /// Bytes moved by test cases that load (retail's `load`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<super::Volume>,
    /// What happened to the managed instances during the run (OOM kills, server processes
    /// killed, crash restarts), in time order; see `incidents`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<super::Incident>,
    /// What the run's sessions waited on (`--sample-waits`); see `waits`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<super::waits::WaitsSummary>,
    /// Each VM instance's guest and its QEMU over the measured window (means of
    /// `guests.csv`); see `guests`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guests: Vec<super::guests::GuestMeans>,
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
    pub down_windows: Vec<super::down::DownWindow>,
    /// Clients a script's runtime error ended (see `down`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aborted_clients: Vec<super::down::AbortedClient>,
    /// Every kind of error met, with its count and its first error in full (see `errors`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<super::errors::ErrorEntry>,
    /// What a client did after an error no retry helps: `abort-client` (pgbench's),
    /// `exit-run` (`--exit-on-abort`) or `continue` (`--continue-on-error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<crate::config::OnError>,
    /// The part of a sharded run this dir holds (see `shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<super::shard::ShardFacts>,
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

impl LatencyLimit {
    /// The limit's counts from the run's recorder.
    pub fn of(limit_ms: f64, total: &crate::metrics::Recorder) -> LatencyLimit {
        LatencyLimit {
            limit_ms,
            late: total.late,
            skipped: total.skipped,
        }
    }
}

/// pgbench's `-C` figures: each transaction's session opened (and the previous one closed)
/// before it; `mean_ms` is pgbench's "average connection time".
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Connections {
    pub opened: u64,
    pub total_s: f64,
    pub mean_ms: f64,
}

impl Connections {
    pub fn of(opened: u64, total: Duration) -> Connections {
        let total_s = total.as_secs_f64();
        Connections {
            opened,
            total_s: round3(total_s),
            mean_ms: round3(if opened == 0 {
                0.0
            } else {
                total_s * 1e3 / opened as f64
            }),
        }
    }
}

/// A target's place in the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetName {
    pub group: String,
    pub set: String,
    pub target: String,
}

impl Summary {
    /// Builds the summary from the run's total recorder (all intervals merged).
    pub fn build(
        run: &RunFacts,
        plan: &RunPlan,
        keys: &KeySpace,
        total: &Recorder,
        server: Vec<ServerDelta>,
    ) -> Summary {
        let durations = breakdown::segment_durations(keys, run.elapsed);
        let measured_time: Duration = keys
            .segments
            .iter()
            .zip(&durations)
            .filter(|(s, _)| s.measured)
            .map(|(_, d)| *d)
            .sum();
        let by_target_and_type = by_target_and_type(keys, total, measured_time, run.rate_limited);
        let tpm = headline::per_minute(&by_target_and_type, measured_time);
        let per_type = keys.roll_up(total, keys.txn_types.len(), |p| {
            measured(keys, p.segment).then_some(p.txn)
        });
        let mut all = Slot::default();
        for slot in &per_type {
            all.merge(slot);
        }
        let mut groups = breakdown::groups(plan, keys, total, &durations, run.rate_limited);
        let mut phases = breakdown::phases(plan, keys, total, &durations, run.rate_limited);
        headline::fill(
            run.headline.as_ref(),
            keys,
            total,
            measured_time,
            &durations,
            &mut groups,
            &mut phases,
        );
        let headline = run.headline.as_ref().map(|h| {
            let committed = keys
                .txn_types
                .iter()
                .position(|t| *t == h.txn_type)
                .and_then(|i| per_type.get(i))
                .map_or(0, |s| s.committed);
            HeadlineRate::of(h, &tpm, committed, measured_time)
        });
        Summary {
            schema_version: SCHEMA_VERSION,
            tidebench_version: TIDEBENCH_VERSION.to_string(),
            complete: run.complete,
            failure: None,
            workload: run.workload.clone(),
            mode: plan.mode,
            duration_s: round3(measured_time.as_secs_f64()),
            elapsed_s: round3(run.elapsed.as_secs_f64()),
            started_at: super::utc_rfc3339(run.started_at),
            totals: Stats::from_slot(&all, measured_time, run.rate_limited),
            by_target_and_type,
            groups,
            phases,
            server,
            target_names: target_names(keys),
            txn_types: keys.txn_types.clone(),
            headline,
            tpm,
            type_rules: rules::check(
                &run.type_rules,
                &keys.txn_types,
                &keys.txn_emulated,
                &per_type,
            ),
            isolation: isolation_levels(plan),
            by_role: breakdown::roles(keys, total, measured_time, run.rate_limited),
            mix: mix::of(keys, &per_type, measured_time),
            ratio_rules: ratios::check(&run.ratio_rules, &keys.txn_types, &per_type, measured_time),
            emulators: Vec::new(),
            commands: Vec::new(),
            volumes: Vec::new(),
            incidents: Vec::new(),
            waits: None,
            guests: Vec::new(),
            cut_in_flight: 0,
            committed_after_end: 0,
            overrun_s: None,
            down_windows: Vec::new(),
            aborted_clients: Vec::new(),
            errors: Vec::new(),
            on_error: None,
            shard: None,
            connections: None,
            latency_limit: None,
        }
    }

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

/// Whether segment `segment` is inside the measured window.
fn measured(keys: &KeySpace, segment: usize) -> bool {
    keys.segments.get(segment).is_some_and(|s| s.measured)
}

/// Each (target, transaction type) met in the measured window, with its figures over
/// `measured_time`.
fn by_target_and_type(
    keys: &KeySpace,
    total: &Recorder,
    measured_time: Duration,
    rate_limited: bool,
) -> Vec<TargetTypeStats> {
    let types = keys.txn_types.len();
    let per_key = keys.roll_up(total, keys.targets.len() * types, |p| {
        measured(keys, p.segment).then_some(p.target * types + p.txn)
    });
    per_key
        .iter()
        .enumerate()
        .filter(|(_, slot)| slot.total() > 0)
        .map(|(i, slot)| {
            let target = &keys.targets[i / types];
            TargetTypeStats {
                group: keys.groups[target.group].clone(),
                set: target.set.clone(),
                target: target.label.clone(),
                txn_type: keys.txn_types[i % types].clone(),
                role: keys.role_of(i % types).to_string(),
                stats: Stats::from_slot(slot, measured_time, rate_limited),
            }
        })
        .collect()
}

/// Every target's place in the plan, in the key space's order.
fn target_names(keys: &KeySpace) -> Vec<TargetName> {
    keys.targets
        .iter()
        .map(|t| TargetName {
            group: keys.groups[t.group].clone(),
            set: t.set.clone(),
            target: t.label.clone(),
        })
        .collect()
}

/// The isolation level each group's transactions ran at (see [`IsolationLevels::of`]).
fn isolation_levels(plan: &RunPlan) -> Option<IsolationLevels> {
    let isolation: Vec<GroupIsolation> = plan
        .groups
        .iter()
        .map(|g| GroupIsolation {
            group: g.name.clone(),
            isolation: g.options.isolation.as_sql().to_string(),
        })
        .collect();
    IsolationLevels::of(&isolation)
}

/// Transactions per second over a window, 3 decimals; zero for an empty window.
pub fn tps(count: u64, window: Duration) -> f64 {
    let secs = window.as_secs_f64();
    if secs > 0.0 {
        round3(count as f64 / secs)
    } else {
        0.0
    }
}

pub fn micros_to_ms(us: u64) -> f64 {
    round3(us as f64 / 1000.0)
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::metrics::Outcome;

    fn keys() -> KeySpace {
        crate::results::intervals::tests::two_phase_keys()
    }

    /// A complete 20 s run over [`plan`]'s two phases, with no rules and no headline.
    pub fn two_phase_facts() -> RunFacts {
        RunFacts {
            workload: "t".into(),
            started_at: SystemTime::UNIX_EPOCH,
            elapsed: Duration::from_secs(20),
            complete: true,
            rate_limited: false,
            type_rules: Vec::new(),
            headline: None,
            ratio_rules: Vec::new(),
        }
    }

    /// One group, two 10 s phases of 100 %, as `two_phase_keys`.
    pub fn plan() -> RunPlan {
        let raw = crate::config::RawRun {
            workload: Some(crate::config::WorkloadName::new("tpcb")),
            duration: Some("10s".into()),
            ..Default::default()
        };
        let src = crate::config::groups::Source {
            file: "t",
            text: "",
        };
        let mut p =
            crate::config::validate_run(&src, raw, 1, 1, &crate::workload::Registry).unwrap();
        let mut second = p.phases[0].clone();
        second.name = "p2".into();
        p.phases[0].name = "p1".into();
        p.phases.push(second);
        p
    }

    fn run(rate_limited: bool) -> RunFacts {
        RunFacts {
            workload: "tpcb".into(),
            started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            elapsed: Duration::from_secs(10),
            complete: true,
            rate_limited,
            type_rules: Vec::new(),
            headline: None,
            ratio_rules: Vec::new(),
        }
    }

    #[test]
    fn accounting_and_tps() {
        let k = keys();
        let mut rec = Recorder::new(k.len());
        for _ in 0..90 {
            rec.record(k.key(0, 0, 0), Outcome::Committed, 2_000, Some(10), 0);
        }
        for _ in 0..5 {
            rec.record(
                k.key(0, 0, 0),
                Outcome::ExpectedRollback,
                2_000,
                Some(10),
                0,
            );
        }
        rec.record(
            k.key(0, 1, 1),
            Outcome::Failed(ErrorClass::Serialization),
            0,
            None,
            3,
        );
        rec.record(
            k.key(0, 1, 1),
            Outcome::Failed(ErrorClass::Deadlock),
            0,
            None,
            0,
        );
        rec.record(
            k.key(0, 1, 1),
            Outcome::Failed(ErrorClass::Connection),
            0,
            None,
            0,
        );
        let s = Summary::build(&run(false), &plan(), &k, &rec, Vec::new());
        let t = &s.totals;
        assert_eq!(
            (
                t.committed,
                t.expected_rollback,
                t.failed,
                t.retried,
                t.retried_txns,
                t.total
            ),
            (90, 5, 3, 3, 1, 98)
        );
        assert_eq!(t.total, t.committed + t.expected_rollback + t.failed);
        assert_eq!(t.tps, 9.5, "failed transactions do not count toward tps");
        assert_eq!(
            t.failed_by_class,
            FailedByClass {
                serialization: 1,
                deadlock: 1,
                connection: 1,
                timeout: 0,
                other: 0
            }
        );
        assert!(
            t.lag_ms.is_none(),
            "lag is reported only for rate-limited runs"
        );
        // Only keys with transactions appear, in key order.
        let names: Vec<_> = s
            .by_target_and_type
            .iter()
            .map(|k| (k.target.as_str(), k.txn_type.as_str()))
            .collect();
        assert_eq!(
            names,
            [("instance:vm1/db", "a"), ("host=/tmp dbname=x,y", "b")]
        );
        assert!(
            s.by_target_and_type[1].stats.latency_ms.is_none(),
            "failures carry no latency"
        );
        assert_eq!(s.started_at, "2023-11-14T22:13:20Z");
        assert_eq!(
            (s.schema_version, s.duration_s, s.complete),
            (1, 10.0, true)
        );
    }

    #[test]
    fn percentiles_in_milliseconds() {
        let k = keys();
        let mut rec = Recorder::new(k.len());
        // 1..=1000 ms, one of each: p50 = 500 ms, p99 = 990 ms within HDR's 3 digits.
        for ms in 1..=1000u64 {
            rec.record(0, Outcome::Committed, ms * 1000, Some(ms), 0);
        }
        let s = Summary::build(&run(true), &plan(), &k, &rec, Vec::new());
        let lat = s.totals.latency_ms.as_ref().unwrap();
        let near = |got: f64, want: f64| (got - want).abs() <= want * 0.001 + 0.001;
        assert!(near(lat.min, 1.0), "{lat:?}");
        assert!(near(lat.p50, 500.0), "{lat:?}");
        assert!(near(lat.p90, 900.0), "{lat:?}");
        assert!(near(lat.p99, 990.0), "{lat:?}");
        assert!(near(lat.p99_9, 999.0), "{lat:?}");
        assert!(near(lat.max, 1000.0), "{lat:?}");
        assert!(near(lat.mean, 500.5), "{lat:?}");
        for v in [lat.min, lat.mean, lat.p50, lat.p99, lat.max] {
            assert_eq!(v, round3(v), "3 decimals at most: {v}");
        }
        let lag = s.totals.lag_ms.as_ref().unwrap();
        assert!(near(lag.max, 1.0), "lag is µs like latency: {lag:?}");
    }

    #[test]
    fn round_trips_through_json() {
        let k = keys();
        let mut rec = Recorder::new(k.len());
        rec.record(3, Outcome::Committed, 1234, None, 0);
        let server = vec![ServerDelta {
            target: "instance:b/db".into(),
            dbname: "db".into(),
            xact_commit_delta: 1,
            xact_rollback_delta: 0,
            client_committed: 1,
            restarted: true,
            cut_in_flight: 0,
            readings: None,
        }];
        let mut s = Summary::build(&run(false), &plan(), &k, &rec, server);
        s.incidents = vec![crate::results::Incident {
            t_s: 2.5,
            instance: "b".into(),
            kind: crate::results::IncidentKind::OomKill,
            count: 1,
            detail: "oom_kill 0 -> 1".into(),
        }];
        let back: Summary = serde_json::from_str(&s.to_json().unwrap()).unwrap();
        assert_eq!(back, s);
        assert_eq!(
            back.by_target_and_type[0]
                .stats
                .latency_ms
                .as_ref()
                .unwrap()
                .max,
            1.234
        );
    }

    #[test]
    fn type_rules_use_the_measured_window_of_every_target() {
        let mut k = keys();
        // The second segment is a ramp: its slow transactions must not count.
        k.segments[1].measured = false;
        let mut rec = Recorder::new(k.len());
        // Type a: 95 fast on one target, 5 slow on the other: p90 is fast when merged.
        for _ in 0..95 {
            rec.record(k.key(0, 0, 0), Outcome::Committed, 1_000, None, 0);
        }
        for _ in 0..5 {
            rec.record(k.key(0, 1, 0), Outcome::Committed, 9_000_000, None, 0);
        }
        for _ in 0..100 {
            rec.record(k.key(1, 0, 0), Outcome::Committed, 9_000_000, None, 0);
        }
        // Type b: 3 of 103 completed (2.9 %) against 4 %, and 30 s against 20 s.
        for _ in 0..3 {
            rec.record(k.key(0, 1, 1), Outcome::Committed, 30_000_000, None, 0);
        }
        let mut facts = run(false);
        facts.type_rules = vec![
            TypeRule {
                limit_unverified: false,
                txn_type: "a".into(),
                p90_limit: Some(Duration::from_secs(5)),
                min_share_pct: None,
            },
            TypeRule {
                limit_unverified: false,
                txn_type: "b".into(),
                p90_limit: Some(Duration::from_secs(20)),
                min_share_pct: Some(4.0),
            },
        ];
        let s = Summary::build(&facts, &plan(), &k, &rec, Vec::new());
        let [a, b] = &s.type_rules[..] else {
            panic!("{:?}", s.type_rules)
        };
        assert_eq!(
            (a.p90_ms, a.exceeded, a.below_minimum),
            (Some(1.0), false, false)
        );
        assert_eq!((a.share_pct, b.share_pct), (Some(97.09), Some(2.91)));
        assert!(b.exceeded && b.below_minimum, "{b:?}");
        assert_eq!(
            s.isolation,
            Some(IsolationLevels::All("read committed".into()))
        );
        let json = s.to_json().unwrap();
        assert!(json.contains("\"isolation\": \"read committed\""), "{json}");
        assert!(json.contains("\"p90_limit_ms\": 20000.0"), "{json}");
    }

    #[test]
    fn summaries_written_before_type_rules_and_isolation_still_read() {
        let k = keys();
        let s = Summary::build(
            &run(false),
            &plan(),
            &k,
            &Recorder::new(k.len()),
            Vec::new(),
        );
        let mut value: serde_json::Value = serde_json::from_str(&s.to_json().unwrap()).unwrap();
        let obj = value.as_object_mut().unwrap();
        for key in ["type_rules", "isolation", "tpm", "mix", "ratio_rules"] {
            obj.remove(key);
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SUMMARY_FILE), value.to_string()).unwrap();
        let back = Summary::read(dir.path()).unwrap();
        assert!(back.type_rules.is_empty() && back.isolation.is_none() && back.tpm.is_empty());
        assert!(back.mix.is_empty() && back.ratio_rules.is_empty());
    }

    #[test]
    fn summaries_written_before_retried_txns_still_read() {
        let k = keys();
        let mut rec = Recorder::new(k.len());
        rec.record(k.key(0, 0, 0), Outcome::Committed, 2_000, None, 2);
        let s = Summary::build(&run(false), &plan(), &k, &rec, Vec::new());
        assert_eq!((s.totals.retried, s.totals.retried_txns), (2, 1));
        let text = s.to_json().unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value["totals"]
            .as_object_mut()
            .unwrap()
            .remove("retried_txns");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SUMMARY_FILE), value.to_string()).unwrap();
        let back = Summary::read(dir.path()).unwrap();
        assert_eq!((back.totals.retried, back.totals.retried_txns), (2, 0));
    }

    #[test]
    fn empty_window_has_zero_tps() {
        assert_eq!(tps(10, Duration::ZERO), 0.0);
        assert_eq!(tps(1, Duration::from_secs(3)), 0.333);
    }
}
