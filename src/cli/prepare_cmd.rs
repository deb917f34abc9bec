//! `tidebench prepare`: starts a run file's declared instances, then loads every target it
//! names, several at once (issue 26, item 5): `--parallel-targets` loads at a time, by default
//! as many as the host's cores give each its `--jobs` COPY streams. While loads overlap, each
//! target's progress is a line of its own every few seconds (one bar would mix them), and its
//! summary as it finishes. `--shard I/N` loads the I-th share of the targets, so a launcher can
//! load a large rig from many hosts.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{stream, TryStreamExt};

use super::common::{cores, host_memory, interactive};
use super::{args, terminal};
use super::{CliError, WorkloadFlags, EXIT_INTERRUPTED};
use crate::config;
use crate::event::{Event, Sink};
use crate::instance::Home;
use crate::workload::{Registry, WorkloadError};

/// What `prepare` does: start the run file's declared instances, then load every target.
struct Preparation {
    instances: Vec<config::InstancePlan>,
    loads: Vec<config::PreparePlan>,
}

/// Every distinct target of the plan (see `config::load_plans`) and the instances the run
/// file declares.
fn prepare_plans(args: &args::PrepareArgs, flags: &WorkloadFlags) -> Result<Preparation, CliError> {
    let from_run = args.config.is_some() || args.preset.is_some();
    let workload = flags.shorthand.as_deref().or(args.workload.as_deref());
    if !from_run {
        config::presets::refuse_knobs(&args.knobs.to_knobs()).map_err(CliError::usage)?;
        let request = config::PrepareRequest {
            workload,
            scale: args.scale,
            target: args.target.as_deref(),
            jobs: args.jobs,
            force: args.force,
            options: flags.options.clone(),
        };
        let plan = config::validate_prepare(&request, cores(), &Registry)?;
        return Ok(Preparation {
            instances: Vec::new(),
            loads: vec![plan],
        });
    }
    // A preset sized by a knob (ch's warehouses) takes --scale as that knob.
    let scale_knob = args
        .preset
        .as_deref()
        .is_some_and(config::presets::takes_scale);
    if workload.is_some() || (args.scale.is_some() && !scale_knob) || args.target.is_some() {
        return Err(CliError::usage(
            "--workload, --scale and --target prepare one target; a run file or preset names its own groups",
        ));
    }
    let source = match (&args.config, &args.preset) {
        (Some(p), _) => config::RunSource::File(p),
        (None, Some(n)) => config::RunSource::PresetOnHost(n, host_memory()),
        (None, None) => config::RunSource::None,
    };
    // Load options (`--trade-days`) apply to every group whose workload takes them, as in `run`.
    let flags = config::RawRun {
        options: flags.options.clone(),
        scale: args.scale,
        preset: args.knobs.to_knobs(),
        ..config::RawRun::default()
    };
    let run = config::build_run_plan(source, flags, cores(), 1, &Registry)?;
    let jobs = match args.jobs {
        Some(0) => return Err(CliError::usage("jobs must be at least 1 (--jobs / -j)")),
        Some(j) => j,
        None => config::default_load_jobs(cores()),
    };
    let plans = config::load_plans(&run, jobs, args.force, &Registry)?
        .into_iter()
        .map(|(plan, _)| plan)
        .collect();
    Ok(Preparation {
        instances: run.instances,
        loads: plans,
    })
}

/// `--dry-run`: the instances that would be started and what would be loaded where.
fn planned_loads(instances: &[config::InstancePlan], loads: &[config::PreparePlan]) -> String {
    let mut out = String::new();
    for i in instances {
        out.push_str(&format!(
            "dry run: would start instance {} ({})\n",
            i.name,
            i.shape()
        ));
    }
    for l in loads {
        out.push_str(&format!(
            "dry run: would load {} at scale {} into {}\n",
            l.workload,
            l.scale,
            l.target.redacted()
        ));
    }
    out.push_str("dry run: nothing was started or loaded\n");
    out
}

