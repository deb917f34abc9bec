//! The figures the verdict judges, read from each run of a side (issue 55): throughput, the
//! headline, latency percentiles, the servers' CPU productivity (`cpu`) and the client's
//! (`client_cpu`, the tidebench process) over the whole run, then throughput and percentiles
//! per transaction type and per group, each from histograms merged over the measured window
//! (as `report --by` merges them), never from averaged percentiles.
//!
//! A figure is named by a key: the metric alone for the whole run (`tps`, `p95`), or
//! `type:NAME:METRIC` and `group:NAME:METRIC`. `--fail-on` selects figures by these keys.

use std::path::{Path, PathBuf};

use crate::report::by::{self, Dim};
use crate::report::load;
use crate::report::system_view as sys;

/// Which way a metric gets worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worse {
    /// Throughput, the headline, productivity: a fall is a regression.
    Lower,
    /// Latency: a rise is a regression.
    Higher,
}

/// A metric's name as `--fail-on` writes it, its unit, which way it gets worse, and the
/// threshold (percent) that applies when `--fail-on` names none.
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
    pub worse: Worse,
    pub default_pct: f64,
}

/// Every metric the verdict knows, in the order it reports them.
pub const METRICS: [Metric; 7] = [
    Metric {
        name: "headline",
        unit: "headline",
        worse: Worse::Lower,
        default_pct: 5.0,
    },
    Metric {
        name: "tps",
        unit: "tps",
        worse: Worse::Lower,
        default_pct: 5.0,
    },
    Metric {
        name: "p50",
        unit: "ms",
        worse: Worse::Higher,
        default_pct: 10.0,
    },
    Metric {
        name: "p95",
        unit: "ms",
        worse: Worse::Higher,
        default_pct: 10.0,
    },
    Metric {
        name: "p99",
        unit: "ms",
        worse: Worse::Higher,
        default_pct: 10.0,
    },
    Metric {
        name: "cpu",
        unit: "txn/CPU-s",
        worse: Worse::Lower,
        default_pct: 5.0,
    },
    // The client's cost: a driver that spends more CPU per transaction leaves less of a shared
    // host to the server, and caps what one driver host can offer.
    Metric {
        name: "client_cpu",
        unit: "txn/CPU-s",
        worse: Worse::Lower,
        default_pct: 5.0,
    },
];

/// The metric a key ends with (`type:new_order:p95` → p95).
pub fn metric_of(key: &str) -> Option<&'static Metric> {
    let name = key.rsplit(':').next()?;
    METRICS.iter().find(|m| m.name == name)
}

/// One side of the verdict: its name, its runs, and each figure's values over them (in the
/// order first seen).
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub name: String,
    pub runs: usize,
    pub values: Vec<(String, Vec<f64>)>,
    /// The headline's label (NOTPM, tpsE), when the runs have one.
    pub headline: Option<String>,
    /// The servers' versions the runs measured (`runtime.toml`), distinct, in run order: the
    /// builds an A/B of PostgreSQL builds judged, named in every format of the verdict.
    pub servers: Vec<String>,
}

impl Figures {
    pub fn push(&mut self, key: &str, value: f64) {
        match self.values.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => v.push(value),
            None => self.values.push((key.to_string(), vec![value])),
        }
    }

    pub fn get(&self, key: &str) -> &[f64] {
        self.values
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&[], |(_, v)| v.as_slice())
    }
}

/// Reads every run of every side (a side is a results dir or a dir of results dirs).
pub fn read_sides(dirs: &[PathBuf]) -> Result<Vec<Figures>, String> {
    dirs.iter().map(|d| read_side(d)).collect()
}

fn read_side(dir: &Path) -> Result<Figures, String> {
    let runs = super::runs::runs_in(dir)?;
    let mut side = Figures {
        name: dir.display().to_string(),
        runs: runs.len(),
        ..Figures::default()
    };
    for run in &runs {
        read_run(run, &mut side)?;
    }
    Ok(side)
}

/// Adds one run's figures to its side.
fn read_run(dir: &Path, side: &mut Figures) -> Result<(), String> {
    let data = load::load_totals(dir)?;
    let totals = &data.summary.totals;
    let versions = data.runtime.iter().flat_map(|r| &r.servers);
    for v in versions.map(|s| &s.server_version) {
        if !v.is_empty() && !side.servers.contains(v) {
            side.servers.push(v.clone());
        }
    }
    if let Some(h) = &data.summary.headline {
        // Headlines of different kinds (NOTPM against tpsE) are no pair to judge.
        if side.headline.get_or_insert_with(|| h.label.clone()) == &h.label {
            side.push("headline", h.value());
        }
    }
    side.push("tps", totals.tps);
    if let Some(l) = &totals.latency_ms {
        side.push("p50", l.p50);
        side.push("p95", l.p95);
        side.push("p99", l.p99);
    }
    if let Some(p) = sys::productivity(&data)
        .last()
        .and_then(|p| p.per_cpu_second())
    {
        side.push("cpu", p);
    }
    if let Some(p) = sys::client_productivity(&data) {
        side.push("client_cpu", p);
    }
    for (dim, word) in [(Dim::Type, "type"), (Dim::Group, "group")] {
        let parts = by::merged(dir, dim)?;
        // One type or one group is the whole run again.
        if parts.len() < 2 {
            continue;
        }
        for part in parts {
            side.push(&format!("{word}:{}:tps", part.name), part.tps);
            for (q, name) in [(0.95, "p95"), (0.99, "p99")] {
                if let Some(ms) = part.ms_at(q) {
                    side.push(&format!("{word}:{}:{name}", part.name), ms);
                }
            }
        }
    }
    Ok(())
}
