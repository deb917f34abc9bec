//! Picking an experiment up where it stopped: the dir's `experiment.json` must come from the
//! same command (else the difference is named and nothing runs), runs whose results dir is
//! complete are kept, anything else is made again.

use std::sync::Arc;
use std::time::SystemTime;

use crate::event::{Event, Sink};
use crate::results::experiment::{
    self as record, ExperimentFile, ExperimentKind, Request, RunStatus,
};
use crate::results::utc_rfc3339;

use super::execute::fresh_points;
use super::{records, Experiment, ExperimentError};

/// The experiment's file: read back from its dir (runs re-read from their results dirs) or
/// made new, with every run pending.
pub fn open(exp: &Experiment, events: &Arc<dyn Sink>) -> Result<ExperimentFile, ExperimentError> {
    let dir = &exp.dir;
    let io = |source: std::io::Error| ExperimentError::Io {
        action: "use",
        path: dir.clone(),
        source,
    };
    if record::is_experiment(dir) {
        let old = record::read(dir)?;
        if let Some(diff) = difference(&old.request, &exp.request) {
            return Err(ExperimentError::Changed {
                dir: dir.clone(),
                diff,
            });
        }
        let earlier: Vec<record::RunRecord> = old
            .points
            .iter()
            .flat_map(|p| p.runs.iter().cloned())
            .collect();
        let mut file = old;
        file.points = fresh_points(exp);
        let mut kept = 0;
        for point in &mut file.points {
            let scheme = point.values.get(record::consolidate::SCHEME_KEY).cloned();
            for run in &mut point.runs {
                if let Some(mut found) = records::from_dir(
                    &dir.join(&run.dir),
                    &run.dir,
                    run.repeat,
                    exp.kind == ExperimentKind::Density,
                ) {
                    if found.status == RunStatus::Complete {
                        // What the host group held is known only from the run's own time.
                        found.consolidation = earlier
                            .iter()
                            .find(|e| e.dir == run.dir)
                            .and_then(|e| e.consolidation.clone())
                            .or_else(|| {
                                super::consolidate::records::for_run(
                                    exp.request.consolidate.as_ref(),
                                    scheme.as_deref(),
                                    &dir.join(&run.dir),
                                    None,
                                    None,
                                    &[],
                                )
                            });
                        *run = found;
                        kept += 1;
                    }
                }
            }
        }
        let total: usize = file.points.iter().map(|p| p.runs.len()).sum();
        events.send(Event::Note(format!(
            "resuming {}: {kept} of {total} runs already complete",
            dir.display()
        )));
        return Ok(file);
    }
    if dir.exists() && std::fs::read_dir(dir).map_err(io)?.next().is_some() {
        return Err(ExperimentError::NotExperiment { dir: dir.clone() });
    }
    std::fs::create_dir_all(dir).map_err(io)?;
    let now = utc_rfc3339(SystemTime::now());
    Ok(ExperimentFile {
        schema_version: record::SCHEMA_VERSION,
        tidebench_version: env!("CARGO_PKG_VERSION").to_string(),
        kind: exp.kind,
        request: exp.request.clone(),
        varied: exp.varied.clone(),
        repeat: exp.repeat,
        started_at: now.clone(),
        updated_at: now,
        complete: false,
        points: fresh_points(exp),
        analysis: Default::default(),
    })
}

/// The first field in which two requests differ, with both values; `None` when equal.
pub fn difference(old: &Request, new: &Request) -> Option<String> {
    let show = |v: &Vec<record::Varied>| {
        v.iter()
            .map(|v| format!("{}={}", v.key, v.values.join(",")))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let knee = |k: &Option<record::KneeRequest>| match k {
        Some(k) => format!("{} {}", k.mode.name(), k.kept),
        None => "none".into(),
    };
    let pairs: [(&str, String, String); 8] = [
        (
            "the run file or preset",
            old.source.clone(),
            new.source.clone(),
        ),
        ("--vary", show(&old.vary), show(&new.vary)),
        ("--repeat", old.repeat.to_string(), new.repeat.to_string()),
        ("the run flags", old.flags.join(" "), new.flags.join(" ")),
        (
            "--point-duration",
            format!("{:?}", old.point_duration),
            format!("{:?}", new.point_duration),
        ),
        (
            "--cpus",
            format!("{:?}", old.cpus),
            format!("{:?}", new.cpus),
        ),
        (
            "--memory",
            format!("{:?}", old.memory),
            format!("{:?}", new.memory),
        ),
        (
            "--keep / --keep-difference",
            knee(&old.knee),
            knee(&new.knee),
        ),
    ];
    for (what, a, b) in pairs {
        if a != b {
            return Some(format!("{what}: was '{a}', now '{b}'"));
        }
    }
    if old.consolidate != new.consolidate {
        return Some(consolidate_difference(
            old.consolidate.as_ref(),
            new.consolidate.as_ref(),
        ));
    }
    (old.base_text != new.base_text)
        .then(|| format!("{} changed since the experiment started", new.source))
}

/// The first `[consolidate]` key whose value differs (the layouts follow from the keys).
fn consolidate_difference(
    old: Option<&record::consolidate::ConsolidateRequest>,
    new: Option<&record::consolidate::ConsolidateRequest>,
) -> String {
    let fields = |r: Option<&record::consolidate::ConsolidateRequest>| match r
        .and_then(|r| serde_json::to_value(r).ok())
    {
        Some(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let (a, b) = (fields(old), fields(new));
    let keys = a.keys().chain(b.keys()).filter(|k| *k != "schemes");
    for key in keys {
        let show = |m: &serde_json::Map<String, serde_json::Value>| {
            m.get(key).map_or("none".to_string(), |v| v.to_string())
        };
        if a.get(key) != b.get(key) {
            return format!("{key}: was '{}', now '{}'", show(&a), show(&b));
        }
    }
    "the consolidation layout changed since the experiment started".into()
}
