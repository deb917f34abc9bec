//! Stages 4 and 5 of a run: connect every client's sessions, read each database's baseline
//! once they are all counted, then drive the clients while the interval writer, the samplers
//! and the Prometheus endpoint run beside them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config::{DriveMode, RunPlan};
use crate::driver::{self, Connected, DriverError, DriverPlan, DriverResult, Layout, Stop};
use crate::event::{Event, Incident, RunDescription, Sink};
use crate::metrics::live::LiveTotals;
use crate::metrics::Recorder;
use crate::results::runtime::InstanceDevices;
use crate::results::{self, ResultsWriter, RunStart, RuntimeInfo, ServerFacts};
use crate::sampler::prometheus::Exporter;
use crate::sampler::{LatestSamples, Sampler};

use super::build::Frame;
use super::databases::Databases;
use super::RunError;

/// A run driven to its end (or its stop), its results not yet written.
pub struct Driven {
    pub result: DriverResult,
    /// Each database's counters before the first transaction.
    pub before: Vec<super::databases::Baseline>,
    pub writer: ResultsWriter,
    pub started_at: SystemTime,
    pub devices: Vec<InstanceDevices>,
    /// What the sampler saw happen to the managed instances (OOM kills, crash restarts).
    pub incidents: Vec<Incident>,
    /// A shard's part and clock offsets (`--shard`).
    pub shard: Option<crate::results::shard::ShardFacts>,
    /// What the wait sampler counted (`--sample-waits`).
    pub waits: Option<crate::sampler::waits::WaitsReport>,
    /// What the freshness probe measured (a run of several groups).
    pub freshness: Option<crate::sampler::freshness::FreshnessReport>,
    /// The run's events as played (`[[event]]`), their recovery not yet measured.
    pub events: Vec<crate::results::disruptions::EventAccount>,
}

/// The clients connected and the baseline read, ready to start on one clock.
struct Ready {
    connected: Connected,
    before: Vec<super::databases::Baseline>,
    exporter: Option<Exporter>,
    latest: LatestSamples,
    out_dir: PathBuf,
    /// How long opening the sessions took.
    connect_time: std::time::Duration,
}

/// Where the drive reports and what it may be stopped by.
pub struct Surroundings<'a> {
    pub dbs: &'a Databases,
    /// Each server's version and settings, for the `runtime.toml` written at the start.
    pub server_facts: &'a [ServerFacts],
    pub sampler: Option<Sampler>,
    pub waits: Option<crate::sampler::waits::WaitSampler>,
    /// How fresh a standby's reads are (see `runner::freshness`).
    pub freshness: Option<crate::sampler::freshness::FreshnessProbe>,
    /// What `--profile` samples; `None` without it.
    pub profile: Option<crate::profile::Request>,
    pub prometheus: Option<SocketAddr>,
    pub stop: &'a Stop,
    pub events: &'a Arc<dyn Sink>,
    /// Where the managed instances the run's events act on live.
    pub home: &'a crate::instance::Home,
}

/// Stages 4 and 5.
pub async fn drive(
    plan: &RunPlan,
    layout: Layout,
    frame: &Frame,
    with: Surroundings<'_>,
) -> Result<Driven, RunError> {
    let mut ready = connect(plan, layout, frame, &with).await?;
    // A shard checks its clock and waits for the run's start instant (see `shard`).
    let shard = match &plan.shard {
        Some(s) => {
            let started = match super::shard::check_clocks(s, with.dbs).await {
                Ok(facts) => super::shard::wait_for_start(s, with.stop, &**with.events)
                    .await
                    .map(|()| facts),
                Err(e) => Err(e),
            };
            Some(or_release(&mut ready.connected, started).await?)
        }
        None => None,
    };
    let events = with.events;
    events.send(Event::RunStarting(describe(
        plan,
        frame.keys.targets.len(),
        ready.connect_time,
    )));
    for note in &frame.notes {
        events.send(Event::Note(note.clone()));
    }
    for (k, d) in plan.events.iter().enumerate() {
        events.send(Event::Note(format!("event {}: {}", k + 1, d.describe())));
    }
    let start = Start {
        frame,
        server_facts: with.server_facts,
    };
    let sides = Sides {
        sampler: with.sampler,
        waits: with.waits,
        freshness: with.freshness,
        profile: with.profile,
        home: with.home,
    };
    let mut driven = run_clients(plan, ready, start, sides, with.stop, events).await?;
    driven.shard = shard;
    Ok(driven)
}

