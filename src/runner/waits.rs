//! The run's side of wait sampling (issue 41): whose sessions to count (each target's group,
//! set, `application_name` and database), and where the counts go at the end (`waits.csv`,
//! `locks.csv`, `summary.json`'s `waits`). The sampling itself is `sampler::waits`.

use crate::config::RunPlan;
use crate::metrics::KeySpace;
use crate::results::waits::WaitsSummary;
use crate::results::Summary;
use crate::sampler::waits::{Owners, WaitSampler, WaitsReport};

use super::targets::Targets;

/// The wait sampler over the run's servers, unless `--sample-waits 0`.
pub async fn open(plan: &RunPlan, targets: &Targets, keys: &KeySpace) -> Option<WaitSampler> {
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
    Some(
        WaitSampler::open(
            plan.sample_waits,
            &targets.resolved,
            Owners::new(&named),
            &keys.segments,
        )
        .await,
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
