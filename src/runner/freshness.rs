//! The run's side of freshness (issue 52): which primary and hot standby the groups use
//! (a group whose target is a managed standby, not promoted, of an instance another group
//! targets), and where the figures go at the end (`summary.json`'s `freshness`). A run of
//! one group says nothing; a run of several without such a pair says "n/a" and why. The
//! sampling itself is `sampler::freshness`, the figures `results::freshness`.

use crate::config::{RunPlan, TargetSpec};
use crate::instance::{self, Home};
use crate::metrics::KeySpace;
use crate::results::freshness::{Freshness, Pair, SAME_SERVER};
use crate::results::Summary;
use crate::sampler::freshness::{FreshnessProbe, FreshnessReport};

use super::targets::Targets;

/// The probe over the run's pairs (none: freshness is n/a), or `None` for a run of one group.
pub async fn open(
    plan: &RunPlan,
    targets: &Targets,
    keys: &KeySpace,
    home: &Home,
) -> Option<FreshnessProbe> {
    if plan.groups.len() < 2 {
        return None;
    }
    let found = pairs(plan, targets, home);
    let with: Vec<_> = found
        .iter()
        .map(|(pair, p, s)| (pair.clone(), &targets.resolved[*p], &targets.resolved[*s]))
        .collect();
    Some(FreshnessProbe::open(&with, &targets.resolved, &keys.segments).await)
}

/// The managed instance a target names alone (not a list followed on fail-over).
fn instance_of(spec: &TargetSpec) -> Option<&str> {
    match spec {
        TargetSpec::Instance { name, also, .. } if also.is_empty() => Some(name),
        _ => None,
    }
}

/// Each (primary, standby) the groups use, with the primary's and the standby's target
/// index: the first target on each instance stands for it.
fn pairs(plan: &RunPlan, targets: &Targets, home: &Home) -> Vec<(Pair, usize, usize)> {
    let on = |name: &str| {
        targets
            .planned
            .iter()
            .position(|t| instance_of(&t.spec) == Some(name))
    };
    let mut out: Vec<(Pair, usize, usize)> = Vec::new();
    for t in &targets.planned {
        let Some(name) = instance_of(&t.spec) else {
            continue;
        };
        if out.iter().any(|(p, _, _)| p.standby == name) {
            continue;
        }
        let Ok(found) = instance::find(home, name) else {
            continue;
        };
        let primary = match found.standby_of() {
            Some(p) if found.in_recovery() => p.to_string(),
            _ => continue,
        };
        let (Some(pt), Some(st)) = (on(&primary), on(name)) else {
            continue;
        };
        let mut readers: Vec<String> = targets
            .planned
            .iter()
            .filter(|o| instance_of(&o.spec) == Some(name))
            .filter_map(|o| plan.groups.get(o.group).map(|g| g.name.clone()))
            .collect();
        readers.dedup();
        out.push((
            Pair {
                primary: primary.clone(),
                standby: name.to_string(),
                readers,
            },
            pt,
            st,
        ));
    }
    out
}

/// The summary's `freshness` from what the probe measured (n/a without a pair); what went
/// wrong becomes warnings.
pub fn record(
    report: FreshnessReport,
    keys: &KeySpace,
    summary: &mut Summary,
    warnings: &mut Vec<String>,
) {
    warnings.extend(report.warnings);
    summary.freshness = Some(if report.pairs.is_empty() {
        Freshness::not_applicable(SAME_SERVER)
    } else {
        Freshness::build(&report.pairs, &report.samples, &keys.segments)
    });
}
