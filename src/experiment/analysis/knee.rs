//! The knee of a working-set curve ("Memory Working Set Sizes", Figures 7-10):
//! throughput against VM memory (shared_buffers kept) or against shared_buffers (memory −
//! shared_buffers kept), normalized to the best point, and the x where adding memory stops
//! paying, read with Kneedle (Satopää, Albrecht, Irwin, Raghavan: "Finding a 'Kneedle' in a
//! Haystack", 2011) as the working-set size.
//!
//! Kneedle scales x and y to [0, 1] and takes the point where the scaled curve stands highest
//! above the diagonal (max y_n − x_n). It assumes an increasing concave curve, so:
//! - the curve is read through its running maximum: a dip (the study's near 2 GB, put down to
//!   double buffering) cannot be the knee, and is named instead;
//! - a curve whose running maximum rises by less than [`FLAT_TOLERANCE`] has no knee: it is
//!   flat (or falls), and the working set fits in the smallest size (the study's Figure 9);
//! - a curve that never stands [`MIN_BEND`] above the diagonal has no knee: it still rises
//!   (about linearly or faster), and the working set is beyond the largest size;
//! - fewer than [`MIN_POINTS`] points with a complete run have no knee.

use super::{complete_values, fmt_tps, median};
use crate::results::experiment::{
    axis_value, Analysis, KneeAnalysis, KneeMode, KneePoint, KneeRequest, Point, KNEE_MEMORY_KEY,
    KNEE_SHARED_BUFFERS_KEY,
};

/// A knee needs a bend, and a bend needs three points.
pub const MIN_POINTS: usize = 3;
/// A running maximum that rises by less than this fraction of the best is flat.
pub const FLAT_TOLERANCE: f64 = 0.05;
/// The scaled curve must stand at least this far above the diagonal at its knee.
pub const MIN_BEND: f64 = 0.1;

/// Why a curve has no knee.
#[derive(Debug, Clone, PartialEq)]
pub enum NoKnee {
    /// Fewer than [`MIN_POINTS`] points.
    TooFewPoints(usize),
    /// Every point within [`FLAT_TOLERANCE`] of the best; `spread` = (max − min) / max.
    Flat { spread: f64 },
    /// The best point is (within tolerance) the first and later points fall; `drop` is the
    /// largest fall below the best, as a fraction of it.
    Falling { drop: f64 },
    /// The scaled curve stands at most `bend` above the diagonal: no bend in the range.
    NoBend { bend: f64 },
}

/// The x of the knee of `curve` ((x, y) in increasing x, y ≥ 0), or why there is none.
pub fn kneedle(curve: &[(f64, f64)]) -> Result<f64, NoKnee> {
    if curve.len() < MIN_POINTS {
        return Err(NoKnee::TooFewPoints(curve.len()));
    }
    let envelope = running_max(curve);
    let best = envelope.last().map_or(0.0, |p| p.1);
    let first = envelope[0].1;
    let lowest = curve.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    if best <= 0.0 {
        return Err(NoKnee::Flat { spread: 0.0 });
    }
    if best - first < FLAT_TOLERANCE * best {
        let drop = (best - lowest) / best;
        return Err(if drop < FLAT_TOLERANCE {
            NoKnee::Flat { spread: drop }
        } else {
            NoKnee::Falling { drop }
        });
    }
    let (x0, x1) = (curve[0].0, curve[curve.len() - 1].0);
    if x1 <= x0 {
        return Err(NoKnee::TooFewPoints(1));
    }
    let mut knee = (curve[0].0, f64::NEG_INFINITY);
    for &(x, y) in &envelope {
        let distance = (y - first) / (best - first) - (x - x0) / (x1 - x0);
        // Strictly greater: on a tie the smaller x, the smaller working set.
        if distance > knee.1 {
            knee = (x, distance);
        }
    }
    if knee.1 < MIN_BEND {
        return Err(NoKnee::NoBend {
            bend: knee.1.max(0.0),
        });
    }
    Ok(knee.0)
}

/// y replaced by the highest y at or before each x.
fn running_max(curve: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut high = f64::NEG_INFINITY;
    curve
        .iter()
        .map(|&(x, y)| {
            high = high.max(y);
            (x, high)
        })
        .collect()
}

