//! `experiment.html`: one self-contained page per experiment dir (a `tidebench sweep`,
//! `density`, `knee` or `consolidate`), drawn from `experiment.json`: what was asked, the curves and
//! the analysis the file holds, and every run with a link to its own `report.html`; a
//! consolidation page also reads its runs' `system.csv` for each VM's memory over time. Like
//! `report.html` it has inline SVG and CSS, no script, and fetches nothing. Every string from
//! the file (keys, values, errors, the run file's text) is user input and is escaped.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::html;
use super::html::markup::{esc, note_to, table_to};
use crate::results::experiment::{
    self as exp, ExperimentFile, ExperimentKind, Point, RunRecord, RunStatus,
};
use crate::results::read::{ResultsDir, SystemSeries};

mod consolidate;
mod density;
mod knee;
mod sweep;
#[cfg(test)]
pub(crate) mod tests;

/// Reads `dir/experiment.json` and writes `dir/experiment.html` (through a temp file and a
/// rename, so a browser reloading it mid-experiment never sees half a page); returns its path.
pub fn write(dir: &Path) -> Result<PathBuf, String> {
    let file = exp::read(dir).map_err(|e| e.to_string())?;
    let page = page(&file, &|run_dir| has_report(dir, run_dir), &|run_dir| {
        run_samples(dir, run_dir)
    });
    let path = dir.join(exp::PAGE);
    crate::results::atomic::write(&path, page.as_bytes()).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The page without links to the runs' reports or their samples (which only the dir has).
pub fn html(file: &ExperimentFile) -> String {
    page(file, &|_| false, &|_| {
        Err("the page was made from experiment.json alone".into())
    })
}

/// What the page reads of one run's results dir: its `system.csv` series and the instants
/// (seconds since its start) at which a phase after the first began.
#[derive(Debug, Clone, Default)]
pub struct RunSamples {
    pub system: Vec<SystemSeries>,
    pub edges: Vec<f64>,
}

/// Reads a run's samples; an error says why they are not there.
pub type SamplesReader<'a> = &'a dyn Fn(&str) -> Result<RunSamples, String>;

/// The run's dir inside the experiment dir, or `None` for one that would lead out of it
/// (absolute, or through `..`): the file is input, and the page reads only its own dir.
fn inside(dir: &Path, run_dir: &str) -> Option<PathBuf> {
    let rel = Path::new(run_dir);
    rel.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| dir.join(rel))
}

/// True when the run's dir, inside the experiment dir, holds a `report.html`. A run dir that
/// would lead out of the experiment dir gets no link.
fn has_report(dir: &Path, run_dir: &str) -> bool {
    inside(dir, run_dir).is_some_and(|d| d.join(html::REPORT_FILE).is_file())
}

/// The run's `system.csv` and phase starts, read through the results reader.
fn run_samples(dir: &Path, run_dir: &str) -> Result<RunSamples, String> {
    let path = inside(dir, run_dir)
        .ok_or_else(|| format!("{run_dir} leads out of the experiment dir; not read"))?;
    let results = ResultsDir::open(&path).map_err(|e| e.to_string())?;
    let system = results
        .system()
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{run_dir} has no system.csv (the run had no samplers)"))?;
    let edges = results
        .summary()
        .phases
        .iter()
        .skip(1)
        .map(|p| p.start_s)
        .collect();
    Ok(RunSamples { system, edges })
}

