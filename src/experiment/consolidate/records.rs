//! What a consolidation run measured, read back from its results dir: each traffic period's
//! rate per database (the workload's headline, NOTPM for TPC-C, else tps) from
//! `summary.json`, and each VM's CPU, memory, faults and OOM kills from the samples of its
//! control group in `system.csv`, reclaim included (the VM's first instance stands for it: instances sharing a
//! VM share its group, so their rows are the same numbers).

use std::collections::BTreeMap;
use std::path::Path;

use crate::event::Incident;
use crate::results::experiment::consolidate::{
    ConsolidateRequest, ConsolidateRun, PeriodRate, RunIncident, SchemeLayout, VmUsage,
};
use crate::results::read::{ResultsDir, SystemSeries};
use crate::results::Summary;

use super::layout::PERIOD_PREFIX;

/// The consolidation part of the record of the run in `run_dir`, a run of `scheme`; `None`
/// when the request has no such scheme or the dir holds no finished run. `before_run`: what
/// limiting the host group did to the instances before the run started.
pub fn for_run(
    request: Option<&ConsolidateRequest>,
    scheme: Option<&str>,
    run_dir: &Path,
    host_limit: Option<u64>,
    balloon: Option<u64>,
    before_run: &[Incident],
) -> Option<ConsolidateRun> {
    let layout = request?
        .schemes
        .iter()
        .find(|s| Some(s.scheme.as_str()) == scheme)?;
    let results = ResultsDir::open(run_dir).ok()?;
    let mut run = from_results(&results, layout, host_limit, balloon);
    let early = before_run.iter().map(|i| RunIncident {
        t_s: 0.0,
        vm: vm_of(layout, &i.instance),
        kind: i.kind.name().to_string(),
        detail: format!(
            "{}: before the run, when the host group was limited: {}",
            i.instance, i.detail
        ),
    });
    run.incidents.splice(0..0, early);
    Some(run)
}

/// The consolidation part of a run's record.
pub fn from_results(
    results: &ResultsDir,
    scheme: &SchemeLayout,
    host_limit: Option<u64>,
    balloon: Option<u64>,
) -> ConsolidateRun {
    let summary = results.summary();
    let series = results.system().ok().flatten().unwrap_or_default();
    let periods = periods(summary);
    let windows: Vec<(f64, f64)> = measured_windows(summary);
    let vms = scheme
        .vms
        .iter()
        .filter_map(|vm| {
            let first = vm.instances.first()?;
            let source = format!("instance:{}", first.name);
            let of = |metric: &str| {
                series
                    .iter()
                    .find(|s| s.source == source && s.metric == metric)
            };
            let oom = of("oom_events");
            Some(VmUsage {
                vm: vm.name.clone(),
                cpu_seconds: of("cpu_seconds").and_then(|s| used_within(s, &windows)),
                // A real VM's usage is its QEMU's RSS (it has no group of its own; the
                // instance's `rss_bytes` is its QEMU's).
                peak_usage_bytes: of("mem_usage_bytes")
                    .or_else(|| of("rss_bytes"))
                    .and_then(peak),
                peak_cache_bytes: of("mem_cache_bytes").and_then(peak),
                major_faults: of("major_faults").and_then(growth),
                oom_kills: oom.and_then(growth),
                refaults: of("mem_refaults").and_then(growth),
                limit_hits: of("mem_limit_hits").and_then(growth),
                source,
            })
        })
        .collect();
    // What the run's own watcher saw (OOM kills, killed backends, crash restarts, a server
    // gone); it reports a shared VM's OOM kills once, under the VM's first instance.
    let mut incidents: Vec<RunIncident> = summary
        .incidents
        .iter()
        .map(|i| RunIncident {
            t_s: i.t_s,
            vm: vm_of(scheme, &i.instance),
            kind: i.kind.name().to_string(),
            detail: format!("{}: {}", i.instance, i.detail),
        })
        .collect();
    incidents.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    ConsolidateRun {
        host_limit_bytes: host_limit,
        balloon_bytes: balloon,
        unit: unit(summary),
        periods,
        vms,
        incidents,
        restarted_under_limit: None,
        guests: Vec::new(),
        ksm_pages_sharing: None,
    }
}

