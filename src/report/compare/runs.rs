//! `tidebench compare DIR...`: the headline numbers of two or more sides side by side, each
//! with its ratio to the first side (the baseline). A side is one results dir, or an
//! experiment dir holding several (repeated runs): then it shows the median and the min–max.
//! Whether a difference is noise is the verdict's to say ([`super::verdict`]), not this table's.
//!
//! The workload's headline (TPC-C's NOTPM, tpce's tpsE or tpsV) comes first when a side has
//! one. Headlines are compared when they count the same type in the same unit as the first
//! run that has one (tpsE and tpsV both count Trade-Results per second, so they compare); a
//! run whose headline counts something else shows none.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::report::html::markup::esc;
use crate::report::load::{self, RunData};
use crate::report::system_view as sys;
use crate::results::Per;

/// The rows of the comparison, in order: (name, unit, what it reads).
const METRICS: [(&str, &str); 9] = [
    ("throughput", "tps"),
    ("latency p50", "ms"),
    ("latency p95", "ms"),
    ("latency p99", "ms"),
    ("failed", "transactions"),
    ("CPU productivity", "txn/CPU-s"),
    ("host CPU steal", "%"),
    ("checkpoints", "count"),
    ("measured", "s"),
];

fn metrics_of(d: &RunData) -> [Option<f64>; 9] {
    let t = &d.summary.totals;
    let lat = t.latency_ms.as_ref();
    [
        Some(t.tps),
        lat.map(|l| l.p50),
        lat.map(|l| l.p95),
        lat.map(|l| l.p99),
        Some(t.failed as f64),
        sys::productivity(d).last().and_then(|p| p.per_cpu_second()),
        sys::steal_pct(d),
        sys::checkpoints(d),
        Some(d.summary.duration_s),
    ]
}

/// `Side::values`' index of the headline, after the [`METRICS`].
const HEADLINE: usize = METRICS.len();

/// One side: its name and each metric's values over its runs.
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    pub runs: usize,
    /// [metric] → values of the runs that have it; the [`METRICS`], then the headline.
    pub values: Vec<Vec<f64>>,
    /// The labels of the headlines in `values` (e.g. "tpsV"), distinct, in run order.
    pub headline_labels: Vec<String>,
}

/// Median, min and max of a metric on one side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Side {
    pub fn spread(&self, metric: usize) -> Option<Spread> {
        let mut v = self.values.get(metric)?.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// The results dirs a DIR stands for: itself, or its subdirs that hold a `summary.json`.
pub fn runs_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    if dir.join(crate::results::SUMMARY_FILE).is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut runs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(crate::results::SUMMARY_FILE).is_file())
        .collect();
    runs.sort();
    if runs.is_empty() {
        return Err(format!(
            "{} is neither a results dir nor a dir of results dirs (no summary.json found)",
            dir.display()
        ));
    }
    Ok(runs)
}

/// Reads every side.
pub fn sides(dirs: &[PathBuf]) -> Result<Vec<Side>, String> {
    if dirs.len() < 2 {
        return Err("compare needs two or more results dirs; the first is the baseline".into());
    }
    let mut out = Vec::new();
    // What the first headline counts: (type, unit); later ones must count the same.
    let mut counted: Option<(String, Per)> = None;
    for dir in dirs {
        let runs = runs_in(dir)?;
        let mut values = vec![Vec::new(); METRICS.len() + 1];
        let mut headline_labels: Vec<String> = Vec::new();
        for run in &runs {
            let data = load::load_totals(run)?;
            for (i, v) in metrics_of(&data).into_iter().enumerate() {
                if let Some(v) = v {
                    values[i].push(v);
                }
            }
            if let Some(h) = &data.summary.headline {
                let key = counted.get_or_insert_with(|| (h.txn_type.clone(), h.per));
                if *key == (h.txn_type.clone(), h.per) {
                    values[HEADLINE].push(h.value());
                    if !headline_labels.contains(&h.label) {
                        headline_labels.push(h.label.clone());
                    }
                }
            }
        }
        out.push(Side {
            name: dir.display().to_string(),
            runs: runs.len(),
            values,
            headline_labels,
        });
    }
    Ok(out)
}

/// One cell: value (median [min–max] for repeated runs) and its ratio to the baseline.
fn cell(sides: &[Side], side: usize, metric: usize) -> (String, String) {
    let Some(s) = sides[side].spread(metric) else {
        return ("-".into(), String::new());
    };
    let value = if sides[side].values[metric].len() > 1 {
        format!("{} [{}–{}]", num(s.median), num(s.min), num(s.max))
    } else {
        num(s.median)
    };
    let ratio = match sides[0].spread(metric) {
        Some(base) if base.median != 0.0 => format!("{:.2}", s.median / base.median),
        Some(_) if s.median == 0.0 => "1.00".into(),
        _ => "-".into(),
    };
    (value, ratio)
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// The rows of the comparison: (name with unit, index into `Side::values`); the headline
/// first when a side has one.
fn rows(sides: &[Side]) -> Vec<(String, usize)> {
    let mut labels: Vec<&str> = Vec::new();
    for l in sides.iter().flat_map(|s| &s.headline_labels) {
        if !labels.contains(&l.as_str()) {
            labels.push(l);
        }
    }
    let mut out = Vec::new();
    if !labels.is_empty() {
        out.push((format!("headline ({})", labels.join("/")), HEADLINE));
    }
    out.extend(
        METRICS
            .iter()
            .enumerate()
            .map(|(m, (name, unit))| (format!("{name} ({unit})"), m)),
    );
    out
}

/// The terminal table.
pub fn table(sides: &[Side]) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = vec!["metric".to_string()];
    for (i, s) in sides.iter().enumerate() {
        let role = if i == 0 { " (baseline)" } else { "" };
        head.push(format!("[{}] {} run(s){role}", i + 1, s.runs));
        head.push("ratio".into());
    }
    rows.push(head);
    for (name, m) in self::rows(sides) {
        let mut row = vec![name];
        for i in 0..sides.len() {
            let (v, r) = cell(sides, i, m);
            row.push(v);
            row.push(r);
        }
        rows.push(row);
    }
    let mut out = String::new();
    for (i, s) in sides.iter().enumerate() {
        let _ = writeln!(out, "[{}] {}", i + 1, s.name);
    }
    out.push_str(&aligned(&rows));
    out
}