/// The page; `has_report(run dir)` says whether a run's `report.html` can be linked, and
/// `samples(run dir)` reads what a consolidation page draws of a run.
pub fn page(
    file: &ExperimentFile,
    has_report: &dyn Fn(&str) -> bool,
    samples: SamplesReader,
) -> String {
    let mut p = String::new();
    let title = format!(
        "tidebench {}: {}",
        file.kind.name(),
        if file.varied.is_empty() {
            "no varied key".to_string()
        } else {
            file.varied.join(" × ")
        }
    );
    let _ = write!(
        p,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        html::STYLE,
        esc(&title)
    );
    facts_to(&mut p, file);
    p.push_str("<h2>Request</h2>\n");
    request_to(&mut p, file);
    match file.kind {
        ExperimentKind::Sweep => sweep::sections(&mut p, file),
        ExperimentKind::Density => density::section(&mut p, file),
        ExperimentKind::Consolidate => consolidate::sections(&mut p, file, samples),
        ExperimentKind::Knee => knee::section(&mut p, file),
    }
    if !file.analysis.notes.is_empty() {
        p.push_str("<h2>Analysis notes</h2>\n<ul>");
        for n in &file.analysis.notes {
            let _ = write!(p, "<li>{}</li>", esc(n));
        }
        p.push_str("</ul>\n");
    }
    p.push_str("<h2>Points and runs</h2>\n");
    runs_to(&mut p, file, has_report);
    p.push_str("</body></html>\n");
    p
}

/// "complete", or "incomplete: k of n runs done" and what the others are.
fn state(file: &ExperimentFile) -> String {
    if file.complete {
        return "complete".into();
    }
    let runs: Vec<RunStatus> = file
        .points
        .iter()
        .flat_map(|pt| pt.runs.iter().map(|r| r.status))
        .collect();
    let count = |s: RunStatus| runs.iter().filter(|r| **r == s).count();
    // A point whose pending runs are not listed yet still owes `repeat` runs.
    let expected = (file.points.len() * file.repeat as usize).max(runs.len());
    let mut out = format!(
        "incomplete: {} of {expected} runs done",
        count(RunStatus::Complete)
    );
    let others: Vec<String> = [
        (RunStatus::Failed, "failed"),
        (RunStatus::Interrupted, "interrupted"),
    ]
    .iter()
    .filter(|(s, _)| count(*s) > 0)
    .map(|(s, name)| format!("{} {name}", count(*s)))
    .collect();
    if !others.is_empty() {
        let _ = write!(out, " ({})", others.join(", "));
    }
    out
}

fn facts_to(p: &mut String, file: &ExperimentFile) {
    let rows = vec![
        vec!["kind".into(), file.kind.name().into()],
        vec!["varied".into(), file.varied.join(", ")],
        vec!["repeat".into(), file.repeat.to_string()],
        vec!["points".into(), file.points.len().to_string()],
        vec!["started (UTC)".into(), file.started_at.clone()],
        vec!["updated (UTC)".into(), file.updated_at.clone()],
        vec!["state".into(), state(file)],
        vec!["tidebench".into(), file.tidebench_version.clone()],
    ];
    table_to(p, &["", ""], &rows);
}

fn request_to(p: &mut String, file: &ExperimentFile) {
    let r = &file.request;
    let mut rows = vec![
        vec!["source".into(), r.source.clone()],
        vec![
            "flags".into(),
            if r.flags.is_empty() {
                "none".into()
            } else {
                r.flags.join(" ")
            },
        ],
    ];
    for v in &r.vary {
        rows.push(vec![format!("vary {}", v.key), v.values.join(", ")]);
    }
    rows.push(vec!["repeat".into(), r.repeat.to_string()]);
    if let Some(d) = &r.point_duration {
        rows.push(vec!["point duration".into(), d.clone()]);
    }
    if let Some(c) = r.cpus {
        rows.push(vec!["CPUs per instance".into(), num(c)]);
    }
    if let Some(m) = &r.memory {
        rows.push(vec!["memory per instance".into(), m.clone()]);
    }
    table_to(p, &["", ""], &rows);
    if !r.base_text.trim().is_empty() {
        let _ = writeln!(
            p,
            "<details><summary>{} as read when the experiment started</summary><pre>{}</pre></details>",
            esc(&r.source),
            esc(&r.base_text)
        );
    }
}

/// The complete runs' tps of a point.
fn complete_tps(pt: &Point) -> impl Iterator<Item = (u32, f64)> + '_ {
    pt.runs
        .iter()
        .filter(|r| r.status == RunStatus::Complete)
        .filter_map(|r| r.tps.map(|t| (r.repeat, t)))
}

