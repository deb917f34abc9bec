//! One benchmark run end to end: resolve every target, check each database's data, read the
//! servers' counters, drive the clients, read the counters again, write the results dir.
//! It sits above the driver (which only runs clients) and below the CLI (which only maps
//! flags and exit codes).

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::RunPlan;
use crate::driver::Stop;
use crate::event::Sink;
use crate::instance::Home;
use crate::results::Summary;
use crate::sampler::prometheus;

mod build;
mod databases;
mod drive;
mod finish;
mod prepare;
mod profiling;
mod shard;
mod targets;

use databases::Databases;
pub use prepare::ensure_prepared;
pub use targets::{instance_options, resolve_target, start_instances};

/// Why a run could not start or could not write its results; every message names the fix.
/// The CLI exits 2 for all of them; experiments tell them apart (a target down is worth a
/// retry, a config error is not).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan cannot run as given (an unknown workload, a deck that cannot hold the
    /// shares, a Prometheus address that cannot be bound).
    #[error("{0}")]
    Config(String),
    /// A target cannot be resolved or reached.
    #[error("{0}")]
    Target(String),
    /// A database lacks its workload's data (or holds data of another scale or knobs).
    #[error("{0}")]
    NotPrepared(String),
    /// The results dir cannot be created or written.
    #[error("{0}")]
    Results(String),
    /// Anything else that stops a run from starting.
    #[error("{0}")]
    Setup(String),
}

/// What a finished (or interrupted) run left behind.
pub struct RunOutcome {
    pub dir: PathBuf,
    pub summary: Summary,
    /// Scale found in each group's data.
    pub scales: Vec<u32>,
    pub warnings: Vec<String>,
}

/// Runs `plan` to completion or until `stop` (Ctrl-C), and writes its results dir. What the
/// run has to say while it works goes to `events`. The stages: start declared instances →
/// resolve targets → check readiness → build the workloads and the layout → baseline and
/// drive → finish.
pub async fn run(
    plan: RunPlan,
    home: &Home,
    stop: Stop,
    events: Arc<dyn Sink>,
) -> Result<RunOutcome, RunError> {
    let prometheus = match &plan.prometheus {
        Some(a) => Some(prometheus::parse_addr(a).map_err(RunError::Config)?),
        None => None,
    };
    // A results dir that is taken fails the run now, not after the targets were checked.
    if let Some(out) = &plan.out {
        crate::results::ResultsWriter::ensure_free(out)
            .map_err(|e| RunError::Results(e.to_string()))?;
    }
    // A profile that cannot be taken is bad input, said before any target is touched.
    let perf = match plan.profile {
        Some(_) => Some(crate::profile::preflight().map_err(RunError::Config)?),
        None => None,
    };
    targets::start_instances(&plan.instances, home, &*events).await?;
    let targets = targets::resolve(&plan, home).await?;
    let mut said: Vec<&str> = Vec::new();
    for note in targets.resolved.iter().flat_map(|t| &t.notes) {
        if !said.contains(&note.as_str()) {
            events.send(crate::event::Event::Warning(note.clone()));
            said.push(note);
        }
    }
    let mut dbs = Databases::open(&targets.resolved).await?;
    let readies = targets::check_ready(&plan, &targets, &mut dbs, &*events).await?;
    let scales: Vec<u32> = readies.iter().map(|r| r.scale).collect();
    let server_facts = targets::with_guests(dbs.server_facts().await?, &targets, home, &*events)?;
    let sampler = targets::sampler(&plan, &targets, home).await?;
    let profile = profiling::request(&plan, perf, &targets, &dbs, home).await?;
    dbs.settle_idle().await?;
    let (layout, frame) = build::build(&plan, &targets, &readies)?;
    if let Some(s) = &plan.shard {
        if layout.own_clients().is_empty() {
            return Err(RunError::Config(format!(
                "--shard {}: the run has {} client(s), dealt one by one over {} shards, so this \
                 one has none; use at most {} shards or more clients (-c)",
                s.label(),
                layout.clients.len(),
                s.count,
                layout.clients.len()
            )));
        }
    }
    for w in &frame.workloads {
        w.attach(&events);
    }
    let with = drive::Surroundings {
        dbs: &dbs,
        server_facts: &server_facts,
        sampler,
        profile,
        prometheus,
        stop: &stop,
        events: &events,
    };
    let driven = drive::drive(&plan, layout, &frame, with).await?;
    let outcome = finish::finish(&plan, frame, driven, &mut dbs, server_facts, &*events).await?;
    Ok(RunOutcome { scales, ..outcome })
}
