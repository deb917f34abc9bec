//! Writing a results dir: staged under `<out>.partial/`, appended every interval, renamed to
//! `<out>/` by [`ResultsWriter::finish`] once `runtime.toml` and `summary.json` are on disk.
//!
//! Durability: `runtime.toml` and `run-start.json` are written (temp file + rename) when the
//! measured window starts, so a killed driver leaves what `recover` needs. Each interval is
//! flushed to the OS (a killed process loses nothing measured but the interval in flight) and
//! a syncer thread fsyncs the appended files every [`SYNC_EVERY`](super::syncer::SYNC_EVERY) (a machine crash loses at
//! most that much more). `finish` fsyncs every file and the dir before the rename, and the
//! parent after it, so a machine crash leaves either the `.partial` dir or a complete one.
//!
//! A write that fails (a full disk) fails the writer: later intervals are not written, and
//! `finish` writes what it can into the `.partial` dir (summary marked incomplete), leaves it
//! there and returns [`ResultsError::Unfinished`] with the totals.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::atomic::{self, WriteError};
use super::hlog::HlogWriter;
use super::syncer::Syncer;
use super::{intervals, ResultsError, RunStart, RuntimeInfo, Summary};
use super::{HLOG_FILE, INTERVALS_FILE, RUNTIME_FILE, START_FILE, SUMMARY_FILE};
use crate::metrics::{KeySpace, Recorder};

/// `results/<UTC timestamp>-<name>` (the run's title: its preset, run file or workload), e.g.
/// `results/20261122T031500Z-tpcb`, relative to the current directory; `-2`, `-3`... appended
/// while that name (or its `.partial`) is taken, so two runs started in the same second get
/// two dirs.
pub fn default_dir(workload: &str) -> PathBuf {
    let base = dir_name(SystemTime::now(), workload);
    (1..)
        .map(|n| match n {
            1 => Path::new("results").join(&base),
            n => Path::new("results").join(format!("{base}-{n}")),
        })
        .find(|d| {
            let partial = staging_dir(d).ok();
            d.symlink_metadata().is_err() && partial.is_some_and(|p| p.symlink_metadata().is_err())
        })
        .unwrap_or_else(|| Path::new("results").join(base))
}

/// The file in a `.partial` dir naming the process writing it, so another run can tell a live
/// run's dir from one a killed run left.
pub const WRITER_PID_FILE: &str = "writer.pid";

