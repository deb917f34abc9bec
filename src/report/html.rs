//! `report.html`: one self-contained page per results dir (inline SVG from `charts` and, for
//! profiled runs, flame graphs from `flame`; inline CSS, no script, nothing fetched), written at the end of every run and by `tidebench report
//! DIR`. Sections, in order: [`SECTIONS`]. The managed instances' incidents (OOM kills, crash
//! restarts) are red verticals on the charts over time and a table under "Failures".

use crate::metrics::ErrorClass;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::charts::{self, keep_top, Combine, Series, TOP};
use super::load::{self, RunData};
use super::rules_view;
use super::system_view as sys;

mod glance;
mod guests;
mod headline;
mod incidents;
mod profile;
mod waits;
use glance::glance;
use incidents::{
    aborted_clients_to, down_windows_to, errors_to, incident_times, incidents_to, INCIDENT_NOTE,
};

pub const REPORT_FILE: &str = "report.html";

/// Section headings, in page order (tests hold the page to this).
pub const SECTIONS: [&str; 12] = [
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

/// Text safe inside HTML elements and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
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
    let sections: [fn(&RunData, &mut String); 12] = [
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
        failures,
    ];
    for (i, (name, body)) in SECTIONS.iter().zip(sections).enumerate() {
        let _ = writeln!(p, "<h2 id=\"s{i}\">{}</h2>", esc(name));
        body(data, &mut p);
    }
    p.push_str("</body></html>\n");
    p
}

pub(super) fn note_to(p: &mut String, text: &str) {
    let _ = writeln!(p, "<p class=\"note\">{}</p>", esc(text));
}

pub(super) fn chart_to(p: &mut String, svg: Result<String, String>) {
    match svg {
        Ok(svg) => {
            p.push_str(&svg);
            p.push('\n');
        }
        Err(e) => note_to(p, &e),
    }
}

/// A table in a box of its own that scrolls sideways when the table is wider than the window
/// (the per-phase share table has two columns per phase), so the page does not.
pub(super) fn table_to(p: &mut String, head: &[&str], rows: &[Vec<String>]) {
    p.push_str("<div class=\"wide\"><table><tr>");
    for h in head {
        let _ = write!(p, "<th>{}</th>", esc(h));
    }
    p.push_str("</tr>\n");
    for row in rows {
        p.push_str("<tr>");
        for c in row {
            let _ = write!(p, "<td>{}</td>", esc(c));
        }
        p.push_str("</tr>\n");
    }
    p.push_str("</table></div>\n");
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3}"))
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

/// A bucket's value held from its start to its end: charts draw steps, and a run shorter than
/// one interval still shows its one bucket as a line.
fn steps(b: &load::Bucket, v: f64) -> [(f64, f64); 2] {
    [(b.start_s, v), (b.start_s + b.length_s, v)]
}

fn no_series(d: &RunData, p: &mut String) -> bool {
    if d.buckets.is_empty() {
        note_to(p, "No interval rows to draw (see the notes above).");
        return true;
    }
    false
}

fn throughput(d: &RunData, p: &mut String) {
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
    let marks = incident_times(&d.summary.incidents);
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
    if !marks.is_empty() {
        note_to(p, INCIDENT_NOTE);
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
    if let Some((cases, reads)) = super::cases_view::tables(d) {
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
            table_to(p, &super::cases_view::read_heads(), &reads);
        }
        note_to(p, super::cases_view::NOTE);
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
            charts::time_lines(
                &format!("Latency {name} by transaction type"),
                "latency (ms)",
                &series,
                &edges,
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
    match rules_view::table(&s.type_rules) {
        Some(table) => {
            p.push_str(&table);
            note_to(p, rules_view::NOTE);
        }
        None => note_to(
            p,
            "This run's workloads state no response-time limits or mix minimums (TPC-C does).",
        ),
    }
    if let Some(table) = rules_view::emulated_table(&s.mix) {
        p.push_str(&table);
    }
    if let Some(table) = rules_view::ratios_table(&s.ratio_rules) {
        p.push_str(&table);
        note_to(p, rules_view::RATIO_NOTE);
    }
    if let Some(tables) = super::commands_view::tables(&s.commands) {
        p.push_str(&tables);
        note_to(p, super::commands_view::NOTE);
    }
}

fn no_system(d: &RunData, p: &mut String) -> bool {
    if d.system.is_none() {
        note_to(
            p,
            "This run has no system.csv (made without samplers, or by an older tidebench): left out.",
        );
        return true;
    }
    false
}

fn system_charts(
    d: &RunData,
    p: &mut String,
    charts_of: Vec<(String, &'static str, Vec<Series>, Combine)>,
) {
    let edges = d.phase_edges();
    let marks = incident_times(&d.summary.incidents);
    let mut drawn = false;
    for (title, y_label, series, combine) in charts_of {
        if series.is_empty() {
            note_to(p, &format!("{title}: not sampled in this run."));
            continue;
        }
        let series = keep_top(series, TOP, combine);
        chart_to(
            p,
            charts::time_lines_marked(&title, y_label, &series, &edges, &marks),
        );
        drawn = true;
    }
    if drawn && !marks.is_empty() {
        note_to(p, INCIDENT_NOTE);
    }
}

fn cpu(d: &RunData, p: &mut String) {
    if no_system(d, p) {
        return;
    }
    system_charts(d, p, sys::cpu_charts(d));
    let rows: Vec<Vec<String>> = sys::productivity(d)
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.transactions.to_string(),
                format!("{:.2}", r.cpu_seconds),
                r.per_cpu_second().map_or("-".into(), |v| format!("{v:.1}")),
            ]
        })
        .collect();
    if rows.is_empty() {
        note_to(p, "CPU productivity: no instance CPU time was sampled.");
    } else {
        table_to(
            p,
            &[
                "instance",
                "transactions",
                "CPU seconds",
                "transactions per CPU-second",
            ],
            &rows,
        );
    }
    guests::guests_to(d, p);
}

fn memory(d: &RunData, p: &mut String) {
    if !no_system(d, p) {
        system_charts(d, p, sys::memory_charts(d));
    }
}

fn disk(d: &RunData, p: &mut String) {
    if !no_system(d, p) {
        system_charts(d, p, sys::disk_charts(d));
    }
}

fn checkpoints(d: &RunData, p: &mut String) {
    if no_system(d, p) {
        return;
    }
    let deltas = sys::server_deltas(d);
    if deltas.is_empty() {
        note_to(p, "No server counters were sampled.");
        return;
    }
    let rows: Vec<Vec<String>> = deltas
        .into_iter()
        .map(|(server, values)| {
            let mut row = vec![server];
            row.extend(
                values
                    .iter()
                    .map(|v| v.map_or("-".into(), |v| format!("{v:.0}"))),
            );
            row
        })
        .collect();
    let mut head = vec!["server"];
    head.extend(sys::SERVER_COUNTERS);
    table_to(p, &head, &rows);
    note_to(p, "Growth of each counter over the measured window.");
}

fn failures(d: &RunData, p: &mut String) {
    let marks = incident_times(&d.summary.incidents);
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
    down_windows_to(&d.summary.down_windows, p);
    aborted_clients_to(&d.summary.aborted_clients, p);
    errors_to(&d.summary.errors, p);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_is_drawn_from_its_start_to_its_end() {
        let one = load::Bucket {
            start_s: 0.0,
            length_s: 5.0,
            measured: true,
        };
        // A 5 s run with a 30 s interval has one bucket: it must still span the x axis.
        assert_eq!(steps(&one, 7.0), [(0.0, 7.0), (5.0, 7.0)]);
    }
}
