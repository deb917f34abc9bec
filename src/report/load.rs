//! Reads a results dir into what the HTML report and `compare` draw: the summary and runtime
//! facts as written, `intervals.csv` + `latency.hlog` folded into time buckets, and
//! `system.csv` (when the run had samplers) as one series per (source, metric).
//!
//! Memory stays flat on long runs: CSV rows and log entries are streamed side by side (the
//! n-th log entry belongs to the n-th row) and latency histograms are merged per bucket and
//! dropped when the next bucket starts, so a 2-hour, 40-target run needs a few dozen MB.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::metrics::{new_histogram, ErrorClass};
use crate::results::{hlog, RuntimeInfo, Summary, HLOG_FILE, INTERVALS_FILE};

use super::csv::split_line;

/// Written by the samplers; absent in runs made without them.
pub const SYSTEM_FILE: &str = "system.csv";

/// One time bucket: the rows of `intervals.csv` that share a window start. A phase edge
/// inside an interval makes two buckets, so a bucket never mixes phases.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    pub start_s: f64,
    pub length_s: f64,
    pub measured: bool,
}

/// Latency percentiles of one bucket, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// One sampled series of `system.csv`.
#[derive(Debug, Clone)]
pub struct SystemSeries {
    pub source: String,
    pub metric: String,
    /// (seconds since run start, value), in file order.
    pub points: Vec<(f64, f64)>,
}

/// Everything the report draws, read once.
pub struct RunData {
    pub dir: PathBuf,
    pub summary: Summary,
    pub runtime: Option<RuntimeInfo>,
    /// Things that could not be read and were left out, in words for the reader.
    pub notes: Vec<String>,
    pub buckets: Vec<Bucket>,
    /// Group names in first-seen order; index of `ok_by_group`.
    pub groups: Vec<String>,
    /// Transaction types in first-seen order; index of `failed_by_type`, `latency`, `dist`.
    pub txn_types: Vec<String>,
    /// Committed + expected rollbacks, [group][bucket].
    pub ok_by_group: Vec<Vec<u64>>,
    /// Failed transactions, [type][bucket].
    pub failed_by_type: Vec<Vec<u64>>,
    /// Failed transactions, [class][bucket] in `ErrorClass::ALL` order; empty for results dirs
    /// written before `intervals.csv` had per-class columns.
    pub failed_by_class: Vec<Vec<u64>>,
    /// [type][bucket]; `None` where the type had no successful transaction.
    pub latency: Vec<Vec<Option<Percentiles>>>,
    /// Latency (µs) of each type over the measured window.
    pub dist: Vec<Histogram<u64>>,
    /// `None` when the run has no `system.csv`.
    pub system: Option<Vec<SystemSeries>>,
}

impl RunData {
    /// The measured window, seconds since run start: from the first measured phase's start to
    /// the last one's end.
    pub fn measured_window(&self) -> (f64, f64) {
        let measured = self.summary.phases.iter().filter(|p| p.measured);
        let start = measured.clone().map(|p| p.start_s).fold(f64::MAX, f64::min);
        let end = measured
            .map(|p| p.start_s + p.duration_s)
            .fold(0.0, f64::max);
        if start > end {
            (0.0, self.summary.elapsed_s)
        } else {
            (start, end)
        }
    }

    /// Start of every phase after the first, seconds since run start.
    pub fn phase_edges(&self) -> Vec<f64> {
        self.summary
            .phases
            .iter()
            .skip(1)
            .map(|p| p.start_s)
            .collect()
    }

    /// The series of `system.csv` whose source passes `source` and whose metric is `metric`.
    pub fn system_series<'a>(
        &'a self,
        source: impl Fn(&str) -> bool + 'a,
        metric: &'a str,
    ) -> impl Iterator<Item = &'a SystemSeries> + 'a {
        self.system
            .iter()
            .flatten()
            .filter(move |s| s.metric == metric && source(&s.source))
    }
}

/// Reads a results dir. Only `summary.json` is required; what else is missing or damaged is
/// left out and named in `notes`.
pub fn load(dir: &Path) -> Result<RunData, String> {
    let summary = Summary::read(dir).map_err(|e| e.to_string())?;
    let mut notes = Vec::new();
    let runtime = match RuntimeInfo::read(dir) {
        Ok(r) => Some(r),
        Err(e) => {
            notes.push(format!("run facts left out: {e}"));
            None
        }
    };
    let mut data = RunData {
        dir: dir.to_path_buf(),
        summary,
        runtime,
        notes,
        buckets: Vec::new(),
        groups: Vec::new(),
        txn_types: Vec::new(),
        ok_by_group: Vec::new(),
        failed_by_type: Vec::new(),
        failed_by_class: Vec::new(),
        latency: Vec::new(),
        dist: Vec::new(),
        system: None,
    };
    // The two big files are independent: read system.csv on a second thread while the
    // interval rows and their histograms are merged here (a 2-hour, 40-target run has
    // ~100k histograms and ~4M samples).
    let system_path = dir.join(SYSTEM_FILE);
    let (intervals, system) = std::thread::scope(|scope| {
        let system = scope.spawn(|| {
            system_path.exists().then(|| {
                std::fs::read_to_string(&system_path)
                    .map_err(|e| e.to_string())
                    .and_then(|text| parse_system(&text))
            })
        });
        let intervals = read_intervals(dir, &mut data);
        let system = system
            .join()
            .unwrap_or_else(|_| Some(Err("the reading thread failed".to_string())));
        (intervals, system)
    });
    if let Err(e) = intervals {
        data.notes.push(format!("time series left out: {e}"));
    }
    match system {
        Some(Ok(series)) => data.system = Some(series),
        Some(Err(e)) => data
            .notes
            .push(format!("{} left out: {e}", system_path.display())),
        None => {}
    }
    Ok(data)
}

