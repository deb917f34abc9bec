//! One density step against the ideal of n independent instances, and the series' summary.

use super::{complete_values, fmt_tps, is_complete, median, tps_median};
use crate::results::experiment::{DensityStep, Point, RunRecord};

pub(super) fn density_step(n: u32, point: &Point, single: Option<f64>) -> DensityStep {
    let total = tps_median(point);
    let ideal = single.map(|s| f64::from(n) * s);
    let percent_of_ideal = match (total, ideal) {
        (Some(t), Some(i)) if i > 0.0 => Some((1000.0 * t / i).round() / 10.0),
        _ => None,
    };
    DensityStep {
        instances: n,
        total_tps: total,
        per_instance_tps: per_instance_medians(point),
        ideal,
        percent_of_ideal,
        host_cpu_percent: median(&complete_values(point, |r| r.host_cpu_percent)),
    }
}

/// Each instance's median over the complete runs, by instance index.
fn per_instance_medians(point: &Point) -> Vec<f64> {
    let runs: Vec<&RunRecord> = point.runs.iter().filter(|r| is_complete(r)).collect();
    let width = runs
        .iter()
        .map(|r| r.per_instance_tps.len())
        .max()
        .unwrap_or(0);
    (0..width)
        .filter_map(|i| {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.per_instance_tps.get(i).copied())
                .collect();
            median(&values)
        })
        .collect()
}

/// The largest step with a complete run, against its ideal.
pub(super) fn density_summary(steps: &[DensityStep], single: Option<f64>) -> String {
    let Some((step, total)) = steps.iter().rev().find_map(|s| Some((s, s.total_tps?))) else {
        return "no step has a complete run".into();
    };
    let n = step.instances;
    let mut text = format!("at {}: {} tps", instances(n), fmt_tps(total));
    match (step.percent_of_ideal, single) {
        (Some(p), Some(s)) => {
            text.push_str(&format!(", {p:.1} % of the ideal {n} × {} tps", fmt_tps(s)))
        }
        _ => text.push_str(" (no ideal: the 1-instance step has no complete run)"),
    }
    if let Some(cpu) = step.host_cpu_percent {
        text.push_str(&format!("; host CPU {cpu:.0} %"));
    }
    text
}

pub(super) fn instances(n: u32) -> String {
    if n == 1 {
        "1 instance".into()
    } else {
        format!("{n} instances")
    }
}
