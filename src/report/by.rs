//! `tidebench report DIR --by group,phase`: sums the interval rows that share the chosen
//! dimensions and merges their latency histograms (read through `results::read`, which pairs
//! each row of `intervals.csv` with its `latency.hlog` entry), so percentiles are exact, not
//! averages of percentiles. Rows are streamed, so only one accumulator per output line is held.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;

use crate::metrics::new_histogram;
use crate::results::read::{IntervalRow, IntervalRows};

/// A dimension to group by, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Type,
    Group,
    Set,
    Iteration,
    Phase,
    Target,
    Role,
    /// The driver process a merged dir's row came from (`tidebench merge`).
    Shard,
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
            "role" => Dim::Role,
            "shard" => Dim::Shard,
            other => {
                return Err(format!(
                "cannot group by '{other}'; choose from type, group, set, iteration, phase, target, role, shard"
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
            Dim::Role => "role",
            Dim::Shard => "shard",
        }
    }

    fn value(self, row: &IntervalRow) -> String {
        match self {
            Dim::Type => row.txn_type.clone(),
            Dim::Group => row.group.clone(),
            Dim::Set => row.set.clone(),
            Dim::Iteration => row.iteration.to_string(),
            Dim::Phase => row.phase.clone(),
            Dim::Target => row.target.clone(),
            Dim::Role => row.role.clone(),
            Dim::Shard => row.shard.clone(),
        }
    }
}

#[derive(Default)]
struct Acc {
    count: u64,
    committed: u64,
    expected_rollback: u64,
    failed: u64,
    /// Distinct (start, length) windows in ms, so time is counted once per window.
    windows: BTreeMap<(i64, i64), f64>,
    latency: Option<Histogram<u64>>,
}

/// The measured (or, with `all`, every) interval rows summed per value of `dims`, with the
/// total count of transactions they hold.
fn accumulate(
    dir: &Path,
    dims: &[Dim],
    all: bool,
) -> Result<(BTreeMap<Vec<String>, Acc>, u64), String> {
    let mut groups: BTreeMap<Vec<String>, Acc> = BTreeMap::new();
    let mut total = 0u64;
    let ms = |s: f64| (s * 1000.0).round() as i64;
    for row in IntervalRows::open(dir).map_err(|e| e.to_string())? {
        let row = row.map_err(|e| e.to_string())?;
        if !all && !row.measured {
            continue;
        }
        let key: Vec<String> = dims.iter().map(|d| d.value(&row)).collect();
        let acc = groups.entry(key).or_default();
        acc.count += row.count;
        acc.committed += row.committed;
        acc.expected_rollback += row.expected_rollback;
        acc.failed += row.failed;
        total += row.count;
        acc.windows
            .insert((ms(row.start_s), ms(row.length_s)), row.length_s);
        if !row.latency.is_empty() {
            let _ = acc
                .latency
                .get_or_insert_with(new_histogram)
                .add(&row.latency);
        }
    }
    Ok((groups, total))
}

impl Acc {
    /// Committed + expected rollbacks per second of the windows the rows cover.
    fn tps(&self) -> f64 {
        let secs: f64 = self.windows.values().sum();
        let ok = self.committed + self.expected_rollback;
        if secs > 0.0 {
            ok as f64 / secs
        } else {
            0.0
        }
    }
}

/// One value of a dimension over the measured window: its rate and its latency histogram
/// (µs) merged from the interval rows, so its percentiles are exact.
pub struct Merged {
    pub name: String,
    pub tps: f64,
    pub latency: Option<Histogram<u64>>,
}

impl Merged {
    /// The latency at quantile `q` in ms; `None` without successful transactions.
    pub fn ms_at(&self, q: f64) -> Option<f64> {
        self.latency
            .as_ref()
            .map(|h| h.value_at_quantile(q) as f64 / 1000.0)
    }
}

/// The measured window per value of `dim` (each type, each group), in name order.
pub fn merged(dir: &Path, dim: Dim) -> Result<Vec<Merged>, String> {
    let (groups, _) = accumulate(dir, &[dim], false)?;
    Ok(groups
        .into_iter()
        .map(|(key, acc)| Merged {
            name: key.concat(),
            tps: acc.tps(),
            latency: acc.latency,
        })
        .collect())
}

/// The re-aggregated table as text. `all` keeps ramp-up/down rows.
pub fn aggregate(dir: &Path, dims: &[Dim], all: bool) -> Result<String, String> {
    let (groups, total) = accumulate(dir, dims, all)?;
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
        cells.push(format!("{:.1}", acc.tps()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_role_without_a_summary() {
        let tmp = tempfile::tempdir().unwrap();
        crate::results::read::tests::write_dir(tmp.path());
        // A killed run's `.partial` dir has rows but no summary.json.
        std::fs::remove_file(tmp.path().join(crate::results::SUMMARY_FILE)).unwrap();
        let table = aggregate(tmp.path(), &[Dim::parse("role").unwrap()], true).unwrap();
        let roles: Vec<&str> = table
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(roles, ["dss", "oltp"], "{table}");
        assert!(Dim::parse("nope").unwrap_err().contains("role"));
    }
}
