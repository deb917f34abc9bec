//! The driver: client tasks spread over single-threaded runtimes (one OS thread each, like
//! pgbench's `-j`), a per-thread tick that hands recorders to the collector, the stop signal.
//! It runs whatever [`Workload`](crate::workload::Workload)s the layout holds and never looks
//! at which ones they are.
//!
//! A run has two steps so the caller can read the server's counters in between: [`connect`]
//! opens every client's sessions, then [`Connected::run`] starts all clients on one clock.

pub mod affinity;
pub mod client;
pub mod collector;
pub mod deck;
pub mod error;
pub mod errors;
pub mod layout;
pub mod outages;
pub mod poll;
pub mod progress;
pub mod running;
pub mod schedule;
pub mod session;
pub mod stop;
pub mod thread;
pub mod watchdog;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{mpsc, oneshot};

use crate::event::Sink;
use crate::metrics::{KeySpace, Recorder};
use crate::workload::{Backlog, Emulator};

pub use collector::IntervalSink;
pub use error::{DeckError, DriverError, LayoutError};
pub use layout::Layout;
pub use stop::Stop;

use client::ClientShared;
use thread::{StartSignal, ThreadSpec, TickReport};

/// What the driver needs to know; built from a `RunPlan` by the caller.
pub struct DriverPlan {
    pub layout: Layout,
    pub protocol: pgwire::Protocol,
    pub max_tries: u32,
    /// What a client does after an error no retry helps.
    pub on_error: crate::config::OnError,
    /// `--verbose-errors`: failed tries of retryable errors are sent to `events`.
    pub verbose_errors: bool,
    pub txn_timeout: Option<Duration>,
    /// pgbench's `-t`: transactions per client, after which it ends.
    pub transactions: Option<u64>,
    /// pgbench's `-C`: a new session for every transaction.
    pub connect_each: bool,
    /// pgbench's `-L`.
    pub latency_limit: Option<Duration>,
    pub jobs: u32,
    /// Pin each driver thread to a CPU of its own when there are enough (see [`affinity`]).
    pub pin_threads: bool,
    pub seed: u64,
    pub interval: Duration,
    pub progress: Duration,
    pub poll: Duration,
    /// Per segment, each group's configured share (shared mode), for the polling block.
    pub shares: Vec<Option<Vec<f64>>>,
    /// The workload's headline per minute, for the polling block (TPC-C's NOTPM).
    pub headline: Option<poll::LiveHeadline>,
    pub keys: KeySpace,
    /// Where to publish the totals every tick (for `--prometheus`).
    pub live: Option<collector::LiveTotals>,
    /// Where progress lines, polling blocks, phase edges and warnings go.
    pub events: Arc<dyn Sink>,
}

/// Clients connected and waiting for the start.
pub struct Connected {
    threads: Vec<std::thread::JoinHandle<()>>,
    /// What the clients have in flight, for the progress line.
    running: Arc<running::Running>,
    /// Every set's emulator (set index, emulator), started on the clients' clock.
    emulators: Vec<(usize, Arc<dyn Emulator>)>,
    starts: Vec<oneshot::Sender<StartSignal>>,
    ticks: mpsc::UnboundedReceiver<TickReport>,
    keys: KeySpace,
    interval: Duration,
    progress: Duration,
    poll: Duration,
    shares: Vec<Option<Vec<f64>>>,
    headline: Option<poll::LiveHeadline>,
    live: Option<collector::LiveTotals>,
    events: Arc<dyn Sink>,
}

/// What a run measured.
pub struct DriverResult {
    /// Everything recorded, ramps included (keys carry the segment).
    pub total: Recorder,
    /// From the start until the last client finished.
    pub elapsed: Duration,
    /// False when the stop signal cut the run short.
    pub complete: bool,
    /// Sessions reopened during the run (each is one transaction at the server).
    pub reconnects: u64,
    /// With `-C`: sessions opened per transaction, and the time that took.
    pub connect_time: session::ConnectTime,
    /// Problems that did not stop the run (e.g. the mix log could not be written).
    pub warnings: Vec<String>,
    /// Each emulated set's backlog when the clients had stopped: the work left pending.
    pub emulators: Vec<(usize, Backlog)>,
    /// Why the run failed: a client or a driver thread panicked. `complete` is false then.
    pub failure: Option<String>,
    /// Per global target, what became of the tries in flight at the end: the server counts
    /// those that committed after it, and may have committed some of those cut.
    pub at_end: BTreeMap<usize, session::EndCounts>,
    /// Each target's down windows, as its clients saw them.
    pub down: Vec<outages::DownWindow>,
    /// Clients an error ended: a script's runtime error, or (unless the run goes on after
    /// errors) a server error no retry helps.
    pub aborted: Vec<crate::results::down::AbortedClient>,
    /// Every kind of error met, with its count and first error.
    pub errors: Vec<crate::results::errors::ErrorEntry>,
    /// How long after the planned end the last client finished, when that was more than
    /// [`OVERRUN_TOLERANCE`] (closing sessions on a hung server, a client that ignored the
    /// cut): reported, never folded into the measured window.
    pub overrun: Option<Duration>,
}

