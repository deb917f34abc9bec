//! The workload's headline rate and the per-minute rates of every type, so the console and the
//! report print what the summary names instead of a type they know.
//!
//! A headline counts one type's committed transactions per minute (TPC-C's NOTPM over
//! `new_order`) or per second (TPC-E's tpsE over `trade_result`). Its label may depend on the
//! run's shape: a workload declares a second label for runs whose headline type ran on more
//! than one database ([`Headline::over_many`]: tpce's tpsV, TPC-V's Trade-Results per second
//! summed over every group, set and role), and the runner picks one with
//! [`Headline::for_databases`] once it knows the run's databases.
//!
//! Counting rules: committed transactions only (an expected rollback is not a completed
//! Trade-Result or New-Order); the overall rate is over the measured window, a group's over
//! the same window, a phase's (and a group's within a phase) over the seconds that phase ran.
//! Rates per second keep 3 decimals, per minute 1 decimal (as `tpm`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::breakdown::{GroupStats, PhaseStats};
use super::summary::{round3, TargetTypeStats};
pub use crate::event::Per;
use crate::metrics::{KeySpace, Recorder};

/// What a workload calls its headline: a label, the transaction type it counts, and per what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headline {
    pub label: String,
    pub txn_type: String,
    #[serde(default)]
    pub per: Per,
    /// The label instead of `label` when the type ran on more than one database (tpce:
    /// `tpsV` beside `tpsE`); see [`Headline::for_databases`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_over_many: Option<String>,
}

impl Headline {
    /// Committed `txn_type` transactions per minute, named `label` (TPC-C: NOTPM, new_order).
    pub fn per_minute(label: impl Into<String>, txn_type: impl Into<String>) -> Headline {
        Headline {
            label: label.into(),
            txn_type: txn_type.into(),
            per: Per::Minute,
            label_over_many: None,
        }
    }

    /// Committed `txn_type` transactions per second, named `label` (tpce: tpsE, trade_result).
    pub fn per_second(label: impl Into<String>, txn_type: impl Into<String>) -> Headline {
        Headline {
            per: Per::Second,
            ..Headline::per_minute(label, txn_type)
        }
    }

    /// The same, named `label` when the type ran on more than one database.
    pub fn over_many(self, label: impl Into<String>) -> Headline {
        Headline {
            label_over_many: Some(label.into()),
            ..self
        }
    }

    /// The headline of a run whose groups ran its type on `databases` databases (every
    /// target of every set and role of those groups): the label over many when there are
    /// two or more and the workload declared one. The result names one label only.
    pub fn for_databases(&self, databases: usize) -> Headline {
        let label = match &self.label_over_many {
            Some(many) if databases > 1 => many.clone(),
            _ => self.label.clone(),
        };
        Headline {
            label,
            label_over_many: None,
            ..self.clone()
        }
    }
}

/// The headline over the measured window, as `summary.json` states it.
///
/// `per_minute` is always written (files of a per-minute headline read exactly as before
/// `per` existed); a per-second headline adds `"per": "second"` and `per_second`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadlineRate {
    pub label: String,
    pub txn_type: String,
    #[serde(default, skip_serializing_if = "Per::is_minute")]
    pub per: Per,
    /// Committed transactions of `txn_type` per minute (expected rollbacks are not counted).
    pub per_minute: f64,
    /// The same per second (3 decimals), for a per-second headline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_second: Option<f64>,
}

impl HeadlineRate {
    /// The headline's rate out of `tpm` and its `committed` count over `window`.
    pub fn of(
        h: &Headline,
        tpm: &BTreeMap<String, f64>,
        committed: u64,
        window: Duration,
    ) -> HeadlineRate {
        HeadlineRate {
            label: h.label.clone(),
            txn_type: h.txn_type.clone(),
            per: h.per,
            per_minute: tpm.get(&h.txn_type).copied().unwrap_or(0.0),
            per_second: (h.per == Per::Second)
                .then(|| round3(Per::Second.rate(committed, window.as_secs_f64()))),
        }
    }

    /// The headline's figure in its own unit.
    pub fn value(&self) -> f64 {
        match (self.per, self.per_second) {
            (Per::Second, Some(v)) => v,
            (Per::Second, None) => self.per_minute / 60.0,
            (Per::Minute, _) => self.per_minute,
        }
    }
}

/// A rate in `per`, rounded as results write it.
pub fn rounded(per: Per, count: u64, window: Duration) -> f64 {
    let v = per.rate(count, window.as_secs_f64());
    match per {
        Per::Minute => (v * 10.0).round() / 10.0,
        Per::Second => round3(v),
    }
}

/// Committed transactions per minute by type name, 1 decimal; zero for an empty window.
pub fn per_minute(rows: &[TargetTypeStats], window: Duration) -> BTreeMap<String, f64> {
    let mut committed: BTreeMap<String, u64> = BTreeMap::new();
    for r in rows {
        *committed.entry(r.txn_type.clone()).or_default() += r.stats.committed;
    }
    committed
        .into_iter()
        .map(|(t, n)| (t, rounded(Per::Minute, n, window)))
        .collect()
}

