//! The run's events (`[[event]]`, issue 53) played on the run's own clock: each event is a
//! task on the runner's runtime that sleeps until its time from the one start instant the
//! clients also run on, then takes its steps (fail, then restart; freeze, then thaw; a
//! statement). A step blocks (signals, QMP, `pg_ctl`, psql), so it runs on a blocking thread,
//! never on a driver thread, and the run's end never waits for one: what is still running
//! then is recorded as `cut`. What a freeze or a resize changed is undone at the end at the
//! latest, so a run never leaves a server stopped or squeezed.
//!
//! Before anything starts, [`check`] refuses an event its target cannot take.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::config::{Action, Disruption, RunPlan};
use crate::event::{Event, Sink};
use crate::instance::disrupt::{self, Frozen};
use crate::instance::{self, Home, InstanceError};
use crate::results::disruptions::{EventAccount, EventStep, StepOutcome};

use super::RunError;

/// Refuses, before any instance is started, an event its target cannot take: a target that
/// is not a managed instance of this home (and not declared by the run file), a `freeze` or
/// `fail` of an external server.
pub fn check(plan: &RunPlan, home: &Home) -> Result<(), RunError> {
    for d in &plan.events {
        let refuse = |message: String| RunError::Event {
            event: d.describe(),
            message,
        };
        if let Action::Noise { .. } = &d.action {
            check_noise().map_err(refuse)?;
            continue;
        }
        // A declared instance is created by the run; the default one by its first use.
        let shape = match plan.instances.iter().find(|i| i.name == d.target) {
            Some(i) => Shape {
                vm: i.hypervisor.is_some(),
                limited: i.cpus.is_some() || i.memory_bytes.is_some() || i.vm.is_some(),
            },
            None if d.target == crate::config::target::DEFAULT_INSTANCE => Shape {
                vm: false,
                limited: false,
            },
            None => match instance::find(home, &d.target) {
                Ok(i) => Shape {
                    vm: i.guest().is_some(),
                    limited: i.cgroup_paths().is_some(),
                },
                Err(InstanceError::NotFound { .. }) if d.action == Action::Promote => {
                    return Err(refuse(super::standbys::missing(plan, d)))
                }
                Err(InstanceError::NotFound { .. }) => {
                    return Err(refuse(format!(
                        "no managed instance '{}' in this home; declare it in an [[instance]] \
                         table or create it with `tidebench instance start {}`",
                        d.target, d.target
                    )))
                }
                Err(e) => return Err(refuse(e.to_string())),
            },
        };
        if let Action::Failover { standby, .. } = &d.action {
            if shape.vm {
                return Err(refuse(
                    "a failover acts on local instances; a VM has no standby here".into(),
                ));
            }
            super::standbys::check_failover(plan, home, &d.target, standby).map_err(refuse)?;
        }
        if let Action::Promote = &d.action {
            if shape.vm {
                return Err(refuse(
                    "a promote acts on local instances; a VM is never a standby here".into(),
                ));
            }
            super::standbys::check_promote(plan, home, &d.target).map_err(refuse)?;
        }
        if let Action::Resize { cpus, .. } = &d.action {
            if shape.vm && cpus.is_some() {
                return Err(refuse(
                    "a VM's CPUs cannot change while it runs; resize its memory only".into(),
                ));
            }
            if !shape.vm && !shape.limited {
                return Err(refuse(format!(
                    "instance '{}' has no limits to change (no cgroup); give it cpus or memory \
                     in its [[instance]] table, or create it with --cpus/--memory",
                    d.target
                )));
            }
        }
    }
    Ok(())
}

/// Noise needs control groups and stress-ng.
fn check_noise() -> Result<(), String> {
    if !instance::CgroupPaths::can_create() {
        return Err(
            "noise runs in a control group of its own: run as root on a host with a \
                    cgroup tree"
                .into(),
        );
    }
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("stress-ng").is_file()));
    if !found {
        return Err(
            "stress-ng is not installed; install it (Debian: apt-get install stress-ng; \
                    `make setup` does)"
                .into(),
        );
    }
    Ok(())
}

/// What an event's target is, as far as the check needs.
struct Shape {
    vm: bool,
    limited: bool,
}

