//! TPC-H's QphH@Size from one command (`--qphh`, issue 51). A performance run is the power
//! test followed by the throughput test (clause 5.3.1), so the runner runs such a plan as two
//! runs on the same targets, nothing between them: the power test with one client into
//! `OUT/power`, then the throughput test with the plan's clients into `OUT/throughput`, told
//! the first run's Power@Size, so its summary has Power@Size, Throughput@Size and QphH@Size at
//! the top. Each is a whole results dir (`report`, `compare` read either). Which options make
//! each test is tpch's to say ([`crate::workload::tpch::qphh`]).
//!
//! A power test that gives no Power@Size (a unit failed or was cut) or that was interrupted
//! ends the command there: a throughput figure could not make a QphH@Size.

use std::path::Path;
use std::sync::Arc;

use super::{RunError, RunOutcome};
use crate::config::{DriveMode, RunPlan};
use crate::driver::Stop;
use crate::event::{Event, RunWarning, Sink};
use crate::instance::Home;
use crate::results::ResultsWriter;
use crate::workload::tpch::qphh as tpch;

/// Whether any group of `plan` asks for the two tests.
pub(super) fn asked(plan: &RunPlan) -> bool {
    plan.groups.iter().any(|g| tpch::asked(&g.options.workload))
}

/// Refuses a plan the two runs cannot be made from: a group beside the tpch one (the power
/// test is one client alone), a shard, a given Power@Size, or no client left for a query
/// stream beside the refresh stream.
fn check(plan: &RunPlan) -> Result<(), RunError> {
    let refuse = |group: &str, message: String| RunError::Workload {
        group: group.to_string(),
        message,
    };
    let group = &plan.groups[0].name;
    if plan.groups.len() != 1 {
        return Err(refuse(
            group,
            format!(
                "--qphh runs TPC-H's power test with one client alone, so the run takes one \
                 group; this one has {}: run the other groups separately",
                plan.groups.len()
            ),
        ));
    }
    if plan.shard.is_some() {
        return Err(refuse(
            group,
            "--qphh runs two tests one after the other and cannot be sharded; drop --shard".into(),
        ));
    }
    if let Some(why) = tpch::refusal(&plan.groups[0].options.workload) {
        return Err(refuse(group, why));
    }
    if clients(plan) < 2 {
        return Err(refuse(
            group,
            "--qphh's throughput test takes -c S+1 clients (S query streams and the refresh \
             stream), so at least 2; the specification asks S = 2 up to SF 10 (-c 3)"
                .into(),
        ));
    }
    Ok(())
}

/// The run's clients: the pool in shared mode (a flag run's), else the group's in the first
/// phase.
fn clients(plan: &RunPlan) -> u32 {
    if plan.mode == DriveMode::Shared {
        return plan.clients;
    }
    plan.phases
        .first()
        .and_then(|p| p.groups.first())
        .map_or(plan.clients, |g| g.clients)
}

/// `plan` with `clients` clients in every phase, the group's options `options`, into `out`.
fn part(plan: &RunPlan, clients: u32, options: crate::config::OptionValues, out: &Path) -> RunPlan {
    let mut p = plan.clone();
    p.groups[0].options.workload = options;
    for phase in &mut p.phases {
        for g in &mut phase.groups {
            g.clients = clients;
        }
    }
    p.clients = clients;
    p.jobs = p.jobs.min(clients);
    p.out = Some(out.to_path_buf());
    p
}

/// Runs the power test, then the throughput test; the outcome is the throughput test's (or
/// the power test's, when it ended the command), with both tests' warnings.
pub(super) async fn run(
    plan: RunPlan,
    home: &Home,
    stop: Stop,
    events: Arc<dyn Sink>,
) -> Result<RunOutcome, RunError> {
    check(&plan)?;
    let out = plan
        .out
        .clone()
        .unwrap_or_else(|| crate::results::default_dir(&plan.title()));
    ResultsWriter::ensure_free(&out)?;
    let options = plan.groups[0].options.workload.clone();
    let power_dir = out.join("power");
    events.send(Event::Note(format!(
        "--qphh: the power test first (1 client), into {}",
        power_dir.display()
    )));
    let power_plan = part(&plan, 1, tpch::power_options(&options), &power_dir);
    let first = Box::pin(super::run(
        power_plan,
        home,
        stop.clone(),
        Arc::clone(&events),
    ))
    .await?;
    let figure = first
        .summary
        .figures
        .iter()
        .find(|f| f.label == tpch::POWER_FIGURE);
    let power = match figure.and_then(|f| f.value) {
        Some(p) if first.summary.complete && !stop.is_set() => p,
        _ => {
            let why = figure.map_or("the run was interrupted".to_string(), |f| f.note.clone());
            let mut first = first;
            first.warnings.push(RunWarning::Other(format!(
                "--qphh: the power test gave no Power@Size ({why}), so the throughput test was \
                 not run"
            )));
            return Ok(first);
        }
    };
    let thr_dir = out.join("throughput");
    events.send(Event::Note(format!(
        "--qphh: Power@Size {power}; the throughput test next ({} clients), into {}",
        clients(&plan),
        thr_dir.display()
    )));
    let thr_plan = part(
        &plan,
        clients(&plan),
        tpch::throughput_options(&options, power),
        &thr_dir,
    );
    let mut second = Box::pin(super::run(thr_plan, home, stop, events)).await?;
    let mut warnings = first.warnings;
    warnings.append(&mut second.warnings);
    Ok(RunOutcome { warnings, ..second })
}