/// The pid of the live tidebench writing `staging`, if one is.
pub(crate) fn live_writer(staging: &Path) -> Option<u32> {
    let pid: u32 = fs::read_to_string(staging.join(WRITER_PID_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    comm.trim_end().starts_with("tidebench").then_some(pid)
}

/// The error for a staging dir that exists: in use by a live run, or left over.
fn taken(staging: PathBuf) -> ResultsError {
    match live_writer(&staging) {
        Some(pid) => ResultsError::InUse { staging, pid },
        None => ResultsError::LeftOver(staging),
    }
}

/// `<UTC timestamp>-<workload>`, e.g. `20261122T031500Z-tpcb`: sorts by time, no `:` in it.
pub fn dir_name(at: SystemTime, workload: &str) -> String {
    let stamp: String = super::utc_rfc3339(at)
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    format!("{stamp}-{workload}")
}

/// Where a results dir is staged until it is complete: `<final>.partial`, beside it.
pub fn staging_dir(final_dir: &Path) -> Result<PathBuf, ResultsError> {
    let name = final_dir
        .file_name()
        .ok_or_else(|| ResultsError::BadPath(final_dir.to_path_buf()))?;
    let mut staged = name.to_os_string();
    staged.push(".partial");
    Ok(final_dir.with_file_name(staged))
}

/// An open results dir, staged until [`ResultsWriter::finish`].
pub struct ResultsWriter {
    final_dir: PathBuf,
    staging: PathBuf,
    intervals: BufWriter<File>,
    hlog: HlogWriter<BufWriter<File>>,
    syncer: Syncer,
    /// The first write that failed: the dir cannot be complete any more.
    failed: Option<String>,
}

impl ResultsWriter {
    /// Fails if a run could not be written to `final_dir`: it, or a `.partial` left over from an
    /// interrupted run, exists. Call it before connecting to fail fast; `create` checks again.
    pub fn ensure_free(final_dir: &Path) -> Result<(), ResultsError> {
        if final_dir.symlink_metadata().is_ok() {
            return Err(ResultsError::Exists(final_dir.to_path_buf()));
        }
        let staging = staging_dir(final_dir)?;
        if staging.symlink_metadata().is_ok() {
            return Err(taken(staging));
        }
        Ok(())
    }

    /// Creates `<final_dir>.partial/` (and missing parents) with the headers of `intervals.csv`
    /// and `latency.hlog`. Call it when the measured window starts: `measured_start` is the
    /// zero of every interval offset.
    pub fn create(
        final_dir: &Path,
        measured_start: SystemTime,
    ) -> Result<ResultsWriter, ResultsError> {
        ResultsWriter::ensure_free(final_dir)?;
        let staging = staging_dir(final_dir)?;
        if let Some(parent) = staging.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(ResultsError::io("create directory", parent))?;
        }
        // create_dir, not create_dir_all: a concurrent run with the same --out must fail here.
        fs::create_dir(&staging).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => taken(staging.clone()),
            _ => ResultsError::io("create directory", &staging)(e),
        })?;
        let pid_path = staging.join(WRITER_PID_FILE);
        fs::write(&pid_path, format!("{}\n", std::process::id()))
            .map_err(ResultsError::io("write", &pid_path))?;

        let mut intervals = new_file(&staging.join(INTERVALS_FILE))?;
        let path = staging.join(INTERVALS_FILE);
        writeln!(intervals, "{}", intervals::HEADER)
            .and_then(|()| intervals.flush())
            .map_err(ResultsError::io("write", &path))?;

        let path = staging.join(HLOG_FILE);
        let mut hlog = HlogWriter::begin(new_file(&path)?, measured_start)
            .map_err(ResultsError::io("write", &path))?;
        hlog.get_mut()
            .flush()
            .map_err(ResultsError::io("write", &path))?;

        let syncer = Syncer::start(vec![
            (
                staging.join(INTERVALS_FILE),
                intervals.get_ref().try_clone(),
            ),
            (path, hlog.get_mut().get_ref().try_clone()),
        ]);
        Ok(ResultsWriter {
            final_dir: final_dir.to_path_buf(),
            staging,
            intervals,
            hlog,
            syncer,
            failed: None,
        })
    }

    /// Writes `runtime.toml` and `run-start.json` now, before the first interval, so a driver
    /// killed mid-run leaves what `recover` rebuilds the summary from. `finish` writes
    /// `runtime.toml` again with what the end knows.
    pub fn record_start(
        &mut self,
        runtime: &RuntimeInfo,
        start: &RunStart,
    ) -> Result<(), ResultsError> {
        let runtime_text = runtime.to_toml()?;
        let start_text = start.to_json()?;
        atomic::write(&self.staging.join(RUNTIME_FILE), runtime_text.as_bytes())?;
        atomic::write(&self.staging.join(START_FILE), start_text.as_bytes())?;
        Ok(())
    }

    /// The first write that failed, if one did: the results cannot be complete.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Where files are being written now.
    pub fn staging_path(&self) -> &Path {
        &self.staging
    }

    /// Where they will be after `finish`.
    pub fn final_path(&self) -> &Path {
        &self.final_dir
    }

    /// Appends one interval (`rec` holds only that interval's transactions) to `intervals.csv`
    /// and `latency.hlog`, and flushes both. `start_offset` counts from the measured start.
    /// The first failure (a full disk, or an fsync of the syncer that failed) fails the
    /// writer: this and every later call return it, and nothing more is appended.
    pub fn write_interval(
        &mut self,
        start_offset: Duration,
        length: Duration,
        keys: &KeySpace,
        rec: &Recorder,
    ) -> Result<(), ResultsError> {
        if let Some(why) = &self.failed {
            return Err(ResultsError::Encode {
                file: INTERVALS_FILE,
                message: format!("not written after an earlier failure: {why}"),
            });
        }
        let written = self.append(start_offset, length, keys, rec);
        if let Err(e) = &written {
            self.failed = Some(e.to_string());
        }
        written
    }

    fn append(
        &mut self,
        start_offset: Duration,
        length: Duration,
        keys: &KeySpace,
        rec: &Recorder,
    ) -> Result<(), ResultsError> {
        if let Some(e) = self.syncer.error() {
            return Err(e.into());
        }
        let rows = intervals::rows(start_offset, length, keys, rec);
        let csv_path = self.staging.join(INTERVALS_FILE);
        self.intervals
            .write_all(rows.as_bytes())
            .and_then(|()| self.intervals.flush())
            .map_err(|e| WriteError::new(&csv_path, e))?;
        let hlog_path = self.staging.join(HLOG_FILE);
        self.hlog
            .write_interval(start_offset, length, keys, rec)
            .and_then(|()| self.hlog.get_mut().flush())
            .map_err(|e| WriteError::new(&hlog_path, e))?;
        Ok(())
    }

    /// Writes `runtime.toml` and `summary.json`, syncs everything, and renames the staging dir
    /// to the final one. Interrupted runs call it too, with `summary.complete == false`.
    /// Returns the final dir.
    ///
    /// When a write failed during the run or fails now, the dir stays `.partial`: what can
    /// still be written goes there (the summary marked incomplete, with the reason), and the
    /// error carries the totals so the caller can show them.
    pub fn finish(self, runtime: &RuntimeInfo, summary: &Summary) -> Result<PathBuf, ResultsError> {
        let ResultsWriter {
            final_dir,
            staging,
            intervals,
            hlog,
            syncer,
            failed,
        } = self;
        syncer.stop();
        if let Some(why) = failed {
            // What the writers still buffer belongs to the failed interval: dropped, not
            // flushed (a BufWriter flushes on drop), so no half interval lands later.
            let _ = intervals.into_parts();
            let _ = hlog.into_inner().into_parts();
            return Err(unfinished(&staging, runtime, summary, why));
        }
        let written = sync_writer(intervals, &staging.join(INTERVALS_FILE))
            .and_then(|()| sync_writer(hlog.into_inner(), &staging.join(HLOG_FILE)))
            .and_then(|()| {
                atomic::write(&staging.join(RUNTIME_FILE), runtime.to_toml()?.as_bytes())?;
                atomic::write(&staging.join(SUMMARY_FILE), summary.to_json()?.as_bytes())?;
                sync_dir(&staging)
            });
        if let Err(e) = written {
            return Err(unfinished(&staging, runtime, summary, e.to_string()));
        }

        // rename(2) would quietly replace an empty directory that appeared during the run.
        if final_dir.symlink_metadata().is_ok() {
            return Err(ResultsError::Taken { final_dir, staging });
        }
        // A finished dir names no writer.
        let _ = fs::remove_file(staging.join(WRITER_PID_FILE));
        fs::rename(&staging, &final_dir)
            .map_err(ResultsError::io("rename the staging dir to", &final_dir))?;
        if let Some(parent) = final_dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
        Ok(final_dir)
    }
}