/// The points that fall more than [`FLAT_TOLERANCE`] below an earlier point: (x, fall as a
/// fraction of that earlier high).
pub fn dips(curve: &[(f64, f64)]) -> Vec<(f64, f64)> {
    running_max(curve)
        .iter()
        .zip(curve)
        .filter(|((_, high), (_, y))| *high > 0.0 && *y < high * (1.0 - FLAT_TOLERANCE))
        .map(|((x, high), (_, y))| (*x, (high - y) / high))
        .collect()
}

/// A knee experiment's analysis over its points.
pub fn analyse(request: &KneeRequest, points: &[Point]) -> Analysis {
    let mut notes = Vec::new();
    let (x_key, what) = axis(request.mode);
    let headline = headline_label(points);
    let metric = headline.clone().unwrap_or_else(|| "tps".into());
    let mut curve: Vec<(f64, f64)> = Vec::new();
    for point in points {
        let Some(x) = point.values.get(x_key).and_then(|v| axis_value(v)) else {
            notes.push(format!(
                "a point without a size for {x_key} ({}) is left out",
                point.label(&[KNEE_MEMORY_KEY.to_string()])
            ));
            continue;
        };
        let value = match headline {
            Some(_) => median(&complete_values(point, |r| {
                r.headline.as_ref().map(|h| h.value)
            })),
            None => median(&complete_values(point, |r| r.tps)),
        };
        match value {
            Some(v) => curve.push((x, v)),
            None => notes.push(format!(
                "{what} {} MiB has no complete run and is left out of the curve (nothing is extrapolated)",
                mib(x)
            )),
        }
    }
    curve.sort_by(|a, b| a.0.total_cmp(&b.0));
    let best = curve
        .iter()
        .copied()
        .fold(None::<(f64, f64)>, |b, p| match b {
            Some(b) if b.1 >= p.1 => Some(b),
            _ => Some(p),
        });
    let scale = best.map_or(0.0, |b| b.1);
    let point = |(x, value): (f64, f64)| KneePoint {
        x_mib: x,
        value,
        normalized: if scale > 0.0 { value / scale } else { 0.0 },
    };
    let found = kneedle(&curve);
    // A falling curve's reason already says how much larger sizes lose.
    let falling = matches!(found, Err(NoKnee::Falling { .. }));
    for (x, fall) in dips(&curve).into_iter().filter(|_| !falling) {
        notes.push(format!(
            "a dip at {what} {} MiB: {:.0} % below a smaller size's {metric} (the study saw one near 2 GB and put it down to double buffering); the knee is read on the running maximum",
            mib(x),
            fall * 100.0
        ));
    }
    let (lo, hi) = (curve.first().map(|p| p.0), curve.last().map(|p| p.0));
    let knee = KneeAnalysis {
        mode: request.mode,
        kept: request.kept.clone(),
        x: x_key.to_string(),
        metric: metric.clone(),
        curve: curve.iter().copied().map(point).collect(),
        best: best.map(point),
        knee_mib: found.as_ref().ok().copied(),
        no_knee: found.as_ref().err().map(|e| reason(e, what, lo, hi)),
        method: method(&metric),
        summary: String::new(),
    };
    let summary = summary(request, &knee, found.as_ref().err());
    Analysis {
        knee: Some(KneeAnalysis { summary, ..knee }),
        notes,
        ..Analysis::default()
    }
}

/// The x key of a mode and its name in words.
fn axis(mode: KneeMode) -> (&'static str, &'static str) {
    match mode {
        KneeMode::KeepSharedBuffers => (KNEE_MEMORY_KEY, "VM memory"),
        KneeMode::KeepDifference => (KNEE_SHARED_BUFFERS_KEY, "shared_buffers"),
    }
}

/// The workload's headline label when every complete run carries one (NOTPM for tpcc).
fn headline_label(points: &[Point]) -> Option<String> {
    let runs: Vec<_> = points
        .iter()
        .flat_map(|p| &p.runs)
        .filter(|r| super::is_complete(r))
        .collect();
    let first = runs.first()?.headline.as_ref()?.label.clone();
    runs.iter()
        .all(|r| r.headline.as_ref().is_some_and(|h| h.label == first))
        .then_some(first)
}

fn mib(x: f64) -> String {
    format!("{}", x.round())
}