/// How late the clients may finish after the planned end before it counts as an overrun: a
/// try in flight at the end may finish for a moment (`client::END_GRACE`), then saying goodbye
/// to every session and sending the cancels takes a few milliseconds.
pub const OVERRUN_TOLERANCE: Duration = Duration::from_secs(1);

/// Opens every client's sessions on its driver thread. Fails with the first connect error.
pub async fn connect(plan: DriverPlan, stop: Stop) -> Result<Connected, DriverError> {
    let own = plan.layout.own_clients();
    let clients = own.len() as u32;
    let jobs = plan.jobs.clamp(1, clients.max(1)) as usize;
    let shared = Arc::new(ClientShared {
        layout: plan.layout,
        protocol: plan.protocol,
        max_tries: plan.max_tries,
        on_error: plan.on_error,
        verbose_errors: plan.verbose_errors.then(|| Arc::clone(&plan.events)),
        keys: plan.keys.shape(),
        stop,
        txn_timeout: plan.txn_timeout,
        transactions: plan.transactions,
        connect_each: plan.connect_each,
        latency_limit: plan.latency_limit,
        running: Arc::new(running::Running::new(jobs)),
    });
    let emulators = shared
        .layout
        .emulators()
        .map(|(s, e)| (s, Arc::clone(e)))
        .collect();
    let (tick_tx, tick_rx) = mpsc::unbounded_channel();
    let (ready_tx, ready_rx) = std_mpsc::channel();
    let cpus = if plan.pin_threads {
        affinity::one_cpu_each(jobs)
    } else {
        None
    };
    let spec = |index: usize| ThreadSpec {
        index,
        cpu: cpus.as_ref().and_then(|c| c.get(index).copied()),
        clients: clients_of_thread(&own, jobs, index),
        shared: Arc::clone(&shared),
        keys: plan.keys.len(),
        seed: plan.seed,
        events: Arc::clone(&plan.events),
    };
    let (threads, starts) = spawn_threads(jobs, spec, ready_tx, tick_tx)?;
    let mut connected = Connected {
        running: Arc::clone(&shared.running),
        threads,
        emulators,
        starts,
        ticks: tick_rx,
        keys: plan.keys,
        interval: plan.interval,
        progress: plan.progress,
        poll: plan.poll,
        shares: plan.shares,
        headline: plan.headline,
        live: plan.live,
        events: plan.events,
    };
    match wait_ready(ready_rx, jobs).await {
        Ok(()) => Ok(connected),
        Err(e) => {
            connected.abort().await;
            Err(e)
        }
    }
}

/// The clients of driver thread `index` of `jobs`: dealt round-robin, so threads differ by at
/// most one client.
fn clients_of_thread(own: &[u32], jobs: usize, index: usize) -> Vec<u32> {
    own.iter()
        .enumerate()
        .filter(|(k, _)| k % jobs == index)
        .map(|(_, c)| *c)
        .collect()
}

/// Starts `jobs` driver threads, thread `i` with `spec(i)`; returns their handles and the
/// senders of their start signals. The channel ends passed in are dropped here, so the
/// receivers see the end once every thread has gone.
fn spawn_threads(
    jobs: usize,
    spec: impl Fn(usize) -> ThreadSpec,
    ready_tx: std_mpsc::Sender<Result<(), DriverError>>,
    tick_tx: mpsc::UnboundedSender<TickReport>,
) -> Result<ThreadStarts, DriverError> {
    let mut threads = Vec::with_capacity(jobs);
    let mut starts = Vec::with_capacity(jobs);
    for index in 0..jobs {
        let (start_tx, start_rx) = oneshot::channel();
        let handle = thread::spawn(spec(index), ready_tx.clone(), start_rx, tick_tx.clone())
            .map_err(DriverError::Spawn)?;
        threads.push(handle);
        starts.push(start_tx);
    }
    Ok((threads, starts))
}

/// Driver threads and the senders of their start signals.
type ThreadStarts = (
    Vec<std::thread::JoinHandle<()>>,
    Vec<oneshot::Sender<StartSignal>>,
);

/// Waits until all `jobs` threads have connected their clients; the first connect error if
/// any failed. Threads report readiness from their own runtimes, so this waits off the
/// runtime's thread.
async fn wait_ready(
    ready_rx: std_mpsc::Receiver<Result<(), DriverError>>,
    jobs: usize,
) -> Result<(), DriverError> {
    let waited = tokio::task::spawn_blocking(move || {
        let mut first_err = None;
        for _ in 0..jobs {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => break,
            }
        }
        first_err
    })
    .await;
    match waited {
        Ok(None) => Ok(()),
        Ok(Some(e)) => Err(e),
        Err(join) => Err(DriverError::Waiting(join)),
    }
}

