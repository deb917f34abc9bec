//! One curve of a sweep: its peak, the line through its first point, the linear region and
//! saturation, with the rules in words. The thresholds are the parent's
//! [`LINEAR_TOLERANCE`] and [`SATURATION_THRESHOLD`].

use std::collections::BTreeMap;

use super::{describe, fmt_tps, percent, singular, tps_median};
use super::{LINEAR_TOLERANCE, SATURATION_THRESHOLD};
use crate::results::experiment::axis_value;
use crate::results::experiment::{CurvePoint, Point, SeriesAnalysis};

/// The line the linear region is measured against: through the origin and the first point,
/// or through the first two points when the first x is 0 or negative.
struct Line {
    x0: f64,
    y0: f64,
    slope: f64,
    through_origin: bool,
}

impl Line {
    fn fit(curve: &[(f64, f64)]) -> Option<Line> {
        let (x0, y0) = *curve.first()?;
        if x0 > 0.0 {
            return Some(Line {
                x0,
                y0,
                slope: y0 / x0,
                through_origin: true,
            });
        }
        let (x1, y1) = *curve.get(1)?;
        (x1 > x0).then(|| Line {
            x0,
            y0,
            slope: (y1 - y0) / (x1 - x0),
            through_origin: false,
        })
    }

    fn at(&self, x: f64) -> f64 {
        self.y0 + self.slope * (x - self.x0)
    }
}

/// One series' analysis; points without a complete run go into `notes` and stay off the curve.
pub(super) fn analyse_series(
    x_key: &str,
    fixed: BTreeMap<String, String>,
    members: &[&Point],
    notes: &mut Vec<String>,
) -> SeriesAnalysis {
    let label = series_label(x_key, &fixed);
    let mut curve: Vec<(f64, f64)> = Vec::new();
    for point in members {
        let x = point.values.get(x_key).and_then(|v| axis_value(v));
        match (x, tps_median(point)) {
            (Some(x), Some(m)) => curve.push((x, m)),
            (Some(x), None) => notes.push(format!(
                "{label}: {x_key}={x} has no complete run and is left out of the curve \
                 (nothing is extrapolated)"
            )),
            (None, _) => {}
        }
    }
    curve.sort_by(|a, b| a.0.total_cmp(&b.0));
    let peak = peak(&curve);
    let mut series = SeriesAnalysis {
        x: x_key.to_string(),
        fixed,
        curve,
        peak,
        slope: None,
        linear_until: None,
        saturation: None,
        rules: Vec::new(),
        summary: String::new(),
    };
    if series.curve.len() < 2 {
        let n = series.curve.len();
        notes.push(format!(
            "{label}: {n} point(s) with a complete run; a curve needs 2: no slope, linear \
             region or saturation"
        ));
        series.summary = short_summary(&series);
        return series;
    }
    let line = Line::fit(&series.curve);
    series.slope = line.as_ref().map(|l| l.slope);
    series.linear_until = line.as_ref().map(|l| linear_until(&series.curve, l));
    series.saturation = saturation(&series.curve);
    series.rules = rules(x_key, line.as_ref());
    series.summary = summary(&series);
    series
}

/// The highest median; the lowest x on a tie.
fn peak(curve: &[(f64, f64)]) -> Option<CurvePoint> {
    let mut best: Option<(f64, f64)> = None;
    for &(x, y) in curve {
        if best.is_none_or(|(_, b)| y > b) {
            best = Some((x, y));
        }
    }
    best.map(|(x, tps)| CurvePoint { x, tps })
}

/// The last x of the leading run of points within tolerance of the line; the first point is
/// on the line by definition.
fn linear_until(curve: &[(f64, f64)], line: &Line) -> f64 {
    let on_line = |&&(x, y): &&(f64, f64)| {
        let expected = line.at(x);
        (y - expected).abs() <= LINEAR_TOLERANCE * expected.abs()
    };
    let run = 1 + curve[1..].iter().take_while(on_line).count();
    curve[run - 1].0
}

