//! The consolidation analysis (the vPostgres study's "Performance Metrics"): per scheme and
//! overcommitment rate, the sum of the databases' rates averaged over the traffic periods,
//! relative to the scheme's own 0 % baseline (Figures 13–14), the coefficient of variation
//! of the period sums (standard deviation / mean), the CPU the VMs used in the measured
//! periods and the rate per fully used CPU. With repeats, the row is the complete run whose
//! mean is the median of the point's runs (the lower middle one for an even count).

use crate::results::experiment::consolidate::{
    mem_avail, ConsolidateAnalysis, ConsolidateRequest, ConsolidateRow, ConsolidateRun,
    OVERCOMMIT_KEY, SCHEME_KEY,
};
use crate::results::experiment::{Point, RunRecord};

use super::is_complete;

/// The rows, one per point, in point order.
pub fn analyse(request: &ConsolidateRequest, points: &[Point]) -> ConsolidateAnalysis {
    let mut rows: Vec<ConsolidateRow> = points.iter().map(|p| row(request, p)).collect();
    for i in 0..rows.len() {
        let base = rows
            .iter()
            .find(|r| r.scheme == rows[i].scheme && r.overcommit == 0)
            .and_then(|r| r.mean);
        rows[i].relative = match (rows[i].mean, base) {
            (Some(m), Some(b)) if b > 0.0 => Some(round(m / b, 3)),
            _ => None,
        };
    }
    let unit = points
        .iter()
        .flat_map(|p| &p.runs)
        .find_map(|r| r.consolidation.as_ref().map(|c| c.unit.clone()))
        .unwrap_or_else(|| "tps".into());
    let demand = request
        .working_set_bytes
        .map(|ws| ws * u64::from(request.databases));
    let mut max_real_rate = None;
    if let Some(d) = demand {
        for r in &mut rows {
            r.covers_working_sets = Some(r.host_limit_bytes >= d);
        }
        if let Some(config) = request.schemes.first().map(|s| s.mem_config_bytes) {
            max_real_rate =
                (config > 0).then(|| round(100.0 * (1.0 - d as f64 / config as f64), 1).max(0.0));
        }
    }
    let mut summary = summary(&rows, &unit);
    if let (Some(rate), Some(ws)) = (max_real_rate, &request.working_set) {
        summary.push_str(&format!(
            " With a working set of {ws} per database, rates up to {rate} % leave every working set covered: real consolidation opportunities."
        ));
    }
    ConsolidateAnalysis {
        rules: rules(&unit),
        unit,
        rows,
        summary,
        max_real_rate,
    }
}

fn row(request: &ConsolidateRequest, point: &Point) -> ConsolidateRow {
    let scheme = point.values.get(SCHEME_KEY).cloned().unwrap_or_default();
    let overcommit: u32 = point
        .values
        .get(OVERCOMMIT_KEY)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mem_config = request
        .schemes
        .iter()
        .find(|s| s.scheme == scheme)
        .map_or(0, |s| s.mem_config_bytes);
    let mut complete: Vec<(&RunRecord, &ConsolidateRun, f64)> = point
        .runs
        .iter()
        .filter(|r| is_complete(r))
        .filter_map(|r| {
            let c = r.consolidation.as_ref()?;
            Some((r, c, mean(&sums(c))?))
        })
        .collect();
    complete.sort_by(|a, b| a.2.total_cmp(&b.2));
    let mut out = ConsolidateRow {
        runs: complete.len(),
        ..ConsolidateRow::empty(&scheme, overcommit, mem_avail(mem_config, overcommit))
    };
    let Some((record, run, m)) = complete.get((complete.len().max(1) - 1) / 2).copied() else {
        return out;
    };
    let period_sums = sums(run);
    let measured_s: f64 = run.periods.iter().map(|p| p.duration_s).sum();
    let cpu: Option<f64> = run.vms.iter().map(|v| v.cpu_seconds).sum::<Option<f64>>();
    out.run = Some(record.dir.clone());
    out.periods = run.periods.clone();
    out.mean = Some(round(m, 1));
    out.cov = cov(&period_sums).map(|c| round(c, 4));
    out.cpu_seconds = cpu.map(|c| round(c, 2));
    out.cpus_used = cpu
        .filter(|_| measured_s > 0.0)
        .map(|c| round(c / measured_s, 3));
    out.productivity = out.cpus_used.filter(|c| *c > 0.0).map(|c| round(m / c, 1));
    out.oom_kills = run.vms.iter().filter_map(|v| v.oom_kills).sum();
    out.incidents = run.incidents.len();
    out
}