/// Bucket start in whole milliseconds, so equal starts compare equal.
fn millis(s: f64) -> i64 {
    (s * 1000.0).round() as i64
}

struct Columns {
    start: usize,
    length: usize,
    measured: usize,
    group: usize,
    txn: usize,
    committed: usize,
    expected: usize,
    failed: usize,
    /// The `failed_<class>` columns, when the file has them.
    failed_class: Option<Vec<usize>>,
}

/// Per-bucket accumulators while streaming.
#[derive(Default)]
struct Acc {
    length_s: f64,
    measured: bool,
    ok_by_group: Vec<u64>,
    failed_by_type: Vec<u64>,
    failed_by_class: [u64; ErrorClass::ALL.len()],
    latency: Vec<Option<Percentiles>>,
}

fn index_of(names: &mut Vec<String>, name: &str) -> usize {
    match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.to_string());
            names.len() - 1
        }
    }
}

fn grow<T: Default + Clone>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

fn read_intervals(dir: &Path, data: &mut RunData) -> Result<(), String> {
    let path = dir.join(INTERVALS_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let hlog_path = dir.join(HLOG_FILE);
    let log = std::fs::read(&hlog_path)
        .map_err(|e| format!("cannot read {}: {e}", hlog_path.display()))?;
    let mut lines = text.lines();
    let header = split_line(lines.next().ok_or("intervals.csv is empty")?);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{}: no column '{name}'", path.display()))
    };
    let c = Columns {
        start: col("interval_start_s")?,
        length: col("interval_length_s")?,
        measured: col("measured")?,
        group: col("group")?,
        txn: col("txn_type")?,
        committed: col("committed")?,
        expected: col("expected_rollback")?,
        failed: col("failed")?,
        failed_class: ErrorClass::ALL
            .iter()
            .map(|c| col(&format!("failed_{}", c.name())).ok())
            .collect(),
    };
    let mut rows = lines.filter(|l| !l.is_empty()).enumerate();
    let mut buckets: BTreeMap<i64, Acc> = BTreeMap::new();
    // The bucket whose histograms are being merged, and its per-type histograms.
    let mut current: Option<i64> = None;
    let mut open: Vec<Option<Histogram<u64>>> = Vec::new();
    let mut dist: Vec<Option<Histogram<u64>>> = Vec::new();
    let mut error: Option<String> = None;
    let mut entries = 0usize;
    let close = |at: i64,
                 open: &mut Vec<Option<Histogram<u64>>>,
                 dist: &mut Vec<Option<Histogram<u64>>>,
                 buckets: &mut BTreeMap<i64, Acc>| {
        let acc = buckets.entry(at).or_default();
        for (t, h) in open.iter_mut().enumerate() {
            let Some(h) = h.take().filter(|h| !h.is_empty()) else {
                continue;
            };
            let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
            *grow(&mut acc.latency, t) = Some(Percentiles {
                p50: ms(0.50),
                p95: ms(0.95),
                p99: ms(0.99),
            });
            if acc.measured {
                let d = grow(dist, t).get_or_insert_with(new_histogram);
                // Same bounds on both sides, so adding cannot fail.
                let _ = d.add(&h);
            }
        }
    };
    hlog::visit(&log, |entry| {
        entries += 1;
        if error.is_some() {
            return;
        }
        let Some((n, line)) = rows.next() else {
            error = Some("latency.hlog has more entries than intervals.csv has rows".into());
            return;
        };
        let f = split_line(line);
        if f.len() != header.len() {
            error = Some(format!(
                "{} line {}: {} fields, the header has {}",
                path.display(),
                n + 2,
                f.len(),
                header.len()
            ));
            return;
        }
        let num = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        let start_s = f[c.start].parse::<f64>().unwrap_or(0.0);
        let at = millis(start_s);
        if current != Some(at) {
            if let Some(prev) = current {
                close(prev, &mut open, &mut dist, &mut buckets);
            }
            current = Some(at);
        }
        let group = index_of(&mut data.groups, &f[c.group]);
        let txn = index_of(&mut data.txn_types, &f[c.txn]);
        let acc = buckets.entry(at).or_default();
        acc.length_s = acc.length_s.max(f[c.length].parse::<f64>().unwrap_or(0.0));
        acc.measured = f[c.measured] == "true";
        *grow(&mut acc.ok_by_group, group) += num(c.committed) + num(c.expected);
        *grow(&mut acc.failed_by_type, txn) += num(c.failed);
        if let Some(cols) = &c.failed_class {
            for (slot, col) in acc.failed_by_class.iter_mut().zip(cols) {
                *slot += num(*col);
            }
        }
        if !entry.histogram.is_empty() {
            let h = grow(&mut open, txn).get_or_insert_with(new_histogram);
            let _ = h.add(&entry.histogram);
        }
    })?;
    if let Some(e) = error {
        return Err(e);
    }
    if let Some(prev) = current {
        close(prev, &mut open, &mut dist, &mut buckets);
    }
    let leftover = rows.count();
    if leftover > 0 {
        return Err(format!(
            "{} has {} rows but latency.hlog {entries} entries; the results dir is damaged",
            path.display(),
            entries + leftover
        ));
    }
    let (groups, types) = (data.groups.len(), data.txn_types.len());
    data.ok_by_group = vec![Vec::with_capacity(buckets.len()); groups];
    data.failed_by_type = vec![Vec::with_capacity(buckets.len()); types];
    if c.failed_class.is_some() {
        data.failed_by_class = vec![Vec::with_capacity(buckets.len()); ErrorClass::ALL.len()];
    }
    data.latency = vec![Vec::with_capacity(buckets.len()); types];
    for (at, acc) in buckets {
        data.buckets.push(Bucket {
            start_s: at as f64 / 1000.0,
            length_s: acc.length_s,
            measured: acc.measured,
        });
        for (g, v) in data.ok_by_group.iter_mut().enumerate() {
            v.push(acc.ok_by_group.get(g).copied().unwrap_or(0));
        }
        for (k, v) in data.failed_by_class.iter_mut().enumerate() {
            v.push(acc.failed_by_class[k]);
        }
        for t in 0..types {
            data.failed_by_type[t].push(acc.failed_by_type.get(t).copied().unwrap_or(0));
            data.latency[t].push(acc.latency.get(t).copied().flatten());
        }
    }
    data.dist = dist
        .into_iter()
        .chain(std::iter::repeat_with(|| None))
        .take(types)
        .map(|h| h.unwrap_or_else(new_histogram))
        .collect();
    Ok(())
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
        let (Ok(t), Ok(v)) = (f[ct].parse::<f64>(), f[cv].parse::<f64>()) else {
            continue;
        };
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

/// The value of a cumulative series at time `t`: the last sample at or before it (the first
/// sample when `t` comes before every sample).
pub fn value_at(points: &[(f64, f64)], t: f64) -> Option<f64> {
    let after = points.partition_point(|(pt, _)| *pt <= t);
    points.get(after.saturating_sub(1)).map(|(_, v)| *v)
}

/// Growth of a cumulative series over `[start, end]`.
pub fn delta(points: &[(f64, f64)], start: f64, end: f64) -> Option<f64> {
    Some(value_at(points, end)? - value_at(points, start)?)
}

/// Mean of a series' samples within `[start, end]`.
pub fn mean_within(points: &[(f64, f64)], start: f64, end: f64) -> Option<f64> {
    let inside: Vec<f64> = points
        .iter()
        .filter(|(t, _)| *t >= start && *t <= end)
        .map(|(_, v)| *v)
        .collect();
    (!inside.is_empty()).then(|| inside.iter().sum::<f64>() / inside.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_series_by_source_and_metric() {
        let text = "t_s,source,metric,value\n\
                    1.0,host,cpu_user_pct,10\n\
                    1.0,\"db:host=/tmp dbname=a,b\",xact_commit,5\n\
                    2.0,host,cpu_user_pct,20\n\
                    2.0,\"db:host=/tmp dbname=a,b\",xact_commit,9\n";
        let s = parse_system(text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].points, vec![(1.0, 10.0), (2.0, 20.0)]);
        assert_eq!(s[1].source, "db:host=/tmp dbname=a,b");
        assert_eq!(delta(&s[1].points, 1.0, 2.0), Some(4.0));
        assert_eq!(mean_within(&s[0].points, 0.0, 5.0), Some(15.0));
    }

    #[test]
    fn value_at_takes_the_last_sample_not_after() {
        let p = [(1.0, 1.0), (2.0, 4.0), (3.0, 9.0)];
        assert_eq!(value_at(&p, 0.5), Some(1.0));
        assert_eq!(value_at(&p, 2.5), Some(4.0));
        assert_eq!(value_at(&p, 9.0), Some(9.0));
        assert_eq!(value_at(&[], 1.0), None);
    }
}