pub fn prepare(
    args: args::PrepareArgs,
    flags: &WorkloadFlags,
    home: &Home,
) -> Result<u8, CliError> {
    let Preparation { instances, loads } = prepare_plans(&args, flags)?;
    let loads = shard_of(loads, args.shard.as_deref())?;
    if args.dry_run {
        print!("{}", planned_loads(&instances, &loads));
        return Ok(0);
    }
    let parallel = match args.parallel_targets {
        Some(0) => return Err(CliError::usage("--parallel-targets must be at least 1")),
        Some(n) => n as usize,
        None => default_parallel(&loads),
    };
    crate::runner::check_declared(&instances, home)?;
    let (rt, stop, events) = interactive()?;
    rt.block_on(async {
        tokio::select! {
            started = crate::runner::start_instances(&instances, home, &*events) => {
                started?;
            }
            _ = stop.wait() => {
                eprintln!("prepare interrupted while starting instances; run prepare again");
                return Ok(EXIT_INTERRUPTED);
            }
        }
        let count = loads.len();
        let overlap = parallel.min(count) > 1;
        if overlap {
            eprintln!("prepare: {count} targets, {} at a time", parallel.min(count));
        }
        let started = Instant::now();
        let all = stream::iter(loads.iter().enumerate().map(Ok::<_, LoadFailed>))
            .try_for_each_concurrent(parallel, |(i, plan)| {
                let events = if overlap {
                    Arc::new(PerTarget::new(Arc::clone(&events))) as Arc<dyn Sink>
                } else {
                    Arc::clone(&events)
                };
                async move { load_one(plan, i, count, home, events).await }
            });
        tokio::select! {
            done = all => match done {
                Ok(()) => {}
                Err(LoadFailed::Interrupted) => return Ok(EXIT_INTERRUPTED),
                Err(LoadFailed::Error(e)) => return Err(e),
            },
            _ = stop.wait() => {
                eprintln!("prepare interrupted: no table was left looking complete; run prepare again");
                return Ok(EXIT_INTERRUPTED);
            }
        }
        if count > 1 {
            eprintln!(
                "prepare: {count} targets loaded in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        Ok(0)
    })
}

/// Why loading stopped.
enum LoadFailed {
    Interrupted,
    Error(CliError),
}

/// Loads one target (`i` of `count`).
async fn load_one(
    plan: &config::PreparePlan,
    i: usize,
    count: usize,
    home: &Home,
    events: Arc<dyn Sink>,
) -> Result<(), LoadFailed> {
    let target = crate::runner::resolve_target(&plan.target, home)
        .await
        .map_err(|e| LoadFailed::Error(e.into()))?;
    if count > 1 {
        eprintln!(
            "prepare {} of {count}: {} on '{}'",
            i + 1,
            plan.workload,
            target.label
        );
    }
    let kind = Registry::kind(plan.workload.as_str())
        .map_err(|e| LoadFailed::Error(CliError::usage(e)))?;
    match kind.prepare(plan, &target, &events).await {
        Ok(()) => Ok(()),
        Err(WorkloadError::Interrupted) => Err(LoadFailed::Interrupted),
        Err(e) => Err(LoadFailed::Error(CliError::usage(format!(
            "prepare on '{}': {e}",
            target.label
        )))),
    }
}

/// Targets at a time when not given: the host's cores over the COPY streams each load opens.
fn default_parallel(loads: &[config::PreparePlan]) -> usize {
    let jobs = loads.iter().map(|l| l.jobs.max(1)).max().unwrap_or(1);
    (cores() / jobs).max(1) as usize
}

/// `--shard I/N`: the targets whose position in the plan is I modulo N.
fn shard_of(
    loads: Vec<config::PreparePlan>,
    shard: Option<&str>,
) -> Result<Vec<config::PreparePlan>, CliError> {
    let Some(text) = shard else {
        return Ok(loads);
    };
    let (index, count) =
        config::shard::parse_shard(text, &|k| std::env::var(k).ok()).map_err(CliError::usage)?;
    Ok(loads
        .into_iter()
        .enumerate()
        .filter(|(k, _)| *k as u32 % count == index)
        .map(|(_, l)| l)
        .collect())
}

/// While loads overlap: each one's progress as a line of its own every [`EVERY`], named by
/// what it loads, instead of one bar the loads would fight over.
struct PerTarget {
    inner: Arc<dyn Sink>,
    last: Mutex<Option<Instant>>,
}

const EVERY: Duration = Duration::from_secs(5);

impl PerTarget {
    fn new(inner: Arc<dyn Sink>) -> PerTarget {
        PerTarget {
            inner,
            last: Mutex::new(None),
        }
    }
}

impl Sink for PerTarget {
    fn send(&self, event: Event) {
        match event {
            Event::LoadProgress(p) => {
                let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
                if last.is_some_and(|t| t.elapsed() < EVERY) {
                    return;
                }
                *last = Some(Instant::now());
                self.inner
                    .send(Event::Note(format!("  {}", terminal::load_line(&p))));
            }
            Event::LoadStarted { .. } | Event::LoadStep(_) | Event::LoadStopped => {}
            other => self.inner.send(other),
        }
    }
}
