//! `tidebench report DIR --mix-log`: every driver thread's `mix-*.bin` merged by end time into
//! one CSV with names instead of indexes (names come from `summary.json` of the same dir).

use std::fmt::Write as _;
use std::path::Path;

use crate::metrics::mixlog::{self, MixRecord};
use crate::results::ResultsDir;

/// The merged log as CSV text.
pub fn merged_csv(dir: &Path) -> Result<String, String> {
    let summary = ResultsDir::open(dir)
        .map_err(|e| e.to_string())?
        .into_summary();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("mix-") && n.ends_with(".bin"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "{} has no mix log; run with --mix-log to write one",
            dir.display()
        ));
    }
    let mut records: Vec<MixRecord> = Vec::new();
    for f in &files {
        records.extend(mixlog::read(f)?.records);
    }
    records.sort_by_key(|r| (r.end_us, r.client));
    let phases: Vec<(u32, &str)> = summary
        .phases
        .iter()
        .map(|p| (p.iteration, p.phase.as_str()))
        .collect();
    let targets: Vec<(&str, &str, &str)> = summary
        .target_names
        .iter()
        .map(|t| (t.group.as_str(), t.set.as_str(), t.target.as_str()))
        .collect();
    let mut out = String::from(
        "end_s,latency_ms,client,iteration,phase,group,set,txn_type,outcome,retries\n",
    );
    for r in &records {
        let (iteration, phase) = phases
            .get(usize::from(r.segment))
            .copied()
            .unwrap_or((0, "?"));
        let (group, set, _) = targets
            .get(usize::from(r.target))
            .copied()
            .unwrap_or(("?", "?", "?"));
        let txn = summary
            .txn_types
            .get(usize::from(r.txn))
            .map_or("?", |s| s.as_str());
        let _ = writeln!(
            out,
            "{:.6},{:.3},{},{},{},{},{},{},{},{}",
            r.end_us as f64 / 1e6,
            f64::from(r.latency_us) / 1000.0,
            r.client,
            iteration,
            crate::results::intervals::csv_field(phase),
            crate::results::intervals::csv_field(group),
            crate::results::intervals::csv_field(set),
            txn,
            MixRecord::outcome_name(r.outcome),
            r.retries
        );
    }
    Ok(out)
}
