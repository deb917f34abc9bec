//! Slices of a run for `summary.json`: per group, per phase (each segment: iteration × phase,
//! ramps included and marked) and per (group, phase), each with the share of transactions the
//! group achieved against the share the plan configured (shared mode).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{DriveMode, RunPlan};
use crate::metrics::{KeySpace, Recorder};

use super::summary::{round3, Stats};

/// One group's transactions over a slice, with its share of the slice's transactions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    pub group: String,
    /// Percent the plan gave this group (shared mode). Over several phases: each phase's share
    /// weighted by that phase's transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configured_share: Option<f64>,
    /// Percent of the slice's transactions (committed + expected rollbacks + failed) it got.
    pub achieved_share: f64,
    /// Active clients (independent mode, per phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// The workload's headline in its unit over the slice (the group's part of tpsV); absent
    /// without a headline (see `headline::fill`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<f64>,
    #[serde(flatten)]
    pub stats: Stats,
}

/// One segment of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    pub iteration: u32,
    pub phase: String,
    pub measured: bool,
    pub start_s: f64,
    /// Seconds actually run (shorter than planned when interrupted).
    pub duration_s: f64,
    /// The workload's headline in its unit over the phase, every group summed; absent without
    /// a headline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<f64>,
    #[serde(flatten)]
    pub stats: Stats,
    pub groups: Vec<GroupStats>,
}

/// One role's transactions over the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleStats {
    pub role: String,
    #[serde(flatten)]
    pub stats: Stats,
}

/// The seconds each segment actually ran, given the run lasted `elapsed`.
pub fn segment_durations(keys: &KeySpace, elapsed: Duration) -> Vec<Duration> {
    let last = keys.segments.len().saturating_sub(1);
    keys.segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let end = if i == last {
                elapsed.max(s.start)
            } else {
                s.end.min(elapsed)
            };
            end.saturating_sub(s.start)
        })
        .collect()
}

/// A segment's planned seconds, or fewer if the run was cut short: the weight of its
/// configured shares (stragglers past the planned end do not tilt them).
fn planned(seg: &crate::config::timeline::Segment, actual: Duration) -> f64 {
    actual.min(seg.end - seg.start).as_secs_f64()
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10_000.0 / whole as f64).round() / 100.0
    }
}

/// Per-group totals over the measured window.
pub fn groups(
    plan: &RunPlan,
    keys: &KeySpace,
    rec: &Recorder,
    durations: &[Duration],
    rate_limited: bool,
) -> Vec<GroupStats> {
    let measured_time: Duration = keys
        .segments
        .iter()
        .zip(durations)
        .filter(|(s, _)| s.measured)
        .map(|(_, d)| *d)
        .sum();
    let measured = |segment: usize| keys.segments.get(segment).is_some_and(|s| s.measured);
    let per_group = keys.roll_up(rec, keys.groups.len(), |p| {
        measured(p.segment).then_some(p.group)
    });
    let per_segment = keys.by_segment(rec);
    let all: u64 = per_group.iter().map(|s| s.total()).sum();
    per_group
        .iter()
        .enumerate()
        .map(|(g, slot)| {
            // Each phase's share weighted by the transactions the phase saw: what the deck
            // promised over this window (phases of different speed weigh differently).
            let configured = (plan.mode == DriveMode::Shared).then(|| {
                let mut weighted = 0.0;
                let mut weight = 0.0;
                for (si, seg) in keys.segments.iter().enumerate().filter(|(_, s)| s.measured) {
                    let n = per_segment[si].total() as f64;
                    let w = if all > 0 {
                        n
                    } else {
                        planned(seg, durations[si])
                    };
                    weighted += plan.phases[seg.phase].groups[g].share * w;
                    weight += w;
                }
                if weight > 0.0 {
                    round3(weighted / weight)
                } else {
                    0.0
                }
            });
            GroupStats {
                group: keys.groups[g].clone(),
                configured_share: configured,
                achieved_share: share(slot.total(), all),
                clients: None,
                headline: None,
                stats: Stats::from_slot(slot, measured_time, rate_limited),
            }
        })
        .collect()
}

