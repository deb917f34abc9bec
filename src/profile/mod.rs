//! CPU profiles of a run's measured window (issue 29; the Cybertec study's "where the time goes"): a
//! side stream like the sampler. One `perf record -a` samples every CPU at a fixed rate with
//! call stacks, switched on at the measured window's start and off at its end; the samples are
//! then read back, cut to the window exactly by their timestamps, and dealt to the subjects
//! (each managed instance's process tree, a local server's behind a DSN, the driver's own, and
//! with `--profile host` the whole host), folded, counted and written into the results dir
//! (see `results::profile`). A profile that fails never fails the run: `profile.json` then
//! says what is missing.
//!
//! It runs on a thread of its own (perf is driven through blocking FIFOs and its output is
//! read after the window), never on the driver's threads.

pub mod fold;
pub mod perf;
pub mod script;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::profile::{ProfilePlan, ProfileScope};
use crate::results::profile::{self as files, ProfileFile, ProfiledSubject};

use fold::{Attribution, Folder};
use perf::{Perf, Recording};
use script::Line;

/// perf is switched on this long before the window and off this long after it: the samples
/// are cut to the window by their timestamps, so this only keeps the edges covered.
const EDGE: Duration = Duration::from_millis(50);
/// Where perf's own files go inside the results dir while it records (removed after).
const WORK_DIR: &str = "profile/.perf";

/// What one profile is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub name: String,
    /// `instance`, `server`, `driver` or `host`.
    pub kind: &'static str,
    /// The root of its process tree; `None`: every sample (the host).
    pub root: Option<u32>,
}

/// Everything a profile needs before the run starts.
pub struct Request {
    pub plan: ProfilePlan,
    pub perf: Perf,
    pub subjects: Vec<Subject>,
    /// What is already known to be left out (a target on another host).
    pub missing: Vec<String>,
}

/// Checks that perf is there and may sample every CPU: done before any connection, so a
/// missing perf is a usage error (exit 2), not a run without its profile.
pub fn preflight() -> Result<Perf, String> {
    let perf = perf::find()?;
    perf::check_access()?;
    Ok(perf)
}

/// The subjects of a plan's scope around the given instances and servers: the driver always,
/// the host with `--profile host`.
pub fn with_scope_subjects(plan: &ProfilePlan, mut subjects: Vec<Subject>) -> Vec<Subject> {
    subjects.push(Subject {
        name: "driver".into(),
        kind: "driver",
        root: Some(std::process::id()),
    });
    if plan.scope == ProfileScope::Host {
        subjects.push(Subject {
            name: "host".into(),
            kind: "host",
            root: None,
        });
    }
    subjects
}

/// perf set up and waiting for the window.
pub struct Armed {
    request: Request,
    recording: Recording,
    dir: PathBuf,
}

impl Armed {
    /// Starts perf (events off) for a run writing into `dir`. Blocks until perf is set up.
    /// On failure, `profile.json` says why and the run goes on without a profile.
    pub fn arm(request: Request, dir: &Path) -> Result<Armed, String> {
        match Recording::start(&request.perf, &request.plan, &dir.join(WORK_DIR)) {
            Ok(recording) => Ok(Armed {
                request,
                recording,
                dir: dir.to_path_buf(),
            }),
            Err(e) => {
                let said = format!("perf could not start, so the run has no profile: {e}");
                let mut file = header(&request, (0.0, 0.0));
                file.missing.push(said.clone());
                let _ = file.write(dir);
                Err(said)
            }
        }
    }

    /// Starts the thread that switches perf on over `[t0 + from, t0 + to)` and reads the
    /// samples back once [`Running::finish`] is called.
    pub fn run(self, t0: Instant, from: Duration, to: Duration) -> Running {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("tidebench-profile".into())
            .spawn(move || self.record(rx, t0, from, to))
            .expect("spawn the profile thread");
        Running { stop: tx, thread }
    }

    fn record(
        mut self,
        stop: mpsc::Receiver<Instant>,
        t0: Instant,
        from: Duration,
        to: Duration,
    ) -> ProfileFile {
        let clock = Clock::now();
        let mut missing = std::mem::take(&mut self.request.missing);
        let start = t0 + from;
        let mut ended = stopped_before(&stop, start - EDGE.min(from));
        let mut on = false;
        if ended.is_none() {
            match self.recording.enable() {
                Ok(()) => on = true,
                Err(e) => missing.push(format!("perf could not be switched on: {e}")),
            }
            ended = stopped_before(&stop, t0 + to + EDGE);
        }
        if on {
            if let Err(e) = self.recording.disable() {
                missing.push(format!("perf stopped during the window: {e}"));
            }
        }
        let end = ended.map_or(t0 + to, |at| at.min(t0 + to)).max(start);
        let window_s = (from.as_secs_f64(), end.duration_since(t0).as_secs_f64());
        let mut file = header(&self.request, (round3(window_s.0), round3(window_s.1)));
        file.missing = missing;
        if ended.is_some_and(|at| at < start) {
            file.missing.push(
                "the run was stopped before its measured window began: nothing was profiled".into(),
            );
        }
        let data = match self.recording.stop() {
            Ok(data) => data,
            Err(e) => {
                file.missing.push(format!("no samples could be read: {e}"));
                let _ = std::fs::remove_dir_all(self.dir.join(WORK_DIR));
                let _ = file.write(&self.dir);
                return file;
            }
        };
        let span = (clock.ns_of(start), clock.ns_of(end));
        if let Err(e) = read_samples(&self.request, &data, span, &self.dir, &mut file) {
            file.missing
                .push(format!("the samples could not be read: {e}"));
        }
        let _ = std::fs::remove_dir_all(self.dir.join(WORK_DIR));
        if let Err(e) = file.write(&self.dir) {
            file.missing.push(e.to_string());
        }
        file
    }
}

