//! One benchmark run end to end: resolve every target, check each database's data, read the
//! servers' counters, drive the clients, read the counters again, write the results dir.
//! It sits above the driver (which only runs clients) and below the CLI (which only maps
//! flags and exit codes).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config::{timeline, DriveMode, Isolation, RunPlan, TargetSpec};
use crate::driver::layout::{self, GroupSlot, TargetSlot};
use crate::driver::{self, DriverPlan, Layout, Stop};
use crate::event::{Event, RunDescription, Sink};
use crate::instance::Home;
use crate::metrics::{KeySpace, TargetKey};
use crate::results::{self, ResultsWriter, RunFacts, RuntimeInfo, Summary};
use crate::sampler::host::HostFacts;
use crate::sampler::prometheus::{self, Exporter};
use crate::sampler::{LatestSamples, Sampler};
use crate::target::{self, ResolvedTarget};
use crate::workload::{Kind, Registry, Workload};

mod databases;

use databases::Databases;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad target, missing data, unreachable server, unwritable results dir: exit 2.
    #[error("{0}")]
    Setup(String),
}

pub(crate) fn setup(e: impl std::fmt::Display) -> RunError {
    RunError::Setup(e.to_string())
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
/// run has to say while it works goes to `events`.
pub async fn run(
    plan: RunPlan,
    home: &Home,
    stop: Stop,
    events: Arc<dyn Sink>,
) -> Result<RunOutcome, RunError> {
    let prometheus_addr = match &plan.prometheus {
        Some(a) => Some(prometheus::parse_addr(a).map_err(setup)?),
        None => None,
    };
    let kinds: Vec<&'static dyn Kind> = plan
        .groups
        .iter()
        .map(|g| Registry::kind(g.workload.as_str()).map_err(setup))
        .collect::<Result<_, _>>()?;
    let roles: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| k.roles().iter().map(|r| r.to_string()).collect())
        .collect();
    let (planned, sets) = layout::plan_targets(&plan, &roles);
    let specs: Vec<(usize, String, TargetSpec)> = planned
        .into_iter()
        .map(|t| (t.group, t.set, t.spec))
        .collect();
    let mut resolved: Vec<ResolvedTarget> = Vec::with_capacity(specs.len());
    for (_, _, spec) in &specs {
        resolved.push(resolve_target(spec, home).await?);
    }
    let mut dbs = Databases::open(&resolved).await?;

    // The data decides each group's scale, as pgbench reads it from pgbench_branches.
    let mut scales = Vec::with_capacity(plan.groups.len());
    for (g, group) in plan.groups.iter().enumerate() {
        let mut found = None;
        for (t, (tg, _, _)) in specs.iter().enumerate() {
            if *tg != g {
                continue;
            }
            let scale = dbs
                .check_ready(t, &resolved[t], kinds[g], &group.options.workload)
                .await?;
            match found {
                None => found = Some(scale),
                Some(s) if s != scale => {
                    return Err(setup(format!(
                        "group '{}': its sets hold data of different scales ({s} and {scale}); prepare them alike with `tidebench prepare`",
                        group.name
                    )))
                }
                Some(_) => {}
            }
        }
        let scale = found.unwrap_or(1);
        if let Some(asked) = group.scale.filter(|a| *a != scale) {
            events.send(Event::Warning(format!(
                "group '{}' asks for scale {asked}, but its data has scale {scale}; using {scale}",
                group.name
            )));
        }
        scales.push(scale);
    }
    let server_facts = dbs.server_facts().await?;
    let sampler = if plan.sample.is_zero() {
        None
    } else {
        let instances = managed_instances(&specs, home)?;
        Some(
            Sampler::open(plan.sample, &resolved, &instances)
                .await
                .map_err(setup)?,
        )
    };
    dbs.settle_idle().await?;

    let workloads: Vec<Arc<dyn Workload>> = plan
        .groups
        .iter()
        .zip(&kinds)
        .zip(&scales)
        .map(|((g, kind), scale)| {
            kind.build(*scale, &g.options.workload)
                .map_err(|e| setup(format!("group '{}': {e}", g.name)))
        })
        .collect::<Result<_, _>>()?;
    let mut txn_types: Vec<String> = Vec::new();
    let mut txn_roles: Vec<String> = Vec::new();
    for w in &workloads {
        for t in w.txn_types() {
            if !txn_types.contains(&t.name) {
                txn_types.push(t.name.clone());
                txn_roles.push(t.role.clone());
            }
        }
    }
    // What the workloads' specifications demand of their types (the summary checks a type
    // named by two groups once), and the first headline among them for the polling block.
    let type_rules: Vec<results::TypeRule> =
        workloads.iter().flat_map(|w| w.type_rules()).collect();
    let run_headline = workloads.iter().find_map(|w| w.headline());
    let headline = workloads.iter().find_map(|w| {
        let h = w.headline()?;
        Some(driver::poll::PerMinute {
            txn: txn_types.iter().position(|t| *t == h.txn_type)?,
            label: h.label,
        })
    });
    let mut notes = plan.notes();
    for (g, (group, w)) in plan.groups.iter().zip(&workloads).enumerate() {
        notes.extend(w.notes(&group.name, plan.most_clients(g)));
    }
    let segments = timeline::segments(&plan);
    let keys = KeySpace {
        segments: segments.clone(),
        targets: specs
            .iter()
            .zip(&resolved)
            .map(|((g, set, _), r)| TargetKey {
                label: r.label.clone(),
                group: *g,
                set: set.clone(),
            })
            .collect(),
        groups: plan.groups.iter().map(|g| g.name.clone()).collect(),
        txn_types: txn_types.clone(),
        txn_roles,
    };
    let slots: Vec<TargetSlot> = specs
        .iter()
        .zip(&resolved)
        .map(|((g, _, _), r)| TargetSlot {
            group: *g,
            params: with_isolation(&r.params, plan.groups[*g].options.isolation),
        })
        .collect();
    let labels = resolved.iter().map(|r| r.label.clone()).collect();
    let groups = workloads
        .into_iter()
        .zip(roles)
        .map(|(w, r)| GroupSlot::new(w, r))
        .collect();
    let layout = Layout::new(
        &plan,
        segments.clone(),
        groups,
        slots,
        sets,
        labels,
        &txn_types,
    )
    .map_err(setup)?;
    let sessions = layout.sessions_per_target();
    let shares = segments
        .iter()
        .map(|s| {
            (plan.mode == DriveMode::Shared).then(|| {
                plan.phases[s.phase]
                    .groups
                    .iter()
                    .map(|g| g.share)
                    .collect()
            })
        })
        .collect();

    let out_dir = plan
        .out
        .clone()
        .unwrap_or_else(|| results::default_dir(plan.name()));
    ResultsWriter::ensure_free(&out_dir).map_err(setup)?;
    let driver_plan = DriverPlan {
        layout,
        protocol: plan.protocol.wire(),
        max_tries: plan.max_tries,
        jobs: plan.jobs,
        seed: plan.seed,
        interval: plan.interval,
        progress: plan.progress,
        poll: plan.poll,
        shares,
        headline,
        keys: keys.clone(),
        live: prometheus_addr.map(|_| crate::metrics::live::LiveTotals::default()),
        events: Arc::clone(&events),
    };
    let latest = LatestSamples::default();
    let exporter = match (prometheus_addr, &driver_plan.live) {
        (Some(addr), Some(live)) => Some(
            Exporter::start(addr, keys.clone(), live.clone(), latest.clone())
                .await
                .map_err(setup)?,
        ),
        _ => None,
    };
    let connected = driver::connect(driver_plan, stop.clone())
        .await
        .map_err(setup)?;
    // Each new session is one transaction at the server: wait until all are in the baseline.
    let before = dbs.baseline(&sessions).await;
    events.send(Event::RunStarting(describe(&plan, specs.len())));
    for note in notes {
        events.send(Event::Note(note));
    }
    let started_at = SystemTime::now();
    let mut writer = match ResultsWriter::create(&out_dir, started_at) {
        Ok(w) => w,
        Err(e) => {
            connected.abort().await;
            return Err(setup(e));
        }
    };
    let mixlog_dir = plan.mix_log.then(|| writer.staging_path().to_path_buf());
    let devices = sampler.as_ref().map(|s| s.devices().to_vec());
    // The sampler's clock starts with the driver's, so `t_s` and interval offsets agree.
    let sampling = match sampler.map(|s| {
        s.start(
            writer.staging_path(),
            Instant::now(),
            latest,
            Arc::clone(&events),
        )
    }) {
        Some(Ok(running)) => Some(running),
        Some(Err(e)) => {
            connected.abort().await;
            return Err(setup(e));
        }
        None => None,
    };
    let result = {
        let mut sink = |start: Duration, len: Duration, rec: &crate::metrics::Recorder| {
            writer
                .write_interval(start, len, &keys, rec)
                .map_err(|e| e.to_string())
        };
        connected.run(&stop, &mut sink, mixlog_dir).await
    };
    let sampled = match sampling {
        Some(running) => Some(running.stop().await),
        None => None,
    };
    drop(exporter);
    let mut result = result.map_err(setup)?;
    if let Some(report) = sampled {
        result.warnings.extend(report.warnings);
    }

    let server = dbs.deltas(&before, &keys, &result.total, &*events).await;
    let facts = RunFacts {
        workload: plan.name().to_string(),
        started_at,
        elapsed: result.elapsed,
        complete: result.complete,
        rate_limited: plan.rate.is_some()
            || plan
                .phases
                .iter()
                .any(|p| p.groups.iter().any(|g| g.rate.is_some())),
        type_rules,
        headline: run_headline.map(|h| results::Headline {
            label: h.label,
            txn_type: h.txn_type,
        }),
    };
    let summary = Summary::build(&facts, &plan, &keys, &result.total, server);
    let mut runtime = RuntimeInfo::new(plan.clone(), HostFacts::collect(), server_facts);
    runtime.devices = devices.unwrap_or_default();
    let dir = writer.finish(&runtime, &summary).map_err(setup)?;
    // The results are safe on disk by now: a report that cannot be drawn only warns.
    let mut warnings = result.warnings;
    if let Err(e) = crate::report::html::write(&dir) {
        warnings.push(format!(
            "report.html not written ({e}); retry with `tidebench report {}`",
            dir.display()
        ));
    }
    Ok(RunOutcome {
        dir,
        summary,
        scales,
        warnings,
    })
}

