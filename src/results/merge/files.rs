//! The merged dir's files besides its summary: the first shard's `runtime.toml` and
//! `run-start.json` (every shard ran the same plan and keys), and every shard's rows of
//! `intervals.csv` with their `latency.hlog` entries, paired, in time order, each row with the
//! shard it came from in a last `shard` column (readers find columns by name, so the file
//! still reads as an ordinary one; `report --by shard` splits by it).
//!
//! Every shard started at the same instant, so their entries' offsets share one clock: the
//! merged log keeps the first shard's header (its StartTime and BaseTime).

use std::path::Path;

use super::super::start::START_FILE;
use super::super::{HLOG_FILE, INTERVALS_FILE, RUNTIME_FILE};

/// Copies what the plan and keys are read from.
pub fn copy_start(first: &Path, to: &Path) -> Result<(), String> {
    for name in [RUNTIME_FILE, START_FILE] {
        let from = first.join(name);
        std::fs::copy(&from, to.join(name))
            .map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    }
    Ok(())
}

/// One row: its start (for the order), its CSV line, its log entry, its shard.
struct Row {
    start_s: f64,
    line: String,
    entry: String,
    shard: u32,
}

/// Writes the merged `intervals.csv` and `latency.hlog` of `shards` (dir, shard index) into
/// `to`.
pub fn merge_intervals(shards: &[(&Path, u32)], to: &Path) -> Result<(), String> {
    let mut header: Option<String> = None;
    let mut log_head: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    for &(dir, shard) in shards {
        let csv = read(&dir.join(INTERVALS_FILE))?;
        let log = read(&dir.join(HLOG_FILE))?;
        let mut lines = csv.lines().filter(|l| !l.is_empty());
        let head = lines.next().unwrap_or_default().to_string();
        match &header {
            Some(h) if *h != head => {
                return Err(format!(
                    "{}: its columns differ from the first shard's (written by another version \
                     of tidebench?)",
                    dir.join(INTERVALS_FILE).display()
                ))
            }
            Some(_) => {}
            None => header = Some(head),
        }
        let (head_lines, entries): (Vec<&str>, Vec<&str>) = log
            .lines()
            .filter(|l| !l.is_empty())
            .partition(|l| l.starts_with('#') || l.starts_with('"'));
        log_head.get_or_insert_with(|| head_lines.iter().map(|l| l.to_string()).collect());
        let lines: Vec<&str> = lines.collect();
        if lines.len() != entries.len() {
            return Err(format!(
                "{}: {} rows but {} latency.hlog entries; the dir is damaged",
                dir.display(),
                lines.len(),
                entries.len()
            ));
        }
        for (line, entry) in lines.into_iter().zip(entries) {
            let start_s = line
                .split(',')
                .next()
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0);
            rows.push(Row {
                start_s,
                line: line.to_string(),
                entry: entry.to_string(),
                shard,
            });
        }
    }
    // Stable: within one window, shard 0's rows first, each shard's in its own order.
    rows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let mut csv = header.unwrap_or_default();
    csv.push_str(",shard\n");
    let mut log = log_head.unwrap_or_default().join("\n");
    log.push('\n');
    for r in &rows {
        csv.push_str(&r.line);
        csv.push(',');
        csv.push_str(&r.shard.to_string());
        csv.push('\n');
        log.push_str(&r.entry);
        log.push('\n');
    }
    write(&to.join(INTERVALS_FILE), &csv)?;
    write(&to.join(HLOG_FILE), &log)
}

/// Every shard's mix log (`--mix-log`), renamed `mix-s<shard>-<thread>.bin`: `report --mix-log`
/// merges every `mix-*.bin` of a dir by end time, and client ids are the run's, so the merged
/// log is the one-process run's (the TPC-V kit's merged CE mix log).
pub fn copy_mix_logs(shards: &[(&Path, u32)], to: &Path) -> Result<(), String> {
    for &(dir, shard) in shards {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(thread) = name
                .strip_prefix("mix-")
                .and_then(|rest| rest.strip_suffix(".bin"))
            else {
                continue;
            };
            let target = to.join(format!("mix-s{shard}-{thread}.bin"));
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("cannot copy {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    super::super::atomic::write(path, text.as_bytes()).map_err(|e| e.to_string())
}
