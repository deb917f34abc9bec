//! The run's side of wait sampling (issue 41): whose sessions to count (each target's group,
//! set, `application_name` and database), and where the counts go at the end (`waits.csv`,
//! `locks.csv`, `summary.json`'s `waits`). The sampling itself is `sampler::waits`.

use std::sync::Arc;

use crate::config::RunPlan;
use crate::metrics::KeySpace;
use crate::results::waits::WaitsSummary;
use crate::results::Summary;
use crate::sampler::waits::types::TypeMap;
use crate::sampler::waits::{Owners, WaitSampler, WaitsReport};
use crate::workload::Workload;

use super::targets::Targets;

/// The wait sampler over the run's servers, unless `--sample-waits 0`.
pub async fn open(
    plan: &RunPlan,
    targets: &Targets,
    keys: &KeySpace,
    workloads: &[Arc<dyn Workload>],
) -> Option<WaitSampler> {
    if plan.sample_waits == 0 {
        return None;
    }
    let named: Vec<(String, String, String, String)> = keys
        .targets
        .iter()
        .zip(&targets.resolved)
        .map(|(k, r)| {
            (
                keys.groups.get(k.group).cloned().unwrap_or_default(),
                k.set.clone(),
                r.params.application_name.clone(),
                r.params.dbname.clone(),
            )
        })
        .collect();
    let mut owners = Owners::new(&named);
    for (g, w) in workloads.iter().enumerate() {
        if let Some(name) = keys.groups.get(g) {
            owners = owners.with_types(name, type_map(plan, g, w.as_ref()));
        }
    }
    Some(WaitSampler::open(plan.sample_waits, &targets.resolved, owners, &keys.segments).await)
}

/// Group `g`'s statements of the types it may run: those its phases' mixes weigh, those its
/// emulator issues, and the workload's own where a phase gives none (a pgbench run of tpcb
/// alone then tells tpcb's `BEGIN;` from simple-update's).
fn type_map(plan: &RunPlan, g: usize, w: &dyn Workload) -> TypeMap {
    let types = w.txn_types();
    // Types an emulator issues run whatever the mix.
    let mut runs: Vec<bool> = types.iter().map(|t| t.emulated).collect();
    for phase in &plan.phases {
        let Some(pg) = phase.groups.get(g) else {
            continue;
        };
        if pg.mix.is_empty() {
            for t in w.own_types() {
                if let Some(r) = runs.get_mut(t) {
                    *r = true;
                }
            }
        }
        for (name, weight) in &pg.mix {
            if let Some(i) = types.iter().position(|t| t.name == *name) {
                runs[i] |= *weight > 0.0;
            }
        }
    }
    let statements = w.statements();
    TypeMap::new(
        statements
            .iter()
            .filter(|(t, _)| runs.get(*t).copied().unwrap_or(false))
            .map(|(t, sql)| (types[*t].name.as_str(), *sql)),
    )
}

/// Writes `waits.csv` and `locks.csv` into the staging dir and the summary's `waits`; what
/// went wrong becomes warnings.
pub fn record(
    report: WaitsReport,
    keys: &KeySpace,
    staging: &std::path::Path,
    summary: &mut Summary,
    warnings: &mut Vec<String>,
) {
    warnings.extend(report.warnings);
    if let Err(e) = crate::results::waits::write(staging, &report.record, &keys.segments) {
        warnings.push(format!("waits.csv not written: {e}"));
    }
    summary.waits = Some(WaitsSummary::build(&report.record, &keys.segments));
}
