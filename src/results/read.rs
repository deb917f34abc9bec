//! The one reader of a results dir: `report`, `report --by`, `compare` and the experiments all
//! read a run back through [`ResultsDir`], so each file is parsed in one place.
//!
//! ```no_run
//! # fn main() -> Result<(), tidebench::results::ResultsError> {
//! use tidebench::results::read::ResultsDir;
//! let run = ResultsDir::open(std::path::Path::new("results/run"))?; // needs summary.json
//! let tps = run.summary().totals.tps;
//! let mut timed = 0; // transactions with a latency, over every row
//! for row in run.interval_rows()? {
//!     let row = row?; // one intervals.csv row and its latency.hlog histogram
//!     timed += row.latency.len();
//! }
//! # let _ = (tps, timed);
//! # Ok(()) }
//! ```
//!
//! Memory stays flat on long runs: [`IntervalRows`] reads `intervals.csv` and `latency.hlog`
//! line by line, side by side (the n-th log entry belongs to the n-th row), and hands out one
//! row with its histogram at a time. Only `summary.json` is required; the other pieces are
//! read on demand, and a caller decides what to leave out when one is missing or damaged.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use super::csv::split_line;
use super::hlog::Entries;
use super::{ResultsError, RuntimeInfo, Summary, HLOG_FILE, INTERVALS_FILE, SYSTEM_FILE};
use crate::metrics::{ErrorClass, DEFAULT_ROLE};

/// A results dir whose `summary.json` has been read.
#[derive(Debug, Clone)]
pub struct ResultsDir {
    dir: PathBuf,
    summary: Summary,
}

