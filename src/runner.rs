//! One benchmark run end to end: resolve the target, check the workload's data, read the
//! server's counters, drive the clients, read the counters again, write the results dir.
//! It sits above the driver (which only runs clients) and below the CLI (which only maps
//! flags and exit codes).

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::config::RunPlan;
use crate::driver::{self, DriverPlan, Stop};
use crate::instance::Home;
use crate::metrics::KeySpace;
use crate::results::{self, ResultsWriter, RunFacts, RuntimeInfo, Summary};
use crate::sampler::{host::HostFacts, server};
use crate::target::{self, ResolvedTarget};
use crate::workload::Workload;

/// How long to wait for the server's statistics to settle before and after the run.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad target, missing data, unreachable server, unwritable results dir: exit 2.
    #[error("{0}")]
    Setup(String),
}

fn setup(e: impl std::fmt::Display) -> RunError {
    RunError::Setup(e.to_string())
}

/// What a finished (or interrupted) run left behind.
pub struct RunOutcome {
    pub dir: PathBuf,
    pub summary: Summary,
    pub scale: u32,
    pub target_label: String,
}

/// Runs `plan` to completion or until `stop` (Ctrl-C), and writes its results dir.
pub async fn run(plan: RunPlan, home: &Home, stop: Stop) -> Result<RunOutcome, RunError> {
    let target = resolve_target(&plan.target, home).await?;
    let dbname = target.params.dbname.clone();

    // Check the data and read the server's facts over a control session, then close it so
    // its own transactions are flushed before the baseline is read.
    let control = target.connect_tokio().await.map_err(setup)?;
    let found_scale = Workload::check_ready(plan.workload, &control)
        .await
        .map_err(|e| setup(format!("target '{}': {e}", target.label)))?;
    if let Some(asked) = plan.scale {
        if asked != found_scale {
            eprintln!(
                "warning: --scale {asked} given, but the data on '{}' has scale {found_scale}; using {found_scale}",
                target.label
            );
        }
    }
    let server_facts = server::ServerFacts::collect(&control, &target.label)
        .await
        .map_err(setup)?;
    drop(control);

    let stats = target
        .connect_tokio_to(server::stats_dbname(&dbname))
        .await
        .map_err(setup)?;
    wait_for_no_sessions(&stats, &dbname).await;
    let idle = server::settled_xact_counters(&stats, &dbname, SETTLE_TIMEOUT)
        .await
        .map_err(setup)?;

    let workload = Workload::new(plan.workload, found_scale);
    let keys = KeySpace {
        targets: vec![target.label.clone()],
        txn_types: workload.txn_types().iter().map(|s| s.to_string()).collect(),
    };
    let out_dir = plan
        .out
        .clone()
        .unwrap_or_else(|| results::default_dir(plan.workload.as_str()));
    ResultsWriter::ensure_free(&out_dir).map_err(setup)?;

    let driver_plan = DriverPlan {
        workload,
        protocol: plan.protocol.wire(),
        params: target.params.clone(),
        max_tries: plan.max_tries,
        clients: plan.clients,
        jobs: plan.jobs,
        duration: plan.duration,
        rate: plan.rate,
        seed: plan.seed,
        interval: plan.interval,
        progress: plan.progress,
        keys: keys.clone(),
    };
    let connected = match driver::connect(driver_plan, stop.clone()).await {
        Ok(c) => c,
        Err(e) => {
            return Err(setup(format!(
                "cannot connect to target '{}': {e}",
                target.label
            )))
        }
    };
    // Each new session is one transaction at the server, published when the session first goes
    // idle (or up to 10 s later if that flush was deferred): wait until all are in the baseline.
    let before = wait_for_commits(&stats, &dbname, idle.commit + i64::from(plan.clients)).await;
    eprintln!(
        "running {} on {}: {} clients, {} threads, {}",
        plan.workload.as_str(),
        target.label,
        plan.clients,
        plan.jobs.min(plan.clients),
        crate::config::duration::format_duration(plan.duration)
    );
    let started_at = SystemTime::now();
    let mut writer = match ResultsWriter::create(&out_dir, started_at) {
        Ok(w) => w,
        Err(e) => {
            connected.abort().await;
            return Err(setup(e));
        }
    };
    let result = {
        let mut sink = |start: Duration, len: Duration, rec: &crate::metrics::Recorder| {
            writer
                .write_interval(start, len, &keys, rec)
                .map_err(|e| e.to_string())
        };
        connected.run(&stop, &mut sink).await.map_err(setup)?
    };

    // After the clients closed their sessions, wait for the server to flush their counters.
    wait_for_no_sessions(&stats, &dbname).await;
    let after = server::settled_xact_counters(&stats, &dbname, SETTLE_TIMEOUT).await;
    let server_deltas = match after {
        Ok(after) => vec![after.delta_since(before, &target.label, &dbname)],
        Err(e) => {
            eprintln!("warning: could not read the server's counters after the run: {e}");
            Vec::new()
        }
    };

    let facts = RunFacts {
        workload: plan.workload.as_str().to_string(),
        started_at,
        measured: result.measured,
        complete: result.complete,
        rate_limited: plan.rate.is_some(),
    };
    let summary = Summary::build(&facts, &keys, &result.total, server_deltas);
    let runtime = RuntimeInfo::new(plan.clone(), HostFacts::collect(), vec![server_facts]);
    let dir = writer.finish(&runtime, &summary).map_err(setup)?;
    Ok(RunOutcome {
        dir,
        summary,
        scale: found_scale,
        target_label: target.label,
    })
}

/// Waits (bounded) until no tidebench session is connected to `dbname`, so every session's
/// statistics have been flushed (PostgreSQL flushes a backend's counters when it exits).
async fn wait_for_no_sessions(stats: &tokio_postgres::Client, dbname: &str) {
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    while Instant::now() < deadline {
        let row = stats
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'tidebench%'",
                &[&dbname],
            )
            .await;
        match row {
            Ok(r) if r.get::<_, i64>(0) == 0 => return,
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => return,
        }
    }
}

/// Reads the counters until `xact_commit` reaches `expected` (bounded), then once more settled.
async fn wait_for_commits(
    stats: &tokio_postgres::Client,
    dbname: &str,
    expected: i64,
) -> server::XactCounters {
    let deadline = Instant::now() + Duration::from_secs(12);
    let mut last = None;
    while Instant::now() < deadline {
        match server::read_xact_counters(stats, dbname).await {
            Ok(c) if c.commit >= expected => return c,
            Ok(c) => last = Some(c),
            Err(_) => break,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match server::settled_xact_counters(stats, dbname, SETTLE_TIMEOUT).await {
        Ok(c) => c,
        Err(_) => last.unwrap_or_default(),
    }
}

/// Resolves a target on a blocking thread (it may start a managed instance).
pub async fn resolve_target(
    spec: &crate::config::TargetSpec,
    home: &Home,
) -> Result<ResolvedTarget, RunError> {
    let spec = spec.clone();
    let home = home.clone();
    tokio::task::spawn_blocking(move || target::resolve(&spec, &home))
        .await
        .map_err(setup)?
        .map_err(setup)
}