/// Fills the headline's rate into every group (measured window), every phase and every group
/// within a phase (the seconds the phase ran, `durations` by segment); leaves them empty when
/// the run has no headline or its type is not in the key space.
pub fn fill(
    h: Option<&Headline>,
    keys: &KeySpace,
    rec: &Recorder,
    measured_time: Duration,
    durations: &[Duration],
    groups: &mut [GroupStats],
    phases: &mut [PhaseStats],
) {
    let Some((h, txn)) =
        h.and_then(|h| Some((h, keys.txn_types.iter().position(|t| *t == h.txn_type)?)))
    else {
        return;
    };
    let n_groups = keys.groups.len();
    let measured = |segment: usize| keys.segments.get(segment).is_some_and(|s| s.measured);
    let per_group = keys.roll_up(rec, n_groups, |p| {
        (p.txn == txn && measured(p.segment)).then_some(p.group)
    });
    for (g, row) in groups.iter_mut().enumerate() {
        let n = per_group.get(g).map_or(0, |s| s.committed);
        row.headline = Some(rounded(h.per, n, measured_time));
    }
    let cells = keys.roll_up(rec, keys.segments.len() * n_groups, |p| {
        (p.txn == txn).then_some(p.segment * n_groups + p.group)
    });
    for (si, phase) in phases.iter_mut().enumerate() {
        let d = durations.get(si).copied().unwrap_or_default();
        let mut all = 0;
        for (g, row) in phase.groups.iter_mut().enumerate() {
            let n = cells.get(si * n_groups + g).map_or(0, |s| s.committed);
            row.headline = Some(rounded(h.per, n, d));
            all += n;
        }
        phase.headline = Some(rounded(h.per, all, d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_reads_its_type_or_zero() {
        let h = Headline::per_minute("NOTPM", "new_order");
        let tpm: BTreeMap<String, f64> = [("new_order".to_string(), 12.5)].into();
        let window = Duration::from_secs(60);
        let rate = HeadlineRate::of(&h, &tpm, 12, window);
        assert_eq!(
            (rate.per_minute, rate.per_second, rate.value()),
            (12.5, None, 12.5)
        );
        assert_eq!(
            HeadlineRate::of(&h, &BTreeMap::new(), 0, window).value(),
            0.0
        );
    }

    #[test]
    fn per_second_headlines_count_committed_per_second_of_the_window() {
        let h = Headline::per_second("tpsE", "trade_result");
        let tpm: BTreeMap<String, f64> = [("trade_result".to_string(), 600.0)].into();
        // 1,000 committed in 100 s: 10 per second, whatever `tpm` rounded.
        let rate = HeadlineRate::of(&h, &tpm, 1_000, Duration::from_secs(100));
        assert_eq!((rate.per, rate.per_second), (Per::Second, Some(10.0)));
        assert_eq!(rate.value(), 10.0);
        let none = HeadlineRate::of(&h, &tpm, 5, Duration::ZERO);
        assert_eq!(none.value(), 0.0, "an empty window has no rate");
        assert_eq!(rounded(Per::Second, 1, Duration::from_secs(3)), 0.333);
        assert_eq!(rounded(Per::Minute, 1, Duration::from_secs(7)), 8.6);
    }

    #[test]
    fn the_label_over_many_needs_two_databases() {
        let h = Headline::per_second("tpsE", "trade_result").over_many("tpsV");
        assert_eq!(h.for_databases(1).label, "tpsE");
        assert_eq!(h.for_databases(0).label, "tpsE");
        let many = h.for_databases(4);
        assert_eq!((many.label.as_str(), many.per), ("tpsV", Per::Second));
        assert_eq!(
            many.label_over_many, None,
            "a run's headline names one label"
        );
        let notpm = Headline::per_minute("NOTPM", "new_order");
        assert_eq!(
            notpm.for_databases(8).label,
            "NOTPM",
            "no second label, no change"
        );
    }

    #[test]
    fn per_minute_files_read_and_write_as_before_per_existed() {
        let old = r#"{"label":"NOTPM","txn_type":"new_order","per_minute":1234.5}"#;
        let rate: HeadlineRate = serde_json::from_str(old).unwrap();
        assert_eq!((rate.per, rate.value()), (Per::Minute, 1234.5));
        assert_eq!(serde_json::to_string(&rate).unwrap(), old);
        let tps = HeadlineRate::of(
            &Headline::per_second("tpsV", "trade_result"),
            &BTreeMap::new(),
            30,
            Duration::from_secs(20),
        );
        let json = serde_json::to_string(&tps).unwrap();
        assert!(json.contains(r#""per":"second""#) && json.contains(r#""per_second":1.5"#));
        assert_eq!(serde_json::from_str::<HeadlineRate>(&json).unwrap(), tps);
    }
}