/// The first point that no later point beats by more than the threshold. The last point has
/// no later point to show it, so it is never the saturation point by itself.
fn saturation(curve: &[(f64, f64)]) -> Option<f64> {
    (0..curve.len().saturating_sub(1))
        .find(|&i| {
            let limit = curve[i].1 * (1.0 + SATURATION_THRESHOLD);
            curve[i + 1..].iter().all(|&(_, y)| y <= limit)
        })
        .map(|i| curve[i].0)
}

fn rules(x_key: &str, line: Option<&Line>) -> Vec<String> {
    let tolerance = percent(LINEAR_TOLERANCE);
    let threshold = percent(SATURATION_THRESHOLD);
    let line_rule = match line {
        Some(l) if l.through_origin => format!(
            "The line runs through the origin and the first point: its slope is the first \
             point's median divided by its {x_key}."
        ),
        Some(_) => format!(
            "The first {x_key} is 0 or negative, so the line runs through the first two \
             points instead of the origin."
        ),
        None => "The first two points share their x, so there is no line.".into(),
    };
    vec![
        "Each point is the median tps of its complete runs (the mean of the two middle \
         values for an even count); a point without a complete run is left out and nothing \
         is extrapolated."
            .into(),
        "The peak is the point with the highest median (the lowest x on a tie).".into(),
        line_rule,
        format!(
            "The curve is linear up to the last point of the leading run of points whose \
             median is within {tolerance} % of the line's value at their {x_key}; the first \
             point is linear by definition."
        ),
        format!(
            "The curve saturates at the first point that no later point's median exceeds by \
             more than {threshold} %; there is no saturation when the last step still rises \
             by more than {threshold} %."
        ),
    ]
}

fn summary(series: &SeriesAnalysis) -> String {
    let key = &series.x;
    let mut parts = vec![short_summary(series)];
    if let (Some(until), Some(slope)) = (series.linear_until, series.slope) {
        parts.push(format!(
            "linear (within {} %) up to {key}={until} at {} tps per {}",
            percent(LINEAR_TOLERANCE),
            fmt_tps(slope),
            singular(key)
        ));
    }
    match series.saturation {
        Some(x) => parts.push(format!("saturates at {key}={x}")),
        None => parts.push(format!(
            "no saturation within the series (still +{} % at the last step)",
            last_step_percent(&series.curve)
        )),
    }
    let mut text = parts.join("; ");
    if let (Some(peak), Some(&(x, y))) = (series.peak, series.curve.last()) {
        if y < peak.tps * (1.0 - SATURATION_THRESHOLD) {
            let drop = (1.0 - y / peak.tps) * 100.0;
            text.push_str(&format!(
                "; falls to {} tps at {key}={x} (-{drop:.0} % from the peak)",
                fmt_tps(y)
            ));
        }
    }
    text + "."
}

/// The peak alone, for a series too short for a curve (and as the start of a full summary).
fn short_summary(series: &SeriesAnalysis) -> String {
    match (series.peak, series.curve.len()) {
        (None, _) => "no point with a complete run".into(),
        (Some(p), 1) => format!(
            "{} tps at {}={} (the only point with a complete run)",
            fmt_tps(p.tps),
            series.x,
            p.x
        ),
        (Some(p), _) => format!("peak {} tps at {}={}", fmt_tps(p.tps), series.x, p.x),
    }
}

fn last_step_percent(curve: &[(f64, f64)]) -> String {
    match curve {
        [.., (_, a), (_, b)] if *a > 0.0 => format!("{:.0}", (b / a - 1.0) * 100.0),
        _ => "?".into(),
    }
}

fn series_label(x_key: &str, fixed: &BTreeMap<String, String>) -> String {
    if fixed.is_empty() {
        format!("the {x_key} series")
    } else {
        describe(fixed)
    }
}