/// What the run's end undoes if the event's own later step has not: a freeze, a resize.
enum Undo {
    Thaw(Frozen),
    Restore(Box<disrupt::Resized>),
    Quiet(instance::noise::Neighbour),
}

impl Undo {
    fn step(&self) -> &'static str {
        match self {
            Undo::Thaw(_) => "thaw",
            Undo::Restore(_) => "restore",
            Undo::Quiet(_) => "quiet",
        }
    }

    fn run(self) -> Result<String, String> {
        match self {
            Undo::Thaw(f) => f.thaw(),
            Undo::Restore(r) => r.restore(),
            Undo::Quiet(n) => n.stop(),
        }
    }
}

/// The steps taken so far, per event, and what is still to undo.
#[derive(Default)]
struct Shared {
    steps: Vec<Vec<EventStep>>,
    undo: Vec<(usize, Undo)>,
    /// Per event: the commits its promotion left on the old primary, once counted.
    lost: Vec<Option<u64>>,
}

/// The events of a run, playing.
pub struct Playing {
    events: Vec<Disruption>,
    tasks: Vec<JoinHandle<()>>,
    shared: Arc<Mutex<Shared>>,
    t0: Instant,
}

/// Starts one task per event, timed from `t0`, the run's start.
pub fn play(plan: &RunPlan, home: &Home, t0: Instant, sink: &Arc<dyn Sink>) -> Playing {
    let shared = Arc::new(Mutex::new(Shared {
        steps: vec![Vec::new(); plan.events.len()],
        undo: Vec::new(),
        lost: vec![None; plan.events.len()],
    }));
    let tasks = plan
        .events
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let on = On {
                k,
                home: home.clone(),
                target: d.target.clone(),
                t0,
                shared: Arc::clone(&shared),
                sink: Arc::clone(sink),
            };
            tokio::spawn(run_one(on, d.clone()))
        })
        .collect();
    Playing {
        events: plan.events.clone(),
        tasks,
        shared,
        t0,
    }
}

/// What an event's task acts with.
struct On {
    k: usize,
    home: Home,
    target: String,
    t0: Instant,
    shared: Arc<Mutex<Shared>>,
    sink: Arc<dyn Sink>,
}

impl On {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now_s(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    async fn until(&self, at: Duration) {
        tokio::time::sleep_until((self.t0 + at).into()).await;
    }

    /// Runs `op` on a blocking thread as step `name`, recording it; its value on success.
    async fn step<T: Send + 'static>(
        &self,
        name: &str,
        op: impl FnOnce(&Home, &str) -> Result<(T, String), String> + Send + 'static,
    ) -> Option<T> {
        let started_s = self.now_s();
        let at = {
            let mut s = self.lock();
            s.steps[self.k].push(EventStep {
                step: name.to_string(),
                started_s,
                ended_s: None,
                outcome: StepOutcome::Cut,
                detail: String::new(),
            });
            s.steps[self.k].len() - 1
        };
        let (home, target) = (self.home.clone(), self.target.clone());
        let done = tokio::task::spawn_blocking(move || op(&home, &target))
            .await
            .unwrap_or_else(|e| Err(format!("the step panicked: {e}")));
        let ended_s = self.now_s();
        let (outcome, detail, value) = match done {
            Ok((v, detail)) => (StepOutcome::Ok, detail, Some(v)),
            Err(e) => (StepOutcome::Error, e, None),
        };
        let said = format!(
            "event: {name} {} at {started_s:.1} s ({:.1} s): {detail}",
            self.target,
            ended_s - started_s
        );
        if let Some(s) = self.lock().steps[self.k].get_mut(at) {
            s.ended_s = Some(ended_s);
            s.outcome = outcome;
            s.detail = detail;
        }
        self.sink.send(match outcome {
            StepOutcome::Ok => Event::Note(said),
            _ => Event::Warning(said),
        });
        value
    }
}

impl On {
    /// Keeps `undo` for the run's end, or runs it as its own step at `at` when given.
    async fn undo_after(&self, undo: Option<Undo>, at: Option<Duration>) {
        let Some(undo) = undo else { return };
        self.lock().undo.push((self.k, undo));
        let Some(at) = at else { return };
        self.until(at).await;
        let taken = {
            let mut s = self.lock();
            let at = s.undo.iter().position(|(k, _)| *k == self.k);
            at.map(|at| s.undo.remove(at).1)
        };
        if let Some(u) = taken {
            let name = u.step();
            self.step(name, move |_, _| u.run().map(|d| ((), d))).await;
        }
    }
}

