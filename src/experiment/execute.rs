//! Making an experiment's runs: check every point's plan before the first run, pick up what
//! an earlier invocation finished (resume), then for each remaining run restart its instances
//! with the point's values, load data the point needs, run it with `runner::run`, and rewrite
//! `experiment.json` and `experiment.html` after every run so an interruption at any moment
//! leaves both telling exactly what is done.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config::{self, RunPlan};
use crate::driver::Stop;
use crate::event::{Event, ExperimentRun, ExperimentRunDone, Incident, Sink};
use crate::instance::{self, Home, Reconfigured};
use crate::results::experiment::{self as record, ExperimentFile, Point, RunStatus};
use crate::results::{utc_rfc3339, writer::staging_dir};
use crate::runner::{self, RunError};
use crate::workload::Registry;

use super::base::PointRun;
use super::resume;
use super::schedule::{self, PointValues, RunSlot};
use super::{analysis, consolidate, records, Experiment, ExperimentError};

/// How an experiment invocation ended.
pub struct Finished {
    pub file: ExperimentFile,
    /// Stopped by Ctrl-C (or SIGTERM) before its last run.
    pub interrupted: bool,
}

/// Makes every run of `exp` not already complete in its dir. `cores` sizes the driver and
/// the loads as for `tidebench run`.
pub async fn execute(
    exp: &Experiment,
    cores: u32,
    home: &Home,
    stop: &Stop,
    events: &Arc<dyn Sink>,
) -> Result<Finished, ExperimentError> {
    // Every point's plan is checked before anything runs: a bad value fails in a second,
    // not hours into the series.
    for (i, run) in exp.runs.iter().enumerate() {
        run.plan(cores, 1, &Registry)
            .map_err(|e| ExperimentError::Point {
                point: exp.points[i].describe(),
                message: e.to_string(),
            })?;
    }
    let mut file = resume::open(exp, events)?;
    let slots = schedule::order(exp.points.len(), exp.repeat);
    let mut made: Vec<Duration> = Vec::new();
    for (n, slot) in slots.iter().enumerate() {
        let rec = &file.points[slot.point].runs[(slot.repeat - 1) as usize];
        if rec.status == RunStatus::Complete {
            continue;
        }
        let left = slots[n..]
            .iter()
            .filter(|s| {
                file.points[s.point].runs[(s.repeat - 1) as usize].status != RunStatus::Complete
            })
            .count();
        let which = describe(exp, n, *slot, eta(exp, cores, &made, left));
        events.send(Event::ExperimentRun(which.clone()));
        let started = Instant::now();
        // What limiting the host group did before the run, kept whether the run then failed.
        let mut before_run = Vec::new();
        let outcome = one_run(exp, *slot, cores, home, stop, events, &mut before_run).await;
        made.push(started.elapsed());
        let rel = run_dir_name(exp, *slot);
        let new = run_record(exp, &file, *slot, &rel, outcome, &before_run)?;
        let (status, tps) = (status_said(&new), new.tps);
        let detail = match &new.error {
            Some(e) => e.clone(),
            None => exp.dir.join(&rel).display().to_string(),
        };
        file.points[slot.point].runs[(slot.repeat - 1) as usize] = new;
        refresh(exp, &mut file)?;
        events.send(Event::ExperimentRunDone(ExperimentRunDone {
            run: which,
            status,
            tps,
            detail,
        }));
        if stop.is_set() {
            return Ok(Finished {
                file,
                interrupted: true,
            });
        }
    }
    refresh(exp, &mut file)?;
    Ok(Finished {
        file,
        interrupted: false,
    })
}

/// The run's line in `experiment.json`: read back from its dir (with its consolidation
/// record), or failed with the reason; what limiting the host group did before the run counts
/// in its incidents either way.
fn run_record(
    exp: &Experiment,
    file: &ExperimentFile,
    slot: RunSlot,
    rel: &str,
    outcome: Result<HostObserved, RunError>,
    before_run: &[Incident],
) -> Result<record::RunRecord, ExperimentError> {
    let dir = exp.dir.join(rel);
    let density = exp.kind == record::ExperimentKind::Density;
    let mut r = match outcome {
        Ok(host) => match records::from_dir(&dir, rel, slot.repeat, density) {
            Some(mut r) => {
                let scheme = file.points[slot.point]
                    .values
                    .get(record::consolidate::SCHEME_KEY)
                    .map(String::as_str);
                r.consolidation = consolidate::records::for_run(
                    file.request.consolidate.as_ref(),
                    scheme,
                    &dir,
                    host.limit,
                    host.balloon,
                    before_run,
                );
                if let Some(c) = r.consolidation.as_mut() {
                    c.restarted_under_limit = host.restarted.clone();
                    c.guests = host.guests.clone();
                    c.ksm_pages_sharing = host.ksm_pages_sharing;
                    if let Some(i) = host.balloon_incident(&dir) {
                        *r.incidents.entry(i.kind.clone()).or_insert(0) += 1;
                        c.incidents.push(i);
                        c.incidents.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
                    }
                }
                r
            }
            None => records::failed(rel, slot.repeat, "the run wrote no results".into()),
        },
        Err(e) if e.is_config() => return Err(ExperimentError::Run(Box::new(e))),
        Err(e) => records::failed(rel, slot.repeat, crate::error_chain::one_line(&e)),
    };
    r.count_incidents(before_run);
    Ok(r)
}

