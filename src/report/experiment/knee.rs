//! A knee experiment's section of `experiment.html`, as the study's Figures 7-10: throughput
//! normalized to the best point against VM memory (shared_buffers kept) or shared_buffers
//! (memory − shared_buffers kept), the knee marked, the working set in words, one row per
//! point with both sizes, and the method.

use std::fmt::Write as _;

use super::sweep::missing_note;
use super::tps;
use crate::report::charts::{self, Series, Stroke, XyLine};
use crate::report::html::markup::{chart_to, esc, note_to, table_to};
use crate::results::experiment::{
    axis_value, ExperimentFile, KneeAnalysis, KneeMode, KNEE_MEMORY_KEY, KNEE_SHARED_BUFFERS_KEY,
};

pub(super) fn section(p: &mut String, file: &ExperimentFile) {
    p.push_str("<h2>Working set</h2>\n");
    let Some(k) = &file.analysis.knee else {
        note_to(
            p,
            "No knee analysis in the file yet (it needs a complete run; see the notes below).",
        );
        return;
    };
    let _ = writeln!(p, "<p><strong>{}</strong></p>", esc(&k.summary));
    let (x_label, kept) = match k.mode {
        KneeMode::KeepSharedBuffers => (
            "VM memory (MiB)",
            format!("shared_buffers kept at {}", k.kept),
        ),
        KneeMode::KeepDifference => (
            "shared_buffers (MiB)",
            format!("VM memory − shared_buffers kept at {}", k.kept),
        ),
    };
    let mut lines = vec![XyLine {
        series: Series {
            name: format!("normalized {}", k.metric),
            points: k.curve.iter().map(|c| (c.x_mib, c.normalized)).collect(),
        },
        stroke: Stroke::Bold,
    }];
    if let Some(x) = k.knee_mib {
        lines.push(XyLine {
            series: Series {
                name: format!("knee: {x:.0} MiB"),
                points: vec![(x, 0.0), (x, 1.0)],
            },
            stroke: Stroke::Dashed,
        });
    }
    let missing = missing_xs(file, k);
    let title = format!("Normalized {} vs {x_label} ({kept})", k.metric);
    chart_to(
        p,
        charts::xy_band(
            &title,
            x_label,
            &format!("normalized {}", k.metric),
            &lines,
            &[],
            &missing,
        ),
    );
    note_to(
        p,
        "Bold: each point's median over its complete runs, divided by the best point's (1.0); dashed: the knee, read as the working-set size.",
    );
    missing_note(p, &k.x, &missing);
    if let Some(why) = &k.no_knee {
        let _ = writeln!(p, "<p class=\"flag\">No knee: {}</p>", esc(why));
    }
    points_to(p, file, k);
    p.push_str("<h3>Method</h3>\n<ul>");
    for m in &k.method {
        let _ = write!(p, "<li>{}</li>", esc(m));
    }
    p.push_str("</ul>\n");
}

/// The x (MiB) of the points with no value on the curve.
fn missing_xs(file: &ExperimentFile, k: &KneeAnalysis) -> Vec<f64> {
    let mut out: Vec<f64> = file
        .points
        .iter()
        .filter_map(|pt| axis_value(pt.values.get(&k.x)?))
        .filter(|x| !k.curve.iter().any(|c| c.x_mib == *x))
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

/// One row per point in x order: both sizes, the value, normalized, and which is the best
/// and the knee.
fn points_to(p: &mut String, file: &ExperimentFile, k: &KneeAnalysis) {
    let mut pts: Vec<(f64, &crate::results::experiment::Point)> = file
        .points
        .iter()
        .filter_map(|pt| Some((axis_value(pt.values.get(&k.x)?)?, pt)))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let value = |key: &str, pt: &crate::results::experiment::Point| {
        pt.values.get(key).cloned().unwrap_or_else(|| "-".into())
    };
    let rows: Vec<Vec<String>> = pts
        .iter()
        .map(|(x, pt)| {
            let on = k.curve.iter().find(|c| c.x_mib == *x);
            let mut marks = Vec::new();
            if k.best.is_some_and(|b| b.x_mib == *x) {
                marks.push("best");
            }
            if k.knee_mib == Some(*x) {
                marks.push("knee");
            }
            vec![
                value(KNEE_MEMORY_KEY, pt),
                value(KNEE_SHARED_BUFFERS_KEY, pt),
                on.map_or("no complete run".into(), |c| tps(Some(c.value))),
                on.map_or("-".into(), |c| format!("{:.3}", c.normalized)),
                marks.join(", "),
            ]
        })
        .collect();
    let metric = format!("median {}", k.metric);
    table_to(
        p,
        &["VM memory", "shared_buffers", &metric, "normalized", ""],
        &rows,
    );
}

#[cfg(test)]
mod tests;
