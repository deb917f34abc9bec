//! The verdict of `compare` (issue 55): per figure and per compared side, *regressed*,
//! *improved* or *within noise* against the baseline, the one definition of noise that
//! `compare` uses, and what a CI reads (exit 1 on a regression).
//!
//! The rule: the ratio of the sides' medians (other / baseline) and a 95 % bootstrap interval
//! of that ratio (each side's runs resampled with replacement, [`RESAMPLES`] times, percentile
//! interval). A figure *regressed* when its ratio is past its threshold in the direction that
//! is worse **and** the whole interval lies on that side of 1 (the change is larger than the
//! threshold and the runs' own spread cannot explain it); *improved* likewise the other way;
//! otherwise *within noise*. Why a bootstrap of medians and not a rank test: the interval is
//! in the same unit as the threshold (a ratio), so one line says both how large a change is and
//! how sure; a rank test gives a p-value and no size to hold against "-3 %". The median, as the
//! table shows it, is not moved by one disturbed run.
//!
//! With fewer than [`MIN_RUNS`] runs on either side the run-to-run spread is unknown: the
//! figure is described (its ratio), never judged, so it can never fail a pipeline.

use crate::prng::PgPrng;

use super::figures::{metric_of, Figures, Worse, METRICS};

/// Runs a side needs before its spread is taken as known.
pub const MIN_RUNS: usize = 3;
/// Bootstrap resamples per figure.
pub const RESAMPLES: usize = 10_000;
/// The interval's coverage.
pub const CONFIDENCE: f64 = 0.95;
/// The resampling is seeded: the same dirs always give the same verdict.
const SEED: u64 = 55;

/// A `--fail-on` given: which figures it selects and how far they may move (percent, > 0,
/// in the metric's worse direction).
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub selector: String,
    pub pct: f64,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ThresholdError {
    #[error("--fail-on {0}: write METRIC:N% (e.g. tps:-3% or p95:+10%), optionally scoped as type:NAME:METRIC or group:NAME:METRIC")]
    Form(String),
    #[error("--fail-on {given}: '{metric}' is no metric; choose from {}", names())]
    Metric { given: String, metric: String },
    #[error("--fail-on {given}: {metric} gets worse as it {}, so its threshold is {sign}N% (e.g. {metric}:{sign}5%)", if *sign == '-' { "falls" } else { "rises" })]
    Sign {
        given: String,
        metric: String,
        sign: char,
    },
}

fn names() -> String {
    METRICS.map(|m| m.name).join(", ")
}

impl std::str::FromStr for Threshold {
    type Err = ThresholdError;

    fn from_str(given: &str) -> Result<Threshold, ThresholdError> {
        let form = || ThresholdError::Form(given.to_string());
        let (selector, amount) = given.rsplit_once(':').ok_or_else(form)?;
        let number = amount.trim().strip_suffix('%').ok_or_else(form)?;
        let pct: f64 = number.parse().map_err(|_| form())?;
        if !pct.is_finite() || pct == 0.0 || pct.abs() >= 100.0 {
            return Err(form());
        }
        let scoped = selector.split(':').collect::<Vec<_>>();
        let valid_scope = match scoped.as_slice() {
            [_] => true,
            [scope, name, _] => matches!(*scope, "type" | "group") && !name.is_empty(),
            _ => false,
        };
        if !valid_scope {
            return Err(form());
        }
        let metric = metric_of(selector).ok_or_else(|| ThresholdError::Metric {
            given: given.to_string(),
            metric: scoped.last().copied().unwrap_or_default().to_string(),
        })?;
        let sign = if metric.worse == Worse::Lower {
            '-'
        } else {
            '+'
        };
        let explicit = number
            .trim_start()
            .chars()
            .next()
            .filter(|c| "+-".contains(*c));
        if explicit.is_some_and(|c| c != sign) {
            return Err(ThresholdError::Sign {
                given: given.to_string(),
                metric: metric.name.to_string(),
                sign,
            });
        }
        Ok(Threshold {
            selector: selector.to_string(),
            pct: pct.abs(),
        })
    }
}

/// What the verdict says of one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Regressed,
    Improved,
    WithinNoise,
    /// Fewer than [`MIN_RUNS`] runs on a side, or no value to divide by: described only.
    NotJudged,
}

impl Decision {
    pub fn word(self) -> &'static str {
        match self {
            Decision::Regressed => "regressed",
            Decision::Improved => "improved",
            Decision::WithinNoise => "within noise",
            Decision::NotJudged => "not judged",
        }
    }
}

/// One figure of one compared side against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub metric: String,
    pub unit: &'static str,
    /// Index of the compared side (1.. ; 0 is the baseline).
    pub side: usize,
    pub baseline_runs: usize,
    pub runs: usize,
    pub baseline_median: f64,
    pub median: f64,
    /// median / baseline median; `None` when the baseline's median is 0.
    pub ratio: Option<f64>,
    /// The bootstrap interval of the ratio, when both sides have [`MIN_RUNS`] runs.
    pub interval: Option<(f64, f64)>,
    /// The threshold as a signed percent in the worse direction (-3 for tps:-3%).
    pub threshold_pct: f64,
    pub decision: Decision,
    /// Why a figure is not judged, in words.
    pub note: Option<String>,
}

