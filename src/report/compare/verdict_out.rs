//! The verdict written out (issue 55), each format a pure function of the judged figures:
//! the terminal's table, JSON, JUnit XML (one test case per figure and side: a regression is a
//! failure, a figure that cannot be judged is skipped) and Markdown for a pull-request comment.

use std::fmt::Write as _;

use serde::Serialize;

use super::figures::Figures;
use super::recoveries::Row;
use super::verdict::{Decision, Judged, CONFIDENCE, MIN_RUNS, RESAMPLES};
use crate::report::html::markup::esc;

/// A ratio and its interval as one line says them: `0.950 [0.941–0.962]`.
fn ratio_text(j: &Judged) -> String {
    let Some(r) = j.ratio else {
        return "-".into();
    };
    match j.interval {
        Some((lo, hi)) => format!("{r:.3} [{lo:.3}–{hi:.3}]"),
        None => format!("{r:.3}"),
    }
}

fn threshold_text(j: &Judged) -> String {
    format!("{:+}%", j.threshold_pct)
}

fn decision_text(j: &Judged) -> String {
    match &j.note {
        Some(n) if j.decision == Decision::NotJudged => format!("not judged: {n}"),
        _ => j.decision.word().to_string(),
    }
}

/// The servers a side's runs measured, as words: `PostgreSQL 15.18 (Debian …)`, or several
/// joined by " and " when its runs measured more than one; None when none was recorded.
fn servers_text(side: &Figures) -> Option<String> {
    let named: Vec<String> = side
        .servers
        .iter()
        .map(|v| format!("PostgreSQL {v}"))
        .collect();
    (!named.is_empty()).then(|| named.join(" and "))
}

/// A side as the verdict names it: its dir, its runs and what its runs measured.
fn side_text(side: &Figures) -> String {
    let server = servers_text(side).map_or(String::new(), |s| format!(", {s}"));
    format!("{}: {} run(s){server}", side.name, side.runs)
}

/// The terminal's table: the sides, then a row per figure and compared side.
pub fn text(sides: &[Figures], judged: &[Judged]) -> String {
    let mut out = format!(
        "verdict against [1] (ratio of medians, {:.0}% bootstrap interval):\n",
        CONFIDENCE * 100.0
    );
    for (i, side) in sides.iter().enumerate() {
        let _ = writeln!(out, "  [{}] {}", i + 1, side_text(side));
    }
    let mut rows = vec![
        ["metric", "side", "ratio [interval]", "threshold", "verdict"]
            .map(String::from)
            .to_vec(),
    ];
    for j in judged {
        rows.push(vec![
            j.metric.clone(),
            format!("[{}]", j.side + 1),
            ratio_text(j),
            threshold_text(j),
            decision_text(j),
        ]);
    }
    out.push_str(&super::runs::aligned(&rows));
    out.push_str(&summary_line(sides, judged));
    out.push('\n');
    out
}

/// One line: how many figures regressed, improved, stayed within noise.
pub fn summary_line(sides: &[Figures], judged: &[Judged]) -> String {
    let count = |d: Decision| judged.iter().filter(|j| j.decision == d).count();
    let runs: Vec<String> = sides.iter().map(|s| s.runs.to_string()).collect();
    let mut line = format!(
        "{} regressed, {} improved, {} within noise, {} not judged (runs a side: {})",
        count(Decision::Regressed),
        count(Decision::Improved),
        count(Decision::WithinNoise),
        count(Decision::NotJudged),
        runs.join(", ")
    );
    if sides.iter().any(|s| s.runs < MIN_RUNS) {
        let _ = write!(
            line,
            "; a verdict needs {MIN_RUNS} runs a side (a dir of results dirs)"
        );
    }
    line
}

#[derive(Serialize)]
struct JsonOut<'a> {
    sides: Vec<JsonSide<'a>>,
    method: &'static str,
    confidence: f64,
    resamples: usize,
    min_runs: usize,
    regressed: bool,
    metrics: Vec<JsonMetric<'a>>,
    /// Event by event, when the runs played events (`recoveries::Row`).
    #[serde(skip_serializing_if = "no_rows")]
    recoveries: &'a [Row],
}

fn no_rows(rows: &&[Row]) -> bool {
    rows.is_empty()
}

#[derive(Serialize)]
struct JsonSide<'a> {
    name: &'a str,
    runs: usize,
    /// The servers' versions its runs measured (`runtime.toml`'s `server_version`).
    servers: &'a [String],
}

#[derive(Serialize)]
struct JsonMetric<'a> {
    metric: &'a str,
    unit: &'a str,
    side: usize,
    baseline_runs: usize,
    runs: usize,
    baseline_median: f64,
    median: f64,
    ratio: Option<f64>,
    interval: Option<[f64; 2]>,
    threshold_pct: f64,
    verdict: &'static str,
    note: Option<&'a str>,
}

