//! Stage 6 of a run: read each database's counters once every session has closed, build the
//! summary beside them, write the results dir (renamed into place only now), then draw
//! `report.html` from the files.

use crate::config::RunPlan;
use crate::event::{RunWarning, Sink};
use crate::results::{EmulatorEnd, RuntimeInfo, ServerFacts, Summary};
use crate::sampler::host::HostFacts;
use crate::workload::Backlog;

use super::build::Frame;
use super::databases::Databases;
use super::drive::Driven;
use super::{RunError, RunOutcome};

/// How long the server check after a finished run may take: the backends' statistics are
/// flushed as they exit, which on a busy machine takes a moment.
const AFTER_RUN_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);
/// The same after a stop (Ctrl-C): short, so the run ends within a second; a check that does
/// not fit is skipped with a warning.
const AFTER_STOP_BUDGET: std::time::Duration = std::time::Duration::from_millis(500);

pub async fn finish(
    plan: &RunPlan,
    frame: Frame,
    driven: Driven,
    dbs: &mut Databases,
    server_facts: Vec<ServerFacts>,
    events: &dyn Sink,
) -> Result<RunOutcome, RunError> {
    let Driven {
        mut result,
        before,
        writer,
        started_at,
        devices,
        incidents,
        shard,
        waits,
        freshness,
        events: played,
    } = driven;
    let ran = super::databases::RunCounts {
        keys: &frame.keys,
        total: &result.total,
        at_end: &result.at_end,
    };
    // A stopped run ends at once (Ctrl-C must be quick); a finished one may wait for the
    // servers' statistics to settle, bounded all the same.
    let budget = if result.complete {
        AFTER_RUN_BUDGET
    } else {
        AFTER_STOP_BUDGET
    };
    let server = dbs.deltas(&before, &ran, budget, events).await;
    let hosts = dbs.host_agreement(&ran, budget).await;
    let facts = frame.run_facts(plan, started_at, result.elapsed, result.complete);
    let mut summary = Summary::build(&facts, plan, &frame.keys, &result.total, server);
    summary.hosts = hosts;
    summary.emulators = emulator_ends(plan, &result.emulators);
    from_workloads(
        &frame,
        writer.staging_path(),
        &mut summary,
        &mut result.warnings,
    );
    from_driver(&mut summary, plan, &frame, &result);
    // After the down windows: an event's reconnects are counted from them.
    let staging = writer.staging_path().to_path_buf();
    super::disrupt::account(
        played,
        &frame.keys,
        &staging,
        &mut summary,
        &mut result.warnings,
    );
    summary.incidents = incidents;
    summary.shard = shard;
    if let Some(w) = waits {
        let staging = writer.staging_path().to_path_buf();
        super::waits::record(w, &frame.keys, &staging, &mut summary, &mut result.warnings);
    }
    if let Some(f) = freshness {
        super::freshness::record(f, &frame.keys, &mut summary, &mut result.warnings);
    }
    if server_facts.iter().any(|f| f.vm.is_some()) {
        guests(writer.staging_path(), &mut summary, &mut result.warnings);
    }
    let mut runtime = RuntimeInfo::new(plan.clone(), HostFacts::collect(), server_facts);
    runtime.devices = devices;
    runtime.txn_types = frame.type_facts();
    let dir = writer.finish(&runtime, &summary)?;
    let warnings = report_and_warnings(plan, &mut result, &dir);
    Ok(RunOutcome {
        dir,
        summary,
        scales: Vec::new(),
        warnings,
    })
}

/// The report, drawn once the results are safe on disk (one that cannot be drawn only warns),
/// and the run's warnings.
fn report_and_warnings(
    plan: &RunPlan,
    result: &mut crate::driver::DriverResult,
    dir: &std::path::Path,
) -> Vec<RunWarning> {
    let mut warnings: Vec<RunWarning> = std::mem::take(&mut result.warnings)
        .into_iter()
        .map(RunWarning::Other)
        .collect();
    end_warnings(plan, result, &mut warnings);
    if let Err(e) = crate::report::html::write(dir) {
        warnings.push(RunWarning::Other(format!(
            "report.html not written ({e}); retry with `tidebench report {}`",
            dir.display()
        )));
    }
    warnings
}

/// What each group's workload adds to the summary and the results dir. The clients have
/// ended, so each workload has merged its clients' figures.
fn from_workloads(
    frame: &Frame,
    staging: &std::path::Path,
    summary: &mut Summary,
    warnings: &mut Vec<String>,
) {
    for w in &frame.workloads {
        summary.commands.extend(w.command_stats());
        summary.volumes.extend(w.volumes());
        summary.figures.extend(w.figures());
        summary.unit_times.extend(w.unit_times());
        write_files(staging, w.files(), warnings);
    }
}

