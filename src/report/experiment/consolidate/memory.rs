//! Each VM's memory over the run behind every (scheme, rate) row, from that run's
//! `system.csv` (the VM's control group, sampled as its first instance): usage and page cache
//! against the VM's limit, the rates of major faults (and refaults and limit hits where the
//! sampler has them), with OOM kills and the run's incidents as red verticals and listed with
//! their time. A run whose samples cannot be read gets a note, never a broken page.

use std::fmt::Write as _;

use super::super::{RunSamples, SamplesReader};
use super::size;
use crate::report::charts::{self, Series};
use crate::report::html::markup::{chart_to, esc, note_to, table_to};
use crate::results::experiment::consolidate::{
    ConsolidateAnalysis, ConsolidateRow, ConsolidateRun, VmUsage,
};
use crate::results::experiment::ExperimentFile;
use crate::results::read::SystemSeries;

const MIB: f64 = 1.0 / (1024.0 * 1024.0);
/// Rows at most this many are shown open; beyond, only those with incidents.
const OPEN_ROWS: usize = 6;

/// Cumulative counters drawn as rates per second: (metric, legend name).
const COUNTERS: [(&str, &str); 3] = [
    ("major_faults", "major faults/s"),
    ("mem_refaults", "refaults/s"),
    ("mem_limit_hits", "limit hits/s"),
];

pub(super) fn section(
    p: &mut String,
    file: &ExperimentFile,
    a: &ConsolidateAnalysis,
    samples: SamplesReader,
) {
    p.push_str("<h2>Memory over time per VM</h2>\n");
    note_to(
        p,
        "Per row, the run its figures come from: each VM's memory usage and page cache (MiB) against its limit (dashed), and the rates of major faults, refaults and limit hits where sampled. Grey verticals are phase edges; red ones OOM kills and incidents.",
    );
    for row in &a.rows {
        row_to(p, file, a.rows.len(), row, samples);
    }
}

/// The run record's consolidation part for the row's run.
fn consolidation<'a>(file: &'a ExperimentFile, run: &str) -> Option<&'a ConsolidateRun> {
    file.points
        .iter()
        .flat_map(|pt| &pt.runs)
        .find(|r| r.dir == run)
        .and_then(|r| r.consolidation.as_ref())
}

/// The VM's memory limit from the request's layout of the scheme.
fn vm_limit(file: &ExperimentFile, scheme: &str, vm: &str) -> Option<u64> {
    let req = file.request.consolidate.as_ref()?;
    let layout = req.schemes.iter().find(|s| s.scheme == scheme)?;
    layout
        .vms
        .iter()
        .find(|v| v.name == vm)
        .map(|v| v.memory_bytes)
}

fn row_to(
    p: &mut String,
    file: &ExperimentFile,
    rows: usize,
    row: &ConsolidateRow,
    samples: SamplesReader,
) {
    let title = format!("{} at {} % overcommitment", row.scheme, row.overcommit);
    let Some(run) = &row.run else {
        let _ = writeln!(
            p,
            "<h3>{}</h3>\n<p class=\"flag\">No complete run: nothing to draw.</p>",
            esc(&title)
        );
        return;
    };
    let open = rows <= OPEN_ROWS || row.incidents > 0 || row.oom_kills > 0;
    let _ = writeln!(
        p,
        "<details{}><summary><b>{}</b>: run {} ({} OOM kills, {} incidents)</summary>",
        if open { " open" } else { "" },
        esc(&title),
        esc(run),
        row.oom_kills,
        row.incidents
    );
    let Some(c) = consolidation(file, run) else {
        note_to(
            p,
            &format!("{run} has no consolidation record in experiment.json."),
        );
        p.push_str("</details>\n");
        return;
    };
    usage_table(p, c);
    incidents_to(p, c);
    match samples(run) {
        Ok(s) => {
            for vm in &c.vms {
                charts_to(p, &s, vm, vm_limit(file, &row.scheme, &vm.vm), c);
            }
        }
        Err(e) => note_to(p, &format!("Memory series not read: {e}")),
    }
    p.push_str("</details>\n");
}

fn usage_table(p: &mut String, c: &ConsolidateRun) {
    let bytes = |v: Option<u64>| v.map_or("-".into(), size);
    let count = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    let rows: Vec<Vec<String>> = c
        .vms
        .iter()
        .map(|v: &VmUsage| {
            vec![
                v.vm.clone(),
                v.source.clone(),
                v.cpu_seconds.map_or("-".into(), |s| format!("{s:.1}")),
                bytes(v.peak_usage_bytes),
                bytes(v.peak_cache_bytes),
                count(v.major_faults),
                count(v.oom_kills),
            ]
        })
        .collect();
    table_to(
        p,
        &[
            "VM",
            "samples",
            "CPU s",
            "peak usage",
            "peak page cache",
            "major faults",
            "OOM kills",
        ],
        &rows,
    );
    let mut facts = Vec::new();
    if let Some(l) = c.host_limit_bytes {
        facts.push(format!("host group limit as read: {}", size(l)));
    }
    if let Some(b) = c.balloon_bytes {
        facts.push(format!("balloon locked: {}", size(b)));
    }
    if !facts.is_empty() {
        note_to(p, &(facts.join("; ") + "."));
    }
}