impl Connected {
    /// Starts every client on one clock, the run's start `start` (the runner's events and
    /// samplers time themselves from the same instant), and collects until they finish. `sink` receives each
    /// interval as it completes; with `mixlog_dir`, each thread writes `mix-<thread>.bin` there;
    /// with `txn_log`, each thread writes pgbench's transaction log (its start set here).
    pub async fn run(
        self,
        start: Instant,
        stop: &Stop,
        sink: &mut IntervalSink<'_>,
        mixlog_dir: Option<PathBuf>,
        txn_log: Option<crate::metrics::txnlog::TxnLogSpec>,
    ) -> Result<DriverResult, DriverError> {
        let start_ns = (SystemTime::now() - start.elapsed())
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        for (_, e) in &self.emulators {
            e.start(start);
        }
        send_starts(self.starts, start, start_ns, mixlog_dir, txn_log);
        let collector = collector::Collector::new(
            &self.keys,
            self.threads.len(),
            start,
            collector::Cadence {
                interval: self.interval,
                progress: self.progress,
                poll: self.poll,
            },
            poll::Poller {
                shares: self.shares,
                headline: self.headline,
            },
            sink,
            self.events,
        )
        .publish_to(self.live)
        .show_running(self.running)
        .watch(self.emulators.iter().map(|(_, e)| Arc::clone(e)).collect());
        let collected = collector.run(self.ticks).await;
        let thread_panics = join_threads(self.threads).await;
        let collected = collected?;
        let mut panics = collected.panics;
        panics.extend(thread_panics);
        let failure = (!panics.is_empty()).then(|| panics.join("; "));
        let ended = collected.ended.unwrap_or_else(Instant::now);
        let planned = self.keys.segments.last().map_or(Duration::ZERO, |s| s.end);
        let actual = ended.saturating_duration_since(start);
        let overrun = actual
            .checked_sub(planned)
            .filter(|late| *late > OVERRUN_TOLERANCE);
        let emulators = self
            .emulators
            .iter()
            .map(|(s, e)| (*s, e.backlog(ended)))
            .collect();
        Ok(DriverResult {
            emulators,
            total: collected.total,
            // Nothing is recorded past the planned end (tries in flight there were cut).
            elapsed: actual.min(planned),
            complete: !stop.is_set() && failure.is_none(),
            reconnects: collected.reconnects,
            connect_time: collected.connect_time,
            warnings: collected.warnings,
            failure,
            at_end: collected.at_end,
            down: collected.down,
            aborted: collected.aborted,
            errors: collected.errors,
            overrun,
        })
    }

    /// Closes all sessions without running (dropping the start senders tells threads to stop).
    /// By reference, so a caller holding the clients can release them on any error path and
    /// still own them (see the runner's `or_release`); a second call finds nothing to do.
    pub async fn abort(&mut self) {
        self.starts.clear();
        let threads = std::mem::take(&mut self.threads);
        let _ = tokio::task::spawn_blocking(move || {
            for t in threads {
                let _ = t.join();
            }
        })
        .await;
    }
}

/// Gives every driver thread the go: one start instant `start` (`start_ns` on the wall
/// clock), and thread `i` its own mix log file in `mixlog_dir` and the transaction log.
fn send_starts(
    starts: Vec<oneshot::Sender<StartSignal>>,
    start: Instant,
    start_ns: u64,
    mixlog_dir: Option<PathBuf>,
    txn_log: Option<crate::metrics::txnlog::TxnLogSpec>,
) {
    for (i, s) in starts.into_iter().enumerate() {
        let mixlog = mixlog_dir
            .as_ref()
            .map(|d| (d.join(format!("mix-{i}.bin")), start_ns));
        let txn_log = txn_log.clone().map(|t| t.starting(start_ns / 1_000));
        // A thread that has gone already reports its own end.
        let _ = s.send(StartSignal {
            at: start,
            mixlog,
            txn_log,
        });
    }
}

/// Joins the driver threads (off the runtime's thread); what each that panicked said.
async fn join_threads(threads: Vec<std::thread::JoinHandle<()>>) -> Vec<String> {
    tokio::task::spawn_blocking(move || {
        threads
            .into_iter()
            .enumerate()
            .filter_map(|(i, t)| {
                t.join()
                    .err()
                    .map(|p| format!("driver thread {i} panicked: {}", thread::panic_message(p)))
            })
            .collect::<Vec<String>>()
    })
    .await
    .unwrap_or_default()
}
