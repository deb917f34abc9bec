//! A density experiment's section of `experiment.html`: total tps against the number of
//! instances beside the ideal of n independent instances, the percent of that ideal, a table
//! per step and the analysis' summary.

use std::fmt::Write as _;

use super::sweep::{chart_data, missing_note, ChartData};
use super::{num, tps};
use crate::report::charts::{self, Series, Stroke, XyLine};
use crate::report::html::markup::{chart_to, esc, note_to, table_to};
use crate::results::experiment::{DensityAnalysis, DensityStep, ExperimentFile, Point};

/// The varied key of a density experiment.
use crate::results::experiment::DENSITY_KEY as KEY;

pub(super) fn section(p: &mut String, file: &ExperimentFile) {
    p.push_str("<h2>Density</h2>\n");
    let mut pts: Vec<(f64, &Point)> = file
        .points
        .iter()
        .filter_map(|pt| {
            let n = pt.values.get(KEY)?.trim().parse::<f64>().ok()?;
            n.is_finite().then_some((n, pt))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some(d) = &file.analysis.density else {
        note_to(
            p,
            "No density analysis in the file yet (it needs a complete 1-instance step; see the notes below).",
        );
        return;
    };
    // The measured line, band and missing steps as for a sweep, with the step's total
    // (the analysis) as the bold line, and the ideal dashed beside it.
    let ChartData {
        band, mut missing, ..
    } = chart_data(&pts, file.repeat);
    for s in d.steps.iter().filter(|s| s.total_tps.is_none()) {
        let n = f64::from(s.instances);
        if !missing.contains(&n) {
            missing.push(n);
        }
    }
    missing.sort_by(f64::total_cmp);
    let totals = [
        step_line(d, "total tps", Stroke::Bold, |s| s.total_tps),
        step_line(d, "ideal (n × single)", Stroke::Dashed, |s| s.ideal),
    ];
    chart_to(
        p,
        charts::xy_band(
            "Total throughput vs instances",
            KEY,
            "tps",
            &totals,
            &band,
            &missing,
        ),
    );
    note_to(
        p,
        "Bold: median total tps of each step; dashed: the ideal, n times the 1-instance median; shaded: min to max over the repeats.",
    );
    missing_note(p, KEY, &missing);
    let xs = || d.steps.iter().map(|s| f64::from(s.instances));
    let (lo, hi) = (
        xs().fold(f64::INFINITY, f64::min),
        xs().fold(f64::NEG_INFINITY, f64::max),
    );
    let mut percent = vec![step_line(d, "% of ideal", Stroke::Bold, |s| {
        s.percent_of_ideal
    })];
    if lo.is_finite() {
        percent.push(XyLine {
            series: Series {
                name: "ideal (100%)".into(),
                points: vec![(lo, 100.0), (hi, 100.0)],
            },
            stroke: Stroke::Dashed,
        });
    }
    chart_to(
        p,
        charts::xy_band(
            "Percent of ideal vs instances",
            KEY,
            "% of ideal",
            &percent,
            &[],
            &missing,
        ),
    );
    steps_to(p, d);
    let _ = writeln!(p, "<p>{}</p>", esc(&d.summary));
}

/// One value of every step against its number of instances; NaN where the step has none.
fn step_line(
    d: &DensityAnalysis,
    name: &str,
    stroke: Stroke,
    value: fn(&DensityStep) -> Option<f64>,
) -> XyLine {
    XyLine {
        series: Series {
            name: name.into(),
            points: d
                .steps
                .iter()
                .map(|s| (f64::from(s.instances), value(s).unwrap_or(f64::NAN)))
                .collect(),
        },
        stroke,
    }
}

fn steps_to(p: &mut String, d: &DensityAnalysis) {
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let rows: Vec<Vec<String>> = d
        .steps
        .iter()
        .map(|s| {
            let each: Vec<String> = s
                .per_instance_tps
                .iter()
                .map(|t| format!("{t:.1}"))
                .collect();
            vec![
                s.instances.to_string(),
                tps(s.total_tps),
                if each.is_empty() {
                    "-".into()
                } else {
                    each.join(", ")
                },
                tps(s.ideal),
                pct(s.percent_of_ideal),
                pct(s.host_cpu_percent),
            ]
        })
        .collect();
    table_to(
        p,
        &[
            "instances",
            "total tps",
            "per-instance tps",
            "ideal tps",
            "% of ideal",
            "host CPU %",
        ],
        &rows,
    );
    if let Some(single) = d.single_median {
        note_to(
            p,
            &format!(
                "Ideal: n × the 1-instance median ({} tps). Host CPU is the mean busy share of all cores.",
                num(single)
            ),
        );
    }
}
