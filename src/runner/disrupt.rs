//! The run's events (`[[event]]`, issue 53) played on the run's own clock: each event is a
//! task on the runner's runtime that sleeps until its time from the one start instant the
//! clients also run on, then takes its steps (fail, then restart; freeze, then thaw; a
//! statement). A step blocks (signals, QMP, `pg_ctl`, psql), so it runs on a blocking thread,
//! never on a driver thread, and the run's end never waits for one: what is still running
//! then is recorded as `cut`. What a freeze or a resize changed is undone at the end at the
//! latest, so a run never leaves a server stopped or squeezed. A VM's balloon only gets its
//! target from the resize step; a `balloon` step then watches the guest give the pages, with
//! short QMP queries the run's end simply stops asking.
//!
//! Before anything starts, `disrupt_check` refuses an event its target cannot take.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::config::{Action, Disruption, RunPlan};
use crate::event::{Event, Sink};
use crate::instance::disrupt::{self, Frozen};
use crate::instance::{self, Home};
use crate::results::disruptions::{EventAccount, EventStep, StepOutcome};

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
        let begun = self.begin(name);
        let done = self.blocking(op).await;
        self.finish(begun, name, done)
    }

    /// `op` on a blocking thread, off the runtime's.
    async fn blocking<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Home, &str) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let (home, target) = (self.home.clone(), self.target.clone());
        tokio::task::spawn_blocking(move || op(&home, &target))
            .await
            .unwrap_or_else(|e| Err(format!("the step panicked: {e}")))
    }

    /// Records step `name` as begun (and `cut` until it ends); its index and start.
    fn begin(&self, name: &str) -> (usize, f64) {
        let started_s = self.now_s();
        let mut s = self.lock();
        s.steps[self.k].push(EventStep {
            step: name.to_string(),
            started_s,
            ended_s: None,
            outcome: StepOutcome::Cut,
            detail: String::new(),
        });
        (s.steps[self.k].len() - 1, started_s)
    }

    /// Records how a begun step ended and says it; its value on success.
    fn finish<T>(
        &self,
        (at, started_s): (usize, f64),
        name: &str,
        done: Result<(T, String), String>,
    ) -> Option<T> {
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
        self.undo_at(at).await;
    }

    /// Runs the kept undo as its own step at `at`, unless the run's end takes it first.
    async fn undo_at(&self, at: Option<Duration>) {
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
        } => resize(&on, cpus, memory, lasts.map(|l| d.at + l)).await,
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

/// A resize until `until` (else the run's end). A VM's balloon is only given its target by the
/// resize step; the guest then gives the pages while step `balloon` watches (cut at the restore
/// or the run's end), and the restore is kept from the start, so a slow guest never keeps its
/// squeeze past the run.
async fn resize(on: &On, cpus: Option<f64>, memory: Option<u64>, until: Option<Duration>) {
    let resized = on
        .step("resize", move |home, name| {
            let i = instance::find(home, name).map_err(|e| e.to_string())?;
            let (r, how) = disrupt::resize(&i, cpus, memory).map_err(|e| e.to_string())?;
            Ok((r, how))
        })
        .await;
    let Some(resized) = resized else { return };
    let balloon = resized
        .balloon_target()
        .map(|(i, to)| (Box::new(i.clone()), to));
    on.lock()
        .undo
        .push((on.k, Undo::Restore(Box::new(resized))));
    if let Some((instance, to)) = balloon {
        let watching = on.balloon(instance, to);
        match until {
            Some(at) => {
                let _ = tokio::time::timeout_at((on.t0 + at).into(), watching).await;
            }
            None => watching.await,
        }
    }
    on.undo_at(until).await;
}

/// How often the `balloon` step asks QEMU what the guest has.
const BALLOON_POLL: Duration = Duration::from_millis(200);

impl On {
    /// Step `balloon`: until the guest has `to` bytes (within 1 %), each look a short QMP query
    /// on a blocking thread; dropped between two looks when the run ends.
    async fn balloon(&self, instance: Box<instance::Instance>, to: u64) {
        use instance::vm::balloon;
        let begun = self.begin("balloon");
        let since = Instant::now();
        let done = loop {
            let i = instance.clone();
            let had = self
                .blocking(move |_, _| balloon::actual(&i).map_err(|e| e.to_string()))
                .await;
            match had {
                Ok(had) if balloon::reached(had, to) => {
                    break Ok(((), format!("the guest has {}", disrupt::mib(had))))
                }
                Ok(had) if since.elapsed() > balloon::BALLOON_WAIT => {
                    break Err(balloon::not_reached(had, to))
                }
                Ok(_) => tokio::time::sleep(BALLOON_POLL).await,
                Err(e) => break Err(e),
            }
        };
        self.finish(begun, "balloon", done);
    }
}

/// How long the run's end waits for a freeze or resize to be undone before it goes on (an
/// undo that takes longer goes on beside the end, and the step is recorded `cut`; a balloon's
/// restore only sets its target, so it does not).
const UNDO_WAIT: Duration = Duration::from_secs(2);

impl Playing {
    /// Ends the events where the run ended: steps not yet begun are left out, steps still
    /// running stay `cut`; what a freeze or a resize changed is undone (a thaw here is said
    /// as a warning, the end of a resize for the rest of the run is its plan).
    pub async fn end(self, sink: &dyn Sink) -> Vec<EventAccount> {
        for t in &self.tasks {
            t.abort();
        }
        say_still_running(
            &self.events,
            &self
                .shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .steps,
            sink,
        );
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

/// Says which steps were still running on a blocking thread when the run ended (a restart
/// still booting a guest, a long statement): they are recorded `cut`, the results are written,
/// and the process exits once they are done. A `balloon` watch is only dropped.
fn say_still_running(events: &[Disruption], steps: &[Vec<EventStep>], sink: &dyn Sink) {
    for (k, (d, steps)) in events.iter().zip(steps).enumerate() {
        for s in steps {
            if s.ended_s.is_none() && s.step != "balloon" && s.outcome == StepOutcome::Cut {
                sink.send(Event::Warning(format!(
                    "event {}: {}: step {} was still running at the run's end (recorded cut); \
                     tidebench exits once it is done",
                    k + 1,
                    d.describe(),
                    s.step
                )));
            }
        }
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
