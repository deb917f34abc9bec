//! From a finished run to its line in `experiment.json`: status, tps, the headline, each
//! instance's tps and the host CPU, read back from the results dir as any reader would.

use std::path::Path;

use crate::results::experiment::{HeadlineValue, RunRecord, RunStatus};
use crate::results::headline::Per;
use crate::results::read::ResultsDir;
use crate::results::Summary;

/// The record of the results dir at `path` (its summary read), or `None` when it holds no
/// finished run (missing, or only a `.partial` left by a killed process). `per_group` keeps
/// each group's tps (density: a group per instance).
pub fn from_dir(path: &Path, dir: &str, repeat: u32, per_group: bool) -> Option<RunRecord> {
    let results = ResultsDir::open(path).ok()?;
    let mut record = from_summary(results.summary(), dir, repeat);
    if per_group {
        record.per_instance_tps = results
            .summary()
            .groups
            .iter()
            .map(|g| g.stats.tps)
            .collect();
    }
    record.host_cpu_percent = host_cpu(&results);
    Some(record)
}

fn from_summary(s: &Summary, dir: &str, repeat: u32) -> RunRecord {
    let mut record = RunRecord {
        status: match (s.complete, &s.failure) {
            (_, Some(_)) => RunStatus::Failed,
            (true, None) => RunStatus::Complete,
            (false, None) => RunStatus::Interrupted,
        },
        complete: s.complete,
        tps: Some(s.totals.tps),
        headline: s.headline.as_ref().map(|h| HeadlineValue {
            label: h.label.clone(),
            value: h.value(),
            unit: match h.per {
                Per::Second => "per second".into(),
                Per::Minute => "per minute".into(),
            },
        }),
        error: s.failure.clone(),
        ..RunRecord::pending(dir, repeat)
    };
    record.count_incidents(&s.incidents);
    record
}

/// A run that could not be made.
pub fn failed(dir: &str, repeat: u32, error: String) -> RunRecord {
    RunRecord {
        status: RunStatus::Failed,
        error: Some(error),
        ..RunRecord::pending(dir, repeat)
    }
}

/// Mean host CPU busy (user + system) over the samples of `system.csv`, in percent.
fn host_cpu(results: &ResultsDir) -> Option<f64> {
    let series = results.system().ok().flatten()?;
    let of = |metric: &str| {
        series
            .iter()
            .find(|s| s.source == "host" && s.metric == metric)
            .map(|s| s.points.iter().map(|p| p.1).collect::<Vec<f64>>())
    };
    let (user, system) = (of("cpu_user_pct")?, of("cpu_system_pct")?);
    let busy: Vec<f64> = user.iter().zip(&system).map(|(u, s)| u + s).collect();
    (!busy.is_empty()).then(|| (busy.iter().sum::<f64>() / busy.len() as f64 * 10.0).round() / 10.0)
}
