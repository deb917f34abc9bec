//! `tidebench merge`: the results dirs of a run's shards (issue 26) made into one ordinary
//! results dir, as the TPC-V kit's reporter merges its CE processes' mix logs.
//!
//! The dirs must be the shards of one run: the same run id and count, each shard once, none
//! missing (unless `--allow-missing`, which marks the result incomplete and never scales
//! anything up), the same targets and types. Then:
//! - every shard's intervals are summed into one recorder, so the totals are the sums of the
//!   shards' and the percentiles come from one pass over all their histograms (exact, not
//!   averaged); the summary is built from it as a one-process run's is;
//! - `intervals.csv` and `latency.hlog` hold every shard's rows, in time order, with a `shard`
//!   column (`report --by shard`);
//! - the server check runs over all shards at once (see `server`);
//! - the rest of each summary (emulators, per-command figures, incidents, down windows,
//!   aborted clients) is added up (see `extras`).
//!
//! The merged dir is written as `<out>.partial` and renamed when whole, so an interrupted
//! merge never leaves a dir that looks complete.

mod extras;
mod files;
mod server;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::read::ResultsDir;
use super::shard::{MergedShard, ShardFacts};
use super::start::RunStart;
use super::{RuntimeInfo, Summary, SUMMARY_FILE};
use crate::metrics::{KeySpace, Recorder};

/// What `merge` made.
#[derive(Debug)]
pub struct Merged {
    pub dir: PathBuf,
    pub summary: Summary,
    /// Shards the run had that were not given (with `--allow-missing`).
    pub missing: Vec<u32>,
    /// Databases the server check could not cover, and why.
    pub warnings: Vec<String>,
}

/// One shard's dir, read.
struct Shard {
    dir: PathBuf,
    summary: Summary,
    facts: ShardFacts,
    start: RunStart,
    keys: KeySpace,
    runtime: RuntimeInfo,
}

/// Merges `dirs` into `out`; an error names the dir and the fix.
pub fn merge(dirs: &[PathBuf], out: &Path, allow_missing: bool) -> Result<Merged, String> {
    if dirs.is_empty() {
        return Err("give the shards' results dirs: tidebench merge DIR... --out DIR".into());
    }
    if out.exists() {
        return Err(format!(
            "{} already exists; choose another --out or remove it",
            out.display()
        ));
    }
    let mut shards = dirs
        .iter()
        .map(|d| read_shard(d))
        .collect::<Result<Vec<_>, _>>()?;
    shards.sort_by_key(|s| s.facts.index);
    let missing = check_together(&shards, allow_missing)?;
    let first = &shards[0];
    let interval = first.runtime.plan.interval.max(Duration::from_millis(1));
    let mut total = Recorder::new(first.keys.len());
    for s in &shards {
        let recorder = super::recover::sum_all(&s.dir, &first.keys, interval)
            .map_err(|e| format!("{}: {e}", s.dir.display()))?;
        total.merge(&recorder);
    }
    let elapsed = shards
        .iter()
        .map(|s| s.summary.elapsed_s)
        .fold(0.0, f64::max);
    let complete = missing.is_empty() && shards.iter().all(|s| s.summary.complete);
    let facts = first
        .start
        .facts(Duration::from_secs_f64(elapsed.max(0.0)), complete);
    let summaries: Vec<&Summary> = shards.iter().map(|s| &s.summary).collect();
    let servers: Vec<&[super::ServerDelta]> =
        summaries.iter().map(|s| s.server.as_slice()).collect();
    let server_check = server::merged_deltas(&servers);
    let mut summary = Summary::build(
        &facts,
        &first.runtime.plan,
        &first.keys,
        &total,
        server_check.deltas,
    );
    extras::add(&mut summary, &summaries);
    let mut failures = Vec::new();
    if !missing.is_empty() {
        let list: Vec<String> = missing.iter().map(u32::to_string).collect();
        failures.push(format!(
            "merged without shard(s) {} of {} (--allow-missing): the totals cover the other \
             shards' clients only, nothing is scaled up",
            list.join(", "),
            first.facts.count
        ));
    }
    if !failures.is_empty() {
        let mut all: Vec<String> = summary.failure.take().into_iter().collect();
        all.extend(failures);
        summary.failure = Some(all.join("; "));
    }
    summary.shard = Some(ShardFacts {
        run_id: first.facts.run_id.clone(),
        index: 0,
        count: first.facts.count,
        host: "merged".into(),
        start_at: first.facts.start_at.clone(),
        clock_offsets: Vec::new(),
        merged: shards.iter().map(merged_shard).collect(),
    });
    let dir = write(out, &shards, &summary)?;
    Ok(Merged {
        dir,
        summary,
        missing,
        warnings: server_check.notes,
    })
}

