//! The analysis of an experiment's complete runs: per-point medians, the sweep curve's peak,
//! linear region and saturation, density's percent of ideal, and the knee of a working-set
//! curve. Pure functions over `results::experiment` values, so they are tested on synthetic
//! curves.
//!
//! Only complete runs count (status `Complete` and `complete`): an interrupted run measured a
//! shorter, different window. A point with no complete run has no median and is left out of
//! curves; nothing is extrapolated (issue 13).

use std::collections::BTreeMap;

use crate::results::experiment::{
    axis_value, is_size, Analysis, DensityAnalysis, DensityStep, KneeRequest, Point, RunRecord,
    RunStatus, DENSITY_KEY,
};

pub mod consolidate;
mod density_steps;
pub mod knee;
mod series;
#[cfg(test)]
mod tests;

/// A point is on the line while its median is within this fraction of the line's value.
pub const LINEAR_TOLERANCE: f64 = 0.10;
/// A curve saturates at the first point that no later point beats by more than this fraction.
pub const SATURATION_THRESHOLD: f64 = 0.05;

/// Fills each point's `median`, `min`, `max` and `headline_median` from its complete runs.
pub fn summarize_points(points: &mut [Point]) {
    for point in points {
        let tps = complete_values(point, |r| r.tps);
        point.median = median(&tps);
        point.min = tps.iter().copied().reduce(f64::min);
        point.max = tps.iter().copied().reduce(f64::max);
        point.headline_median = median(&complete_values(point, |r| {
            r.headline.as_ref().map(|h| h.value)
        }));
    }
}

/// A sweep's analysis: one series per combination of the other varied keys, the last
/// numeric key on x. `varied` is in grid order.
pub fn sweep(varied: &[String], points: &[Point]) -> Analysis {
    let mut analysis = Analysis::default();
    if points.is_empty() {
        analysis.notes.push("no points: nothing to analyse".into());
        return analysis;
    }
    let Some(x_key) = varied.iter().rev().find(|k| is_numeric(k, points)) else {
        analysis.notes.push(not_numeric_note(varied));
        return analysis;
    };
    let sizes = points
        .iter()
        .any(|p| p.values.get(x_key).is_some_and(|v| is_size(v)));
    for (fixed, members) in group_series(varied, x_key, points) {
        let mut series = series::analyse_series(x_key, fixed, &members, &mut analysis.notes);
        if sizes {
            series
                .rules
                .insert(0, format!("{x_key} is a size: its values are read in MiB."));
        }
        analysis.series.push(series);
    }
    analysis
}

/// A density series' analysis; each point's values hold `instances`.
pub fn density(points: &[Point]) -> Analysis {
    let mut notes = Vec::new();
    let mut by_n: Vec<(u32, &Point)> = Vec::new();
    for point in points {
        match point.values.get(DENSITY_KEY).and_then(|v| v.parse().ok()) {
            Some(n) => by_n.push((n, point)),
            None => notes.push(format!(
                "a point without a whole-number `instances` value ({}) is left out",
                describe(&point.values)
            )),
        }
    }
    by_n.sort_by_key(|(n, _)| *n);
    let single = by_n
        .iter()
        .find(|(n, _)| *n == 1)
        .and_then(|(_, p)| tps_median(p));
    if single.is_none() {
        notes.push(
            "the 1-instance step has no complete run: no ideal and no percent of ideal".into(),
        );
    }
    let steps: Vec<DensityStep> = by_n
        .iter()
        .map(|(n, p)| density_steps::density_step(*n, p, single))
        .collect();
    for step in steps.iter().filter(|s| s.total_tps.is_none()) {
        notes.push(format!(
            "{}: no complete run; left out (nothing is extrapolated)",
            density_steps::instances(step.instances)
        ));
    }
    let summary = density_steps::density_summary(&steps, single);
    Analysis {
        series: Vec::new(),
        density: Some(DensityAnalysis {
            single_median: single,
            steps,
            summary,
        }),
        knee: None,
        notes,
        consolidate: None,
    }
}

/// A knee experiment's analysis: the normalized curve and its knee (see [`knee`]).
pub fn knee(request: &KneeRequest, points: &[Point]) -> Analysis {
    knee::analyse(request, points)
}

// ---- medians over complete runs ----

pub(crate) fn is_complete(run: &RunRecord) -> bool {
    run.status == RunStatus::Complete && run.complete
}

fn complete_values(point: &Point, value: impl Fn(&RunRecord) -> Option<f64>) -> Vec<f64> {
    point
        .runs
        .iter()
        .filter(|r| is_complete(r))
        .filter_map(value)
        .collect()
}

/// The point's median tps, computed from its runs so the analysis never depends on
/// `summarize_points` having run first.
fn tps_median(point: &Point) -> Option<f64> {
    median(&complete_values(point, |r| r.tps))
}

/// The middle value; the mean of the two middle values for an even count.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

// ---- sweep ----

fn is_numeric(key: &str, points: &[Point]) -> bool {
    points
        .iter()
        .all(|p| p.values.get(key).and_then(|v| axis_value(v)).is_some())
}

fn not_numeric_note(varied: &[String]) -> String {
    match varied {
        [] => "no varied key: no curve analysis".into(),
        [one] => format!("{one} is not numeric: no curve analysis"),
        _ => format!("{} are not numeric: no curve analysis", varied.join(", ")),
    }
}

/// The points of each combination of the other varied keys, in first-seen order.
fn group_series<'a>(
    varied: &[String],
    x_key: &str,
    points: &'a [Point],
) -> Vec<(BTreeMap<String, String>, Vec<&'a Point>)> {
    let mut groups: Vec<(BTreeMap<String, String>, Vec<&Point>)> = Vec::new();
    for point in points {
        let fixed: BTreeMap<String, String> = varied
            .iter()
            .filter(|k| k.as_str() != x_key)
            .filter_map(|k| Some((k.clone(), point.values.get(k)?.clone())))
            .collect();
        match groups.iter_mut().find(|(f, _)| *f == fixed) {
            Some((_, members)) => members.push(point),
            None => groups.push((fixed, vec![point])),
        }
    }
    groups
}

// ---- words and numbers ----

/// `key=value, key=value`.
fn describe(values: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = values.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(", ")
}

/// `clients` → `client`, for "tps per client".
fn singular(key: &str) -> &str {
    key.strip_suffix('s')
        .filter(|s| !s.is_empty())
        .unwrap_or(key)
}

fn percent(fraction: f64) -> String {
    format!("{}", (fraction * 100.0).round())
}

/// Whole numbers with thousands separators (12,340) from 100 up; one decimal below, where a
/// whole number would hide the value (tpsE of a small run).
fn fmt_tps(value: f64) -> String {
    if value.abs() < 100.0 {
        return format!("{value:.1}");
    }
    let digits = format!("{:.0}", value.abs());
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if value < 0.0 {
        grouped.insert(0, '-');
    }
    grouped
}