/// What runs beside the clients over their clock.
struct Sides<'a> {
    sampler: Option<Sampler>,
    waits: Option<crate::sampler::waits::WaitSampler>,
    freshness: Option<crate::sampler::freshness::FreshnessProbe>,
    profile: Option<crate::profile::Request>,
    home: &'a crate::instance::Home,
}

/// What the results dir records before the first interval (see `results::start`).
struct Start<'a> {
    frame: &'a Frame,
    server_facts: &'a [ServerFacts],
}

/// Stage 4: checks the results dir is free, opens every session, starts the Prometheus
/// endpoint, and waits until each database's counters include the sessions' own commits.
async fn connect(
    plan: &RunPlan,
    layout: Layout,
    frame: &Frame,
    with: &Surroundings<'_>,
) -> Result<Ready, RunError> {
    let out_dir = plan
        .out
        .clone()
        .unwrap_or_else(|| results::default_dir(&plan.title()));
    ResultsWriter::ensure_free(&out_dir)?;
    let keys = &frame.keys;
    let sessions = layout.sessions_per_target();
    let live = with.prometheus.map(|_| LiveTotals::default());
    let latest = LatestSamples::default();
    let exporter = match (with.prometheus, &live) {
        (Some(addr), Some(live)) => Some(
            Exporter::start(
                addr,
                keys.clone(),
                live.clone(),
                latest.clone(),
                with.waits.as_ref().map(|w| w.live()),
            )
            .await
            .map_err(|message| RunError::Prometheus {
                addr: addr.to_string(),
                message,
            })?,
        ),
        _ => None,
    };
    let driver_plan = DriverPlan {
        layout,
        protocol: plan.protocol.wire(),
        max_tries: plan.max_tries,
        on_error: plan.on_error,
        verbose_errors: plan.verbose_errors,
        txn_timeout: plan.txn_timeout,
        transactions: plan.transactions,
        connect_each: plan.connect,
        latency_limit: plan
            .latency_limit_ms
            .map(|ms| std::time::Duration::from_secs_f64(ms / 1e3)),
        jobs: plan.jobs,
        pin_threads: plan.pin_threads,
        seed: plan.seed,
        interval: plan.interval,
        progress: plan.progress,
        poll: plan.poll,
        shares: frame.shares.clone(),
        headline: frame.live_headline.clone(),
        keys: keys.clone(),
        live,
        events: Arc::clone(with.events),
    };
    let opening = std::time::Instant::now();
    let connected = driver::connect(driver_plan, with.stop.clone()).await?;
    let connect_time = opening.elapsed();
    let before = with.dbs.baseline(&sessions);
    Ok(Ready {
        connected,
        before,
        exporter,
        latest,
        out_dir,
        connect_time,
    })
}