fn describe(plan: &RunPlan, targets: usize) -> RunDescription {
    RunDescription {
        name: plan.name().to_string(),
        groups: plan.groups.len(),
        targets,
        phases: plan.phases.len(),
        iterations: plan.iterations,
        shared_clients: (plan.mode == DriveMode::Shared).then_some(plan.clients),
        threads: plan.jobs,
        duration: plan.total_duration(),
    }
}

/// The managed instances behind the targets, once each, for the sampler.
fn managed_instances(
    specs: &[(usize, String, TargetSpec)],
    home: &Home,
) -> Result<Vec<crate::instance::Instance>, RunError> {
    let mut out: Vec<crate::instance::Instance> = Vec::new();
    for (_, _, spec) in specs {
        if let TargetSpec::Instance { name, .. } = spec {
            if !out.iter().any(|i| &i.name == name) {
                out.push(crate::instance::find(home, name).map_err(setup)?);
            }
        }
    }
    Ok(out)
}

/// Resolves a target on a blocking thread (it may start a managed instance).
pub async fn resolve_target(spec: &TargetSpec, home: &Home) -> Result<ResolvedTarget, RunError> {
    let spec = spec.clone();
    let home = home.clone();
    tokio::task::spawn_blocking(move || target::resolve(&spec, &home))
        .await
        .map_err(setup)?
        .map_err(setup)
}

/// The driver's session parameters for a group: the target's own, plus the group's isolation
/// as a session default (set at startup, so it costs no statement and no transaction).
fn with_isolation(params: &pgwire::ConnectParams, isolation: Isolation) -> pgwire::ConnectParams {
    let mut out = params.clone();
    let ours = isolation.startup_options();
    if !ours.is_empty() {
        if !out.options.is_empty() {
            out.options.push(' ');
        }
        out.options.push_str(&ours);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_joins_the_targets_own_startup_options() {
        let mut params = pgwire::ConnectParams {
            host: pgwire::Host::Tcp("db".into()),
            port: 5432,
            user: "u".into(),
            password: None,
            dbname: "d".into(),
            application_name: "tidebench".into(),
            options: String::new(),
            connect_timeout: Duration::from_secs(1),
        };
        assert_eq!(
            with_isolation(&params, Isolation::ReadCommitted).options,
            ""
        );
        params.options = "-c work_mem=64MB".into();
        assert_eq!(
            with_isolation(&params, Isolation::Serializable).options,
            "-c work_mem=64MB -c default_transaction_isolation=serializable"
        );
        assert_eq!(
            with_isolation(&params, Isolation::ReadCommitted).options,
            "-c work_mem=64MB"
        );
    }
}