fn incidents_to(p: &mut String, c: &ConsolidateRun) {
    if let Some(why) = &c.restarted_under_limit {
        let _ = writeln!(
            p,
            "<p class=\"flag\">The instances were restarted under the host group's limit, their shared buffers cold: {}</p>",
            esc(why)
        );
    }
    if c.incidents.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = c
        .incidents
        .iter()
        .map(|i| {
            vec![
                format!("{:.1}", i.t_s),
                i.vm.clone(),
                i.kind.clone(),
                i.detail.clone(),
            ]
        })
        .collect();
    p.push_str("<p class=\"flag\">Incidents</p>\n");
    table_to(p, &["t (s)", "VM", "kind", "detail"], &rows);
}

/// A cumulative counter's growth per second between consecutive samples.
pub(super) fn per_second(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].0, (w[1].1 - w[0].1).max(0.0) / (w[1].0 - w[0].0)))
        .collect()
}

/// When a cumulative counter went up.
fn rises(points: &[(f64, f64)]) -> Vec<f64> {
    points
        .windows(2)
        .filter(|w| w[1].1 > w[0].1)
        .map(|w| w[1].0)
        .collect()
}

/// The VM's two small charts side by side: memory, and fault rates (when sampled).
fn charts_to(p: &mut String, s: &RunSamples, vm: &VmUsage, limit: Option<u64>, c: &ConsolidateRun) {
    let of = |metric: &str| -> Option<&SystemSeries> {
        s.system
            .iter()
            .find(|x| x.source == vm.source && x.metric == metric)
    };
    if !s.system.iter().any(|x| x.source == vm.source) {
        note_to(
            p,
            &format!("{}: no samples of {} in system.csv.", vm.vm, vm.source),
        );
        return;
    }
    let mut marks: Vec<f64> = of("oom_events").map_or_else(Vec::new, |x| rises(&x.points));
    let mine: Vec<_> = c.incidents.iter().filter(|i| i.vm == vm.vm).collect();
    marks.extend(mine.iter().map(|i| i.t_s));
    marks.sort_by(f64::total_cmp);
    marks.dedup_by(|a, b| (*a - *b).abs() < 0.5);
    let mark_name = if mine.iter().all(|i| i.kind == "oom_kill") {
        "OOM kill"
    } else {
        "OOM kill / incident"
    };
    // A real VM has no group of its own: its QEMU's RSS is what it takes from the host, and
    // its balloon driver says what the guest has.
    let lines = match of("mem_usage_bytes") {
        Some(_) => [
            ("mem_usage_bytes", "usage"),
            ("mem_cache_bytes", "page cache"),
        ],
        None => [
            ("rss_bytes", "QEMU RSS"),
            ("guest_memory_bytes", "guest memory"),
        ],
    };
    let memory: Vec<Series> = lines
        .iter()
        .filter_map(|(metric, name)| {
            Some(Series {
                name: (*name).into(),
                points: of(metric)?
                    .points
                    .iter()
                    .map(|(t, v)| (*t, v * MIB))
                    .collect(),
            })
        })
        .collect();
    let faults: Vec<Series> = COUNTERS
        .iter()
        .filter_map(|(metric, name)| {
            Some(Series {
                name: (*name).into(),
                points: per_second(&of(metric)?.points),
            })
        })
        .collect();
    p.push_str("<div style=\"display:flex;flex-wrap:wrap;gap:0 8px\">\n");
    let reference = limit.map(|l| ("limit", l as f64 * MIB));
    if memory.is_empty() {
        note_to(p, &format!("{}: no memory samples.", vm.vm));
    } else {
        chart_to(
            p,
            charts::small_time_lines(
                &format!("{} memory", vm.vm),
                "MiB",
                &memory,
                &s.edges,
                reference,
                (mark_name, &marks),
            ),
        );
    }
    if !faults.is_empty() {
        chart_to(
            p,
            charts::small_time_lines(
                &format!("{} faults", vm.vm),
                "per second",
                &faults,
                &s.edges,
                None,
                (mark_name, &marks),
            ),
        );
    }
    p.push_str("</div>\n");
}
