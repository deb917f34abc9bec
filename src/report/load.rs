//! Reads a results dir (through `results::read`, the one reader) into what the HTML report and
//! `compare` draw: the summary and runtime facts as written, the interval rows with their
//! latency histograms folded into time buckets, and `system.csv` (when the run had samplers)
//! as one series per (source, metric).
//!
//! Memory stays flat on long runs: the reader streams rows with their histograms one at a
//! time, and they are merged per bucket and dropped when the next bucket starts, so a 2-hour,
//! 40-target run needs a few dozen MB.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::metrics::{new_histogram, ErrorClass};
pub use crate::results::read::{parse_system, SystemSeries};
use crate::results::read::{IntervalRows, ResultsDir};
pub use crate::results::SYSTEM_FILE;
use crate::results::{RuntimeInfo, Summary};

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
    /// Committed transactions of the headline's type (tpce's Trade-Results), [group][bucket];
    /// empty when the run has no headline.
    pub headline_by_group: Vec<Vec<u64>>,
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
    /// `profile.json`; `None` when the run took no profile.
    pub profile: Option<crate::results::profile::ProfileFile>,
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
    read(dir, true)
}

/// As [`load`] without the interval rows (no buckets, no latency series): what `compare`
/// needs, the summary and `system.csv`, without streaming every histogram of a long run.
pub fn load_totals(dir: &Path) -> Result<RunData, String> {
    read(dir, false)
}

fn read(dir: &Path, with_intervals: bool) -> Result<RunData, String> {
    let run = ResultsDir::open(dir).map_err(|e| e.to_string())?;
    let mut notes = Vec::new();
    let runtime = match run.runtime() {
        Ok(r) => Some(r),
        Err(e) => {
            notes.push(format!("run facts left out: {e}"));
            None
        }
    };
    // The two big files are independent: read system.csv on a second thread while the
    // interval rows and their histograms are merged here (a 2-hour, 40-target run has
    // ~100k histograms and ~4M samples).
    let headline_type = run.summary().headline.as_ref().map(|h| h.txn_type.clone());
    let (intervals, system) = std::thread::scope(|scope| {
        let system = scope.spawn(|| run.system());
        let intervals = with_intervals.then(|| {
            run.interval_rows()
                .map_err(|e| e.to_string())
                .and_then(|rows| fold_intervals(rows, headline_type.as_deref()))
        });
        let system = system.join().unwrap_or_else(|_| {
            Err(crate::results::ResultsError::Decode {
                file: SYSTEM_FILE,
                path: dir.join(SYSTEM_FILE),
                message: "the reading thread failed".into(),
            })
        });
        (intervals, system)
    });
    let mut data = RunData {
        dir: dir.to_path_buf(),
        summary: run.into_summary(),
        runtime,
        notes,
        buckets: Vec::new(),
        groups: Vec::new(),
        txn_types: Vec::new(),
        ok_by_group: Vec::new(),
        headline_by_group: Vec::new(),
        failed_by_type: Vec::new(),
        failed_by_class: Vec::new(),
        latency: Vec::new(),
        dist: Vec::new(),
        system: None,
        profile: None,
    };
    match crate::results::profile::ProfileFile::read(dir) {
        Ok(profile) => data.profile = profile,
        Err(e) => data.notes.push(format!("profile left out: {e}")),
    }
    match intervals {
        Some(Ok(series)) => series.into_run(&mut data),
        Some(Err(e)) => data.notes.push(format!("time series left out: {e}")),
        None => {}
    }
    match system {
        Ok(series) => data.system = series,
        Err(e) => data.notes.push(format!("{} left out: {e}", SYSTEM_FILE)),
    }
    Ok(data)
}

/// Bucket start in whole milliseconds, so equal starts compare equal.
fn millis(s: f64) -> i64 {
    (s * 1000.0).round() as i64
}

/// Per-bucket accumulators while streaming.
#[derive(Default)]
struct Acc {
    length_s: f64,
    measured: bool,
    ok_by_group: Vec<u64>,
    headline_by_group: Vec<u64>,
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

/// The interval rows folded into buckets, before they are laid out as series.
struct Folded {
    buckets: BTreeMap<i64, Acc>,
    groups: Vec<String>,
    txn_types: Vec<String>,
    has_classes: bool,
    has_headline: bool,
    dist: Vec<Option<Histogram<u64>>>,
}

/// Closes bucket `at`: the percentiles of its per-type histograms, which then join the
/// measured distribution (when the bucket is measured) and are dropped.
fn close(at: i64, open: &mut [Option<Histogram<u64>>], f: &mut Folded) {
    let acc = f.buckets.entry(at).or_default();
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
            let d = grow(&mut f.dist, t).get_or_insert_with(new_histogram);
            // Same bounds on both sides, so adding cannot fail.
            let _ = d.add(&h);
        }
    }
}