/// The profile thread, recording or waiting for the window.
pub struct Running {
    stop: mpsc::Sender<Instant>,
    thread: JoinHandle<ProfileFile>,
}

impl Running {
    /// The run ended at `at` (early when it was stopped): ends the recording there, reads the
    /// samples and writes the files. Blocks for as long as `perf script` takes.
    pub fn finish(self, at: Instant) -> Result<ProfileFile, String> {
        let _ = self.stop.send(at);
        self.thread
            .join()
            .map_err(|_| "the profile thread panicked; the run has no profile".to_string())
    }
}

fn header(request: &Request, window_s: (f64, f64)) -> ProfileFile {
    let mut file = ProfileFile::new();
    file.scope = match request.plan.scope {
        ProfileScope::Instances => "instances",
        ProfileScope::Host => "host",
    }
    .into();
    file.hz = request.plan.hz;
    file.call_graph = request.plan.call_graph.perf_arg().into();
    file.perf_version = request.perf.version.clone();
    file.window_s = window_s;
    file.cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    file
}

/// Reads `perf script` over `data`, keeps the samples within `span` (ns), folds each
/// subject's, writes its folded stacks and fills `file`.
fn read_samples(
    request: &Request,
    data: &Path,
    span: (u64, u64),
    dir: &Path,
    file: &mut ProfileFile,
) -> Result<(), String> {
    let subjects = &request.subjects;
    let roots = subjects
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.root.map(|r| (r, i)))
        .collect();
    let host = subjects.iter().position(|s| s.root.is_none());
    let mut attribution = Attribution::new(roots);
    let mut folders: Vec<Folder> = subjects.iter().map(|_| Folder::default()).collect();
    let (mut child, out) = perf::script(&request.perf, data)?;
    let mut current: Option<(String, Option<usize>)> = None;
    let mut frames: Vec<(String, String)> = Vec::new();
    let mut unattributed = 0u64;
    let mut flush = |current: &mut Option<(String, Option<usize>)>,
                     frames: &mut Vec<(String, String)>| {
        if let Some((comm, subject)) = current.take() {
            match subject {
                Some(s) => folders[s].add(&comm, frames),
                None => unattributed += 1,
            }
            if let Some(h) = host {
                folders[h].add(&comm, frames);
            }
        }
        frames.clear();
    };
    for line in BufReader::new(out).lines() {
        let line = line.map_err(|e| format!("reading perf script: {e}"))?;
        match script::parse_line(&line) {
            Line::Sample { comm, pid, time_ns } => {
                flush(&mut current, &mut frames);
                if time_ns >= span.0 && time_ns < span.1 {
                    current = Some((comm.to_string(), attribution.subject_of(pid)));
                }
            }
            Line::Frame { sym, dso } if current.is_some() => {
                frames.push((sym.to_string(), dso.to_string()));
            }
            Line::Fork { child, parent } => {
                flush(&mut current, &mut frames);
                attribution.forked(child, parent);
            }
            Line::Blank => flush(&mut current, &mut frames),
            Line::Frame { .. } | Line::Other => {}
        }
    }
    flush(&mut current, &mut frames);
    let _ = child.wait();
    file.unattributed_samples = unattributed;
    let mut hidden_kernel = false;
    for (s, f) in subjects.iter().zip(&folders) {
        let rel = files::folded_path(&s.name);
        files::write_folded(dir, &rel, f.folded().into_iter()).map_err(|e| e.to_string())?;
        hidden_kernel |= f.kernel_unknown * 100 > f.samples.max(1);
        if f.samples == 0 && s.kind != "host" {
            file.missing.push(format!(
                "{} '{}' has no samples in the window (idle, or its processes ended before it)",
                s.kind, s.name
            ));
        }
        file.subjects.push(ProfiledSubject {
            name: s.name.clone(),
            kind: s.kind.into(),
            pid: s.root,
            samples: f.samples,
            split: f.split(),
            unknown_pct: f.unknown_pct(),
            top_self: f.top_self(),
            top_total: f.top_total(),
            folded: rel.display().to_string(),
        });
    }
    if hidden_kernel {
        file.missing.push(
            "kernel frames have no names: perf could not read the kernel's symbols; as root: \
             sysctl -w kernel.kptr_restrict=0 (and run tidebench as root or with \
             kernel.perf_event_paranoid=-1)"
                .into(),
        );
    }
    Ok(())
}

/// Waits until `until` for the run's end: `Some(when it ended)` if it came first (or the
/// runner is gone), `None` when `until` came.
fn stopped_before(stop: &mpsc::Receiver<Instant>, until: Instant) -> Option<Instant> {
    match stop.recv_timeout(until.saturating_duration_since(Instant::now())) {
        Err(mpsc::RecvTimeoutError::Timeout) => None,
        Ok(at) => Some(at),
        Err(mpsc::RecvTimeoutError::Disconnected) => Some(Instant::now()),
    }
}

/// `Instant`s as CLOCK_MONOTONIC ns (perf's timestamps), read at one moment.
struct Clock {
    instant: Instant,
    ns: u64,
}

impl Clock {
    fn now() -> Clock {
        Clock {
            instant: Instant::now(),
            ns: perf::monotonic_ns(),
        }
    }

    fn ns_of(&self, at: Instant) -> u64 {
        if at >= self.instant {
            self.ns + at.duration_since(self.instant).as_nanos() as u64
        } else {
            self.ns
                .saturating_sub(self.instant.duration_since(at).as_nanos() as u64)
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