/// Stage 5: starts the clients, the samplers and the interval writer on one clock, and waits
/// for the end or the stop.
async fn run_clients(
    plan: &RunPlan,
    ready: Ready,
    start: Start<'_>,
    sides: Sides<'_>,
    stop: &Stop,
    events: &Arc<dyn Sink>,
) -> Result<Driven, RunError> {
    let Ready {
        mut connected,
        before,
        exporter,
        latest,
        out_dir,
        ..
    } = ready;
    let keys = &start.frame.keys;
    let started_at = SystemTime::now();
    let sampler = sides.sampler;
    let devices = sampler
        .as_ref()
        .map_or_else(Vec::new, |s| s.devices().to_vec());
    let opened = open_writer(plan, &start, &out_dir, started_at, &devices);
    let mut writer = or_release(&mut connected, opened).await?;
    let staging = writer.staging_path().to_path_buf();
    // The run's events measure recovery from the per-transaction log.
    let mixlog_dir = (plan.mix_log || !plan.events.is_empty()).then(|| staging.clone());
    let armed = arm_profile(sides.profile, &staging, events).await;
    // The sampler's and the profile's clocks start with the driver's, so `t_s`, interval
    // offsets and the profile's window agree.
    let t0 = Instant::now();
    let profiling = armed.map(|a| profile_window(a, plan, t0));
    let sampling = sampler
        .map(|s| s.start(&staging, t0, latest, Arc::clone(events)))
        .transpose()
        .map_err(|message| RunError::Sampler { message });
    let sampling = or_release(&mut connected, sampling).await?;
    let waiting = sides.waits.map(|w| w.start(t0));
    let probing = sides.freshness.map(|f| f.start(t0));
    let playing = super::disrupt::play(plan, sides.home, t0, events);
    let result = {
        // A write that fails (a full disk) stops the run at once: the clients end cleanly and
        // the totals stay in memory for `finish`, which leaves the dir `.partial`. The error
        // is said now, not at the end.
        let mut sink = |start: Duration, len: Duration, rec: &Recorder| {
            if writer.failed().is_some() {
                return Ok(());
            }
            if let Err(e) = writer.write_interval(start, len, keys, rec) {
                events.send(Event::Warning(format!(
                    "{e}; stopping the clients (the totals so far are kept; the results dir \
                     stays .partial)"
                )));
                stop.trigger();
            }
            Ok(())
        };
        connected
            .run(t0, stop, &mut sink, mixlog_dir, txn_log_spec(plan))
            .await
    };
    // Events end with the clients: a step still running is not waited for.
    let played = playing.end(&**events).await;
    let (sampled, waits, freshness) = stop_sides(sampling, waiting, probing).await;
    drop(exporter);
    let (result, incidents) = with_sides(result, sampled, profiling, events).await?;
    Ok(Driven {
        result,
        before,
        writer,
        started_at,
        devices,
        incidents,
        shard: None,
        waits,
        freshness,
        events: played,
    })
}

/// `step`'s value; on its error every connected session is closed first. The one way out of
/// the stretch between connecting and the start, so no failure there leaves sessions open on
/// the servers (a later `instance stop` or `DROP DATABASE` would wait for them).
async fn or_release<T, E: Into<RunError>>(
    connected: &mut Connected,
    step: Result<T, E>,
) -> Result<T, RunError> {
    if step.is_err() {
        connected.abort().await;
    }
    step.map_err(Into::into)
}

/// Takes the samplers' last rounds and their reports.
async fn stop_sides(
    sampling: Option<crate::sampler::RunningSampler>,
    waiting: Option<crate::sampler::waits::RunningWaits>,
    probing: Option<crate::sampler::freshness::RunningFreshness>,
) -> (
    Option<crate::sampler::SamplerReport>,
    Option<crate::sampler::waits::WaitsReport>,
    Option<crate::sampler::freshness::FreshnessReport>,
) {
    let sampled = match sampling {
        Some(running) => Some(running.stop().await),
        None => None,
    };
    let waits = match waiting {
        Some(running) => Some(running.stop().await),
        None => None,
    };
    let freshness = match probing {
        Some(running) => Some(running.stop().await),
        None => None,
    };
    (sampled, waits, freshness)
}

/// Switches perf on over the plan's measured window, on the driver's clock.
fn profile_window(
    armed: crate::profile::Armed,
    plan: &RunPlan,
    t0: Instant,
) -> crate::profile::Running {
    let (from, to) = crate::config::timeline::measured_span(plan);
    armed.run(t0, from, to)
}

/// Creates the results dir (in staging) and records the run's start in it: before the first
/// interval, so a driver killed from here on leaves what `report` rebuilds the summary from.
fn open_writer(
    plan: &RunPlan,
    start: &Start<'_>,
    out_dir: &std::path::Path,
    started_at: SystemTime,
    devices: &[InstanceDevices],
) -> Result<ResultsWriter, results::ResultsError> {
    let mut created = ResultsWriter::create(out_dir, started_at);
    // Another run without --out may have taken the same second's name since `connect`
    // checked it: take the next free one.
    if plan.out.is_none() && created.is_err() {
        created = ResultsWriter::create(&results::default_dir(&plan.title()), started_at);
    }
    let mut writer = created?;
    record_start(&mut writer, plan, start, started_at, devices)?;
    Ok(writer)
}