/// Judges every figure the baseline and a compared side both have: at the default thresholds
/// when no `--fail-on` is given, else only the figures a `--fail-on` selects.
pub fn judge(sides: &[Figures], thresholds: &[Threshold]) -> Vec<Judged> {
    let Some((base, others)) = sides.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, other) in others.iter().enumerate() {
        for (key, a) in &base.values {
            let b = other.get(key);
            let Some(metric) = metric_of(key) else {
                continue;
            };
            if b.is_empty() || (key == "headline" && base.headline != other.headline) {
                continue;
            }
            // With `--fail-on` given, only what it selects is judged: the rest is described.
            let chosen = threshold_for(key, thresholds);
            let pct = chosen.unwrap_or(metric.default_pct);
            let signed = if metric.worse == Worse::Lower {
                -pct
            } else {
                pct
            };
            let mut j = judge_one(a, b, signed);
            if chosen.is_none() && !thresholds.is_empty() && j.decision != Decision::NotJudged {
                j.decision = Decision::NotJudged;
                j.note = Some("no --fail-on selects it".into());
            }
            j.metric = key.clone();
            j.unit = metric.unit;
            j.side = i + 1;
            out.push(j);
        }
    }
    out
}

/// The most specific `--fail-on` that selects `key`: a whole key, else its metric's name.
fn threshold_for(key: &str, thresholds: &[Threshold]) -> Option<f64> {
    let exact = thresholds.iter().rev().find(|t| t.selector == key);
    let by_name = || {
        let name = key.rsplit(':').next()?;
        thresholds.iter().rev().find(|t| t.selector == name)
    };
    exact.or_else(by_name).map(|t| t.pct)
}

/// The rule of the module's header on one figure's runs: `signed_pct` is negative where a
/// fall is worse.
pub fn judge_one(base: &[f64], other: &[f64], signed_pct: f64) -> Judged {
    let baseline_median = median(&mut base.to_vec());
    let median_other = median(&mut other.to_vec());
    let ratio = (baseline_median != 0.0).then(|| median_other / baseline_median);
    let enough = base.len() >= MIN_RUNS && other.len() >= MIN_RUNS;
    let interval = if enough { bootstrap(base, other) } else { None };
    let note = match (ratio, enough) {
        (None, _) => Some("the baseline's median is 0".to_string()),
        (_, false) => Some(format!(
            "{MIN_RUNS} runs a side are needed to know the spread ({} and {})",
            base.len(),
            other.len()
        )),
        _ => None,
    };
    let decision = match (ratio, interval) {
        (Some(r), Some((lo, hi))) => decide(r, lo, hi, signed_pct),
        _ => Decision::NotJudged,
    };
    Judged {
        metric: String::new(),
        unit: "",
        side: 1,
        baseline_runs: base.len(),
        runs: other.len(),
        baseline_median,
        median: median_other,
        ratio,
        interval,
        threshold_pct: signed_pct,
        decision,
        note,
    }
}

/// Past the threshold and the whole interval on the same side of 1.
fn decide(ratio: f64, lo: f64, hi: f64, signed_pct: f64) -> Decision {
    let limit = signed_pct.abs() / 100.0;
    let (fell, rose) = (
        ratio <= 1.0 - limit && hi < 1.0,
        ratio >= 1.0 + limit && lo > 1.0,
    );
    match (signed_pct < 0.0, fell, rose) {
        (true, true, _) | (false, _, true) => Decision::Regressed,
        (true, _, true) | (false, true, _) => Decision::Improved,
        _ => Decision::WithinNoise,
    }
}

/// The percentile interval of median(other*) / median(base*) over [`RESAMPLES`] resamples.
fn bootstrap(base: &[f64], other: &[f64]) -> Option<(f64, f64)> {
    let mut rng = PgPrng::seeded(SEED);
    let mut a = vec![0.0; base.len()];
    let mut b = vec![0.0; other.len()];
    let mut ratios = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        resample(base, &mut a, &mut rng);
        resample(other, &mut b, &mut rng);
        let m = median(&mut a);
        if m != 0.0 {
            ratios.push(median(&mut b) / m);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let last = (ratios.len() - 1) as f64;
    let at = |q: f64| ratios[(q * last).round() as usize];
    Some((at(tail), at(1.0 - tail)))
}

fn resample(from: &[f64], into: &mut [f64], rng: &mut PgPrng) {
    let top = from.len() as u64 - 1;
    for slot in into.iter_mut() {
        *slot = from[rng.below_or_eq(top) as usize];
    }
}

/// The median (sorts `v`); 0 for no values.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Whether any figure regressed: what makes `compare` exit 1.
pub fn regressed(judged: &[Judged]) -> bool {
    judged.iter().any(|j| j.decision == Decision::Regressed)
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
