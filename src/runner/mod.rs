//! One benchmark run end to end: resolve every target, check each database's data, read the
//! servers' counters, drive the clients, read the counters again, write the results dir.
//! It sits above the driver (which only runs clients) and below the CLI (which only maps
//! flags and exit codes).

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::RunPlan;
use crate::driver::Stop;
use crate::event::{RunWarning, Sink};
use crate::instance::Home;
use crate::results::Summary;
use crate::sampler::prometheus;

mod build;
mod databases;
mod disrupt;
mod disrupt_check;
mod drive;
mod error;
mod finish;
mod freshness;
mod pooler;
mod prepare;
mod profiling;
mod qphh;
mod shard;
mod standbys;
mod targets;
mod waits;

use databases::Databases;
pub use error::RunError;
pub use prepare::ensure_prepared;
pub use standbys::check_declared;
pub use targets::{instance_options, resolve_target, start_instances};

/// What a finished (or interrupted) run left behind.
pub struct RunOutcome {
    pub dir: PathBuf,
    pub summary: Summary,
    /// Scale found in each group's data.
    pub scales: Vec<u32>,
    /// Said after the run; an aborted client's is typed.
    pub warnings: Vec<RunWarning>,
}

/// Runs `plan` to completion or until `stop` (Ctrl-C), and writes its results dir. What the
/// run has to say while it works goes to `events`. The stages: start declared instances →
/// resolve targets → check readiness → build the workloads and the layout → baseline and
/// drive → finish. A plan with tpch's `--qphh` runs as two ([`qphh`]).
pub async fn run(
    mut plan: RunPlan,
    home: &Home,
    stop: Stop,
    events: Arc<dyn Sink>,
) -> Result<RunOutcome, RunError> {
    // TPC-H's `--qphh` is two runs of this plan, one after the other.
    if qphh::asked(&plan) {
        return qphh::run(plan, home, stop, events).await;
    }
    let (prometheus, perf) = preflight(&plan, home)?;
    targets::start_instances(&plan.instances, home, &*events).await?;
    let targets = targets::resolve(&plan, home).await?;
    if let Some(step) = &plan.pgbench_before_run {
        for target in &targets.resolved {
            crate::workload::pgbench::before_run(step, target, &*events).await?;
        }
    }
    targets::say_notes(&targets, &*events);
    let mut dbs = Databases::open(&targets.resolved).await?;
    if plan.shard.is_none() {
        // A shard's driver sees its own clients only: no host would agree.
        dbs.watch_hosts(&targets.planned, &targets.resolved, home)
            .await;
    }
    let pooled = pooler::settle(
        &mut plan,
        &targets.planned,
        &targets.resolved,
        &mut dbs,
        home,
        &*events,
    )
    .await?;
    let readies = targets::check_ready(&plan, &targets, &mut dbs, &*events).await?;
    let scales: Vec<u32> = readies.iter().map(|r| r.scale).collect();
    let server_facts = targets::with_guests(dbs.server_facts().await?, &targets, home, &*events)?;
    let sampler = targets::sampler(&plan, &targets, &pooled, home, &*events).await?;
    let profile = profiling::request(&plan, perf, &targets, &dbs, home).await?;
    dbs.settle_idle().await?;
    let (layout, frame) = build::build(&plan, &targets, &readies)?;
    if let Some(s) = &plan.shard {
        if layout.own_clients().is_empty() {
            return Err(RunError::EmptyShard {
                shard: s.label(),
                clients: layout.clients.len(),
                shards: s.count,
            });
        }
    }
    for w in &frame.workloads {
        w.attach(&events);
    }
    let waits = waits::open(&plan, &targets, &frame.keys, &frame.workloads).await;
    let freshness = freshness::open(&plan, &targets, &frame.keys, home).await;
    // After the wait sampler's `CREATE EXTENSION` (a commit in the WAL, not the clients').
    dbs.mark_wal_start().await;
    let with = drive::Surroundings {
        dbs: &dbs,
        server_facts: &server_facts,
        sampler,
        waits,
        freshness,
        profile,
        prometheus,
        stop: &stop,
        events: &events,
        home,
    };
    let driven = drive::drive(&plan, layout, &frame, with).await?;
    let outcome = finish::finish(&plan, frame, driven, &mut dbs, server_facts, &*events).await?;
    Ok(RunOutcome { scales, ..outcome })
}

/// The run's bad input that no target needs to show: the Prometheus address, a results dir
/// that is taken, a profile that cannot be taken, an event its target cannot take. Said
/// before any instance starts or any target is touched.
fn preflight(
    plan: &RunPlan,
    home: &Home,
) -> Result<
    (
        Option<std::net::SocketAddr>,
        Option<crate::profile::perf::Perf>,
    ),
    RunError,
> {
    let prometheus = match &plan.prometheus {
        Some(a) => Some(
            prometheus::parse_addr(a).map_err(|message| RunError::Prometheus {
                addr: a.clone(),
                message,
            })?,
        ),
        None => None,
    };
    if let Some(out) = &plan.out {
        crate::results::ResultsWriter::ensure_free(out)?;
    }
    let perf = match plan.profile {
        Some(_) => {
            Some(crate::profile::preflight().map_err(|message| RunError::Profile { message })?)
        }
        None => None,
    };
    standbys::check_declared(&plan.instances, home)?;
    disrupt_check::check(plan, home)?;
    Ok((prometheus, perf))
}