/// The verdict as JSON: the sides, the method, and a record per figure and side (sides
/// numbered from 0, the baseline); then the recoveries event by event, when there are any
/// (each row's `sides` in the same order, `null` where a side did not play the event so).
pub fn json(
    sides: &[Figures],
    judged: &[Judged],
    recoveries: &[Row],
) -> Result<String, serde_json::Error> {
    let out = JsonOut {
        sides: sides
            .iter()
            .map(|s| JsonSide {
                name: &s.name,
                runs: s.runs,
                servers: &s.servers,
            })
            .collect(),
        method: "bootstrap percentile interval of the ratio of medians",
        confidence: CONFIDENCE,
        resamples: RESAMPLES,
        min_runs: MIN_RUNS,
        regressed: super::verdict::regressed(judged),
        metrics: judged
            .iter()
            .map(|j| JsonMetric {
                metric: &j.metric,
                unit: j.unit,
                side: j.side,
                baseline_runs: j.baseline_runs,
                runs: j.runs,
                baseline_median: j.baseline_median,
                median: j.median,
                ratio: j.ratio,
                interval: j.interval.map(|(lo, hi)| [lo, hi]),
                threshold_pct: j.threshold_pct,
                verdict: j.decision.word(),
                note: j.note.as_deref(),
            })
            .collect(),
        recoveries,
    };
    let mut text = serde_json::to_string_pretty(&out)?;
    text.push('\n');
    Ok(text)
}

/// The verdict as a JUnit XML report: a test suite per compared side, a test case per figure.
pub fn junit(sides: &[Figures], judged: &[Judged]) -> String {
    let failures = judged
        .iter()
        .filter(|j| j.decision == Decision::Regressed)
        .count();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tidebench compare\" tests=\"{}\" failures=\"{failures}\">\n",
        judged.len()
    );
    for (i, side) in sides.iter().enumerate().skip(1) {
        let cases: Vec<&Judged> = judged.iter().filter(|j| j.side == i).collect();
        let count = |d: Decision| cases.iter().filter(|j| j.decision == d).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{} against {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">",
            esc(&side.name),
            esc(&sides[0].name),
            cases.len(),
            count(Decision::Regressed),
            count(Decision::NotJudged)
        );
        // The builds judged, for a CI page that shows a suite's properties.
        let props: Vec<(&str, String)> = [("baseline", &sides[0]), ("side", side)]
            .into_iter()
            .filter_map(|(role, s)| Some((role, servers_text(s)?)))
            .collect();
        if !props.is_empty() {
            out.push_str("    <properties>\n");
            for (role, server) in props {
                let _ = writeln!(
                    out,
                    "      <property name=\"{role}_server\" value=\"{}\"/>",
                    esc(&server)
                );
            }
            out.push_str("    </properties>\n");
        }
        for j in cases {
            let said = format!(
                "{}: ratio {}, threshold {}: {}",
                j.metric,
                ratio_text(j),
                threshold_text(j),
                decision_text(j)
            );
            let _ = write!(
                out,
                "    <testcase classname=\"tidebench.compare\" name=\"{}\">",
                esc(&j.metric)
            );
            match j.decision {
                Decision::Regressed => {
                    let _ = write!(out, "<failure message=\"{}\"/>", esc(&said));
                }
                Decision::NotJudged => {
                    let _ = write!(out, "<skipped message=\"{}\"/>", esc(&said));
                }
                _ => {}
            }
            let _ = writeln!(out, "<system-out>{}</system-out></testcase>", esc(&said));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// The verdict as Markdown, for a pull-request comment: a line of totals, then the table.
pub fn markdown(sides: &[Figures], judged: &[Judged]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("### tidebench compare\n\n");
    for (i, s) in sides.iter().enumerate() {
        let role = if i == 0 { " (baseline)" } else { "" };
        let server = servers_text(s).map_or(String::new(), |v| format!(", {v}"));
        let _ = writeln!(
            out,
            "{}. `{}`: {} run(s){server}{role}",
            i + 1,
            s.name,
            s.runs
        );
    }
    let _ = writeln!(out, "\n**{}**\n", summary_line(sides, judged));
    out.push_str(
        "| metric | side | baseline | median | ratio [95% interval] | threshold | verdict |\n",
    );
    out.push_str("|---|---|---:|---:|---|---:|---|\n");
    for j in judged {
        let verdict = match j.decision {
            Decision::Regressed | Decision::Improved => format!("**{}**", decision_text(j)),
            _ => decision_text(j),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.3} | {} | {} | {} |",
            cell(&j.metric),
            j.side + 1,
            j.baseline_median,
            j.median,
            ratio_text(j),
            threshold_text(j),
            cell(&verdict)
        );
    }
    out
}

/// The verdict as an HTML table, for `compare --html`'s page.
pub fn html(sides: &[Figures], judged: &[Judged]) -> String {
    let named: Vec<String> = sides
        .iter()
        .enumerate()
        .map(|(i, s)| format!("<li>[{}] {}</li>", i + 1, esc(&side_text(s))))
        .collect();
    let mut p = format!(
        "<h2>Verdict against [1]</h2>\n<ul>{}</ul>\n<p>{}</p>\n<table><tr><th>metric</th><th>side</th>\
         <th>ratio [{:.0}% interval]</th><th>threshold</th><th>verdict</th></tr>\n",
        named.concat(),
        esc(&summary_line(sides, judged)),
        CONFIDENCE * 100.0
    );
    for j in judged {
        let _ = writeln!(
            p,
            "<tr><td>{}</td><td>[{}]</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&j.metric),
            j.side + 1,
            esc(&ratio_text(j)),
            esc(&threshold_text(j)),
            esc(&decision_text(j))
        );
    }
    p.push_str("</table>\n");
    p
}