/// How a run ended, for the console: its status, and the incidents its instances had.
fn status_said(r: &record::RunRecord) -> String {
    match r.incidents_said() {
        Some(i) => format!("{} with incidents ({i})", r.status.name()),
        None => r.status.name().into(),
    }
}

/// The results dir name of a run, relative to the experiment dir.
pub fn run_dir_name(exp: &Experiment, slot: RunSlot) -> String {
    exp.points[slot.point].dir_name(slot.point, slot.repeat)
}

/// How often a consolidation run's balloon is checked.
const BALLOON_CHECK: Duration = Duration::from_secs(1);

/// The host group's limit and balloon as they were during a consolidation run.
#[derive(Debug, Clone, Default)]
struct HostObserved {
    limit: Option<u64>,
    balloon: Option<u64>,
    /// When the balloon was found dead (within [`BALLOON_CHECK`] of its death).
    balloon_lost_at: Option<SystemTime>,
    /// Why the instances were restarted under the limit, when they were.
    restarted: Option<String>,
    /// Real VMs: each guest's balloon during the run.
    guests: Vec<record::consolidate::GuestBalloon>,
    ksm_pages_sharing: Option<u64>,
}

impl HostObserved {
    /// The balloon's death as an incident of the run in `dir`, timed from the run's start.
    fn balloon_incident(&self, dir: &Path) -> Option<record::consolidate::RunIncident> {
        let lost = self.balloon_lost_at?;
        let started = crate::results::start::RunStart::read(dir)
            .ok()
            .map(|s| SystemTime::UNIX_EPOCH + Duration::from_nanos(s.started_at_unix_ns));
        let t_s = started
            .and_then(|s| lost.duration_since(s).ok())
            .map_or(0.0, |d| d.as_secs_f64());
        Some(record::consolidate::RunIncident {
            t_s,
            vm: "host".into(),
            kind: "balloon_killed".into(),
            detail: format!(
                "the balloon was found dead (checked every {} s; most likely the OOM killer): from then on the VMs had more than MEM_avail",
                BALLOON_CHECK.as_secs()
            ),
        })
    }
}

/// One run: instances, data, then `runner::run` into its dir (a dir left by an earlier,
/// unfinished attempt is removed first: it is this experiment's own). A consolidation point
/// also stops other schemes' instances first and limits the host group around the run.
async fn one_run(
    exp: &Experiment,
    slot: RunSlot,
    cores: u32,
    home: &Home,
    stop: &Stop,
    events: &Arc<dyn Sink>,
    before_run: &mut Vec<Incident>,
) -> Result<HostObserved, RunError> {
    let dir = exp.dir.join(run_dir_name(exp, slot));
    clear_unfinished(&dir)?;
    let mut plan = point_plan(
        &exp.runs[slot.point],
        &dir,
        exp.point_duration.as_deref(),
        cores,
    )?;
    let host = exp.runs[slot.point].host.clone();
    if let Some(setup) = &host {
        consolidate::host::before_instances(setup, home)
            .map_err(|message| RunError::Host { message })?;
    }
    stop_undeclared(exp, slot.point, home, events).await;
    apply_instances(&plan, home, events).await?;
    let names: Vec<String> = plan.instances.iter().map(|d| d.name.clone()).collect();
    // The instances are as the point wants them now; the runner must not check them against
    // their records again.
    plan.instances.clear();
    let jobs = config::default_load_jobs(cores);
    tokio::select! {
        loaded = runner::ensure_prepared(&plan, jobs, home, events) => { loaded?; }
        _ = stop.wait() => return Err(RunError::interrupted("interrupted while loading data")),
    }
    if stop.is_set() {
        return Err(RunError::interrupted("interrupted before the run started"));
    }
    let hold = match &host {
        Some(setup) => Some(
            consolidate::host::hold_for_run(setup, home, &names, stop, events, before_run)
                .await
                .map_err(|message| RunError::Host { message })?,
        ),
        None => None,
    };
    let outcome = run_held(plan, hold, home, stop, events).await;
    outcome.map(|(outcome, observed)| {
        for w in outcome.warnings {
            events.send(Event::Warning(w.to_string()));
        }
        observed
    })
}

