//! `system.csv`: what the samplers saw beside the run, as long ("tidy") rows, one value each.
//!
//! Columns ([`HEADER`]): `t_s,source,metric,value`.
//!
//! - `t_s`: seconds since the run started (3 decimals), the clock of `intervals.csv`
//!   (ramp-up included). One sampling round writes all its rows with one `t_s`.
//! - `source`: what was measured:
//!   `host` (the machine tidebench runs on), `instance:<name>` (a managed instance),
//!   `device:<dev>` (a block device of `/proc/diskstats`), `db:<target label>` (a target's
//!   database, label with passwords redacted), `server:<label>` (a PostgreSQL server, named by
//!   the label of its first target), `driver` (the tidebench process), `sampler` (the sampler
//!   itself), `noise:<N>` (the group of the run's event N, a `noise` event).
//! - `metric`: snake_case, unit in the name. Rates (`_per_s`, `_pct`) are over the time since
//!   the previous round, so the first round has none, nor has the round taken at the run's
//!   stop when it comes less than half a period after the one before; counters marked
//!   cumulative are the values as read (subtract two rows for a window). An instance's
//!   `cpu_seconds` and `rss_bytes` are left out of a round in which its processes kept
//!   starting or exiting while they were read (as when a run's clients disconnect).
//!
//! | source | metrics |
//! |---|---|
//! | `host` | `cpu_user_pct`, `cpu_system_pct`, `cpu_iowait_pct`, `cpu_steal_pct` (percent of all CPUs; user includes nice), `load1`, `mem_used_bytes` (total − free − buffers − page cache − reclaimable slab, as `free` computes it), `mem_cached_bytes` (buffers + page cache + reclaimable slab), `mem_free_bytes`, `ctx_switches_per_s` |
//! | `instance:<name>` | `cpu_seconds` (cumulative, all its processes), `cpu_pct` (100 = one core), `rss_bytes` (private memory of its processes plus the largest shared-memory and file-backed resident of any one, so shared buffers count once; a lower bound), `mem_usage_bytes`, `mem_cache_bytes` (page cache charged to its cgroup), `major_faults` (cumulative), `oom_events` (cumulative OOM kills in its cgroup), `mem_refaults` (cumulative pages its cgroup reclaimed and then needed again, file and anonymous: `memory.stat` `workingset_refault_file` + `workingset_refault_anon`, v1 `total_` keys; what reclaim cost), `mem_limit_hits` (cumulative times its usage reached the limit: v1 `memory.failcnt`, v2 `memory.events` `max`); the `mem_*` and `oom_events` metrics only when the instance has a cgroup. A VM instance (`--hypervisor qemu`): `cpu_seconds`, `cpu_pct` and `rss_bytes` are its QEMU process's (the VM's cost to the host); from the guest's stats port (its own /proc, once a second) `guest_cpu_busy_pct`, `guest_cpu_steal_pct` (percent of all its vCPUs), `guest_mem_total_bytes`, `guest_mem_available_bytes`, `guest_disk_read_bytes_per_s`, `guest_disk_write_bytes_per_s` (all its disks), `guest_net_rx_bytes_per_s`, `guest_net_tx_bytes_per_s` (eth0); from QMP `guest_memory_bytes` (what the guest has: its RAM less the balloon), `guest_balloon_bytes`, `guest_mem_free_bytes` (the balloon driver's) |
//! | `device:<dev>` | `read_bytes_per_s`, `write_bytes_per_s`, `reads_per_s`, `writes_per_s`, `avg_wait_ms` (mean time per IO completed in the round, queueing included) |
//! | `db:<label>` | cumulative `pg_stat_database` counters: `xact_commit`, `xact_rollback`, `blks_hit`, `blks_read`, `tup_returned`, `tup_fetched`, `tup_inserted`, `tup_updated`, `tup_deleted`, `temp_bytes`, `deadlocks`; and `hit_ratio` (0..1, blocks hit over blocks accessed during the round; absent when none were) |
//! | `server:<label>` | cumulative `checkpoints_timed`, `checkpoints_req`, `buffers_checkpoint`, `buffers_clean`, `buffers_backend`, `buffers_alloc` (`pg_stat_bgwriter`), `wal_bytes` (the WAL position in bytes); on a primary with standbys, the gauges `replication_lag_bytes` (the furthest standby's replay position behind the primary's WAL) and `replication_lag_s` (the largest `replay_lag` of `pg_stat_replication`) |
//! | `noise:<N>` | while event N's noise runs (its group exists only then): `cpu_seconds` (cumulative, from its cgroup), `cpu_pct` (100 = one core; not in the round the group appeared in) |
//! | `driver` | `cpu_seconds` (cumulative user + system CPU time of the tidebench process: its clients' driver threads, its runtime and the sampler; what `compare` judges as `client_cpu`) |
//! | `sampler` | `round_ms` (wall time of the round), `cpu_ms` (CPU time tidebench spent reading and writing the round), `pg_ms` (wall time of the round's PostgreSQL queries) |
//!
//! Which device holds an instance's data dir and WAL is in `runtime.toml`. RFC 4180 quoting
//! applies to a field holding a comma, quote or line break. The schema version of this file
//! is the results dir's (`summary.json`, `runtime.toml`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::csv::{csv_field, split_line};
use super::{ResultsError, SYSTEM_FILE};

pub const HEADER: &str = "t_s,source,metric,value";