/// The files a workload leaves in the results dir (relative paths under it); one that
/// cannot be written only warns, the run's results are whole without it.
fn write_files(dir: &std::path::Path, files: Vec<(String, String)>, warnings: &mut Vec<String>) {
    for (path, text) in files {
        let at = dir.join(&path);
        let made = match at.parent() {
            Some(parent) => std::fs::create_dir_all(parent),
            None => Ok(()),
        };
        if let Err(e) = made.and_then(|()| std::fs::write(&at, text)) {
            warnings.push(format!("{path} not written: {e}"));
        }
    }
}

/// The VM instances' guests over the measured window, from `system.csv`: `guests.csv` and
/// summary.json's `guests` (a run without samples has neither).
fn guests(staging: &std::path::Path, summary: &mut Summary, warnings: &mut Vec<String>) {
    let rows = match crate::results::system::read(staging) {
        Ok(Some(rows)) => rows,
        Ok(None) => return,
        Err(e) => {
            warnings.push(format!("guests.csv not made: {e}"));
            return;
        }
    };
    let (from, to) = crate::results::guests::measured_window(summary);
    let Some((csv, means)) = crate::results::guests::build(&rows, from, to) else {
        return;
    };
    if let Err(e) = crate::results::guests::write(staging, &csv) {
        warnings.push(format!("guests.csv not written: {e}"));
    }
    summary.guests = means;
}

/// What the driver saw beside the totals: failures, incidents, cuts, outages, aborted
/// clients, errors by kind, connections and the latency limit.
fn from_driver(
    summary: &mut Summary,
    plan: &RunPlan,
    frame: &Frame,
    result: &crate::driver::DriverResult,
) {
    summary.failure = result.failure.clone();
    summary.cut_in_flight = result.at_end.values().map(|c| c.cut_in_flight).sum();
    summary.committed_after_end = result.at_end.values().map(|c| c.committed_after_end).sum();
    summary.down_windows = result
        .down
        .iter()
        .map(|w| crate::results::down::DownWindow {
            target: frame
                .keys
                .targets
                .get(w.target)
                .map_or_else(|| w.target.to_string(), |t| t.label.clone()),
            from_s: secs3(w.from),
            to_s: w.to.map(secs3),
            sessions_lost: w.sessions_lost,
        })
        .collect();
    summary.overrun_s = result.overrun.map(secs3);
    summary.aborted_clients = result.aborted.clone();
    summary.connections = plan.connect.then(|| {
        crate::results::summary::Connections::of(
            result.connect_time.connects,
            result.connect_time.total,
        )
    });
    summary.latency_limit = plan
        .latency_limit_ms
        .map(|ms| crate::results::summary::LatencyLimit::of(ms, &result.total));
    summary.errors = result.errors.clone();
    summary.on_error = Some(plan.on_error);
}

/// The warnings a finished run adds: aborted clients, a stop at the first abort, an overrun.
fn end_warnings(
    plan: &RunPlan,
    result: &crate::driver::DriverResult,
    warnings: &mut Vec<RunWarning>,
) {
    for a in &result.aborted {
        warnings.push(RunWarning::ClientAborted {
            client: a.client,
            at_s: a.at_s,
            message: a.message.clone(),
        });
    }
    if plan.on_error == crate::config::OnError::ExitRun && !result.aborted.is_empty() {
        warnings.push(RunWarning::Other(
            "the run stopped at the first aborted client (--exit-on-abort): the other clients \
             ended early"
                .into(),
        ));
    }
    if let Some(late) = result.overrun {
        warnings.push(RunWarning::Other(format!(
            "the clients finished {late:.1?} after the planned end (sessions slow to close: a \
             hung server?); the measured window still ends at the duration (overrun_s in \
             summary.json)"
        )));
    }
}

/// The emulated sets' backlogs under their group and set names (set indexes run over the
/// plan's groups and their sets in order, as the layout numbers them).
fn emulator_ends(plan: &RunPlan, backlogs: &[(usize, Backlog)]) -> Vec<EmulatorEnd> {
    let names: Vec<(&str, &str)> = plan
        .groups
        .iter()
        .flat_map(|g| {
            g.sets
                .iter()
                .map(move |s| (g.name.as_str(), s.name.as_str()))
        })
        .collect();
    backlogs
        .iter()
        .filter_map(|(set, b)| {
            let (group, name) = names.get(*set)?;
            Some(EmulatorEnd {
                group: group.to_string(),
                set: name.to_string(),
                issued: b.issued,
                abandoned: b.abandoned,
                pending_at_end: b.due + b.waiting,
                overdue_at_end: b.due,
                lag_ms_at_end: (b.lag.as_secs_f64() * 1e6).round() / 1e3,
            })
        })
        .collect()
}

/// Seconds with 3 decimals, as the summary writes times.
fn secs3(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e3).round() / 1e3
}
