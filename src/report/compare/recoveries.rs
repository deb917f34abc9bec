//! The recoveries of compared runs, event by event (issue 53): runs that played the same
//! `[[event]]`s side by side, per event and scope (all transactions, then each group), with
//! the time to the first commit after it, the time back to 90 % of the rate before, the
//! transactions failed and the time its targets were down, each from `summary.json`'s
//! `events` (see `results::disruptions`). A side of several runs shows the median of each
//! figure over the runs that have it, and how many runs did not recover.
//!
//! Events are matched by their place in the run file, time, action and target (their options
//! may differ: a restart after 2 s against one after 4 s is a comparison worth making; the
//! baseline's description names the row). An event a side's run did not play so is left out of
//! that side's cell and said so. Nothing here when the baseline played no events.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::runs::{aligned, runs_in};
use crate::report::html::markup::esc;
use crate::results::disruptions::{EventAccount, Recovery};
use crate::results::read::ResultsDir;

/// One side's figures for one event and scope, over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The runs that played the event the same and measured this scope.
    pub runs: usize,
    /// Medians over those runs; a time only over the runs that reached it.
    pub first_commit_s: Option<f64>,
    pub recovered_s: Option<f64>,
    /// Runs with no recovery by their end.
    pub not_recovered: usize,
    pub failed: f64,
    pub down_s: Option<f64>,
}

/// One event and scope, every side's cell (`None`: that side did not play the event so).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// From 1, in the run file's time order.
    pub event: usize,
    /// "fail a, restarted after 2s at 2.0 s".
    pub what: String,
    pub scope: String,
    pub sides: Vec<Option<Cell>>,
}

/// The events of every run of a side.
fn side_events(dir: &Path) -> Vec<Vec<EventAccount>> {
    runs_in(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|r| ResultsDir::open(r).ok())
        .map(|r| r.into_summary().events)
        .collect()
}

/// Reads every side and lines up their recoveries with the baseline's events.
pub fn read(dirs: &[PathBuf]) -> Vec<Row> {
    let sides: Vec<Vec<Vec<EventAccount>>> = dirs.iter().map(|d| side_events(d)).collect();
    rows(&sides)
}