/// The cumulative metrics of a `server:<label>` source, in the order the sampler reads them
/// and the report shows them.
pub const SERVER_COUNTERS: [&str; 7] = [
    "checkpoints_timed",
    "checkpoints_req",
    "buffers_checkpoint",
    "buffers_clean",
    "buffers_backend",
    "buffers_alloc",
    "wal_bytes",
];

/// One value of one round.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemRow {
    pub t_s: f64,
    pub source: String,
    pub metric: String,
    pub value: f64,
}

/// Appends rows to `system.csv`, flushing after each round.
pub struct SystemWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl SystemWriter {
    /// Creates `system.csv` in `dir` with its header.
    pub fn create(dir: &Path) -> Result<SystemWriter, ResultsError> {
        let path = dir.join(SYSTEM_FILE);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(ResultsError::io("create", &path))?;
        let mut out = BufWriter::new(file);
        writeln!(out, "{HEADER}")
            .and_then(|()| out.flush())
            .map_err(ResultsError::io("write", &path))?;
        Ok(SystemWriter { path, out })
    }

    /// Writes one round's `(source, metric, value)` triples at `t` and flushes them to the OS.
    /// Values that are not finite (a division by a zero window) are left out.
    pub fn write_round<'a>(
        &mut self,
        t: Duration,
        values: impl IntoIterator<Item = (&'a str, &'a str, f64)>,
    ) -> Result<(), ResultsError> {
        let mut text = String::new();
        for (source, metric, value) in values {
            if value.is_finite() {
                push_row(&mut text, t, source, metric, value);
            }
        }
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(ResultsError::io("write", &self.path))
    }

    /// Flushes and syncs the file (the results dir is renamed right after).
    pub fn finish(self) -> Result<(), ResultsError> {
        let path = self.path;
        let file = self
            .out
            .into_inner()
            .map_err(|e| ResultsError::io("write", &path)(e.into_error()))?;
        file.sync_all().map_err(ResultsError::io("sync", &path))
    }
}

fn push_row(text: &mut String, t: Duration, source: &str, metric: &str, value: f64) {
    use std::fmt::Write as _;
    let _ = writeln!(
        text,
        "{:.3},{},{},{}",
        t.as_secs_f64(),
        csv_field(source),
        csv_field(metric),
        format_value(value)
    );
}

/// Integers without a fraction, others with up to 6 significant decimals.
fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Parses the text of a `system.csv`; `path` only names the file in errors.
pub fn parse(text: &str, path: &Path) -> Result<Vec<SystemRow>, ResultsError> {
    let bad = |line: usize, message: String| ResultsError::Decode {
        file: SYSTEM_FILE,
        path: path.to_path_buf(),
        message: format!("line {line}: {message}"),
    };
    let mut lines = text.lines();
    match lines.next() {
        Some(h) if h.trim_end() == HEADER => {}
        other => {
            return Err(bad(
                1,
                format!(
                    "expected the header '{HEADER}', found '{}'",
                    other.unwrap_or("")
                ),
            ))
        }
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let n = i + 2;
        if line.is_empty() {
            continue;
        }
        let f = split_line(line);
        let [t, source, metric, value] = f.as_slice() else {
            return Err(bad(n, format!("expected 4 fields, found {}", f.len())));
        };
        let num = |s: &str, what: &str| {
            s.parse::<f64>()
                .map_err(|_| bad(n, format!("{what} '{s}' is not a number")))
        };
        rows.push(SystemRow {
            t_s: num(t, "t_s")?,
            source: source.clone(),
            metric: metric.clone(),
            value: num(value, "value")?,
        });
    }
    Ok(rows)
}

/// Reads `system.csv` from a results dir; `Ok(None)` when the run had no sampler.
pub fn read(dir: &Path) -> Result<Option<Vec<SystemRow>>, ResultsError> {
    let path = dir.join(SYSTEM_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text, &path).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ResultsError::io("read", &path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_quoting() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SystemWriter::create(tmp.path()).unwrap();
        w.write_round(
            Duration::from_millis(1500),
            [
                ("host", "cpu_user_pct", 12.5),
                ("db:host=/tmp, port=5432", "xact_commit", 42.0),
                ("db:\"q\"", "hit_ratio", 0.987654321),
                ("host", "load1", f64::NAN),
            ],
        )
        .unwrap();
        w.finish().unwrap();
        let text = std::fs::read_to_string(tmp.path().join(SYSTEM_FILE)).unwrap();
        assert_eq!(
            text,
            "t_s,source,metric,value\n1.500,host,cpu_user_pct,12.5\n\
             1.500,\"db:host=/tmp, port=5432\",xact_commit,42\n\
             1.500,\"db:\"\"q\"\"\",hit_ratio,0.987654\n"
        );
        let rows = read(tmp.path()).unwrap().unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].source, "db:host=/tmp, port=5432");
        assert_eq!(rows[2].source, "db:\"q\"");
        assert_eq!((rows[0].t_s, rows[1].value), (1.5, 42.0));
    }

    #[test]
    fn missing_file_is_none_and_bad_rows_name_the_line() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(read(tmp.path()).unwrap().is_none());
        let err = parse(
            "t_s,source,metric,value\n1,host,x,abc\n",
            Path::new("s.csv"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("line 2") && err.contains("abc"), "{err}");
        assert!(parse("a,b\n", Path::new("s.csv")).is_err());
    }
}