/// Kills the event's target at once.
fn fail_target(home: &Home, name: &str) -> Result<((), String), String> {
    let i = instance::find(home, name).map_err(|e| e.to_string())?;
    disrupt::fail(&i)
        .map(|d| ((), d))
        .map_err(|e| e.to_string())
}

/// Promotes `standby`, then counts the commits its old primary's WAL holds past the
/// promotion (the commits lost); a count that cannot be made is said, the promotion stands.
fn promote_standby(home: &Home, standby: &str) -> Result<(Option<u64>, String), String> {
    let said = instance::promote(home, standby).map_err(|e| e.to_string())?;
    Ok(match instance::commits_past_promotion(home, standby) {
        Ok(n) => (
            Some(n),
            format!("{said}; {n} commits on the old primary past the promotion point (lost)"),
        ),
        Err(e) => (None, format!("{said}; lost commits not counted: {e}")),
    })
}

/// One event's steps, in order.
async fn run_one(on: On, d: Disruption) {
    on.until(d.at).await;
    match d.action {
        Action::Fail { restart_after } => {
            on.step("fail", fail_target).await;
            if let Some(after) = restart_after {
                on.until(d.at + after).await;
                on.step("restart", |home, name| {
                    disrupt::restart(home, name)
                        .map(|_| ((), "accepting connections".to_string()))
                        .map_err(|e| e.to_string())
                })
                .await;
            }
        }
        Action::Failover {
            standby,
            promote_after,
        } => {
            on.step("fail", fail_target).await;
            on.until(d.at + promote_after).await;
            let lost = on
                .step("promote", move |home, _| promote_standby(home, &standby))
                .await;
            on.lock().lost[on.k] = lost.flatten();
        }
        Action::Promote => {
            let lost = on.step("promote", promote_standby).await;
            on.lock().lost[on.k] = lost.flatten();
        }
        Action::Freeze { lasts } => {
            let frozen = on
                .step("freeze", |home, name| {
                    let i = instance::find(home, name).map_err(|e| e.to_string())?;
                    let f = disrupt::freeze(&i).map_err(|e| e.to_string())?;
                    let how = f.how();
                    Ok((Undo::Thaw(f), how))
                })
                .await;
            on.undo_after(frozen, Some(d.at + lasts)).await;
        }
        Action::Resize {
            cpus,
            memory,
            lasts,
        } => {
            let resized = on
                .step("resize", move |home, name| {
                    let i = instance::find(home, name).map_err(|e| e.to_string())?;
                    let (r, how) = disrupt::resize(&i, cpus, memory).map_err(|e| e.to_string())?;
                    Ok((Undo::Restore(Box::new(r)), how))
                })
                .await;
            on.undo_after(resized, lasts.map(|l| d.at + l)).await;
        }
        Action::Noise { noise, lasts } => {
            let k = on.k + 1;
            let seconds = lasts.as_secs().max(1);
            let started = on
                .step("noise", move |home, _| {
                    let (n, how) = instance::noise::start(home, k, &noise, seconds)
                        .map_err(|e| e.to_string())?;
                    Ok((Undo::Quiet(n), how))
                })
                .await;
            on.undo_after(started, Some(d.at + lasts)).await;
        }
        Action::Sql { statement, dbname } => {
            on.step("sql", move |home, name| {
                let i = instance::find(home, name).map_err(|e| e.to_string())?;
                i.psql(&dbname, &statement)
                    .map(|out| ((), format!("{statement}: {}", out.trim())))
                    .map_err(|e| e.to_string())
            })
            .await;
        }
    }
}

/// How long the run's end waits for a freeze or resize to be undone before it goes on (a
/// balloon may take longer: it goes on beside the end, and the step is recorded `cut`).
const UNDO_WAIT: Duration = Duration::from_secs(2);

