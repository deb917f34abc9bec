//! The sections of `report.html` drawn from `system.csv`: CPU (charts and productivity),
//! memory, disk IO, and the checkpoint and buffer counters' growth, each chart marked with the
//! managed instances' incidents.

use super::incidents::{marks_note, run_marks};
use super::markup::{chart_to, note_to, table_to};
use crate::report::charts::{self, keep_top, Combine, Series, TOP};
use crate::report::load::RunData;
use crate::report::system_view as sys;

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

/// One chart per entry of `charts_of`, with the phase edges and incident marks.
pub(super) fn system_charts(
    d: &RunData,
    p: &mut String,
    charts_of: Vec<(String, &'static str, Vec<Series>, Combine)>,
) {
    let edges = d.phase_edges();
    let marks = run_marks(&d.summary);
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
    if let Some(note) = marks_note(&marks).filter(|_| drawn) {
        note_to(p, &note);
    }
}

/// The CPU charts and the productivity table; false when the run has no `system.csv`.
pub(super) fn cpu(d: &RunData, p: &mut String) -> bool {
    if no_system(d, p) {
        return false;
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
    true
}

pub(super) fn memory(d: &RunData, p: &mut String) {
    if !no_system(d, p) {
        system_charts(d, p, sys::memory_charts(d));
    }
}

pub(super) fn disk(d: &RunData, p: &mut String) {
    if !no_system(d, p) {
        system_charts(d, p, sys::disk_charts(d));
    }
}

pub(super) fn checkpoints(d: &RunData, p: &mut String) {
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

/// What a connection pooler in front of a server did: its figures over the measured window
/// and its waiting clients and busy server sessions over time.
pub(super) fn pooler(d: &RunData, p: &mut String) {
    if no_system(d, p) {
        return;
    }
    let figures = crate::report::pooler_view::figures(d);
    if figures.is_empty() {
        note_to(
            p,
            "No connection pooler was sampled in this run (none in front of a target, or its \
             admin console refused the target's user).",
        );
        return;
    }
    let show = |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
    let rows: Vec<Vec<String>> = figures
        .iter()
        .map(|f| {
            vec![
                f.target.clone(),
                show(f.transactions, 0),
                show(f.wait_s, 3),
                show(f.wait_per_transaction_ms(), 3),
                show(f.peak_waiting, 0),
                show(f.longest_wait_s, 3),
                show(f.peak_servers, 0),
            ]
        })
        .collect();
    table_to(
        p,
        &[
            "pooler of",
            "transactions",
            "client wait (s)",
            "wait per transaction (ms)",
            "most clients waiting",
            "longest wait (s)",
            "most server sessions",
        ],
        &rows,
    );
    note_to(
        p,
        "From the pooler's SHOW STATS (growth over the measured window) and SHOW POOLS (peaks \
         of the samples). Its transactions include tidebench's own sessions through it.",
    );
    system_charts(d, p, crate::report::pooler_view::charts(d));
}