/// Columns padded to their widest cell: the first left-aligned, the numbers right-aligned.
pub fn aligned(rows: &[Vec<String>]) -> String {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (text, w))| {
                if c == 0 {
                    format!("{text:<w$}")
                } else {
                    format!("{text:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}

/// The same as a self-contained HTML page.
pub fn html(sides: &[Side]) -> String {
    let mut p = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tidebench compare</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;\
         padding:2px 8px;text-align:right}td:first-child{text-align:left}</style></head><body>\
         <h1>tidebench compare</h1>\n<ol>",
    );
    for s in sides {
        let _ = write!(p, "<li>{} ({} run(s))</li>", esc(&s.name), s.runs);
    }
    p.push_str("</ol>\n<table><tr><th>metric</th>");
    for i in 0..sides.len() {
        let _ = write!(p, "<th>[{}]</th><th>ratio to [1]</th>", i + 1);
    }
    p.push_str("</tr>\n");
    for (name, m) in rows(sides) {
        let _ = write!(p, "<tr><td>{}</td>", esc(&name));
        for i in 0..sides.len() {
            let (v, r) = cell(sides, i, m);
            let _ = write!(p, "<td>{}</td><td>{}</td>", esc(&v), esc(&r));
        }
        p.push_str("</tr>\n");
    }
    p.push_str(
        "</table>\n<p>Repeated runs show median [min–max]; the verdict below says which differences are noise.</p>\
         </body></html>\n",
    );
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str, tps: &[f64]) -> Side {
        let mut values = vec![Vec::new(); METRICS.len() + 1];
        values[0] = tps.to_vec();
        Side {
            name: name.into(),
            runs: tps.len(),
            values,
            headline_labels: Vec::new(),
        }
    }

    /// A results dir holding only a summary with `committed` transactions of type `a` in the
    /// 20 s window and the given headline over `a`.
    fn run_with(dir: &Path, committed: u64, headline: crate::results::Headline) {
        use crate::metrics::{Outcome, Recorder};
        let keys = crate::results::intervals::tests::two_phase_keys();
        let mut rec = Recorder::new(keys.len());
        for _ in 0..committed {
            rec.record(keys.key(0, 0, 0), Outcome::Committed, 1_000, None, 0);
        }
        let facts = crate::results::RunFacts {
            headline: Some(headline),
            ..crate::results::summary::tests::two_phase_facts()
        };
        let plan = crate::results::summary::tests::plan();
        let s = crate::results::Summary::build(&facts, &plan, &keys, &rec, Vec::new());
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(crate::results::SUMMARY_FILE), s.to_json().unwrap()).unwrap();
    }

    #[test]
    fn headlines_counting_the_same_compare_first() {
        use crate::results::Headline;
        let tmp = tempfile::tempdir().unwrap();
        let dir = |n: &str| tmp.path().join(n);
        let tps = |label: &str| Headline::per_second(label, "a");
        run_with(&dir("e"), 100, tps("tpsE"));
        run_with(&dir("v"), 300, tps("tpsV"));
        run_with(&dir("c"), 300, Headline::per_minute("NOTPM", "a"));
        let sides = sides(&[dir("e"), dir("v"), dir("c")]).unwrap();
        let t = table(&sides);
        let row = t
            .lines()
            .find(|l| l.starts_with("headline"))
            .unwrap_or_else(|| panic!("{t}"));
        // 100 and 300 in 20 s: 5 and 15 per second; NOTPM counts per minute: no value.
        assert!(row.starts_with("headline (tpsE/tpsV)"), "{t}");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[2..], ["5", "1.00", "15", "3.00", "-"], "{t}");
        let first = t.lines().position(|l| l.starts_with("headline")).unwrap();
        let tput = t.lines().position(|l| l.starts_with("throughput")).unwrap();
        assert!(first < tput, "the headline comes first: {t}");
        assert!(html(&sides).contains("<td>headline (tpsE/tpsV)</td>"));
        let without = [side("a", &[1.0]), side("b", &[2.0])];
        assert!(!table(&without).contains("headline"));
    }

    #[test]
    fn ratios_to_the_first() {
        let sides = [
            side("a", &[100.0, 90.0, 110.0]),
            side("b", &[105.0, 95.0, 120.0]),
        ];
        let t = table(&sides);
        assert!(t.contains("1.00"), "{t}");
        assert!(t.contains("1.05") && !t.contains("noise"), "{t}");
        assert!(t.contains("100 [90–110]"), "{t}");
        let apart = [side("a", &[100.0, 101.0]), side("b", &[200.0, 201.0])];
        let t = table(&apart);
        assert!(t.contains("2.00") && !t.contains("noise"), "{t}");
    }
}