fn read_shard(dir: &Path) -> Result<Shard, String> {
    let opened = ResultsDir::open(dir).map_err(|e| {
        format!(
            "{}: {e} (a shard that died leaves a .partial dir: `tidebench report DIR` rebuilds \
             its summary first)",
            dir.display()
        )
    })?;
    let runtime = opened.runtime().map_err(|e| e.to_string())?;
    let summary = opened.into_summary();
    let facts = summary.shard.clone().ok_or_else(|| {
        format!(
            "{} is not a shard's results (its summary.json has no `shard`): run each part with \
             `tidebench run ... --shard I/N --start-at WHEN`",
            dir.display()
        )
    })?;
    if !facts.merged.is_empty() {
        return Err(format!(
            "{} is already a merged dir; merge the shards' own dirs",
            dir.display()
        ));
    }
    let start = RunStart::read(dir).map_err(|e| e.to_string())?;
    let keys = start
        .keys()
        .map_err(|e| format!("{}: run-start.json: {e}", dir.display()))?;
    Ok(Shard {
        dir: dir.to_path_buf(),
        summary,
        facts,
        start,
        keys,
        runtime,
    })
}

/// The dirs are the shards of one run, each once, with the same targets and types; returns the
/// shards missing (an error unless `allow_missing`).
fn check_together(shards: &[Shard], allow_missing: bool) -> Result<Vec<u32>, String> {
    let first = &shards[0];
    for s in &shards[1..] {
        if s.facts.run_id != first.facts.run_id || s.facts.count != first.facts.count {
            return Err(format!(
                "{} is shard {}/{} of run {}, but {} is shard {}/{} of run {}: merge the dirs of \
                 one run only",
                first.dir.display(),
                first.facts.index,
                first.facts.count,
                first.facts.run_id,
                s.dir.display(),
                s.facts.index,
                s.facts.count,
                s.facts.run_id
            ));
        }
        if serde_json::to_string(&s.keys).ok() != serde_json::to_string(&first.keys).ok() {
            return Err(format!(
                "{} and {} name different targets, phases or transaction types: they were not \
                 run from the same plan",
                first.dir.display(),
                s.dir.display()
            ));
        }
    }
    for pair in shards.windows(2) {
        if pair[0].facts.index == pair[1].facts.index {
            return Err(format!(
                "{} and {} are both shard {}/{} of run {}: give each shard once",
                pair[0].dir.display(),
                pair[1].dir.display(),
                pair[0].facts.index,
                pair[0].facts.count,
                pair[0].facts.run_id
            ));
        }
    }
    let missing: Vec<u32> = (0..first.facts.count)
        .filter(|i| !shards.iter().any(|s| s.facts.index == *i))
        .collect();
    if !missing.is_empty() && !allow_missing {
        let list: Vec<String> = missing
            .iter()
            .map(|i| format!("{i}/{}", first.facts.count))
            .collect();
        return Err(format!(
            "run {} is missing shard(s) {}: give every shard's dir, or --allow-missing to merge \
             the others (the result is marked incomplete; nothing is scaled up)",
            first.facts.run_id,
            list.join(", ")
        ));
    }
    Ok(missing)
}

fn merged_shard(s: &Shard) -> MergedShard {
    MergedShard {
        index: s.facts.index,
        host: s.facts.host.clone(),
        dir: s.dir.display().to_string(),
        max_clock_offset_ms: s
            .facts
            .clock_offsets
            .iter()
            .map(|o| o.offset_ms.abs())
            .fold(0.0, f64::max),
        committed: s.summary.totals.committed,
        tps: s.summary.totals.tps,
        host_cpu_pct: host_cpu(&s.dir),
        lag_p95_ms: s.summary.totals.lag_ms.as_ref().map(|l| l.p95),
    }
}

/// A shard host's mean CPU use over its run (user + system), from its `system.csv`.
fn host_cpu(dir: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join(super::SYSTEM_FILE)).ok()?;
    let series = super::read::parse_system(&text).ok()?;
    let mean = |metric: &str| {
        let s = series
            .iter()
            .find(|s| s.source == "host" && s.metric == metric)?;
        let n = s.points.len();
        (n > 0).then(|| s.points.iter().map(|(_, v)| v).sum::<f64>() / n as f64)
    };
    let busy = mean("cpu_user_pct")? + mean("cpu_system_pct")?;
    Some((busy * 10.0).round() / 10.0)
}

/// Writes the merged dir as `<out>.partial`, renamed to `out` when whole.
fn write(out: &Path, shards: &[Shard], summary: &Summary) -> Result<PathBuf, String> {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    let staging = out.with_file_name(name);
    if staging.exists() {
        return Err(format!(
            "{} is left over from an interrupted merge; remove it and merge again",
            staging.display()
        ));
    }
    let io =
        |what: &str, p: &Path, e: std::io::Error| format!("cannot {what} {}: {e}", p.display());
    std::fs::create_dir_all(&staging).map_err(|e| io("create", &staging, e))?;
    let result = (|| {
        let dirs: Vec<(&Path, u32)> = shards
            .iter()
            .map(|s| (s.dir.as_path(), s.facts.index))
            .collect();
        files::copy_start(dirs[0].0, &staging)?;
        files::merge_intervals(&dirs, &staging)?;
        files::copy_mix_logs(&dirs, &staging)?;
        let text = summary.to_json().map_err(|e| e.to_string())?;
        let path = staging.join(SUMMARY_FILE);
        super::atomic::write(&path, text.as_bytes()).map_err(|e| e.to_string())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    std::fs::rename(&staging, out).map_err(|e| io("rename", &staging, e))?;
    Ok(out.to_path_buf())
}