/// Folds the rows into buckets; `headline` names the type whose commits are counted apart.
fn fold_intervals(rows: IntervalRows, headline: Option<&str>) -> Result<Folded, String> {
    let mut f = Folded {
        buckets: BTreeMap::new(),
        groups: Vec::new(),
        txn_types: Vec::new(),
        has_classes: rows.has_failed_by_class(),
        has_headline: headline.is_some(),
        dist: Vec::new(),
    };
    // The bucket whose histograms are being merged, and its per-type histograms.
    let mut current: Option<i64> = None;
    let mut open: Vec<Option<Histogram<u64>>> = Vec::new();
    for row in rows {
        let row = row.map_err(|e| e.to_string())?;
        let at = millis(row.start_s);
        if current != Some(at) {
            if let Some(prev) = current {
                close(prev, &mut open, &mut f);
            }
            current = Some(at);
        }
        let group = index_of(&mut f.groups, &row.group);
        let txn = index_of(&mut f.txn_types, &row.txn_type);
        let acc = f.buckets.entry(at).or_default();
        acc.length_s = acc.length_s.max(row.length_s);
        acc.measured = row.measured;
        *grow(&mut acc.ok_by_group, group) += row.committed + row.expected_rollback;
        if headline == Some(row.txn_type.as_str()) {
            *grow(&mut acc.headline_by_group, group) += row.committed;
        }
        *grow(&mut acc.failed_by_type, txn) += row.failed;
        if let Some(by) = row.failed_by_class {
            for (slot, n) in acc.failed_by_class.iter_mut().zip(by) {
                *slot += n;
            }
        }
        if !row.latency.is_empty() {
            let h = grow(&mut open, txn).get_or_insert_with(new_histogram);
            let _ = h.add(&row.latency);
        }
    }
    if let Some(prev) = current {
        close(prev, &mut open, &mut f);
    }
    Ok(f)
}

impl Folded {
    /// Lays the buckets out as the report's series.
    fn into_run(self, data: &mut RunData) {
        let n = self.buckets.len();
        let (groups, types) = (self.groups.len(), self.txn_types.len());
        data.groups = self.groups;
        data.txn_types = self.txn_types;
        data.ok_by_group = vec![Vec::with_capacity(n); groups];
        if self.has_headline {
            data.headline_by_group = vec![Vec::with_capacity(n); groups];
        }
        data.failed_by_type = vec![Vec::with_capacity(n); types];
        if self.has_classes {
            data.failed_by_class = vec![Vec::with_capacity(n); ErrorClass::ALL.len()];
        }
        data.latency = vec![Vec::with_capacity(n); types];
        for (at, acc) in self.buckets {
            data.buckets.push(Bucket {
                start_s: at as f64 / 1000.0,
                length_s: acc.length_s,
                measured: acc.measured,
            });
            for (g, v) in data.ok_by_group.iter_mut().enumerate() {
                v.push(acc.ok_by_group.get(g).copied().unwrap_or(0));
            }
            for (g, v) in data.headline_by_group.iter_mut().enumerate() {
                v.push(acc.headline_by_group.get(g).copied().unwrap_or(0));
            }
            for (k, v) in data.failed_by_class.iter_mut().enumerate() {
                v.push(acc.failed_by_class[k]);
            }
            for t in 0..types {
                data.failed_by_type[t].push(acc.failed_by_type.get(t).copied().unwrap_or(0));
                data.latency[t].push(acc.latency.get(t).copied().flatten());
            }
        }
        data.dist = self
            .dist
            .into_iter()
            .chain(std::iter::repeat_with(|| None))
            .take(types)
            .map(|h| h.unwrap_or_else(new_histogram))
            .collect();
    }
}

/// The value of a cumulative series at time `t`: the last sample at or before it (the first
/// sample when `t` comes before every sample).
pub fn value_at(points: &[(f64, f64)], t: f64) -> Option<f64> {
    let after = points.partition_point(|(pt, _)| *pt <= t);
    points.get(after.saturating_sub(1)).map(|(_, v)| *v)
}

/// Growth of a cumulative series over `[start, end]`, from the samples at or before each
/// end (as [`value_at`]). A value below the one before it is a counter that started over (a
/// server's crash recovery resets its statistics; a postmaster started anew has new CPU
/// times): the growth counts on from zero there, never back.
pub fn delta(points: &[(f64, f64)], start: f64, end: f64) -> Option<f64> {
    let at = |t: f64| points.partition_point(|(pt, _)| *pt <= t).saturating_sub(1);
    let (first, last) = (at(start), at(end));
    if points.is_empty() {
        return None;
    }
    Some(
        points[first..=last.max(first)]
            .windows(2)
            .map(|w| {
                if w[1].1 >= w[0].1 {
                    w[1].1 - w[0].1
                } else {
                    w[1].1
                }
            })
            .sum(),
    )
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
        // A counter reset by a server restart counts on from zero.
        let reset = [(0.0, 100.0), (1.0, 150.0), (2.0, 20.0), (3.0, 70.0)];
        assert_eq!(delta(&reset, 0.0, 3.0), Some(50.0 + 20.0 + 50.0));
        assert_eq!(delta(&reset, 1.0, 1.5), Some(0.0));
        assert_eq!(delta(&[], 0.0, 1.0), None);
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