/// Every segment with its per-group breakdown.
pub fn phases(
    plan: &RunPlan,
    keys: &KeySpace,
    rec: &Recorder,
    durations: &[Duration],
    rate_limited: bool,
) -> Vec<PhaseStats> {
    let per_segment = keys.by_segment(rec);
    let groups_n = keys.groups.len();
    // One pass over the recorder for every (segment, group) cell.
    let cells = keys.roll_up(rec, keys.segments.len() * groups_n, |p| {
        Some(p.segment * groups_n + p.group)
    });
    keys.segments
        .iter()
        .enumerate()
        .map(|(si, seg)| {
            let d = durations.get(si).copied().unwrap_or_default();
            let whole = &per_segment[si];
            let groups = (0..groups_n)
                .map(|g| {
                    let slot = &cells[si * groups_n + g];
                    let pg = &plan.phases[seg.phase].groups[g];
                    GroupStats {
                        group: keys.groups[g].clone(),
                        configured_share: (plan.mode == DriveMode::Shared).then_some(pg.share),
                        achieved_share: share(slot.total(), whole.total()),
                        clients: (plan.mode == DriveMode::Independent).then_some(pg.clients),
                        headline: None,
                        stats: Stats::from_slot(slot, d, rate_limited),
                    }
                })
                .collect();
            PhaseStats {
                iteration: seg.iteration,
                phase: seg.label.clone(),
                measured: seg.measured,
                start_s: round3(seg.start.as_secs_f64()),
                duration_s: round3(d.as_secs_f64()),
                headline: None,
                stats: Stats::from_slot(whole, d, rate_limited),
                groups,
            }
        })
        .collect()
}

/// Per role over the measured window, in the order of [`KeySpace::roles`].
pub fn roles(
    keys: &KeySpace,
    rec: &Recorder,
    measured_time: Duration,
    rate_limited: bool,
) -> Vec<RoleStats> {
    let roles = keys.roles();
    let index = keys.role_index();
    let measured = |segment: usize| keys.segments.get(segment).is_some_and(|s| s.measured);
    let per_role = keys.roll_up(rec, roles.len(), |p| {
        measured(p.segment).then(|| index.get(p.txn).copied())?
    });
    roles
        .iter()
        .zip(&per_role)
        .map(|(role, slot)| RoleStats {
            role: role.to_string(),
            stats: Stats::from_slot(slot, measured_time, rate_limited),
        })
        .collect()
}

#[cfg(test)]
mod tests {

    use crate::metrics::{Outcome, Recorder};
    use crate::results::summary::tests::{plan, two_phase_facts};
    use crate::results::{Headline, RunFacts, Summary, SUMMARY_FILE};

    #[test]
    fn roles_and_the_headline_reach_summary_json_and_old_files_still_read() {
        let mut keys = crate::results::intervals::tests::two_phase_keys();
        keys.txn_roles = vec!["oltp".into(), "dss".into()];
        let mut rec = Recorder::new(keys.len());
        for _ in 0..6 {
            rec.record(keys.key(0, 0, 0), Outcome::Committed, 1_000, None, 0);
        }
        rec.record(keys.key(1, 1, 1), Outcome::Committed, 9_000, None, 0);
        let facts = RunFacts {
            headline: Some(Headline::per_minute("NOTPM", "a")),
            ..two_phase_facts()
        };
        let s = Summary::build(&facts, &plan(), &keys, &rec, Vec::new());
        let roles: Vec<(&str, u64)> = s
            .by_role
            .iter()
            .map(|r| (r.role.as_str(), r.stats.committed))
            .collect();
        assert_eq!(roles, [("oltp", 6), ("dss", 1)]);
        assert_eq!(s.by_target_and_type[1].role, "dss");
        let h = s.headline.as_ref().unwrap();
        // 6 committed over the 20 s measured window.
        assert_eq!((h.label.as_str(), h.per_minute), ("NOTPM", 18.0));

        let mut value: serde_json::Value = serde_json::from_str(&s.to_json().unwrap()).unwrap();
        let obj = value.as_object_mut().unwrap();
        obj.remove("by_role");
        obj.remove("headline");
        for row in obj["by_target_and_type"].as_array_mut().unwrap() {
            row.as_object_mut().unwrap().remove("role");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SUMMARY_FILE), value.to_string()).unwrap();
        let back = Summary::read(dir.path()).unwrap();
        assert!(back.by_role.is_empty() && back.headline.is_none());
        assert!(back.by_target_and_type.iter().all(|r| r.role == "oltp"));
    }
}