impl ResultsDir {
    /// Opens a results dir: reads its `summary.json` (the one required piece, refused in
    /// another schema version).
    pub fn open(dir: &Path) -> Result<ResultsDir, ResultsError> {
        Ok(ResultsDir {
            dir: dir.to_path_buf(),
            summary: Summary::read(dir)?,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    pub fn into_summary(self) -> Summary {
        self.summary
    }

    /// `runtime.toml`: what ran, where.
    pub fn runtime(&self) -> Result<RuntimeInfo, ResultsError> {
        RuntimeInfo::read(&self.dir)
    }

    /// True when the workload's emulator issued `txn_type` (outside the mix shares), as
    /// `summary.json`'s `mix` or else `runtime.toml`'s types say; false for results written
    /// before either recorded it.
    pub fn is_emulated(&self, txn_type: &str) -> bool {
        if let Some(t) = self.summary.mix.iter().find(|t| t.txn_type == txn_type) {
            return t.emulated;
        }
        self.runtime()
            .is_ok_and(|r| r.txn_types.iter().any(|t| t.name == txn_type && t.emulated))
    }

    /// The rows of `intervals.csv`, each with its `latency.hlog` histogram, in file order.
    pub fn interval_rows(&self) -> Result<IntervalRows, ResultsError> {
        IntervalRows::open(&self.dir)
    }

    /// `system.csv` as one series per (source, metric), in first-seen order; `Ok(None)` when
    /// the run had no samplers. Values that are not numbers are skipped.
    pub fn system(&self) -> Result<Option<Vec<SystemSeries>>, ResultsError> {
        let path = self.dir.join(SYSTEM_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ResultsError::io("read", &path)(e)),
        };
        parse_system(&text)
            .map(Some)
            .map_err(|message| ResultsError::Decode {
                file: SYSTEM_FILE,
                path,
                message,
            })
    }
}

/// One row of `intervals.csv` (see `results::intervals` for the columns) with the latency
/// histogram of its transactions from `latency.hlog`.
#[derive(Debug, Clone)]
pub struct IntervalRow {
    /// Seconds since the run started (ramp-up included).
    pub start_s: f64,
    pub length_s: f64,
    pub iteration: u32,
    pub phase: String,
    pub measured: bool,
    pub group: String,
    pub set: String,
    pub target: String,
    pub txn_type: String,
    /// `oltp` in files written before roles.
    pub role: String,
    /// The shard the row came from, in a merged dir (`tidebench merge`); empty otherwise.
    pub shard: String,
    pub count: u64,
    pub committed: u64,
    pub expected_rollback: u64,
    pub failed: u64,
    pub retried: u64,
    /// Transactions with a retry; 0 in files written before the column.
    pub retried_txns: u64,
    /// `failed` by class in `ErrorClass::ALL` order; `None` in files written before the
    /// per-class columns.
    pub failed_by_class: Option<[u64; ErrorClass::ALL.len()]>,
    /// Latency (µs) of the row's transactions that did not fail.
    pub latency: Histogram<u64>,
}

/// Column positions, found by name so added columns never shift a reader.
struct Columns {
    width: usize,
    start: usize,
    length: usize,
    iteration: usize,
    phase: usize,
    measured: usize,
    group: usize,
    set: usize,
    target: usize,
    txn: usize,
    count: usize,
    committed: usize,
    expected: usize,
    failed: usize,
    retried: usize,
    retried_txns: Option<usize>,
    role: Option<usize>,
    shard: Option<usize>,
    failed_class: Option<Vec<usize>>,
}

/// Streams `intervals.csv` and `latency.hlog` side by side. Yields an error (and then stops)
/// when a line is damaged or the two files do not have as many rows as entries.
pub struct IntervalRows {
    path: PathBuf,
    csv: Lines<BufReader<File>>,
    log: Entries<BufReader<File>>,
    c: Columns,
    /// Rows read so far.
    rows: usize,
    done: bool,
}

impl IntervalRows {
    /// The rows of the results dir `dir` without reading its summary: `report --by` also
    /// reads the `.partial` dir a killed run left, which has none.
    pub fn open(dir: &Path) -> Result<IntervalRows, ResultsError> {
        let path = dir.join(INTERVALS_FILE);
        let file = File::open(&path).map_err(ResultsError::io("read", &path))?;
        let log_path = dir.join(HLOG_FILE);
        let log = File::open(&log_path).map_err(ResultsError::io("read", &log_path))?;
        let mut csv = BufReader::new(file).lines();
        let header = match csv.next() {
            Some(Ok(h)) => split_line(&h),
            Some(Err(e)) => return Err(ResultsError::io("read", &path)(e)),
            None => return Err(decode(&path, "the file is empty".into())),
        };
        let col = |name: &str| header.iter().position(|h| h == name);
        let need =
            |name: &str| col(name).ok_or_else(|| decode(&path, format!("no column '{name}'")));
        let c = Columns {
            width: header.len(),
            start: need("interval_start_s")?,
            length: need("interval_length_s")?,
            iteration: need("iteration")?,
            phase: need("phase")?,
            measured: need("measured")?,
            group: need("group")?,
            set: need("set")?,
            target: need("target")?,
            txn: need("txn_type")?,
            count: need("count")?,
            committed: need("committed")?,
            expected: need("expected_rollback")?,
            failed: need("failed")?,
            retried: need("retried")?,
            retried_txns: col("retried_txns"),
            role: col("role"),
            shard: col("shard"),
            failed_class: ErrorClass::ALL
                .iter()
                .map(|k| col(&format!("failed_{}", k.name())))
                .collect(),
        };
        Ok(IntervalRows {
            path,
            csv,
            log: Entries::new(BufReader::new(log)),
            c,
            rows: 0,
            done: false,
        })
    }

    /// The file has the `failed_<class>` columns.
    pub fn has_failed_by_class(&self) -> bool {
        self.c.failed_class.is_some()
    }

    /// The next non-empty CSV line, or `None` at the end.
    fn next_line(&mut self) -> Option<Result<String, ResultsError>> {
        for line in self.csv.by_ref() {
            match line {
                Ok(l) if l.is_empty() => continue,
                Ok(l) => return Some(Ok(l)),
                Err(e) => return Some(Err(ResultsError::io("read", &self.path)(e))),
            }
        }
        None
    }

    fn row(&self, line: &str, latency: Histogram<u64>) -> Result<IntervalRow, ResultsError> {
        let f = split_line(line);
        let c = &self.c;
        if f.len() != c.width {
            return Err(decode(
                &self.path,
                format!(
                    "row {}: {} fields, the header has {}",
                    self.rows,
                    f.len(),
                    c.width
                ),
            ));
        }
        // Counts as tidebench wrote them; a field edited into garbage counts as zero, as the
        // report always read it.
        let num = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        let real = |i: usize| f[i].parse::<f64>().unwrap_or(0.0);
        let failed_by_class = c.failed_class.as_ref().map(|cols| {
            let mut by = [0u64; ErrorClass::ALL.len()];
            for (n, col) in by.iter_mut().zip(cols) {
                *n = num(*col);
            }
            by
        });
        Ok(IntervalRow {
            start_s: real(c.start),
            length_s: real(c.length),
            iteration: f[c.iteration].parse().unwrap_or(0),
            phase: f[c.phase].clone(),
            measured: f[c.measured] == "true",
            group: f[c.group].clone(),
            set: f[c.set].clone(),
            target: f[c.target].clone(),
            txn_type: f[c.txn].clone(),
            role: c
                .role
                .map_or_else(|| DEFAULT_ROLE.to_string(), |i| f[i].clone()),
            shard: c.shard.map(|i| f[i].clone()).unwrap_or_default(),
            count: num(c.count),
            committed: num(c.committed),
            expected_rollback: num(c.expected),
            failed: num(c.failed),
            retried: num(c.retried),
            retried_txns: c.retried_txns.map_or(0, num),
            failed_by_class,
            latency,
        })
    }

    /// Ends the stream with a mismatch error naming both counts.
    fn mismatch(&mut self, entries: usize) -> ResultsError {
        let rows = self.rows
            + self
                .csv
                .by_ref()
                .filter(|l| !matches!(l, Ok(l) if l.is_empty()))
                .count();
        decode(
            &self.path,
            format!(
                "{rows} rows but latency.hlog has {entries} entries; the results dir is damaged"
            ),
        )
    }
}

impl Iterator for IntervalRows {
    type Item = Result<IntervalRow, ResultsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let line = self.next_line();
        let entry = self.log.next();
        let item = match (line, entry) {
            (None, None) => None,
            (Some(Err(e)), _) => Some(Err(e)),
            (_, Some(Err(message))) => Some(Err(ResultsError::Decode {
                file: HLOG_FILE,
                path: self.path.with_file_name(HLOG_FILE),
                message,
            })),
            (Some(Ok(line)), Some(Ok(entry))) => {
                self.rows += 1;
                let row = self.row(&line, entry.histogram);
                self.done = row.is_err();
                return Some(row);
            }
            (Some(Ok(_)), None) => {
                let entries = self.rows;
                self.rows += 1;
                Some(Err(self.mismatch(entries)))
            }
            (None, Some(Ok(_))) => {
                let entries = self.rows + 1 + self.log.by_ref().count();
                Some(Err(decode(
                    &self.path,
                    format!(
                        "{} rows but latency.hlog has {entries} entries; the results dir is damaged",
                        self.rows
                    ),
                )))
            }
        };
        self.done = true;
        item
    }
}

fn decode(path: &Path, message: String) -> ResultsError {
    ResultsError::Decode {
        file: INTERVALS_FILE,
        path: path.to_path_buf(),
        message,
    }
}

/// One sampled series of `system.csv`.
#[derive(Debug, Clone)]
pub struct SystemSeries {
    pub source: String,
    pub metric: String,
    /// (seconds since run start, value), in file order.
    pub points: Vec<(f64, f64)>,
}

/// Parses `system.csv` (`t_s,source,metric,value`) into one series per (source, metric).
pub fn parse_system(text: &str) -> Result<Vec<SystemSeries>, String> {
    let mut lines = text.lines();
    let header = split_line(lines.next().ok_or("the file is empty")?);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column '{name}'"))
    };
    let (ct, cs, cm, cv) = (col("t_s")?, col("source")?, col("metric")?, col("value")?);
    let width = header.len();
    let mut index: HashMap<String, HashMap<String, usize>> = HashMap::new();
    let mut series: Vec<SystemSeries> = Vec::new();
    for (n, line) in lines.enumerate() {
        if line.is_empty() {
            continue;
        }
        // Most lines hold no quotes: split them without allocating a String per field.
        let owned: Vec<String>;
        let f: Vec<&str> = if line.contains('"') {
            owned = split_line(line);
            owned.iter().map(String::as_str).collect()
        } else {
            line.split(',').collect()
        };
        if f.len() != width {
            return Err(format!(
                "line {} has {} fields, the header {width}",
                n + 2,
                f.len()
            ));
        }
        // Like an unparsable number, an infinite or NaN one (never written by tidebench) is
        // left out: charts and sums need finite points.
        let (Ok(t), Ok(v)) = (f[ct].parse::<f64>(), f[cv].parse::<f64>()) else {
            continue;
        };
        if !t.is_finite() || !v.is_finite() {
            continue;
        }
        let by_metric = match index.get_mut(f[cs]) {
            Some(m) => m,
            None => index.entry(f[cs].to_string()).or_default(),
        };
        let i = match by_metric.get(f[cm]) {
            Some(i) => *i,
            None => {
                series.push(SystemSeries {
                    source: f[cs].to_string(),
                    metric: f[cm].to_string(),
                    points: Vec::new(),
                });
                by_metric.insert(f[cm].to_string(), series.len() - 1);
                series.len() - 1
            }
        };
        series[i].points.push((t, v));
    }
    Ok(series)
}