impl Playing {
    /// Ends the events where the run ended: steps not yet begun are left out, steps still
    /// running stay `cut`; what a freeze or a resize changed is undone (a thaw here is said
    /// as a warning, the end of a resize for the rest of the run is its plan).
    pub async fn end(self, sink: &dyn Sink) -> Vec<EventAccount> {
        for t in &self.tasks {
            t.abort();
        }
        let undo = std::mem::take(
            &mut self
                .shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .undo,
        );
        for (k, u) in undo {
            let started_s = self.t0.elapsed().as_secs_f64();
            let name = u.step();
            let running = tokio::task::spawn_blocking(move || u.run());
            let (outcome, said) = match tokio::time::timeout(UNDO_WAIT, running).await {
                Ok(Ok(Ok(how))) => (StepOutcome::Ok, format!("{how} at the run's end")),
                Ok(Ok(Err(e))) => (StepOutcome::Error, format!("could not {name}: {e}")),
                Ok(Err(e)) => (StepOutcome::Error, format!("could not {name}: {e}")),
                Err(_) => (
                    StepOutcome::Cut,
                    "still going on after the run's end".into(),
                ),
            };
            let line = self
                .events
                .get(k)
                .map(|d| format!("event {}: {}: {name}: {said}", k + 1, d.describe()));
            match (name, line) {
                ("restore", Some(l)) if outcome == StepOutcome::Ok => sink.send(Event::Note(l)),
                (_, Some(l)) => sink.send(Event::Warning(l)),
                (_, None) => {}
            }
            let ended_s = (outcome != StepOutcome::Cut).then(|| self.t0.elapsed().as_secs_f64());
            let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(steps) = shared.steps.get_mut(k) {
                steps.push(EventStep {
                    step: name.into(),
                    started_s,
                    ended_s,
                    outcome,
                    detail: said,
                });
            }
        }
        let (steps, lost) = {
            let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
            (
                std::mem::take(&mut shared.steps),
                std::mem::take(&mut shared.lost),
            )
        };
        self.events
            .iter()
            .zip(steps)
            .zip(lost)
            .map(|((d, steps), lost_commits)| EventAccount {
                at_s: d.at.as_secs_f64(),
                action: d.action.name().to_string(),
                target: d.target.clone(),
                description: d.action.describe_on(&d.target),
                steps,
                recovery: Vec::new(),
                lost_commits,
            })
            .collect()
    }
}

/// Measures the recovery around each event from the per-transaction log the run wrote into
/// `staging` (`mix-*.bin`), writes `events.csv` and fills `summary.events`. What cannot be
/// read only warns: the events stay, without their recovery.
pub fn account(
    mut played: Vec<EventAccount>,
    keys: &crate::metrics::KeySpace,
    staging: &std::path::Path,
    summary: &mut crate::results::Summary,
    warnings: &mut Vec<String>,
) {
    if played.is_empty() {
        return;
    }
    match mix_records(staging) {
        Ok(records) => {
            // The mark of an event is its first step; its commits count once that step is done.
            let after_us: Vec<u64> = played
                .iter()
                .map(|e| {
                    let s = e.steps.first();
                    let done = s.and_then(|s| s.ended_s).or(s.map(|s| s.started_s));
                    (done.unwrap_or(f64::MAX / 2e6) * 1e6) as u64
                })
                .collect();
            let timeline = crate::results::disruptions::Timeline::build(
                records.into_iter(),
                &keys.groups,
                &keys.targets.iter().map(|t| t.group).collect::<Vec<_>>(),
                &after_us,
                summary.elapsed_s.max(0.0),
            );
            let labels: Vec<String> = keys.targets.iter().map(|t| t.label.clone()).collect();
            for (k, e) in played.iter_mut().enumerate() {
                if !e.steps.is_empty() {
                    e.recovery =
                        timeline.recovery(k, e.started_s(), &summary.down_windows, &labels);
                }
            }
        }
        Err(e) => warnings.push(format!("events: recovery not measured: {e}")),
    }
    let csv = crate::results::disruptions::events_csv(&played);
    let path = staging.join(crate::results::disruptions::EVENTS_FILE);
    if let Err(e) = std::fs::write(&path, csv) {
        warnings.push(format!("{} not written: {e}", path.display()));
    }
    summary.events = played;
}

/// Every driver thread's mix log records.
fn mix_records(dir: &std::path::Path) -> Result<Vec<crate::metrics::mixlog::MixRecord>, String> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("mix-") && name.ends_with(".bin") {
            out.extend(crate::metrics::mixlog::read(&e.path())?.records);
        }
    }
    Ok(out)
}
