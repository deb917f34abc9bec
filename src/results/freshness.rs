//! Freshness (issue 52, CH-benCHmark's third figure): how long after a commit on a primary a
//! query on its hot standby can see it, per phase, for `summary.json`, the console and the
//! report.
//!
//! How it is read (`sampler::freshness`): a few times a second the probe asks the primary for
//! its WAL insert position, which every commit that has returned to its client lies at or
//! before (its record is inserted before it answers, whatever `synchronous_commit` is), then
//! asks the standby again and again whether it has replayed up to there; a query on the
//! standby sees every transaction whose commit record it has replayed. One sample is the time
//! from the primary's answer to the standby's first "yes": an upper bound on the newest
//! commit's wait, to within one round trip and one poll (it includes the wait for the WAL
//! past that commit to be flushed, which under load the next commit does). The LSN is used
//! rather than a row (the newest order id) so it
//! holds for any workload and needs no read of a measured database: the probe's sessions use
//! `postgres`, whose commits the server check does not count.
//!
//! Where the groups read the server they write to, a commit is visible to the next query at
//! once: freshness is then "n/a" with that reason, for a run of more than one group.

use serde::{Deserialize, Serialize};

use super::summary::round3;
use crate::config::timeline::Segment;

/// The run's freshness: per standby and phase, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Freshness {
    /// One entry per (standby, measured phase) with samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<FreshnessPhase>,
    /// Why freshness was not measured (then `phases` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
}

/// One standby's freshness over one phase, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreshnessPhase {
    /// The primary's and the standby's target labels.
    pub primary: String,
    pub standby: String,
    /// The groups that read the standby.
    pub readers: Vec<String>,
    pub iteration: u32,
    pub phase: String,
    /// Samples the standby caught up with.
    pub samples: u64,
    /// Samples the standby had not shown by the run's end (it was that far behind, or
    /// replay waited on its queries); they are not in the percentiles.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unseen: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ms: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A primary and its standby as the probe watched them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub primary: String,
    pub standby: String,
    pub readers: Vec<String>,
}

/// One sample: which pair, the segment it was taken in, and how long the standby took
/// (`None`: it had not caught up when the probe gave up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub pair: usize,
    pub segment: usize,
    pub ms: Option<f64>,
}

/// What a run without a standby reader says.
pub const SAME_SERVER: &str = "no group reads a hot standby of another group's instance: a \
     group that reads what another writes reads it on the same server, where a commit is \
     visible to the next query at once";

impl Freshness {
    /// Not measured, for `reason`.
    pub fn not_applicable(reason: &str) -> Freshness {
        Freshness {
            phases: Vec::new(),
            not_applicable: Some(reason.to_string()),
        }
    }

    /// Per pair and measured segment with samples, in pair then segment order.
    pub fn build(pairs: &[Pair], samples: &[Sample], segments: &[Segment]) -> Freshness {
        let mut phases = Vec::new();
        for (p, pair) in pairs.iter().enumerate() {
            for (si, seg) in segments.iter().enumerate() {
                if !seg.measured {
                    continue;
                }
                let here: Vec<Option<f64>> = samples
                    .iter()
                    .filter(|s| s.pair == p && s.segment == si)
                    .map(|s| s.ms)
                    .collect();
                if here.is_empty() {
                    continue;
                }
                let mut seen: Vec<f64> = here.iter().flatten().copied().collect();
                seen.sort_by(f64::total_cmp);
                phases.push(FreshnessPhase {
                    primary: pair.primary.clone(),
                    standby: pair.standby.clone(),
                    readers: pair.readers.clone(),
                    iteration: seg.iteration,
                    phase: seg.label.clone(),
                    samples: seen.len() as u64,
                    unseen: (here.len() - seen.len()) as u64,
                    p50_ms: rank(&seen, 0.50),
                    p95_ms: rank(&seen, 0.95),
                    max_ms: seen.last().map(|v| round3(*v)),
                });
            }
        }
        let not_applicable = phases.is_empty().then(|| {
            "the probe took no sample in a measured phase (the run's warnings say why)".to_string()
        });
        Freshness {
            phases,
            not_applicable,
        }
    }

    /// The console's lines: one per standby and phase, or the reason it is n/a.
    pub fn lines(&self) -> Vec<String> {
        if let Some(why) = &self.not_applicable {
            return vec![format!("freshness: n/a ({why})")];
        }
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        self.phases
            .iter()
            .map(|f| {
                let unseen = match f.unseen {
                    0 => String::new(),
                    n => format!(", {n} not seen by the run's end"),
                };
                format!(
                    "freshness of {} (standby of {}, read by {}) in phase {}: p50 {} ms, p95 {} \
                     ms, max {} ms ({} samples{unseen})",
                    f.standby,
                    f.primary,
                    f.readers.join(", "),
                    f.phase,
                    ms(f.p50_ms),
                    ms(f.p95_ms),
                    ms(f.max_ms),
                    f.samples
                )
            })
            .collect()
    }
}

/// The nearest-rank percentile of sorted values, 3 decimals.
fn rank(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(round3(sorted[i]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::timeline::SegmentKind;
    use std::time::Duration;

    fn seg(label: &str, measured: bool) -> Segment {
        Segment {
            kind: SegmentKind::Phase,
            iteration: 1,
            phase: 0,
            label: label.into(),
            start: Duration::ZERO,
            end: Duration::from_secs(1),
            measured,
        }
    }

    #[test]
    fn each_measured_phase_gets_its_percentiles_and_unseen_samples_stay_out() {
        let pairs = [Pair {
            primary: "instance:p".into(),
            standby: "instance:s".into(),
            readers: vec!["A".into()],
        }];
        let segments = [seg("ramp-up", false), seg("one", true), seg("two", true)];
        let mut samples: Vec<Sample> = (1..=20)
            .map(|i| Sample {
                pair: 0,
                segment: 1,
                ms: Some(f64::from(i)),
            })
            .collect();
        samples.push(Sample {
            pair: 0,
            segment: 1,
            ms: None,
        });
        samples.push(Sample {
            pair: 0,
            segment: 0,
            ms: Some(99.0),
        });
        let f = Freshness::build(&pairs, &samples, &segments);
        assert_eq!(f.phases.len(), 1, "{f:?}");
        let one = &f.phases[0];
        assert_eq!(
            (one.phase.as_str(), one.samples, one.unseen),
            ("one", 20, 1)
        );
        assert_eq!(
            (one.p50_ms, one.p95_ms, one.max_ms),
            (Some(10.0), Some(19.0), Some(20.0))
        );
        assert!(f.lines()[0].contains("p95 19.0 ms"), "{:?}", f.lines());
        let na = Freshness::not_applicable(SAME_SERVER);
        assert!(na.lines()[0].starts_with("freshness: n/a (no group reads a hot standby"));
    }
}
