//! The per-unit times of compared runs side by side (TPC-H's queries and refresh functions):
//! first the workload's figures (Power@Size, Throughput@Size, QphH@Size) of each side, then
//! per unit each side's mean seconds over its streams (and its runs, for a dir of runs) with
//! its ratio to the baseline's. Empty when the baseline timed no units.

use std::path::{Path, PathBuf};

use super::runs::{aligned, runs_in};
use crate::results::read::ResultsDir;
use crate::results::{Figure, UnitTime};

/// A side's figures and unit times, over its runs.
#[derive(Debug, Default)]
struct Side {
    figures: Vec<Figure>,
    times: Vec<UnitTime>,
}

fn side(dir: &Path) -> Side {
    let mut out = Side::default();
    for run in runs_in(dir).unwrap_or_default() {
        if let Ok(r) = ResultsDir::open(&run) {
            let s = r.into_summary();
            out.figures.extend(s.figures);
            out.times.extend(s.unit_times);
        }
    }
    out
}

/// The mean seconds of `unit` on a side, if it ran.
fn mean(times: &[UnitTime], unit: &str) -> Option<f64> {
    let v: Vec<f64> = times
        .iter()
        .filter(|t| t.unit == unit)
        .map(|t| t.seconds)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The mean value of figure `label` on a side (a dir of runs has one per run).
fn figure(figures: &[Figure], label: &str) -> Option<f64> {
    let v: Vec<f64> = figures
        .iter()
        .filter(|f| f.label == label)
        .filter_map(|f| f.value)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// A row: the name, then each side's value (and after the first, its ratio to the first).
fn row(name: String, values: &[Option<f64>], decimals: usize) -> Vec<String> {
    let mut out = vec![name];
    for (i, v) in values.iter().enumerate() {
        out.push(v.map_or("-".into(), |v| format!("{v:.decimals$}")));
        if i > 0 {
            out.push(match (values[0], v) {
                (Some(b), Some(v)) if b > 0.0 => format!("{:.2}x", v / b),
                _ => String::new(),
            });
        }
    }
    out
}

/// The terminal table.
pub fn table(dirs: &[PathBuf]) -> String {
    let sides: Vec<Side> = dirs.iter().map(|d| side(d)).collect();
    rows_for(&sides)
}

fn rows_for(sides: &[Side]) -> String {
    let Some(base) = sides.first() else {
        return String::new();
    };
    if base.times.is_empty() {
        return String::new();
    }
    let mut head = vec!["per unit (mean s)".to_string()];
    for i in 0..sides.len() {
        head.push(format!("[{}]", i + 1));
        if i > 0 {
            head.push("ratio".into());
        }
    }
    let mut rows = vec![head];
    let mut labels: Vec<&str> = Vec::new();
    for f in &base.figures {
        if !labels.contains(&f.label.as_str()) {
            labels.push(&f.label);
        }
    }
    for label in labels {
        let values: Vec<Option<f64>> = sides.iter().map(|s| figure(&s.figures, label)).collect();
        rows.push(row(label.to_string(), &values, 1));
    }
    let mut units: Vec<&str> = Vec::new();
    for t in &base.times {
        if !units.contains(&t.unit.as_str()) {
            units.push(&t.unit);
        }
    }
    for unit in units {
        let values: Vec<Option<f64>> = sides.iter().map(|s| mean(&s.times, unit)).collect();
        rows.push(row(unit.to_string(), &values, 3));
    }
    aligned(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(stream: &str, unit: &str, seconds: f64) -> UnitTime {
        UnitTime::new(stream, unit, seconds)
    }

    #[test]
    fn units_side_by_side_with_ratios_and_figures_first() {
        let power = |v| Figure {
            label: "Power@Size".into(),
            value: Some(v),
            valid: true,
            note: String::new(),
        };
        let a = Side {
            figures: vec![power(100.0)],
            times: vec![t("stream 0", "Q1", 2.0), t("stream 1", "Q1", 4.0)],
        };
        let b = Side {
            figures: vec![power(150.0)],
            times: vec![t("stream 0", "Q1", 1.5), t("stream 0", "RF1", 1.0)],
        };
        let out = rows_for(&[a, b]);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[1].starts_with("Power@Size"), "{out}");
        assert!(
            lines[1].contains("100.0") && lines[1].contains("1.50x"),
            "{out}"
        );
        // Q1: the baseline's mean of 3 s against 1.5 s.
        assert!(
            lines[2].contains("3.000") && lines[2].contains("0.50x"),
            "{out}"
        );
        // RF1 is not the baseline's: no row.
        assert_eq!(lines.len(), 3, "{out}");
        assert!(rows_for(&[Side::default(), Side::default()]).is_empty());
    }
}