fn same(a: &EventAccount, b: &EventAccount) -> bool {
    a.action == b.action && a.target == b.target && (a.at_s - b.at_s).abs() < 1e-6
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn cell(found: &[&Recovery]) -> Option<Cell> {
    if found.is_empty() {
        return None;
    }
    let pick =
        |f: fn(&Recovery) -> Option<f64>| median(found.iter().filter_map(|r| f(r)).collect());
    Some(Cell {
        runs: found.len(),
        first_commit_s: pick(|r| r.first_commit_s),
        recovered_s: pick(|r| r.recovered_s),
        not_recovered: found.iter().filter(|r| r.recovered_s.is_none()).count(),
        failed: median(found.iter().map(|r| r.failed as f64).collect()).unwrap_or(0.0),
        down_s: pick(|r| r.down_s),
    })
}

/// `sides[side][run]` are a run's events; the baseline's first run names the rows.
fn rows(sides: &[Vec<Vec<EventAccount>>]) -> Vec<Row> {
    let Some(base) = sides.first().and_then(|runs| runs.first()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, e) in base.iter().enumerate() {
        let scopes = e.recovery.iter().map(|r| r.scope.as_str());
        for scope in scopes {
            let cells = sides
                .iter()
                .map(|runs| {
                    let found: Vec<&Recovery> = runs
                        .iter()
                        .filter_map(|events| events.get(k).filter(|o| same(o, e)))
                        .filter_map(|o| o.recovery.iter().find(|r| r.scope == scope))
                        .collect();
                    cell(&found)
                })
                .collect();
            out.push(Row {
                event: k + 1,
                what: format!("{} at {:.1} s", e.description, e.at_s),
                scope: scope.to_string(),
                sides: cells,
            });
        }
    }
    out
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

/// A cell's four figures as text: first commit, back to 90 %, failed, down.
fn texts(c: &Option<Cell>) -> [String; 4] {
    let Some(c) = c else {
        return [
            "not played the same".into(),
            "-".into(),
            "-".into(),
            "-".into(),
        ];
    };
    let back = match (c.recovered_s, c.not_recovered) {
        (_, n) if n == c.runs => "not recovered".to_string(),
        (r, 0) => secs(r),
        (r, n) => format!("{} ({n} of {} not)", secs(r), c.runs),
    };
    let failed = if c.failed == c.failed.trunc() {
        format!("{:.0}", c.failed)
    } else {
        format!("{:.1}", c.failed)
    };
    [secs(c.first_commit_s), back, failed, secs(c.down_s)]
}

const HEAD: [&str; 7] = [
    "event",
    "scope",
    "side",
    "first commit (s)",
    "back to 90% (s)",
    "failed",
    "down (s)",
];

/// A line per event, scope and side, as text cells.
fn lines(rows: &[Row]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for r in rows {
        for (i, c) in r.sides.iter().enumerate() {
            let mut line = vec![
                if i == 0 {
                    format!("{} {}", r.event, r.what)
                } else {
                    String::new()
                },
                r.scope.clone(),
                format!("[{}]", i + 1),
            ];
            line.extend(texts(c));
            out.push(line);
        }
    }
    out
}

const NOTE: &str = "Times are seconds from the event's first step; a side of several runs shows \
    each figure's median over its runs.";

/// The terminal table; empty when the baseline played no events.
pub fn table(rows: &[Row]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut all = vec![HEAD.map(String::from).to_vec()];
    all.extend(lines(rows));
    format!("recoveries, event by event:\n{}{NOTE}\n", aligned(&all))
}

/// The same as Markdown, for a pull-request comment.
pub fn markdown(rows: &[Row]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!(
        "\n#### Recoveries, event by event\n\n| {} |\n",
        HEAD.join(" | ")
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|\n");
    for l in lines(rows) {
        let l: Vec<String> = l.iter().map(|s| cell(s)).collect();
        let _ = writeln!(out, "| {} |", l.join(" | "));
    }
    let _ = writeln!(out, "\n{NOTE}");
    out
}

/// The same as an HTML table, for `compare --html`'s page.
pub fn html(rows: &[Row]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut p = String::from("<h2>Recoveries, event by event</h2>\n<table><tr>");
    for h in HEAD {
        let _ = write!(p, "<th>{}</th>", esc(h));
    }
    p.push_str("</tr>\n");
    for l in lines(rows) {
        p.push_str("<tr>");
        for c in l {
            let _ = write!(p, "<td>{}</td>", esc(&c));
        }
        p.push_str("</tr>\n");
    }
    let _ = writeln!(p, "</table>\n<p>{}</p>", esc(NOTE));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::disruptions::{EventStep, StepOutcome};

    fn event(at_s: f64, first: f64, back: Option<f64>, failed: u64, down: f64) -> EventAccount {
        EventAccount {
            at_s,
            action: "fail".into(),
            target: "a".into(),
            description: "fail a, restarted after 2s".into(),
            steps: vec![EventStep {
                step: "fail".into(),
                started_s: at_s,
                ended_s: Some(at_s),
                outcome: StepOutcome::Ok,
                detail: String::new(),
            }],
            recovery: vec![Recovery {
                scope: "all".into(),
                rate_before: 100.0,
                first_commit_s: Some(first),
                recovered_s: back,
                failed,
                reconnects: 2,
                down_s: Some(down),
                full_rate_share: None,
            }],
            lost_commits: None,
        }
    }

    #[test]
    fn the_same_events_line_up_with_medians_over_a_sides_runs() {
        let base = vec![vec![event(2.0, 3.2, Some(3.5), 10, 2.9)]];
        let other = vec![
            vec![event(2.0, 2.0, Some(2.2), 4, 1.8)],
            vec![event(2.0, 2.4, Some(2.6), 6, 2.2)],
            vec![event(2.0, 9.0, None, 8, 9.0)],
        ];
        // Another time: not the same event.
        let moved = vec![vec![event(3.0, 1.0, Some(1.0), 0, 0.0)]];
        let rows = rows(&[base, other, moved]);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.event, r.scope.as_str()), (1, "all"));
        let c = r.sides[1].as_ref().unwrap();
        assert_eq!(c.runs, 3);
        assert_eq!(c.first_commit_s, Some(2.4));
        // The median of the two that recovered; the third is counted apart.
        assert!((c.recovered_s.unwrap() - 2.4).abs() < 1e-9, "{c:?}");
        assert_eq!((c.not_recovered, c.failed, c.down_s), (1, 6.0, Some(2.2)));
        assert_eq!(r.sides[2], None);
        let t = table(&rows);
        let line = |side: &str| {
            t.lines()
                .find(|l| l.contains(side))
                .unwrap_or_else(|| panic!("{t}"))
                .to_string()
        };
        assert!(
            line("[1]").starts_with("1 fail a, restarted after 2s at 2.0 s"),
            "{t}"
        );
        let base_line = line("[1]");
        let cells: Vec<&str> = base_line.split_whitespace().collect();
        assert_eq!(cells[cells.len() - 4..], ["3.2", "3.5", "10", "2.9"], "{t}");
        assert!(line("[2]").contains("2.4 (1 of 3 not)"), "{t}");
        assert!(line("[3]").contains("not played the same"), "{t}");
        let md = markdown(&rows);
        assert!(
            md.contains(
                "| 1 fail a, restarted after 2s at 2.0 s | all | [1] | 3.2 | 3.5 | 10 | 2.9 |"
            ),
            "{md}"
        );
        assert!(html(&rows).contains("<td>2.4 (1 of 3 not)</td>"));
        assert!(table(&[]).is_empty() && markdown(&[]).is_empty() && html(&[]).is_empty());
    }
}