fn reason(e: &NoKnee, what: &str, lo: Option<f64>, hi: Option<f64>) -> String {
    let lo = lo.map_or("?".into(), mib);
    let hi = hi.map_or("?".into(), mib);
    match e {
        NoKnee::TooFewPoints(n) => format!(
            "{n} point(s) with a complete run; a knee needs {MIN_POINTS}"
        ),
        NoKnee::Flat { .. } | NoKnee::Falling { .. } => format!(
            "{}: the working set fits in the smallest {what}, {lo} MiB{}",
            shape(e, what),
            if what == "VM memory" {
                " (as the study read its Figure 9)"
            } else {
                ""
            }
        ),
        NoKnee::NoBend { bend } => format!(
            "the curve still rises across the series without bending (it stands only {bend:.2} above the diagonal, a knee needs {MIN_BEND}): the working set is above the largest {what}, {hi} MiB; extend --memory upward"
        ),
    }
}

/// A flat or falling curve in words.
fn shape(e: &NoKnee, what: &str) -> String {
    match e {
        NoKnee::Falling { drop } => format!(
            "throughput does not rise with {what} (the best is at the smallest size; larger sizes lose up to {:.0} %)",
            drop * 100.0
        ),
        NoKnee::Flat { spread } => format!(
            "the curve is flat (within {:.0} % of the best everywhere)",
            (spread * 100.0).max(0.0)
        ),
        _ => String::new(),
    }
}

fn method(metric: &str) -> Vec<String> {
    vec![
        format!(
            "Each point is the median {metric} of its complete runs (the workload's headline when it has one, else tps); a point without a complete run is left out and nothing is extrapolated. Values are normalized to the best point (1.0)."
        ),
        "Kneedle (Satopää et al. 2011): x and y are scaled to [0, 1] between the first and last x and the lowest and highest y; the knee is the point where the scaled curve stands highest above the diagonal (max y_n − x_n), the smaller x on a tie. For an increasing concave curve that is where more memory stops paying: the working-set size.".into(),
        format!(
            "A curve that is not monotone is read through its running maximum, so a dip (a point more than {:.0} % below an earlier one, like the study's near 2 GB) cannot be the knee; dips are named in the notes.",
            FLAT_TOLERANCE * 100.0
        ),
        format!(
            "No knee when fewer than {MIN_POINTS} points have a complete run; when the running maximum rises by less than {:.0} % of the best (flat or falling: the working set fits in the smallest size); or when the scaled curve never stands {MIN_BEND} above the diagonal (still rising: the working set is beyond the largest size).",
            FLAT_TOLERANCE * 100.0
        ),
    ]
}

fn summary(request: &KneeRequest, k: &KneeAnalysis, no_knee: Option<&NoKnee>) -> String {
    let what = axis(request.mode).1;
    let kept = match request.mode {
        KneeMode::KeepSharedBuffers => format!("shared_buffers kept at {}", request.kept),
        KneeMode::KeepDifference => {
            format!("VM memory − shared_buffers kept at {}", request.kept)
        }
    };
    let set = match request.mode {
        KneeMode::KeepSharedBuffers => "VM memory working set",
        KneeMode::KeepDifference => "shared-buffers working set",
    };
    let best = k.best.map(|b| {
        format!(
            "best {} {} at {} MiB",
            fmt_tps(b.value),
            k.metric,
            mib(b.x_mib)
        )
    });
    let mut text = match (k.knee_mib, no_knee) {
        (Some(x), _) => {
            let at = k.curve.iter().find(|p| p.x_mib == x);
            let mut t = format!("{set} ≈ {} MiB ({kept})", mib(x));
            if request.mode == KneeMode::KeepDifference {
                if let Ok(d) = crate::config::size::parse_size(&request.kept) {
                    let vm = x + d as f64 / f64::from(1u32 << 20);
                    t.push_str(&format!(", so the VM needs about {} MiB", mib(vm)));
                }
            }
            if let Some(p) = at {
                t.push_str(&format!(
                    ": {} reaches {:.0} % of the best there",
                    k.metric,
                    p.normalized * 100.0
                ));
            }
            t
        }
        (None, Some(e @ (NoKnee::Flat { .. } | NoKnee::Falling { .. }))) => format!(
            "{set} ≤ {} MiB, the smallest size ({kept}): no knee, {}",
            k.curve.first().map_or("?".into(), |p| mib(p.x_mib)),
            shape(e, what)
        ),
        (None, _) => format!(
            "no knee ({kept}): {}",
            k.no_knee.as_deref().unwrap_or("no point")
        ),
    };
    if let Some(b) = best {
        text.push_str("; ");
        text.push_str(&b);
    }
    text + "."
}

#[cfg(test)]
mod tests;
