//! Expected ratios between two transaction types' counts, held against the measured window:
//! TPC-E's Trade-Result / Trade-Order ≈ 0.99 and Market-Feed / Trade-Result ≈ 0.1 (the
//! emulator issues one Trade-Result per committed Trade-Order and one Market-Feed per 20
//! ticker entries, two entries per Trade-Result). The workload states the rules
//! ([`RatioRule`]); the summary records the verdicts ([`RatioCheck`]).
//!
//! Counting rules:
//! - The numerator counts committed transactions; the denominator counts completed ones
//!   (committed + expected rollbacks): every Trade-Order that ended as the workload meant it,
//!   its 1 % of deliberate rollbacks among them, so 0.99 is Trade-Result's share of them.
//!   Failed transactions count on neither side.
//! - Pass: the ratio lies within `expected` ± `tolerance_pct` percent of it.
//! - Unverified (not judged): nothing of the denominator completed, or fewer than
//!   [`MIN_EXPECTED`] numerator transactions were expected (one transaction more or less
//!   would move the ratio by over 1 %), or the ratio is below the band and the measured window
//!   is shorter than the rule's `settle` time (work the denominator started may still be
//!   pending at the window's end: a limit order waits for its price trigger). A ratio above
//!   the band is judged whatever the window.
//! - Fail: otherwise.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::metrics::Slot;

/// Fewer expected numerator transactions than this leave a ratio unjudged.
pub const MIN_EXPECTED: f64 = 100.0;

/// A workload's expected ratio of `numerator`'s committed transactions to `denominator`'s
/// completed ones.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioRule {
    pub numerator: String,
    pub denominator: String,
    pub expected: f64,
    /// Allowed deviation, in percent of `expected`.
    pub tolerance_pct: f64,
    /// A measured window shorter than this leaves a shortfall unjudged (see the module).
    pub settle: Duration,
}

/// The verdict on one ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// Not judged; `RatioCheck::reason` says why.
    Unverified,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Unverified => "unverified",
        }
    }
}

/// One ratio over the measured window, as `summary.json`'s `ratio_rules` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioCheck {
    pub numerator: String,
    pub denominator: String,
    /// Committed transactions of `numerator`.
    pub numerator_count: u64,
    /// Committed + expected-rollback transactions of `denominator`.
    pub denominator_count: u64,
    /// 4 decimals; absent when the denominator is zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    pub expected: f64,
    pub tolerance_pct: f64,
    pub verdict: Verdict,
    /// Why the verdict is `unverified`, or how a failure missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RatioCheck {
    /// "trade_result / trade_order".
    pub fn name(&self) -> String {
        format!("{} / {}", self.numerator, self.denominator)
    }

    /// "0.99 ± 5 %".
    pub fn band(&self) -> String {
        format!("{} ± {} %", self.expected, self.tolerance_pct)
    }
}

/// Checks `rules` against `per_type` (the measured window's slot of each of `txn_types`,
/// merged over every target) over a window of `measured`. Rules naming a type the run does not
/// have are left out, and a rule stated twice (two groups of one workload) is checked once.
pub fn check(
    rules: &[RatioRule],
    txn_types: &[String],
    per_type: &[Slot],
    measured: Duration,
) -> Vec<RatioCheck> {
    let slot = |name: &str| {
        txn_types
            .iter()
            .position(|t| t == name)
            .and_then(|i| per_type.get(i))
    };
    let mut out: Vec<RatioCheck> = Vec::new();
    for r in rules {
        let (Some(num), Some(den)) = (slot(&r.numerator), slot(&r.denominator)) else {
            continue;
        };
        if out
            .iter()
            .any(|c| c.numerator == r.numerator && c.denominator == r.denominator)
        {
            continue;
        }
        out.push(judge(
            r,
            num.committed,
            den.committed + den.expected_rollback,
            measured,
        ));
    }
    out
}

/// The verdict on `numerator` against `denominator` over a window of `measured`.
pub fn judge(r: &RatioRule, numerator: u64, denominator: u64, measured: Duration) -> RatioCheck {
    let ratio = (denominator > 0).then(|| numerator as f64 / denominator as f64);
    let expected_count = r.expected * denominator as f64;
    let low = r.expected * (1.0 - r.tolerance_pct / 100.0);
    let high = r.expected * (1.0 + r.tolerance_pct / 100.0);
    let (verdict, reason) = match ratio {
        None => (
            Verdict::Unverified,
            Some(format!("no {} completed", r.denominator)),
        ),
        Some(_) if expected_count < MIN_EXPECTED => (
            Verdict::Unverified,
            Some(format!(
                "too few to judge: {expected_count:.0} {} expected, {MIN_EXPECTED:.0} needed",
                r.numerator
            )),
        ),
        Some(x) if (low..=high).contains(&x) => (Verdict::Pass, None),
        Some(x) if x < low && measured < r.settle => (
            Verdict::Unverified,
            Some(format!(
                "below the band, but the measured window ({}) is shorter than the {} a {} \
                 may still be pending at its end",
                secs(measured),
                secs(r.settle),
                r.numerator
            )),
        ),
        Some(x) => (
            Verdict::Fail,
            Some(if x < low {
                format!("below {low:.4}")
            } else {
                format!("above {high:.4}")
            }),
        ),
    };
    RatioCheck {
        numerator: r.numerator.clone(),
        denominator: r.denominator.clone(),
        numerator_count: numerator,
        denominator_count: denominator,
        ratio: ratio.map(|x| (x * 10_000.0).round() / 10_000.0),
        expected: r.expected,
        tolerance_pct: r.tolerance_pct,
        verdict,
        reason,
    }
}