/// `runner::run` with the host group held as the point set it (`hold`), watching the balloon
/// and reading real VMs' balloons while it goes; the hold is released when the run ends.
async fn run_held(
    plan: RunPlan,
    mut hold: Option<consolidate::host::HostHold>,
    home: &Home,
    stop: &Stop,
    events: &Arc<dyn Sink>,
) -> Result<(runner::RunOutcome, HostObserved), RunError> {
    let mut observed = HostObserved {
        limit: hold.as_ref().and_then(|h| h.limit),
        balloon: hold.as_ref().and_then(|h| h.balloon_bytes()),
        balloon_lost_at: None,
        restarted: hold.as_ref().and_then(|h| h.restarted.clone()),
        ..HostObserved::default()
    };
    let sampler = hold
        .as_ref()
        .and_then(|h| h.guests.as_ref())
        .map(|g| g.sampler());
    let run = runner::run(plan, home, stop.clone(), Arc::clone(events));
    tokio::pin!(run);
    // The balloon is looked at every second while the run goes, so its death has a time.
    let outcome = loop {
        tokio::select! {
            outcome = &mut run => break outcome,
            _ = tokio::time::sleep(BALLOON_CHECK), if observed.balloon_lost_at.is_none() => {
                if hold.as_mut().is_some_and(|h| h.balloon_lost()) {
                    events.send(Event::Warning(
                        "the balloon was killed during the run (most likely by the OOM killer): the VMs have more memory than the point's MEM_avail from now on".into(),
                    ));
                    observed.balloon_lost_at = Some(SystemTime::now());
                }
            }
        }
    };
    if let (Some(s), Some(g)) = (sampler, hold.as_mut().and_then(|h| h.guests.as_mut())) {
        g.absorb(s.finish());
        observed.guests = g.record.clone();
        observed.ksm_pages_sharing = g.ksm_peak;
    }
    drop(hold);
    outcome.map(|o| (o, observed))
}

fn point_plan(
    run: &PointRun,
    dir: &Path,
    point_duration: Option<&str>,
    cores: u32,
) -> Result<RunPlan, RunError> {
    let mut run = run.clone();
    run.over.out = Some(dir.to_path_buf());
    if let Some(d) = point_duration {
        run.over.phase_duration = Some(d.to_string());
    }
    Ok(run.plan(cores, config::seed_from_clock(), &Registry)?)
}

