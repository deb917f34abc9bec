//! The end of an experiment on the console: one line per point (complete runs, median and
//! range of tps), the analysis in words, and where the files are.

use std::fmt::Write as _;
use std::path::Path;

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
    for s in &file.analysis.series {
        let _ = writeln!(out, "analysis: {}", s.summary);
    }
    if let Some(d) = &file.analysis.density {
        let _ = writeln!(out, "analysis: {}", d.summary);
    }
    if let Some(k) = &file.analysis.knee {
        let _ = writeln!(out, "analysis: {}", k.summary);
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