/// Whole seconds, as a run file writes a duration (`1m 4s`, not `1m 4ms 240us`).
fn secs(d: Duration) -> String {
    crate::config::duration::format_duration(Duration::from_secs(d.as_secs_f64().round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ErrorClass, Outcome, Recorder};

    fn tr_to() -> RatioRule {
        RatioRule {
            numerator: "trade_result".into(),
            denominator: "trade_order".into(),
            expected: 0.99,
            tolerance_pct: 5.0,
            settle: Duration::from_secs(1800),
        }
    }

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn the_denominator_counts_expected_rollbacks_and_the_numerator_commits_only() {
        let types: Vec<String> = ["trade_order", "trade_result"].map(String::from).into();
        let mut rec = Recorder::new(2);
        // 990 committed orders and their 10 deliberate rollbacks; 990 results.
        for _ in 0..990 {
            rec.record(0, Outcome::Committed, 10, None, 0);
            rec.record(1, Outcome::Committed, 10, None, 0);
        }
        for _ in 0..10 {
            rec.record(0, Outcome::ExpectedRollback, 10, None, 0);
            // Failures count on neither side.
            rec.record(0, Outcome::Failed(ErrorClass::Serialization), 0, None, 0);
            rec.record(1, Outcome::Failed(ErrorClass::Serialization), 0, None, 0);
        }
        let got = check(&[tr_to(), tr_to()], &types, &rec.slots, HOUR);
        assert_eq!(got.len(), 1, "a rule stated twice is checked once");
        let c = &got[0];
        assert_eq!((c.numerator_count, c.denominator_count), (990, 1000));
        assert_eq!(
            (c.ratio, c.verdict, c.reason.as_deref()),
            (Some(0.99), Verdict::Pass, None)
        );
        assert_eq!(
            (c.name().as_str(), c.band().as_str()),
            ("trade_result / trade_order", "0.99 ± 5 %")
        );
    }

    #[test]
    fn outside_the_band_fails_either_way() {
        let low = judge(&tr_to(), 900, 1000, HOUR);
        assert_eq!(low.verdict, Verdict::Fail, "{low:?}");
        assert!(
            low.reason.as_deref().unwrap().starts_with("below 0.9405"),
            "{low:?}"
        );
        let high = judge(&tr_to(), 1050, 1000, HOUR);
        assert_eq!(high.verdict, Verdict::Fail);
        assert!(high.reason.unwrap().starts_with("above 1.0395"));
        // The band's edges pass.
        assert_eq!(judge(&tr_to(), 941, 1000, HOUR).verdict, Verdict::Pass);
        assert_eq!(judge(&tr_to(), 1039, 1000, HOUR).verdict, Verdict::Pass);
    }

    #[test]
    fn short_windows_leave_a_shortfall_unverified_but_not_an_excess() {
        let minute = Duration::from_secs(60);
        let short = judge(&tr_to(), 800, 1000, minute);
        assert_eq!(short.verdict, Verdict::Unverified, "{short:?}");
        assert!(short.reason.unwrap().contains("pending"));
        assert_eq!(judge(&tr_to(), 1200, 1000, minute).verdict, Verdict::Fail);
        assert_eq!(judge(&tr_to(), 990, 1000, minute).verdict, Verdict::Pass);
    }

    #[test]
    fn too_few_or_none_is_unverified_and_absent_types_are_left_out() {
        let none = judge(&tr_to(), 0, 0, HOUR);
        assert_eq!((none.verdict, none.ratio), (Verdict::Unverified, None));
        assert!(none.reason.unwrap().contains("no trade_order completed"));
        // 0.99 × 50 = 49.5 results expected: too few, even though 0 is far below.
        let few = judge(&tr_to(), 0, 50, HOUR);
        assert_eq!(few.verdict, Verdict::Unverified);
        assert!(few.reason.unwrap().contains("too few"));
        let types: Vec<String> = vec!["trade_order".into()];
        assert!(check(&[tr_to()], &types, &Recorder::new(1).slots, HOUR).is_empty());
    }

    #[test]
    fn summary_json_holds_the_verdicts_beside_the_mix() {
        use crate::results::{RunFacts, Summary};
        let mut keys = crate::results::intervals::tests::two_phase_keys();
        keys.txn_types = vec!["trade_order".into(), "trade_result".into()];
        keys.txn_emulated = vec![false, true];
        let mut rec = Recorder::new(keys.len());
        for i in 0..200 {
            rec.record(keys.key(i % 2, 0, 0), Outcome::Committed, 1_000, None, 0);
            rec.record(keys.key(i % 2, 1, 1), Outcome::Committed, 1_000, None, 0);
        }
        let facts = RunFacts {
            ratio_rules: vec![tr_to()],
            ..crate::results::summary::tests::two_phase_facts()
        };
        let plan = crate::results::summary::tests::plan();
        let s = Summary::build(&facts, &plan, &keys, &rec, Vec::new());
        let [c] = &s.ratio_rules[..] else {
            panic!("{:?}", s.ratio_rules)
        };
        // 200 results per 200 orders: 1.0, inside 0.99 ± 5 %.
        assert_eq!((c.ratio, c.verdict), (Some(1.0), Verdict::Pass));
        let json = s.to_json().unwrap();
        assert!(json.contains("\"verdict\": \"pass\""), "{json}");
        let shares: Vec<Option<f64>> = s.mix.iter().map(|t| t.share_pct).collect();
        assert_eq!(
            shares,
            [Some(100.0), None],
            "the emulated type has no share"
        );
    }

    #[test]
    fn verdicts_read_back_from_json() {
        let c = judge(&tr_to(), 900, 1000, HOUR);
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains(r#""verdict":"fail""#), "{json}");
        assert_eq!(serde_json::from_str::<RatioCheck>(&json).unwrap(), c);
    }
}
