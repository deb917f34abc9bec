//! Rebuilding `summary.json` for a run whose driver died before writing it (SIGKILL, a
//! machine crash): the `.partial` dir it left holds `run-start.json` and `runtime.toml`
//! (written when the measured window started) and `intervals.csv` / `latency.hlog` (appended
//! every interval), which is all [`Summary::build`] needs. The totals are the sums of the
//! intervals on disk, so they cover the run up to its last finished interval.
//!
//! What is lost with the process, and said so in the summary's `failure`: the interval in
//! flight, the servers' counter deltas (read after the run), lag histograms (rate-limited runs
//! keep lag only in memory), the incidents and the emulators' backlogs.
//!
//! An interval half on disk (the process died between the two files, or mid-line) is dropped
//! whole, so a recovered total never counts part of an interval: an interval counts when all
//! of its `intervals.csv` lines were read with their histograms.
//!
//! The dir keeps its `.partial` name: a rebuilt run is never mistaken for one that finished
//! (experiments re-run a point whose dir is only `.partial`; `report` and `compare` take the
//! path they are given).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use super::read::{IntervalRow, IntervalRows};
use super::start::RunStart;
use super::writer::{live_writer, WRITER_PID_FILE};
use super::{ResultsError, RuntimeInfo, Summary, INTERVALS_FILE, SUMMARY_FILE};
use crate::metrics::{new_histogram, ErrorClass, KeySpace, Recorder, Slot};

/// What [`recover`] rebuilt.
#[derive(Debug)]
pub struct Recovered {
    pub summary: Summary,
    /// Rows of `intervals.csv` counted.
    pub rows: usize,
    /// Lines of `intervals.csv` left out: the damaged last interval's, rows naming no key of
    /// the run.
    pub dropped: usize,
}

/// Rebuilds `dir/summary.json` (`complete: false`, the reason in `failure`) from the intervals
/// on disk. Refuses a dir a live tidebench is still writing and one without `run-start.json`.
pub fn recover(dir: &Path) -> Result<Recovered, ResultsError> {
    // This process may have been given the dead writer's pid: it is not writing the dir.
    if let Some(pid) = live_writer(dir).filter(|p| *p != std::process::id()) {
        return Err(ResultsError::InUse {
            staging: dir.to_path_buf(),
            pid,
        });
    }
    let start = RunStart::read(dir).map_err(|e| match e {
        ResultsError::Io { path, .. } => ResultsError::Unrecoverable(path),
        other => other,
    })?;
    let runtime = RuntimeInfo::read(dir)?;
    let keys = start.keys().map_err(|message| ResultsError::Decode {
        file: super::start::START_FILE,
        path: dir.join(super::start::START_FILE),
        message,
    })?;
    let interval = runtime.plan.interval.max(Duration::from_millis(1));
    let lines = lines_per_interval(&dir.join(INTERVALS_FILE), interval)?;
    let summed = sum_intervals(IntervalRows::open(dir)?, &keys, interval, &lines);

    let elapsed = Duration::from_secs_f64(summed.end_s.max(0.0));
    let mut reason = format!(
        "the driver stopped without writing its summary (killed, or its disk was full) after \
         {:.1} s; rebuilt from the intervals on disk by `tidebench report`",
        elapsed.as_secs_f64()
    );
    if let Some(damage) = &summed.damage {
        reason.push_str(&format!("; the last interval was left out ({damage})"));
    }
    if summed.unmatched > 0 {
        reason.push_str(&format!(
            "; {} row(s) named no target or type of the run and were left out",
            summed.unmatched
        ));
    }
    reason.push_str(
        "; the servers' counter deltas, lag, incidents and emulator backlogs died with the driver",
    );
    let facts = start.facts(elapsed, false);
    let mut summary = Summary::build(&facts, &runtime.plan, &keys, &summed.total, Vec::new());
    summary.failure = Some(reason);
    let text = summary.to_json()?;
    let path = dir.join(SUMMARY_FILE);
    super::atomic::write(&path, text.as_bytes()).map_err(ResultsError::Write)?;
    // The writer is dead: a pid file left would only confuse a later run's check.
    let _ = std::fs::remove_file(dir.join(WRITER_PID_FILE));
    Ok(Recovered {
        summary,
        rows: summed.rows,
        dropped: lines.values().sum::<usize>().saturating_sub(summed.rows),
    })
}

/// Every interval of a finished dir summed into one recorder over `keys` (what `merge` adds
/// up per shard); an error at the first damaged row.
pub(super) fn sum_all(
    dir: &Path,
    keys: &KeySpace,
    interval: Duration,
) -> Result<Recorder, ResultsError> {
    let summed = sum_intervals(IntervalRows::open(dir)?, keys, interval, &HashMap::new());
    let bad = |message: String| ResultsError::Decode {
        file: INTERVALS_FILE,
        path: dir.join(INTERVALS_FILE),
        message,
    };
    if let Some(damage) = summed.damage {
        return Err(bad(damage));
    }
    if summed.unmatched > 0 {
        return Err(bad(format!(
            "{} row(s) name no target or type of the run",
            summed.unmatched
        )));
    }
    Ok(summed.total)
}