/// Removes a results dir (or `.partial`) an unfinished earlier attempt of this run left.
fn clear_unfinished(dir: &Path) -> Result<(), RunError> {
    let partial = staging_dir(dir)?;
    for d in [dir.to_path_buf(), partial] {
        if d.exists() {
            std::fs::remove_dir_all(&d).map_err(|source| RunError::RemoveUnfinished {
                dir: d.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

/// Stops the experiment's instances that this point does not declare, so an idle one takes
/// nothing from its run: overhead's other side, a density step's extra instances after a
/// larger step (a VM above all: an idle TCG guest still costs the host CPU). One that cannot
/// be stopped is a warning; the run still goes.
async fn stop_undeclared(exp: &Experiment, point: usize, home: &Home, events: &Arc<dyn Sink>) {
    let ours = exp.runs[point].declared_instances();
    // A real VM that several instances share stops as a whole: one of ours keeps it up.
    let vm_of = |name: &str| {
        instance::find(home, name)
            .ok()
            .and_then(|i| i.vm().map(String::from))
    };
    let our_vms: Vec<String> = ours.iter().filter_map(|n| vm_of(n)).collect();
    let mut others: Vec<String> = Vec::new();
    for name in exp.runs.iter().flat_map(PointRun::declared_instances) {
        let shares_ours = vm_of(&name).is_some_and(|vm| our_vms.contains(&vm));
        if !ours.contains(&name) && !others.contains(&name) && !shares_ours {
            others.push(name);
        }
    }
    for name in others {
        let h = home.clone();
        let n = name.clone();
        let stopped = match tokio::task::spawn_blocking(move || instance::stop(&h, &n)).await {
            Ok(Ok(was_running)) => Ok(was_running),
            // Not made yet (a later point's): nothing to stop.
            Ok(Err(instance::InstanceError::NotFound { .. })) => Ok(false),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match stopped {
            Ok(true) => events.send(Event::Note(format!(
                "instance '{name}' stopped (this run does not use it)"
            ))),
            Ok(false) => {}
            Err(why) => events.send(Event::Warning(format!(
                "instance '{name}' (not used by this run) could not be stopped: {why}"
            ))),
        }
    }
}

/// Creates, restarts or starts each `[[instance]]` of the point with its values.
async fn apply_instances(
    plan: &RunPlan,
    home: &Home,
    events: &Arc<dyn Sink>,
) -> Result<(), RunError> {
    for decl in &plan.instances {
        let opts = runner::instance_options(decl);
        let (name, h) = (decl.name.clone(), home.clone());
        let done = tokio::task::spawn_blocking(move || instance::reconfigure(&h, &name, &opts))
            .await?
            .map_err(|source| RunError::DeclaredInstance {
                name: decl.name.clone(),
                source,
            })?;
        let what = match done.1 {
            Reconfigured::Created => "created",
            Reconfigured::Restarted => "restarted",
            Reconfigured::Started => "started",
            Reconfigured::Unchanged => continue,
        };
        events.send(Event::Note(format!(
            "instance '{}' {what} ({})",
            decl.name,
            decl.describe_limits()
        )));
    }
    Ok(())
}

/// Fills the points' medians and the analysis, and writes `experiment.json` and the page.
fn refresh(exp: &Experiment, file: &mut ExperimentFile) -> Result<(), ExperimentError> {
    analysis::summarize_points(&mut file.points);
    file.analysis = match exp.kind {
        record::ExperimentKind::Sweep => analysis::sweep(&file.varied, &file.points),
        record::ExperimentKind::Density => analysis::density(&file.points),
        record::ExperimentKind::Consolidate => {
            let mut a = crate::results::experiment::Analysis::default();
            if let Some(req) = &file.request.consolidate {
                a.consolidate = Some(analysis::consolidate::analyse(req, &file.points));
            }
            a
        }
        record::ExperimentKind::Knee => match &exp.request.knee {
            Some(k) => analysis::knee(k, &file.points),
            None => record::Analysis {
                notes: vec!["the request says nothing of what the knee keeps".into()],
                ..Default::default()
            },
        },
    };
    file.complete = file
        .points
        .iter()
        .all(|p| p.runs.iter().all(|r| r.status == RunStatus::Complete));
    file.updated_at = utc_rfc3339(SystemTime::now());
    record::write(&exp.dir, file).map_err(|source| ExperimentError::Io {
        action: "write",
        path: exp.dir.join(record::FILE),
        source,
    })?;
    crate::report::experiment::write(&exp.dir)
        .map_err(|message| ExperimentError::Report { message })?;
    Ok(())
}

/// The points with every run pending.
pub fn fresh_points(exp: &Experiment) -> Vec<Point> {
    exp.points
        .iter()
        .enumerate()
        .map(|(i, values): (usize, &PointValues)| Point {
            values: values.map(),
            runs: (1..=exp.repeat)
                .map(|r| record::RunRecord::pending(&values.dir_name(i, r), r))
                .collect(),
            median: None,
            min: None,
            max: None,
            headline_median: None,
        })
        .collect()
}

fn describe(exp: &Experiment, n: usize, slot: RunSlot, eta: Option<Duration>) -> ExperimentRun {
    ExperimentRun {
        run: n + 1,
        runs: exp.points.len() * exp.repeat as usize,
        point: slot.point + 1,
        points: exp.points.len(),
        values: exp.points[slot.point].describe(),
        repeat: slot.repeat,
        repeats: exp.repeat,
        eta,
    }
}

/// Time left for `left` runs: the mean wall time of the runs made so far, or the first
/// point's planned duration before any.
fn eta(exp: &Experiment, cores: u32, made: &[Duration], left: usize) -> Option<Duration> {
    let per_run = if made.is_empty() {
        let plan = point_plan(
            &exp.runs[0],
            &PathBuf::from("eta"),
            exp.point_duration.as_deref(),
            cores,
        )
        .ok()?;
        plan.total_duration()
    } else {
        made.iter().sum::<Duration>() / made.len() as u32
    };
    Some(per_run * left as u32)
}