fn sums(run: &ConsolidateRun) -> Vec<f64> {
    run.periods.iter().map(|p| p.sum).collect()
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample standard deviation over the mean; `None` for fewer than two values or a zero mean.
pub fn cov(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    if values.len() < 2 || m == 0.0 {
        return None;
    }
    let var = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    Some(var.sqrt() / m)
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

fn rules(unit: &str) -> Vec<String> {
    vec![
        format!("mean: each database's {unit} per measured period (ramps left out), summed over the databases, averaged over the periods."),
        "relative: mean over the same scheme's mean at 0 % overcommitment (its own baseline).".into(),
        "cov: the sample standard deviation of the period sums divided by their mean.".into(),
        "cpu: CPU seconds the scheme's VMs used in the measured periods (their control groups); cpus used = that over the measured seconds.".into(),
        format!("productivity: mean {unit} per fully used CPU (mean / cpus used)."),
        "overcommit: 100 % − MEM_avail / MEM_config (Equation 1); MEM_avail is the host group's memory limit.".into(),
    ]
}

/// One sentence per scheme: its baseline and how much it keeps at the highest rate run.
fn summary(rows: &[ConsolidateRow], unit: &str) -> String {
    let mut schemes: Vec<&str> = Vec::new();
    for r in rows {
        if !schemes.contains(&r.scheme.as_str()) {
            schemes.push(&r.scheme);
        }
    }
    let parts: Vec<String> = schemes
        .iter()
        .filter_map(|s| {
            let mine: Vec<&ConsolidateRow> = rows.iter().filter(|r| r.scheme == *s).collect();
            let base = mine.iter().find(|r| r.overcommit == 0)?.mean?;
            let worst = mine
                .iter()
                .filter(|r| r.overcommit > 0)
                .filter_map(|r| Some((r.overcommit, r.relative?)))
                .max_by_key(|(o, _)| *o);
            Some(match worst {
                Some((o, rel)) => format!(
                    "{s}: {base:.0} {unit} at 0 %, {:.0} % of it at {o} % overcommitment",
                    rel * 100.0
                ),
                None => format!("{s}: {base:.0} {unit} at 0 %"),
            })
        })
        .collect();
    if parts.is_empty() {
        "no complete run yet".into()
    } else {
        parts.join("; ") + "."
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::results::experiment::consolidate::{PeriodRate, SchemeLayout, VmUsage};
    use crate::results::experiment::RunStatus;

    fn request() -> ConsolidateRequest {
        ConsolidateRequest {
            databases: 2,
            periods: 2,
            period: "1m".into(),
            ramp_up: "0s".into(),
            high: 30,
            low: 2,
            overcommit: vec![0, 40],
            balloon: false,
            host_group: "h".into(),
            cpus: None,
            memory: "1GB".into(),
            shared_buffers: "25%".into(),
            working_set: Some("600MB".into()),
            working_set_bytes: Some(600 << 20),
            schemes: vec![SchemeLayout {
                scheme: "M/M/M".into(),
                mem_config_bytes: 2 << 30,
                vms: Vec::new(),
            }],
            guests: None,
        }
    }

    fn point(overcommit: &str, sums: &[(f64, f64)], cpu: f64) -> Point {
        let periods = sums
            .iter()
            .enumerate()
            .map(|(i, (a, b))| PeriodRate {
                period: format!("period-{}", i + 1),
                duration_s: 60.0,
                by_database: BTreeMap::from([("db1".into(), *a), ("db2".into(), *b)]),
                sum: a + b,
            })
            .collect();
        Point {
            values: BTreeMap::from([
                (SCHEME_KEY.into(), "M/M/M".into()),
                (OVERCOMMIT_KEY.into(), overcommit.into()),
            ]),
            runs: vec![RunRecord {
                status: RunStatus::Complete,
                complete: true,
                tps: Some(1.0),
                consolidation: Some(ConsolidateRun {
                    host_limit_bytes: None,
                    balloon_bytes: None,
                    unit: "NOTPM".into(),
                    periods,
                    vms: vec![VmUsage {
                        vm: "vm1".into(),
                        source: "instance:x".into(),
                        cpu_seconds: Some(cpu),
                        peak_usage_bytes: None,
                        peak_cache_bytes: None,
                        major_faults: None,
                        oom_kills: Some(1),
                        refaults: None,
                        limit_hits: None,
                    }],
                    incidents: Vec::new(),
                    restarted_under_limit: None,
                    ..ConsolidateRun::default()
                }),
                ..RunRecord::pending(&format!("{overcommit}-r1"), 1)
            }],
            median: None,
            min: None,
            max: None,
            headline_median: None,
        }
    }

    #[test]
    fn rows_are_relative_to_the_schemes_baseline() {
        let points = vec![
            point("0", &[(900.0, 100.0), (100.0, 900.0)], 120.0),
            point("40", &[(700.0, 100.0), (100.0, 500.0)], 60.0),
        ];
        let a = analyse(&request(), &points);
        assert_eq!(a.unit, "NOTPM");
        let (base, over) = (&a.rows[0], &a.rows[1]);
        assert_eq!(base.mean, Some(1000.0));
        assert_eq!(base.cov, Some(0.0));
        assert_eq!(base.relative, Some(1.0));
        // 120 CPU seconds over 120 measured seconds: one CPU fully used.
        assert_eq!(base.cpus_used, Some(1.0));
        assert_eq!(base.productivity, Some(1000.0));
        assert_eq!(over.mean, Some(700.0));
        assert_eq!(over.relative, Some(0.7));
        // Period sums 800 and 600: sd 141.42, mean 700.
        assert_eq!(over.cov, Some(0.202));
        assert_eq!(over.host_limit_bytes, 1228 << 20);
        assert_eq!(over.oom_kills, 1);
        assert!(a.summary.contains("70 % of it at 40 %"), "{}", a.summary);
        // 2 × 600 MiB of 2 GiB: 41.4 % can go before a working set is cut.
        assert_eq!(a.max_real_rate, Some(41.4));
        assert_eq!(over.covers_working_sets, Some(true));
    }

    #[test]
    fn a_point_without_complete_runs_has_no_figures() {
        let mut p = point("40", &[(1.0, 1.0)], 1.0);
        p.runs[0].status = RunStatus::Failed;
        p.runs[0].complete = false;
        let a = analyse(&request(), &[point("0", &[(1.0, 1.0)], 1.0), p]);
        assert_eq!(a.rows[1].mean, None);
        assert_eq!(a.rows[1].relative, None);
        assert_eq!(a.rows[1].runs, 0);
        assert_eq!(cov(&[5.0]), None);
    }
}