#[cfg(test)]
pub mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::metrics::{Outcome, Recorder};
    use crate::results::hlog::HlogWriter;
    use crate::results::{intervals, SUMMARY_FILE};

    /// A results dir with two rows (types a on `oltp`, b on `dss`, issued by an emulator);
    /// returns its CSV text.
    pub fn write_dir(dir: &Path) -> String {
        let mut keys = intervals::tests::two_phase_keys();
        keys.txn_roles = vec!["oltp".into(), "dss".into()];
        keys.txn_emulated = vec![false, true];
        let mut rec = Recorder::new(keys.len());
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 1_000, None, 0);
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 3_000, None, 0);
        rec.record(keys.key(1, 1, 1), Outcome::ExpectedRollback, 2_000, None, 0);
        let (start, len) = (Duration::from_secs(5), Duration::from_secs(10));
        let csv = format!(
            "{}\n{}",
            intervals::HEADER,
            intervals::rows(start, len, &keys, &rec)
        );
        std::fs::write(dir.join(INTERVALS_FILE), &csv).unwrap();
        let mut log = HlogWriter::begin(Vec::new(), SystemTime::UNIX_EPOCH).unwrap();
        log.write_interval(start, len, &keys, &rec).unwrap();
        std::fs::write(dir.join(HLOG_FILE), log.into_inner()).unwrap();
        let facts = crate::results::summary::tests::two_phase_facts();
        let plan = crate::results::summary::tests::plan();
        let summary = Summary::build(&facts, &plan, &keys, &rec, Vec::new());
        std::fs::write(dir.join(SUMMARY_FILE), summary.to_json().unwrap()).unwrap();
        csv
    }

    #[test]
    fn rows_come_with_their_histograms_and_roles() {
        let tmp = tempfile::tempdir().unwrap();
        write_dir(tmp.path());
        let run = ResultsDir::open(tmp.path()).unwrap();
        let roles: Vec<&str> = run
            .summary()
            .by_role
            .iter()
            .map(|r| r.role.as_str())
            .collect();
        assert_eq!(roles, ["oltp", "dss"]);
        let rows: Vec<IntervalRow> = run.interval_rows().unwrap().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let (a, b) = (&rows[0], &rows[1]);
        assert_eq!((a.txn_type.as_str(), a.role.as_str()), ("a", "oltp"));
        assert_eq!((b.txn_type.as_str(), b.role.as_str()), ("b", "dss"));
        assert_eq!((a.start_s, a.length_s, a.committed), (5.0, 5.0, 2));
        assert_eq!(a.latency.len(), 2, "the n-th entry belongs to the n-th row");
        assert_eq!(b.latency.len(), 1);
        assert_eq!(b.failed_by_class, Some([0; ErrorClass::ALL.len()]));
        assert!(
            run.system().unwrap().is_none(),
            "no samplers, no system.csv"
        );
        assert!(run.runtime().is_err());
        assert!(run.is_emulated("b") && !run.is_emulated("a") && !run.is_emulated("x"));
    }

    #[test]
    fn files_without_a_role_column_read_as_oltp() {
        // Files of that age had neither `role` nor `retried_txns` (the last two columns).
        let tmp = tempfile::tempdir().unwrap();
        let csv = write_dir(tmp.path());
        let old: String = csv
            .lines()
            .map(|l| format!("{}\n", l.rsplitn(3, ',').last().unwrap()))
            .collect();
        std::fs::write(tmp.path().join(INTERVALS_FILE), old).unwrap();
        let run = ResultsDir::open(tmp.path()).unwrap();
        let rows: Vec<(String, u64)> = run
            .interval_rows()
            .unwrap()
            .map(|r| r.unwrap())
            .map(|r| (r.role, r.retried_txns))
            .collect();
        assert_eq!(rows, [("oltp".into(), 0), ("oltp".into(), 0)]);
    }

    #[test]
    fn rows_and_entries_must_pair_up() {
        let tmp = tempfile::tempdir().unwrap();
        let csv = write_dir(tmp.path());
        let extra = csv.lines().last().unwrap();
        std::fs::write(tmp.path().join(INTERVALS_FILE), format!("{csv}{extra}\n")).unwrap();
        let run = ResultsDir::open(tmp.path()).unwrap();
        let got: Vec<_> = run.interval_rows().unwrap().collect();
        assert_eq!(got.len(), 3, "two rows, then the error, then nothing");
        let err = got[2].as_ref().unwrap_err().to_string();
        assert!(
            err.contains("3 rows but latency.hlog has 2 entries"),
            "{err}"
        );
    }

    #[test]
    fn the_summary_is_required() {
        let tmp = tempfile::tempdir().unwrap();
        let err = ResultsDir::open(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("summary.json"), "{err}");
    }

    #[test]
    fn system_series_by_source_and_metric() {
        let text = "t_s,source,metric,value\n\
                    1.0,host,cpu_user_pct,10\n\
                    1.0,\"db:host=/tmp dbname=a,b\",xact_commit,5\n\
                    2.0,host,cpu_user_pct,20\n";
        let s = parse_system(text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].points, vec![(1.0, 10.0), (2.0, 20.0)]);
        assert_eq!(s[1].source, "db:host=/tmp dbname=a,b");
    }

    #[test]
    fn system_points_that_are_not_finite_are_left_out() {
        // Found by tests/fuzz: `1.1e300006` parses to infinity, and a chart over it never ended.
        let text = "t_s,source,metric,value\n1.1e300006,host,m,1\n1,host,m,NaN\n2,host,m,3\n";
        assert_eq!(parse_system(text).unwrap()[0].points, vec![(2.0, 3.0)]);
    }
}