/// The error of a run whose results could not all be written: tries to leave `runtime.toml`
/// and an incomplete `summary.json` in the staging dir (a disk may have room again, or the
/// failure was in one file only), and names the totals either way.
fn unfinished(
    staging: &Path,
    runtime: &RuntimeInfo,
    summary: &Summary,
    why: String,
) -> ResultsError {
    let mut kept = summary.clone();
    kept.complete = false;
    let note = format!("the results could not be written: {why}");
    kept.failure = Some(match kept.failure.take() {
        Some(f) => format!("{f}; {note}"),
        None => note,
    });
    if let Ok(text) = runtime.to_toml() {
        let _ = atomic::write(&staging.join(RUNTIME_FILE), text.as_bytes());
    }
    if let Ok(text) = kept.to_json() {
        let _ = atomic::write(&staging.join(SUMMARY_FILE), text.as_bytes());
    }
    let _ = fs::remove_file(staging.join(WRITER_PID_FILE));
    let t = &summary.totals;
    ResultsError::Unfinished {
        staging: staging.to_path_buf(),
        why,
        totals: format!(
            "{} committed, {} expected rollbacks, {} failed over {:.1} s measured ({:.1} tps)",
            t.committed, t.expected_rollback, t.failed, summary.duration_s, t.tps
        ),
    }
}

fn new_file(path: &Path) -> Result<BufWriter<File>, ResultsError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(BufWriter::new)
        .map_err(ResultsError::io("create", path))
}

fn sync_writer(w: BufWriter<File>, path: &Path) -> Result<(), ResultsError> {
    let file = w
        .into_inner()
        .map_err(|e| WriteError::new(path, e.into_error()))?;
    file.sync_all()
        .map_err(|e| ResultsError::Write(WriteError::new(path, e)))
}

/// Makes a dir's entries (new files, a rename) durable.
fn sync_dir(dir: &Path) -> Result<(), ResultsError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(ResultsError::io("sync directory", dir))
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
