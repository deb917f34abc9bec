//! `tidebench report DIR --by group,phase`: sums the rows of `intervals.csv` that share the
//! chosen dimensions and merges their latency histograms from `latency.hlog` (whose n-th entry
//! belongs to the n-th row), so percentiles are exact, not averages of percentiles.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;

use crate::metrics::new_histogram;
use crate::results::{hlog, INTERVALS_FILE};

use super::csv::Table;

/// A dimension to group by, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Type,
    Group,
    Set,
    Iteration,
    Phase,
    Target,
}

impl Dim {
    pub fn parse(name: &str) -> Result<Dim, String> {
        Ok(match name.trim() {
            "type" | "txn" | "txn_type" => Dim::Type,
            "group" => Dim::Group,
            "set" => Dim::Set,
            "iteration" => Dim::Iteration,
            "phase" => Dim::Phase,
            "target" => Dim::Target,
            other => {
                return Err(format!(
                "cannot group by '{other}'; choose from type, group, set, iteration, phase, target"
            ))
            }
        })
    }

    fn column(self) -> &'static str {
        match self {
            Dim::Type => "txn_type",
            Dim::Group => "group",
            Dim::Set => "set",
            Dim::Iteration => "iteration",
            Dim::Phase => "phase",
            Dim::Target => "target",
        }
    }
}

#[derive(Default)]
struct Acc {
    count: u64,
    committed: u64,
    expected_rollback: u64,
    failed: u64,
    /// Distinct (start, length) windows, so time is counted once per window.
    windows: BTreeMap<(String, String), f64>,
    latency: Option<Histogram<u64>>,
}

/// The re-aggregated table as text. `all` keeps ramp-up/down rows.
pub fn aggregate(dir: &Path, dims: &[Dim], all: bool) -> Result<String, String> {
    let path = dir.join(INTERVALS_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let table = Table::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let entries = hlog::read(dir).map_err(|e| e.to_string())?;
    if entries.len() != table.rows.len() {
        return Err(format!(
            "{} has {} rows but latency.hlog {} entries; the results dir is damaged",
            path.display(),
            table.rows.len(),
            entries.len()
        ));
    }
    let col = |n: &str| {
        table
            .column(n)
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let dim_cols: Vec<usize> = dims
        .iter()
        .map(|d| col(d.column()))
        .collect::<Result<_, _>>()?;
    let (c_count, c_comm, c_exp, c_fail) = (
        col("count")?,
        col("committed")?,
        col("expected_rollback")?,
        col("failed")?,
    );
    let (c_start, c_len, c_measured) = (
        col("interval_start_s")?,
        col("interval_length_s")?,
        col("measured")?,
    );
    let num = |s: &str| s.parse::<u64>().unwrap_or(0);
    let mut groups: BTreeMap<Vec<String>, Acc> = BTreeMap::new();
    let mut total = 0u64;
    for (row, entry) in table.rows.iter().zip(entries) {
        if !all && row[c_measured] != "true" {
            continue;
        }
        let key: Vec<String> = dim_cols.iter().map(|c| row[*c].clone()).collect();
        let acc = groups.entry(key).or_default();
        acc.count += num(&row[c_count]);
        acc.committed += num(&row[c_comm]);
        acc.expected_rollback += num(&row[c_exp]);
        acc.failed += num(&row[c_fail]);
        total += num(&row[c_count]);
        let len = row[c_len].parse::<f64>().unwrap_or(0.0);
        acc.windows
            .insert((row[c_start].clone(), row[c_len].clone()), len);
        if !entry.histogram.is_empty() {
            let _ = acc
                .latency
                .get_or_insert_with(new_histogram)
                .add(&entry.histogram);
        }
    }
    let mut out = String::new();
    let mut head: Vec<String> = dims.iter().map(|d| d.column().to_string()).collect();
    head.extend(
        [
            "count",
            "committed",
            "failed",
            "share_%",
            "tps",
            "mean_ms",
            "p95_ms",
            "p99_ms",
        ]
        .map(String::from),
    );
    let widths: Vec<usize> = head.iter().map(|h| h.len().max(10)).collect();
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(out, "{}", line(&head));
    for (key, acc) in &groups {
        let secs: f64 = acc.windows.values().sum();
        let ok = acc.committed + acc.expected_rollback;
        let ms = |q: f64| {
            acc.latency.as_ref().map_or("-".to_string(), |h| {
                format!("{:.3}", h.value_at_quantile(q) as f64 / 1000.0)
            })
        };
        let mut cells = key.clone();
        cells.push(acc.count.to_string());
        cells.push(acc.committed.to_string());
        cells.push(acc.failed.to_string());
        cells.push(format!(
            "{:.2}",
            if total == 0 {
                0.0
            } else {
                acc.count as f64 * 100.0 / total as f64
            }
        ));
        cells.push(format!(
            "{:.1}",
            if secs > 0.0 { ok as f64 / secs } else { 0.0 }
        ));
        cells.push(
            acc.latency
                .as_ref()
                .map_or("-".to_string(), |h| format!("{:.3}", h.mean() / 1000.0)),
        );
        cells.push(ms(0.95));
        cells.push(ms(0.99));
        let _ = writeln!(out, "{}", line(&cells));
    }
    Ok(out)
}
