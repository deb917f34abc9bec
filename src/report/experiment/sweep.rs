//! A sweep's sections of `experiment.html`: one per analysed series (tps against the numeric
//! key, the other keys fixed), each a chart of every repeat, the median and the min–max band,
//! then the analysis the file holds, in words and numbers. Points without a complete run are
//! marked and listed, never drawn as a value.

use std::fmt::Write as _;

use super::{complete_tps, num, tps};
use crate::report::charts::{self, Series, Stroke, XyLine};
use crate::report::html::markup::{chart_to, esc, note_to, table_to};
use crate::results::experiment::{ExperimentFile, Point, SeriesAnalysis};

/// One section per series of the analysis; a note when there is none.
pub(super) fn sections(p: &mut String, file: &ExperimentFile) {
    if file.analysis.series.is_empty() {
        p.push_str("<h2>Series</h2>\n");
        note_to(
            p,
            "No series analysis in the file yet (it needs a numeric varied key and a complete run; see the notes below).",
        );
        return;
    }
    for s in &file.analysis.series {
        section(p, file, s);
    }
}

/// "tps vs clients (scale=10, mode=simple)".
fn title(s: &SeriesAnalysis) -> String {
    let mut t = format!("tps vs {}", s.x);
    if !s.fixed.is_empty() {
        let fixed: Vec<String> = s.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = write!(t, " ({})", fixed.join(", "));
    }
    t
}

/// The series' points with their x, in x order: those whose other keys hold the fixed values
/// and whose x value is a number.
fn points<'a>(file: &'a ExperimentFile, s: &SeriesAnalysis) -> Vec<(f64, &'a Point)> {
    let mut out: Vec<(f64, &Point)> = file
        .points
        .iter()
        .filter(|pt| s.fixed.iter().all(|(k, v)| pt.values.get(k) == Some(v)))
        .filter_map(|pt| {
            let x = crate::results::experiment::axis_value(pt.values.get(&s.x)?)?;
            Some((x, pt))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// What a chart of points draws.
pub(super) struct ChartData {
    /// The median first, then one per repeat when there are several.
    pub lines: Vec<XyLine>,
    /// (x, min, max) over the complete runs, when there are repeats.
    pub band: Vec<(f64, f64, f64)>,
    /// The x of the points with no complete run.
    pub missing: Vec<f64>,
}

pub(super) fn chart_data(pts: &[(f64, &Point)], repeat: u32) -> ChartData {
    let nan = f64::NAN;
    let mut lines = vec![XyLine {
        series: Series {
            name: "median".into(),
            points: pts
                .iter()
                .map(|(x, pt)| (*x, pt.median.unwrap_or(nan)))
                .collect(),
        },
        stroke: Stroke::Bold,
    }];
    if repeat > 1 {
        for r in 1..=repeat {
            lines.push(XyLine {
                series: Series {
                    name: format!("repeat {r}"),
                    points: pts
                        .iter()
                        .map(|(x, pt)| {
                            let y = complete_tps(pt).find(|(rr, _)| *rr == r).map(|t| t.1);
                            (*x, y.unwrap_or(nan))
                        })
                        .collect(),
                },
                stroke: Stroke::Thin,
            });
        }
    }
    let band = if repeat > 1 {
        pts.iter()
            .map(|(x, pt)| (*x, pt.min.unwrap_or(nan), pt.max.unwrap_or(nan)))
            .collect()
    } else {
        Vec::new()
    };
    let missing = pts
        .iter()
        .filter(|(_, pt)| complete_tps(pt).next().is_none())
        .map(|(x, _)| *x)
        .collect();
    ChartData {
        lines,
        band,
        missing,
    }
}

/// The note under a chart naming the points with no complete run.
pub(super) fn missing_note(p: &mut String, key: &str, missing: &[f64]) {
    if missing.is_empty() {
        return;
    }
    let xs: Vec<String> = missing.iter().map(|x| num(*x)).collect();
    let _ = writeln!(
        p,
        "<p class=\"flag\">No complete run at {} = {} (marked × at the bottom of the chart; not drawn as a value).</p>",
        esc(key),
        esc(&xs.join(", "))
    );
}

fn section(p: &mut String, file: &ExperimentFile, s: &SeriesAnalysis) {
    let title = title(s);
    let _ = writeln!(p, "<h2>{}</h2>", esc(&title));
    let pts = points(file, s);
    let ChartData {
        lines,
        band,
        missing,
    } = chart_data(&pts, file.repeat);
    chart_to(
        p,
        charts::xy_band(&title, &s.x, "tps", &lines, &band, &missing),
    );
    note_to(
        p,
        if file.repeat > 1 {
            "Bold: the median over the complete runs; thin: each repeat; shaded: min to max."
        } else {
            "The tps of each point's run."
        },
    );
    missing_note(p, &s.x, &missing);
    let _ = writeln!(p, "<p>{}</p>", esc(&s.summary));
    if !s.rules.is_empty() {
        p.push_str("<ul>");
        for r in &s.rules {
            let _ = write!(p, "<li>{}</li>", esc(r));
        }
        p.push_str("</ul>\n");
    }
    let at = |x: f64| format!("{} = {}", s.x, num(x));
    let rows = vec![
        vec![
            "peak".into(),
            s.peak.map_or("-".into(), |c| {
                format!("{} tps at {}", tps(Some(c.tps)), at(c.x))
            }),
        ],
        vec![
            "slope".into(),
            s.slope
                .map_or("-".into(), |v| format!("{v:.2} tps per unit of {}", s.x)),
        ],
        vec!["linear until".into(), s.linear_until.map_or("-".into(), at)],
        vec![
            "saturation".into(),
            s.saturation
                .map_or("no saturation within the series".into(), at),
        ],
    ];
    table_to(p, &["", ""], &rows);
}
