//! `report.html`: one self-contained page per results dir (inline SVG from `charts` and, for
//! profiled runs, flame graphs from `flame`; inline CSS, no script, nothing fetched), written at the end of every run and by `tidebench report
//! DIR`. Sections, in order: [`SECTIONS`]. The managed instances' incidents (OOM kills, crash
//! restarts) are red verticals on the charts over time and a table under "Failures".

use crate::metrics::ErrorClass;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::charts::{self, keep_top, Combine, Series, TOP};
use super::load::{self, RunData};

mod cases;
mod commands;
mod curve;
mod events;
mod glance;
mod guests;
mod headline;
mod incidents;
pub mod markup;
mod profile;
mod roles;
pub mod rules;
mod system;
mod units;
mod waits;
use glance::glance;
use incidents::{
    aborted_clients_to, down_windows_to, errors_to, incidents_to, marks_note, run_marks,
};
use markup::{chart_to, esc, note_to, steps, table_to};
use system::{checkpoints, disk, memory, pooler};

pub const REPORT_FILE: &str = "report.html";

/// Section headings, in page order (tests hold the page to this).
pub const SECTIONS: [&str; 13] = [
    "Run at a glance",
    "Throughput",
    "Achieved vs configured share",
    "Latency",
    "Response-time limits and mix",
    "CPU",
    "Where the time goes",
    "Wait profiles",
    "Memory",
    "Disk IO",
    "Checkpoints and buffers",
    "Connection pooler",
    "Failures",
];

pub(super) const STYLE: &str =
    "body{font-family:sans-serif;margin:2em;color:#222}.wide{overflow-x:auto;max-width:100%}\
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:2px 8px;\
text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}\
.note{color:#666;font-style:italic}.flag{background:#fdd;color:#a00;font-weight:bold}\
svg{display:block;margin:1em 0}nav a{margin-right:1em}\
.names td:nth-child(3),.names td:nth-child(4){text-align:left}";