/// The driver's result with what the sampler and the profile said beside it (their
/// warnings, and the sampler's incidents).
async fn with_sides(
    result: Result<DriverResult, DriverError>,
    sampled: Option<crate::sampler::run::SamplerReport>,
    profiling: Option<crate::profile::Running>,
    events: &Arc<dyn Sink>,
) -> Result<(DriverResult, Vec<Incident>), RunError> {
    let profile_said = match profiling {
        Some(running) => finish_profile(running, events).await,
        None => Vec::new(),
    };
    let mut result = result?;
    result.warnings.extend(profile_said);
    let mut incidents = Vec::new();
    if let Some(report) = sampled {
        result.warnings.extend(report.warnings);
        incidents = report.incidents;
    }
    Ok((result, incidents))
}

/// Starts perf before the clients (it takes a moment to set up); a perf that cannot start
/// is a warning, and the run goes on without a profile.
async fn arm_profile(
    profile: Option<crate::profile::Request>,
    staging: &std::path::Path,
    events: &Arc<dyn Sink>,
) -> Option<crate::profile::Armed> {
    let request = profile?;
    let dir = staging.to_path_buf();
    let armed = tokio::task::spawn_blocking(move || crate::profile::Armed::arm(request, &dir))
        .await
        .unwrap_or_else(|e| Err(format!("the profile could not start: {e}")));
    match armed {
        Ok(a) => Some(a),
        Err(e) => {
            events.send(Event::Warning(e));
            None
        }
    }
}

/// Ends the profile where the clients ended and reads its samples back (`perf script` may
/// take seconds on a long run, so it is said); returns what it could not profile, as warnings.
async fn finish_profile(running: crate::profile::Running, events: &Arc<dyn Sink>) -> Vec<String> {
    let ended = Instant::now();
    events.send(Event::Note("profile: reading perf's samples back".into()));
    let file = tokio::task::spawn_blocking(move || running.finish(ended))
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
    match file {
        Ok(file) => {
            let sampled: Vec<String> = file
                .subjects
                .iter()
                .map(|s| format!("{} {}", s.name, s.samples))
                .collect();
            events.send(Event::Note(format!(
                "profile: samples over {:.1}-{:.1} s: {}",
                file.window_s.0,
                file.window_s.1,
                sampled.join(", ")
            )));
            file.missing
                .iter()
                .map(|m| format!("profile: {m}"))
                .collect()
        }
        Err(e) => vec![format!("profile: {e}")],
    }
}

/// Writes `runtime.toml` and `run-start.json` into the staging dir.
fn record_start(
    writer: &mut ResultsWriter,
    plan: &RunPlan,
    start: &Start<'_>,
    started_at: SystemTime,
    devices: &[InstanceDevices],
) -> Result<(), results::ResultsError> {
    let frame = start.frame;
    let mut runtime = RuntimeInfo::new(
        plan.clone(),
        crate::sampler::host::HostFacts::collect(),
        start.server_facts.to_vec(),
    );
    runtime.devices = devices.to_vec();
    runtime.txn_types = frame.type_facts();
    let facts = frame.run_facts(plan, started_at, Duration::ZERO, false);
    writer.record_start(&runtime, &RunStart::new(&facts, &frame.keys))
}

fn describe(plan: &RunPlan, targets: usize, connect: std::time::Duration) -> RunDescription {
    RunDescription {
        name: plan.name().to_string(),
        groups: plan.groups.len(),
        targets,
        phases: plan.phases.len(),
        iterations: plan.iterations,
        shared_clients: (plan.mode == DriveMode::Shared).then_some(plan.clients),
        threads: plan.jobs,
        duration: plan.total_duration(),
        transactions: plan.transactions,
        connect,
    }
}

/// pgbench's transaction log as the driver threads open it (their start set by the driver):
/// the lag column with a rate, the retries column when tries are not 1.
fn txn_log_spec(plan: &RunPlan) -> Option<crate::metrics::txnlog::TxnLogSpec> {
    plan.txn_log
        .clone()
        .map(|p| crate::metrics::txnlog::TxnLogSpec {
            plan: p,
            lag: plan.rate.is_some(),
            retries: plan.max_tries != 1,
            start_unix_us: 0,
            seed: plan.seed,
        })
}