/// The VM holding `instance`, or the instance's name when no VM of the scheme holds it.
fn vm_of(scheme: &SchemeLayout, instance: &str) -> String {
    scheme
        .vms
        .iter()
        .find(|v| v.instances.iter().any(|i| i.name == instance))
        .map_or_else(|| instance.to_string(), |v| v.name.clone())
}

/// `NOTPM` for TPC-C (its headline's label), the headline's label for others, else `tps`.
fn unit(s: &Summary) -> String {
    s.headline
        .as_ref()
        .map_or_else(|| "tps".to_string(), |h| h.label.clone())
}

/// The measured `period-N` phases, each group's rate in the run's unit.
fn periods(s: &Summary) -> Vec<PeriodRate> {
    let headline = s.headline.is_some();
    s.phases
        .iter()
        .filter(|p| p.measured && p.phase.starts_with(PERIOD_PREFIX) && p.duration_s > 0.0)
        .map(|p| {
            let by_database: BTreeMap<String, f64> = p
                .groups
                .iter()
                .map(|g| {
                    let rate = if headline {
                        g.headline.unwrap_or(0.0)
                    } else {
                        g.stats.tps
                    };
                    (g.group.clone(), rate)
                })
                .collect();
            PeriodRate {
                period: p.phase.clone(),
                duration_s: p.duration_s,
                sum: by_database.values().sum(),
                by_database,
            }
        })
        .collect()
}

/// The measured periods as (start, end) seconds since the run's start.
fn measured_windows(s: &Summary) -> Vec<(f64, f64)> {
    s.phases
        .iter()
        .filter(|p| p.measured && p.phase.starts_with(PERIOD_PREFIX))
        .map(|p| (p.start_s, p.start_s + p.duration_s))
        .collect()
}

/// A cumulative counter's growth within the windows: for each, the value at the sample
/// nearest its end minus the value at the sample nearest its start.
pub fn used_within(s: &SystemSeries, windows: &[(f64, f64)]) -> Option<f64> {
    if s.points.is_empty() || windows.is_empty() {
        return None;
    }
    let at = |t: f64| {
        s.points
            .iter()
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            .map(|p| p.1)
    };
    let mut total = 0.0;
    for (start, end) in windows {
        total += (at(*end)? - at(*start)?).max(0.0);
    }
    Some((total * 1000.0).round() / 1000.0)
}

fn peak(s: &SystemSeries) -> Option<u64> {
    s.points
        .iter()
        .map(|p| p.1)
        .reduce(f64::max)
        .map(|v| v as u64)
}

/// Last minus first of a cumulative counter.
fn growth(s: &SystemSeries) -> Option<u64> {
    let (first, last) = (s.points.first()?, s.points.last()?);
    Some((last.1 - first.1).max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(points: &[(f64, f64)]) -> SystemSeries {
        SystemSeries {
            source: "instance:a".into(),
            metric: "cpu_seconds".into(),
            points: points.to_vec(),
        }
    }

    #[test]
    fn counters_are_read_within_the_measured_windows() {
        let s = series(&[(0.0, 0.0), (1.0, 5.0), (2.0, 6.0), (3.0, 9.0), (4.0, 20.0)]);
        // Two windows: 1..2 (+1) and 2..3 (+3); the ramp before and after is left out.
        assert_eq!(used_within(&s, &[(1.0, 2.0), (2.0, 3.0)]), Some(4.0));
        assert_eq!(used_within(&s, &[]), None);
        assert_eq!(growth(&s), Some(20));
        assert_eq!(peak(&s), Some(20));
    }
}