/// Whole numbers without decimals, others with up to three.
pub(super) fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn tps(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// A relative path as an `href`: bytes outside a safe set percent-encoded (a `#` or `?` in a
/// dir name would otherwise cut the link short).
fn href(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/=,+:@".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A run's incidents as a table cell: `-`, or each kind with its count, flagged.
fn incidents_cell(r: &RunRecord) -> String {
    match r.incidents_said() {
        Some(i) => format!("<td class=\"flag\">{}</td>", esc(&i)),
        None => "<td>-</td>".into(),
    }
}

/// Says above the runs table how many runs had incidents, so a crash inside a point's figure
/// is not missed.
fn incidents_flag(p: &mut String, file: &ExperimentFile) {
    let hit: Vec<&str> = file
        .points
        .iter()
        .flat_map(|pt| &pt.runs)
        .filter(|r| !r.incidents.is_empty())
        .map(|r| r.dir.as_str())
        .collect();
    if hit.is_empty() {
        return;
    }
    let _ = writeln!(
        p,
        "<p class=\"flag\">{} run(s) had incidents (OOM kills, killed backends, crash restarts or a server gone): {}. Their figures include the crash; each run's report.html lists the incidents with their times.</p>",
        hit.len(),
        esc(&hit.join(", "))
    );
}

/// Every point and run: values, repeat, status (a failed run with its error), tps, headline,
/// incidents, and the run's report when it has one.
fn runs_to(p: &mut String, file: &ExperimentFile, has_report: &dyn Fn(&str) -> bool) {
    incidents_flag(p, file);
    // The varied keys, then any value a point ties to them (a knee's shared_buffers).
    let mut keys: Vec<&str> = file.varied.iter().map(String::as_str).collect();
    for pt in &file.points {
        for k in pt.values.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    p.push_str("<table><tr>");
    let head = [
        "repeat",
        "status",
        "tps",
        "headline",
        "point median tps",
        "incidents",
        "run",
    ];
    for h in keys.iter().copied().chain(head) {
        let _ = write!(p, "<th>{}</th>", esc(h));
    }
    p.push_str("</tr>\n");
    let values = |pt: &Point| -> String {
        keys.iter()
            .map(|k| {
                format!(
                    "<td>{}</td>",
                    esc(pt.values.get(*k).map_or("-", String::as_str))
                )
            })
            .collect()
    };
    for pt in &file.points {
        if pt.runs.is_empty() {
            let _ = writeln!(
                p,
                "<tr>{}<td>-</td><td>no run recorded</td><td>-</td><td>-</td><td>-</td><td>-</td><td></td></tr>",
                values(pt)
            );
        }
        for (i, r) in pt.runs.iter().enumerate() {
            let (status, class) = match r.status {
                RunStatus::Complete | RunStatus::Interrupted => (r.status.name().to_string(), ""),
                RunStatus::Pending => (r.status.name().to_string(), " class=\"note\""),
                RunStatus::Failed => (
                    match &r.error {
                        Some(e) => format!("failed: {e}"),
                        None => "failed".to_string(),
                    },
                    " class=\"flag\"",
                ),
            };
            let headline = r.headline.as_ref().map_or("-".into(), |h| {
                format!("{} {:.1} ({})", h.label, h.value, h.unit)
            });
            let median = if i == 0 {
                tps(pt.median)
            } else {
                String::new()
            };
            let link = if has_report(&r.dir) {
                format!(
                    "<a href=\"{}\">{}</a>",
                    esc(&href(&format!("{}/{}", r.dir, html::REPORT_FILE))),
                    esc(&r.dir)
                )
            } else {
                esc(&r.dir)
            };
            let incidents = incidents_cell(r);
            let _ = writeln!(
                p,
                "<tr>{}<td>{}</td><td{class}>{}</td><td>{}</td><td>{}</td><td>{}</td>{incidents}<td>{link}</td></tr>",
                values(pt),
                r.repeat,
                esc(&status),
                tps(r.tps),
                esc(&headline),
                median,
            );
        }
    }
    p.push_str("</table>\n");
    note_to(
        p,
        "tps counts committed and expected-rollback transactions per second over each run's measured window; a point's median is over its complete runs.",
    );
}