/// Reads `dir` and writes `dir/report.html`; returns its path.
pub fn write(dir: &Path) -> Result<PathBuf, String> {
    let data = load::load(dir)?;
    let page = render(&data);
    let path = dir.join(REPORT_FILE);
    crate::results::atomic::write(&path, page.as_bytes()).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The page for one run.
pub fn render(data: &RunData) -> String {
    let mut p = String::new();
    let title = format!(
        "tidebench report: {} ({})",
        glance::run_title(data),
        data.summary.started_at
    );
    let _ = write!(
        p,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>\n<h1>{}</h1>\n<nav>",
        esc(&title),
        esc(&title)
    );
    for (i, s) in SECTIONS.iter().enumerate() {
        let _ = write!(p, "<a href=\"#s{i}\">{}</a>", esc(s));
    }
    p.push_str("</nav>\n");
    for note in &data.notes {
        note_to(&mut p, note);
    }
    let sections: [fn(&RunData, &mut String); 13] = [
        glance,
        throughput,
        shares,
        latency,
        limits,
        cpu,
        profile::where_the_time_goes,
        waits::wait_profiles,
        memory,
        disk,
        checkpoints,
        pooler,
        failures,
    ];
    for (i, (name, body)) in SECTIONS.iter().zip(sections).enumerate() {
        let _ = writeln!(p, "<h2 id=\"s{i}\">{}</h2>", esc(name));
        body(data, &mut p);
    }
    p.push_str("</body></html>\n");
    p
}

/// A per-bucket count as a rate (per second) over time.
fn rate_series(d: &RunData, name: String, counts: &[u64]) -> Series {
    Series {
        name,
        points: d
            .buckets
            .iter()
            .zip(counts)
            .flat_map(|(b, n)| steps(b, *n as f64 / b.length_s.max(0.001)))
            .collect(),
    }
}

fn no_series(d: &RunData, p: &mut String) -> bool {
    if d.buckets.is_empty() {
        note_to(p, "No interval rows to draw (see the notes above).");
        return true;
    }
    false
}

fn throughput(d: &RunData, p: &mut String) {
    // The workloads' own figures first (TPC-H's Power@Size): the run's metric.
    for f in &d.summary.figures {
        let _ = writeln!(p, "<p><strong>{}</strong></p>", esc(&f.line()));
    }
    units::units_to(&d.summary.unit_times, p);
    if no_series(d, p) {
        if let Some(table) = headline::table(&d.summary) {
            p.push_str(&table);
        }
        return;
    }
    headline::chart(d, p);
    let x: Vec<f64> = d
        .buckets
        .iter()
        .flat_map(|b| steps(b, 0.0).map(|(x, _)| x))
        .collect();
    let layers: Vec<Series> = d
        .groups
        .iter()
        .zip(&d.ok_by_group)
        .map(|(g, counts)| rate_series(d, g.clone(), counts))
        .collect();
    let layers = keep_top(layers, TOP, Combine::Sum);
    let title = format!("Throughput by group ({} groups)", d.groups.len());
    let marks = run_marks(&d.summary);
    chart_to(
        p,
        charts::stacked_time_marked(
            &title,
            "transactions/s",
            &x,
            &layers,
            &d.phase_edges(),
            &marks,
        ),
    );
    note_to(
        p,
        "Committed and expected-rollback transactions per second, stacked; grey verticals are phase edges.",
    );
    if let Some(note) = marks_note(&marks) {
        note_to(p, &note);
    }
    if let Some(table) = headline::table(&d.summary) {
        p.push_str(&table);
    }
}

/// One row per group, two columns (configured, achieved) per measured phase: 40 groups stay
/// 40 rows however many phases there are.
fn shares(d: &RunData, p: &mut String) {
    let phases: Vec<_> = d.summary.phases.iter().filter(|ph| ph.measured).collect();
    if phases.is_empty() {
        note_to(p, "No measured phase.");
        return;
    }
    let mut head = vec!["group".to_string()];
    for ph in &phases {
        head.push(format!("i{} {} configured %", ph.iteration, ph.phase));
        head.push(format!("i{} {} achieved %", ph.iteration, ph.phase));
    }
    let rows: Vec<Vec<String>> = d
        .summary
        .groups
        .iter()
        .map(|g| {
            let mut row = vec![g.group.clone()];
            for ph in &phases {
                let got = ph.groups.iter().find(|x| x.group == g.group);
                row.push(
                    got.and_then(|x| x.configured_share)
                        .map_or("-".into(), |c| format!("{c:.2}")),
                );
                row.push(got.map_or("-".into(), |x| format!("{:.2}", x.achieved_share)));
            }
            row
        })
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table_to(p, &head, &rows);
}

fn latency(d: &RunData, p: &mut String) {
    if let Some((cases, reads)) = cases::tables(d) {
        table_to(
            p,
            &[
                "test case",
                "target",
                "executions",
                "min s",
                "median s",
                "max s",
                "loaded MB",
                "MB/s per stream",
                "MB/s over the run",
            ],
            &cases,
        );
        if !reads.is_empty() {
            table_to(p, &cases::read_heads(), &reads);
        }
        note_to(p, cases::NOTE);
    }
    if no_series(d, p) {
        return;
    }
    let edges = d.phase_edges();
    type Pick = fn(&load::Percentiles) -> f64;
    let pick: [(&str, Pick); 3] = [("p50", |l| l.p50), ("p95", |l| l.p95), ("p99", |l| l.p99)];
    for (name, f) in pick {
        let series: Vec<Series> = d
            .txn_types
            .iter()
            .zip(&d.latency)
            .map(|(t, lat)| Series {
                name: t.clone(),
                points: d
                    .buckets
                    .iter()
                    .zip(lat)
                    .filter_map(|(b, l)| l.as_ref().map(|l| steps(b, f(l))))
                    .flatten()
                    .collect(),
            })
            .collect();
        let series = keep_top(series, TOP, Combine::Mean);
        chart_to(
            p,
            charts::time_lines_marked(
                &format!("Latency {name} by transaction type"),
                "latency (ms)",
                &series,
                &edges,
                &run_marks(&d.summary),
            ),
        );
    }
    let curves: Vec<Series> = d
        .txn_types
        .iter()
        .zip(&d.dist)
        .filter(|(_, h)| !h.is_empty())
        .map(|(t, h)| Series {
            name: t.clone(),
            points: (0..=80)
                .map(|i| {
                    let nines = f64::from(i) * 0.05;
                    let q = 1.0 - 10f64.powf(-nines);
                    (nines, h.value_at_quantile(q) as f64 / 1000.0)
                })
                .collect(),
        })
        .collect();
    let curves = keep_top(curves, TOP, Combine::Mean);
    chart_to(
        p,
        charts::percentile_curves("Latency distribution over the measured window", &curves),
    );
    note_to(
        p,
        "Latency is end minus scheduled start of transactions that did not fail; percentiles are exact (merged histograms).",
    );
}

/// Per type: p90 against the workload's limit, share of the mix against its minimum; the
/// emulated types apart; the expected ratios between types.
fn limits(d: &RunData, p: &mut String) {
    let s = &d.summary;
    match rules::table(&s.type_rules) {
        Some(table) => {
            p.push_str(&table);
            note_to(p, rules::NOTE);
        }
        None => note_to(
            p,
            "This run's workloads state no response-time limits or mix minimums (TPC-C does).",
        ),
    }
    if let Some(table) = rules::emulated_table(&s.mix) {
        p.push_str(&table);
    }
    if let Some(table) = rules::ratios_table(&s.ratio_rules) {
        p.push_str(&table);
        note_to(p, rules::RATIO_NOTE);
    }
    if let Some(tables) = commands::tables(&s.commands) {
        p.push_str(&tables);
        note_to(p, commands::NOTE);
    }
}

/// The CPU section: charts and productivity, then each VM's guest beside its QEMU.
fn cpu(d: &RunData, p: &mut String) {
    if system::cpu(d, p) {
        guests::guests_to(d, p);
    }
}

fn failures(d: &RunData, p: &mut String) {
    let marks = run_marks(&d.summary);
    if !d.buckets.is_empty() {
        let series: Vec<Series> = d
            .txn_types
            .iter()
            .zip(&d.failed_by_type)
            .map(|(t, f)| rate_series(d, t.clone(), f))
            .collect();
        let series = keep_top(series, TOP, Combine::Sum);
        chart_to(
            p,
            charts::time_lines_marked(
                "Failed transactions by type",
                "failures/s",
                &series,
                &d.phase_edges(),
                &marks,
            ),
        );
    }
    if !d.buckets.is_empty() && !d.failed_by_class.is_empty() {
        let series: Vec<Series> = ErrorClass::ALL
            .iter()
            .zip(&d.failed_by_class)
            .filter(|(_, f)| f.iter().any(|n| *n > 0))
            .map(|(class, f)| rate_series(d, class.name().to_string(), f))
            .collect();
        if series.is_empty() {
            note_to(p, "No transaction failed.");
        } else {
            chart_to(
                p,
                charts::time_lines_marked(
                    "Failed transactions by class",
                    "failures/s",
                    &series,
                    &d.phase_edges(),
                    &marks,
                ),
            );
        }
    }
    let rows: Vec<Vec<String>> = d
        .summary
        .phases
        .iter()
        .map(|ph| {
            let f = &ph.stats.failed_by_class;
            let mut row = vec![format!("i{} {}", ph.iteration, ph.phase)];
            row.extend(
                [
                    f.serialization,
                    f.deadlock,
                    f.connection,
                    f.timeout,
                    f.other,
                    ph.stats.retried,
                ]
                .map(|n| n.to_string()),
            );
            row
        })
        .collect();
    table_to(
        p,
        &[
            "phase",
            "serialization",
            "deadlock",
            "connection",
            "timeout",
            "other",
            "retries",
        ],
        &rows,
    );
    incidents_to(&d.summary.incidents, p);
    events::events_to(&d.summary.events, p);
    events::hosts_to(&d.summary.hosts, p);
    down_windows_to(&d.summary.down_windows, p);
    aborted_clients_to(&d.summary.aborted_clients, p);
    errors_to(&d.summary.errors, p);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::synthetic::Shape;

    #[test]
    fn small_synthetic_run_renders() {
        let dir = tempfile::tempdir().unwrap();
        let shape = Shape {
            groups: 12,
            txn_types: 3,
            phases: 2,
            phase_secs: 60,
            interval_secs: 10,
            samples_per_row: 3,
            sample_secs: 5,
        };
        let out = crate::results::synthetic::generate(
            &dir.path().join("r"),
            &shape,
            &crate::workload::Registry,
        )
        .unwrap();
        let data = load::load(&out).unwrap();
        assert!(data.notes.is_empty(), "{:?}", data.notes);
        assert_eq!(data.buckets.len(), 12);
        assert_eq!(data.groups.len(), 12);
        let page = render(&data);
        let headings: Vec<&str> = page
            .match_indices("<h2 id=")
            .map(|(i, _)| {
                let rest = &page[i..];
                let open = rest.find('>').unwrap() + 1;
                &rest[open..rest.find("</h2>").unwrap()]
            })
            .collect();
        assert_eq!(headings, SECTIONS);
        assert!(
            page.contains("other (4, sum)"),
            "12 groups fold into 8 + other"
        );
        assert!(
            page.matches("<svg").count() >= 10,
            "{}",
            page.matches("<svg").count()
        );
        assert!(!page.contains("<script"));
    }
}
