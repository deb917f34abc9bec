//! Building `summary.json` from the run's total recorder: the measured window's figures per
//! (target, transaction type), per type, group, phase and role, with the workload's rules,
//! ratios and headline checked against them.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::numbers::{micros_to_ms, round3, tps};
use super::schema::{
    Connections, FailedByClass, LatencyLimit, LatencyStats, RunFacts, ServerDelta, Stats, Summary,
    TargetName, TargetTypeStats,
};
use crate::config::RunPlan;
use crate::metrics::{ErrorClass, KeySpace, Recorder, Slot};
use crate::results::breakdown;
use crate::results::headline::{self, HeadlineRate};
use crate::results::mix;
use crate::results::ratios;
use crate::results::rules::{self, GroupIsolation, IsolationLevels};
use crate::results::{SCHEMA_VERSION, TIDEBENCH_VERSION};

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
        let interference =
            crate::results::interference::of(run.headline.as_ref(), keys, total, &phases);
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
            started_at: crate::results::utc_rfc3339(run.started_at),
            totals: Stats::from_slot(&all, measured_time, run.rate_limited),
            by_target_and_type,
            groups,
            phases,
            interference,
            server,
            hosts: Vec::new(),
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
            figures: Vec::new(),
            unit_times: Vec::new(),
            incidents: Vec::new(),
            waits: None,
            freshness: None,
            guests: Vec::new(),
            cut_in_flight: 0,
            committed_after_end: 0,
            overrun_s: None,
            down_windows: Vec::new(),
            events: Vec::new(),
            aborted_clients: Vec::new(),
            errors: Vec::new(),
            on_error: None,
            shard: None,
            connections: None,
            latency_limit: None,
        }
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
