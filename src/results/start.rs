//! `run-start.json`: what a summary needs that is known when the measured window starts —
//! the recorder's key space (segments, targets with their groups and sets, transaction types
//! and roles), the workload's headline and rules, and the run's start time. The writer puts it
//! in the staging dir (beside `runtime.toml`, also written then) before the first interval, so
//! a driver killed with SIGKILL leaves enough to rebuild `summary.json` from `intervals.csv`
//! and `latency.hlog` (see `recover`).
//!
//! The file mirrors `KeySpace`, `TypeRule` and `RatioRule` in plain fields (durations in
//! nanoseconds, so a round trip is exact) rather than deriving serde on those types: they
//! belong to other rooms and to the hot path, and this format must stay readable when they
//! change.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::headline::Headline;
use super::ratios::RatioRule;
use super::rules::TypeRule;
use super::summary::RunFacts;
use super::{ResultsError, SCHEMA_VERSION, TIDEBENCH_VERSION};
use crate::config::timeline::{Segment, SegmentKind};
use crate::metrics::{KeySpace, TargetKey};

pub const START_FILE: &str = "run-start.json";

/// The contents of `run-start.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStart {
    pub schema_version: u32,
    pub tidebench_version: String,
    pub workload: String,
    /// Wall-clock start of the run (ramp-up included), nanoseconds since the Unix epoch.
    pub started_at_unix_ns: u64,
    pub rate_limited: bool,
    pub segments: Vec<StartSegment>,
    pub targets: Vec<StartTarget>,
    pub groups: Vec<String>,
    pub txn_types: Vec<String>,
    pub txn_roles: Vec<String>,
    #[serde(default)]
    pub txn_emulated: Vec<bool>,
    #[serde(default)]
    pub type_rules: Vec<StartTypeRule>,
    #[serde(default)]
    pub headline: Option<Headline>,
    #[serde(default)]
    pub ratio_rules: Vec<StartRatioRule>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartSegment {
    /// `ramp-up`, `phase` or `ramp-down`.
    pub kind: String,
    pub iteration: u32,
    pub phase: usize,
    pub label: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub measured: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartTarget {
    pub label: String,
    pub group: usize,
    pub set: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartTypeRule {
    pub txn_type: String,
    pub p90_limit_ns: Option<u64>,
    pub min_share_pct: Option<f64>,
    pub limit_unverified: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartRatioRule {
    pub numerator: String,
    pub denominator: String,
    pub expected: f64,
    pub tolerance_pct: f64,
    pub settle_ns: u64,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn kind_name(k: SegmentKind) -> &'static str {
    match k {
        SegmentKind::RampUp => "ramp-up",
        SegmentKind::Phase => "phase",
        SegmentKind::RampDown => "ramp-down",
    }
}

impl RunStart {
    /// What `facts` (its `elapsed` and `complete` aside) and `keys` say at the start.
    pub fn new(facts: &RunFacts, keys: &KeySpace) -> RunStart {
        RunStart {
            schema_version: SCHEMA_VERSION,
            tidebench_version: TIDEBENCH_VERSION.to_string(),
            workload: facts.workload.clone(),
            started_at_unix_ns: facts.started_at.duration_since(UNIX_EPOCH).map_or(0, ns),
            rate_limited: facts.rate_limited,
            segments: keys
                .segments
                .iter()
                .map(|s| StartSegment {
                    kind: kind_name(s.kind).to_string(),
                    iteration: s.iteration,
                    phase: s.phase,
                    label: s.label.clone(),
                    start_ns: ns(s.start),
                    end_ns: ns(s.end),
                    measured: s.measured,
                })
                .collect(),
            targets: keys
                .targets
                .iter()
                .map(|t| StartTarget {
                    label: t.label.clone(),
                    group: t.group,
                    set: t.set.clone(),
                })
                .collect(),
            groups: keys.groups.clone(),
            txn_types: keys.txn_types.clone(),
            txn_roles: keys.txn_roles.clone(),
            txn_emulated: keys.txn_emulated.clone(),
            type_rules: facts
                .type_rules
                .iter()
                .map(|r| StartTypeRule {
                    txn_type: r.txn_type.clone(),
                    p90_limit_ns: r.p90_limit.map(ns),
                    min_share_pct: r.min_share_pct,
                    limit_unverified: r.limit_unverified,
                })
                .collect(),
            headline: facts.headline.clone(),
            ratio_rules: facts
                .ratio_rules
                .iter()
                .map(|r| StartRatioRule {
                    numerator: r.numerator.clone(),
                    denominator: r.denominator.clone(),
                    expected: r.expected,
                    tolerance_pct: r.tolerance_pct,
                    settle_ns: ns(r.settle),
                })
                .collect(),
        }
    }

    /// The recorder's key space as the run had it. Fails on a file whose indexes do not
    /// hold together (a target's group past the groups, an unknown segment kind).
    pub fn keys(&self) -> Result<KeySpace, String> {
        let segments = self
            .segments
            .iter()
            .map(|s| {
                let kind = match s.kind.as_str() {
                    "ramp-up" => SegmentKind::RampUp,
                    "phase" => SegmentKind::Phase,
                    "ramp-down" => SegmentKind::RampDown,
                    other => return Err(format!("unknown segment kind '{other}'")),
                };
                Ok(Segment {
                    kind,
                    iteration: s.iteration,
                    phase: s.phase,
                    label: s.label.clone(),
                    start: Duration::from_nanos(s.start_ns),
                    end: Duration::from_nanos(s.end_ns),
                    measured: s.measured,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        if let Some(t) = self.targets.iter().find(|t| t.group >= self.groups.len()) {
            return Err(format!(
                "target '{}' names group {} of {}",
                t.label,
                t.group,
                self.groups.len()
            ));
        }
        if self.txn_roles.len() != self.txn_types.len() {
            return Err(format!(
                "{} transaction types but {} roles",
                self.txn_types.len(),
                self.txn_roles.len()
            ));
        }
        Ok(KeySpace {
            segments,
            targets: self
                .targets
                .iter()
                .map(|t| TargetKey {
                    label: t.label.clone(),
                    group: t.group,
                    set: t.set.clone(),
                })
                .collect(),
            groups: self.groups.clone(),
            txn_types: self.txn_types.clone(),
            txn_roles: self.txn_roles.clone(),
            txn_emulated: self.txn_emulated.clone(),
        })
    }

    /// The run's facts, with the `elapsed` and `complete` only the end can tell.
    pub fn facts(&self, elapsed: Duration, complete: bool) -> RunFacts {
        RunFacts {
            workload: self.workload.clone(),
            started_at: UNIX_EPOCH + Duration::from_nanos(self.started_at_unix_ns),
            elapsed,
            complete,
            rate_limited: self.rate_limited,
            type_rules: self
                .type_rules
                .iter()
                .map(|r| TypeRule {
                    txn_type: r.txn_type.clone(),
                    p90_limit: r.p90_limit_ns.map(Duration::from_nanos),
                    min_share_pct: r.min_share_pct,
                    limit_unverified: r.limit_unverified,
                })
                .collect(),
            headline: self.headline.clone(),
            ratio_rules: self
                .ratio_rules
                .iter()
                .map(|r| RatioRule {
                    numerator: r.numerator.clone(),
                    denominator: r.denominator.clone(),
                    expected: r.expected,
                    tolerance_pct: r.tolerance_pct,
                    settle: Duration::from_nanos(r.settle_ns),
                })
                .collect(),
        }
    }

    /// The run's wall-clock start.
    pub fn started_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_nanos(self.started_at_unix_ns)
    }

    pub fn to_json(&self) -> Result<String, ResultsError> {
        serde_json::to_string_pretty(self)
            .map(|t| t + "\n")
            .map_err(|e| ResultsError::Encode {
                file: START_FILE,
                message: e.to_string(),
            })
    }

    /// Reads `run-start.json` from a results dir, refusing other schema versions.
    pub fn read(dir: &Path) -> Result<RunStart, ResultsError> {
        let path = dir.join(START_FILE);
        let text = std::fs::read_to_string(&path).map_err(ResultsError::io("read", &path))?;
        let decode = |message: String| ResultsError::Decode {
            file: START_FILE,
            path: path.clone(),
            message,
        };
        let start: RunStart = serde_json::from_str(&text).map_err(|e| decode(e.to_string()))?;
        if start.schema_version != SCHEMA_VERSION {
            return Err(decode(format!(
                "schema version {}; this tidebench reads version {SCHEMA_VERSION}",
                start.schema_version
            )));
        }
        Ok(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn facts() -> RunFacts {
        let mut f = crate::results::summary::tests::two_phase_facts();
        f.type_rules = vec![TypeRule {
            txn_type: "a".into(),
            p90_limit: Some(Duration::from_millis(1500)),
            min_share_pct: Some(43.0),
            limit_unverified: true,
        }];
        f.ratio_rules = vec![RatioRule {
            numerator: "a".into(),
            denominator: "b".into(),
            expected: 0.1,
            tolerance_pct: 5.0,
            settle: Duration::from_secs(600),
        }];
        f.headline = Some(Headline {
            label: "NOTPM".into(),
            txn_type: "a".into(),
            per: Default::default(),
            label_over_many: None,
        });
        f
    }

    #[test]
    fn round_trips_keys_and_facts_exactly() {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let f = facts();
        let start = RunStart::new(&f, &keys);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(START_FILE), start.to_json().unwrap()).unwrap();
        let back = RunStart::read(dir.path()).unwrap();
        assert_eq!(back, start);
        let k = back.keys().unwrap();
        assert_eq!(k.len(), keys.len());
        assert_eq!(k.segments[1].start, keys.segments[1].start);
        assert_eq!(k.segments[1].kind, keys.segments[1].kind);
        assert_eq!(k.targets[1].label, keys.targets[1].label);
        let g = back.facts(Duration::from_secs(7), false);
        assert_eq!(g.started_at, f.started_at);
        assert_eq!(g.type_rules, f.type_rules);
        assert_eq!(g.ratio_rules, f.ratio_rules);
        assert_eq!(g.headline, f.headline);
        assert_eq!((g.elapsed, g.complete), (Duration::from_secs(7), false));
    }

    #[test]
    fn refuses_what_does_not_hold_together() {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let mut start = RunStart::new(&facts(), &keys);
        start.targets[0].group = 5;
        assert!(start.keys().unwrap_err().contains("group 5 of 1"));
        let dir = tempfile::tempdir().unwrap();
        start.schema_version = 99;
        std::fs::write(dir.path().join(START_FILE), start.to_json().unwrap()).unwrap();
        let err = RunStart::read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("schema version 99"), "{err}");
        std::fs::write(dir.path().join(START_FILE), "{").unwrap();
        assert!(RunStart::read(dir.path()).is_err());
    }
}
