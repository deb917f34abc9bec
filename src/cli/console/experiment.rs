//! The end of an experiment on the console: one line per point (complete runs, median and
//! range of tps; for a consolidation, each scheme and rate's own measure), the analysis in
//! words, the runs that failed or had incidents, and where the files are.

use std::fmt::Write as _;
use std::path::Path;

use crate::config::size::format_size;
use crate::results::experiment::consolidate::{guest_accels, ConsolidateAnalysis};
use crate::results::experiment::{ExperimentFile, RunStatus, FILE, PAGE};

pub fn experiment_summary(file: &ExperimentFile, dir: &Path) -> String {
    let mut out = String::new();
    let runs: Vec<_> = file.points.iter().flat_map(|p| &p.runs).collect();
    let done = runs
        .iter()
        .filter(|r| r.status == RunStatus::Complete)
        .count();
    let _ = writeln!(
        out,
        "\n{} over {} ({} repeat{}): {done} of {} runs complete",
        file.kind.name(),
        file.varied.join(" × "),
        file.repeat,
        if file.repeat == 1 { "" } else { "s" },
        runs.len()
    );
    match &file.analysis.consolidate {
        Some(c) => {
            consolidate_table(&mut out, c);
            let _ = writeln!(out, "{}", what_vms_were(file));
        }
        None => points_table(&mut out, file),
    }
    for s in &file.analysis.series {
        let _ = writeln!(out, "analysis: {}", s.summary);
    }
    if let Some(d) = &file.analysis.density {
        let _ = writeln!(out, "analysis: {}", d.summary);
    }
    if let Some(k) = &file.analysis.knee {
        let _ = writeln!(out, "analysis: {}", k.summary);
    }
    if let Some(c) = &file.analysis.consolidate {
        let _ = writeln!(out, "analysis: {}", c.summary);
    }
    for n in &file.analysis.notes {
        let _ = writeln!(out, "note: {n}");
    }
    for r in runs.iter().filter(|r| r.status == RunStatus::Failed) {
        let _ = writeln!(
            out,
            "failed: {}: {}",
            r.dir,
            r.error.as_deref().unwrap_or("?")
        );
    }
    for r in runs.iter().filter(|r| !r.incidents.is_empty()) {
        let said = r.incidents_said().unwrap_or_default();
        let _ = writeln!(out, "incidents: {}: {said}", r.dir);
    }
    let _ = writeln!(out, "{}", dir.join(FILE).display());
    let _ = writeln!(out, "{}", dir.join(PAGE).display());
    if !file.complete {
        let _ = writeln!(
            out,
            "incomplete: run the same command with --out {} to finish it (complete runs are kept)",
            dir.display()
        );
    }
    out
}

/// A consolidation's VMs in one line: control groups, or real guests and whether under TCG
/// their figures are emulated (the page says the same at length).
fn what_vms_were(file: &ExperimentFile) -> String {
    let guests = file
        .request
        .consolidate
        .as_ref()
        .and_then(|r| r.guests.as_ref());
    let Some(g) = guests else {
        return "VMs: emulated (control groups below one host group), not real guests".into();
    };
    let used = guest_accels(file);
    let accel = match used.is_empty() {
        true => "no run reported its accelerator".to_string(),
        false => format!("accelerator {}", used.join(", ")),
    };
    let emulated = match used.iter().any(|a| a == "tcg") {
        true => {
            ": TCG is software emulation, so these figures are emulated, not a VM's real overhead"
        }
        false => "",
    };
    format!("VMs: real {} guests, {accel}{emulated}", g.hypervisor)
}

/// One line per point: complete runs, median and range of tps.
fn points_table(out: &mut String, file: &ExperimentFile) {
    let width = file
        .points
        .iter()
        .map(|p| p.label(&file.varied).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "  {:<width$}  {:>5}  {:>12}  {:>25}",
        "point", "runs", "median tps", "min – max"
    );
    for p in &file.points {
        let complete = p
            .runs
            .iter()
            .filter(|r| r.status == RunStatus::Complete)
            .count();
        let failed = p
            .runs
            .iter()
            .filter(|r| r.status == RunStatus::Failed)
            .count();
        let range = match (p.min, p.max) {
            (Some(a), Some(b)) => format!("{a:.1} – {b:.1}"),
            _ => "-".into(),
        };
        let median = p.median.map_or("-".into(), |m| format!("{m:.1}"));
        let note = if failed > 0 {
            format!("  ({failed} failed)")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {:<width$}  {:>5}  {median:>12}  {range:>25}{note}",
            p.label(&file.varied),
            format!("{complete}/{}", p.runs.len())
        );
    }
}

/// Consolidation's own measure per scheme and rate (the sum of the databases' rates averaged
/// over the periods, relative to the scheme's baseline), not each run's tps.
fn consolidate_table(out: &mut String, a: &ConsolidateAnalysis) {
    let _ = writeln!(
        out,
        "  {:<6}  {:>10}  {:>9}  {:>10}  {:>8}  {:>6}  {:>5}  {:>10}  {:>4}  {:>9}",
        "scheme",
        "overcommit",
        "MEM_avail",
        format!("{} mean", a.unit),
        "relative",
        "CoV",
        "CPUs",
        format!("{}/CPU", a.unit),
        "OOM",
        "incidents"
    );
    let num = |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
    for r in &a.rows {
        let covered = match r.covers_working_sets {
            Some(true) => "  working sets covered",
            Some(false) => "  working sets not covered",
            None => "",
        };
        let _ = writeln!(
            out,
            "  {:<6}  {:>8} %  {:>9}  {:>10}  {:>8}  {:>6}  {:>5}  {:>10}  {:>4}  {:>9}{covered}",
            r.scheme,
            r.overcommit,
            format_size(r.host_limit_bytes),
            num(r.mean, 1),
            num(r.relative, 3),
            r.cov.map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
            num(r.cpus_used, 2),
            num(r.productivity, 1),
            r.oom_kills,
            r.incidents
        );
    }
}