/// The intervals on disk, summed per key.
struct Summed {
    total: Recorder,
    /// End of the last interval counted, seconds since the start.
    end_s: f64,
    rows: usize,
    unmatched: usize,
    /// Why reading stopped early.
    damage: Option<String>,
}

fn interval_index(start_s: f64, interval: Duration) -> u64 {
    (start_s / interval.as_secs_f64() + 1e-6).floor() as u64
}

/// How many lines of `intervals.csv` each interval has, whole or not, by their first field.
fn lines_per_interval(
    path: &Path,
    interval: Duration,
) -> Result<HashMap<u64, usize>, ResultsError> {
    let text = std::fs::read(path).map_err(ResultsError::io("read", path))?;
    let mut n = HashMap::new();
    for line in text.split(|b| *b == b'\n') {
        let first = line.split(|b| *b == b',').next().unwrap_or_default();
        let start = std::str::from_utf8(first)
            .ok()
            .and_then(|t| t.parse::<f64>().ok());
        if let Some(start) = start.filter(|s| s.is_finite() && *s >= 0.0) {
            *n.entry(interval_index(start, interval)).or_insert(0) += 1;
        }
    }
    Ok(n)
}

/// Sums `rows` into a recorder over `keys`, one interval at a time: an interval's rows are
/// held until the next interval begins. When reading stops at damage, the interval open then
/// counts only if all its `lines` were read (the damage is in a later one).
fn sum_intervals(
    rows: impl Iterator<Item = Result<IntervalRow, ResultsError>>,
    keys: &KeySpace,
    interval: Duration,
    lines: &HashMap<u64, usize>,
) -> Summed {
    let targets: HashMap<(&str, &str, &str), usize> = keys
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let group = keys.groups[t.group].as_str();
            ((t.label.as_str(), group, t.set.as_str()), i)
        })
        .collect();
    let mut s = Summed {
        total: Recorder::new(keys.len()),
        end_s: 0.0,
        rows: 0,
        unmatched: 0,
        damage: None,
    };
    // The interval being read: its index, its rows' (key, slot), its end, its rows read.
    let mut open: Option<Open> = None;
    for row in rows {
        let row = match row {
            Ok(r) => r,
            Err(e) => {
                s.damage = Some(e.to_string());
                break;
            }
        };
        let index = interval_index(row.start_s, interval);
        if open.as_ref().is_some_and(|o| o.0 != index) {
            if let Some(done) = open.take() {
                commit(&mut s, done);
            }
        }
        let (_, held, end, read) = open.get_or_insert_with(|| (index, Vec::new(), 0.0, 0));
        *end = end.max(row.start_s + row.length_s);
        *read += 1;
        let target = targets.get(&(row.target.as_str(), row.group.as_str(), row.set.as_str()));
        let txn = keys.txn_types.iter().position(|t| *t == row.txn_type);
        let segment = keys.segments.iter().position(|g| {
            g.iteration == row.iteration
                && g.label == row.phase
                && row.start_s + 1e-3 >= g.start.as_secs_f64()
                && row.start_s < g.end.as_secs_f64() + 1e-3
        });
        match (segment, target, txn) {
            (Some(g), Some(t), Some(x)) => held.push((keys.key(g, *t, x), slot_of(&row))),
            _ => s.unmatched += 1,
        }
    }
    if let Some(last) = open {
        let whole = lines.get(&last.0).copied().unwrap_or(0) <= last.3;
        if s.damage.is_none() || whole {
            commit(&mut s, last);
        }
    }
    s
}

type Open = (u64, Vec<(usize, Slot)>, f64, usize);

fn commit(s: &mut Summed, (_, held, end, _): Open) {
    s.rows += held.len();
    s.end_s = s.end_s.max(end);
    for (key, slot) in held {
        if let Some(into) = s.total.slots.get_mut(key) {
            into.merge(&slot);
        }
    }
}

/// One row's counts and latency as a recorder slot. A file without the per-class columns
/// counts its failures as `other`.
fn slot_of(row: &IntervalRow) -> Slot {
    let mut slot = Slot {
        committed: row.committed,
        expected_rollback: row.expected_rollback,
        retried: row.retried,
        retried_txns: row.retried_txns,
        ..Slot::default()
    };
    match row.failed_by_class {
        Some(by) => slot.failed = by,
        None => slot.failed[ErrorClass::Other.index()] = row.failed,
    }
    if !row.latency.is_empty() {
        let mut h = new_histogram();
        // Same bounds as the writer's histograms; a value past them is clamped, not lost.
        for v in row.latency.iter_recorded() {
            h.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
        slot.latency = Some(h);
    }
    slot
}

#[cfg(test)]
#[path = "recover_tests.rs"]
mod tests;
