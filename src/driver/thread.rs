//! A driver thread: one [`evloop`] loop running a share of the clients as its tasks (like
//! pgbench's `-j` threads, each a loop over its clients' sockets). Its clients write one
//! recorder through a `RefCell`; a tick task on the same thread swaps that recorder out once a
//! second and sends it to the collector, so the hot path takes no lock and sends no message
//! per transaction.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use tokio::sync::{mpsc, oneshot};

use crate::event::{Event, Sink};
use crate::metrics::mixlog::MixLog;
use crate::metrics::txnlog::{TxnLog, TxnLogSpec};
use crate::metrics::Recorder;
use crate::workload::Rng;

use super::client::{Client, ClientShared, OnThread};
use super::error::DriverError;
use super::outages::Outage;
use super::session::{ConnectTime, EndCounts, Session};
use super::stop::Stop;
use super::watchdog::{self, Watch};

/// The collector's tick length: progress and intervals are whole multiples of it.
pub const TICK: Duration = Duration::from_secs(1);
/// How long clients may take to end after a stop before their tasks are aborted. The
/// watchdog cuts every try in flight at the stop, so this only bounds what it does not watch.
pub const STOP_GRACE: Duration = Duration::from_millis(400);

/// What a driver thread reports: everything recorded since its previous report.
pub struct TickReport {
    pub thread: usize,
    /// Index of the tick the data belongs to (elapsed whole seconds at the swap, minus one).
    pub tick: u64,
    pub recorder: Recorder,
    /// Set on the thread's last report.
    pub finished: Option<ThreadEnd>,
}

pub struct ThreadEnd {
    pub at: Instant,
    pub reconnects: u64,
    /// With `-C`: its clients' sessions opened per transaction and the time that took.
    pub connect_time: ConnectTime,
    /// Per global target, what became of the tries in flight at the end.
    pub at_end: Vec<(usize, EndCounts)>,
    /// The clients' session outages.
    pub outages: Vec<Outage>,
    /// The mix log's write error, if writing it failed.
    pub mixlog_error: Option<String>,
    /// Clients of this thread that panicked, with the panic's message: the run failed.
    pub panics: Vec<String>,
    /// Clients an error of the workload's own ended: id, when, why.
    pub aborted: Vec<(u32, Instant, String)>,
}

/// The go signal: the common start instant, and where to write the mix log (if on).
pub struct StartSignal {
    pub at: Instant,
    pub mixlog: Option<(PathBuf, u64)>,
    /// pgbench's transaction log (`-l`), if on.
    pub txn_log: Option<TxnLogSpec>,
}

/// The plan of one driver thread.
pub struct ThreadSpec {
    pub index: usize,
    /// The CPU this thread is pinned to, if any.
    pub cpu: Option<usize>,
    /// Ids of this thread's clients (index into the layout's client list; seeds derive from them).
    pub clients: Vec<u32>,
    pub shared: Arc<ClientShared>,
    pub keys: usize,
    pub seed: u64,
    pub events: Arc<dyn Sink>,
}

/// Starts the thread. It connects its clients' sessions and reports on `ready`; then waits for
/// the start on `start` (dropped sender = abort) and runs until the end or the stop.
pub fn spawn(
    spec: ThreadSpec,
    ready: std_mpsc::Sender<Result<(), DriverError>>,
    start: oneshot::Receiver<StartSignal>,
    ticks: mpsc::UnboundedSender<TickReport>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("tidebench-driver-{}", spec.index))
        .spawn(move || {
            if let Some(cpu) = spec.cpu {
                // Best effort: a thread left unpinned runs as it would have without the flag.
                let _ = super::affinity::pin_current_thread(cpu);
            }
            let failed = ready.clone();
            if let Err(e) = evloop::block_on(run_thread(spec, ready, start, ticks)) {
                let _ = failed.send(Err(DriverError::Loop(e)));
            }
        })
}

/// Opens every session of the thread's clients, in client order.
async fn connect_all(spec: &ThreadSpec) -> Result<Vec<Vec<Session>>, DriverError> {
    let layout = &spec.shared.layout;
    let mut all = Vec::with_capacity(spec.clients.len());
    for id in &spec.clients {
        let role = &layout.clients[*id as usize];
        let mut sessions = Vec::new();
        for t in layout.client_targets(role) {
            let target = &layout.targets[t];
            let conn = pgwire::Connection::connect(&target.params)
                .await
                .map_err(|source| DriverError::Connect {
                    target: layout_label(spec, t),
                    source,
                })?;
            sessions.push(Session::open(conn, &target.params, &target.follow));
        }
        all.push(sessions);
    }
    Ok(all)
}

fn layout_label(spec: &ThreadSpec, target: usize) -> String {
    spec.shared
        .layout
        .labels
        .get(target)
        .cloned()
        .unwrap_or_else(|| target.to_string())
}

/// The thread's whole life: connect, report ready, await the start, drive the clients until
/// they end or are cut off, then send the last report.
async fn run_thread(
    spec: ThreadSpec,
    ready: std_mpsc::Sender<Result<(), DriverError>>,
    start: oneshot::Receiver<StartSignal>,
    ticks: mpsc::UnboundedSender<TickReport>,
) {
    let Some((sessions, signal)) = connect_and_await_start(&spec, ready, start).await else {
        return;
    };
    let start = signal.at;
    let logs = Logs {
        mix: open_mixlog(&spec, signal.mixlog),
        txn: open_txn_log(&spec, signal.txn_log),
    };
    let recorder = Rc::new(RefCell::new(Recorder::new(spec.keys)));
    let ticker = evloop::spawn(tick_loop(
        spec.index,
        start,
        spec.keys,
        Rc::clone(&recorder),
        logs.clone(),
        ticks.clone(),
    ));
    let watches = Watch::for_thread(sessions.len());
    let run_end = start
        + spec
            .shared
            .layout
            .segments
            .last()
            .map_or(Duration::ZERO, |s| s.end);
    let dog = evloop::spawn(watchdog::watchdog(
        watches.clone(),
        run_end,
        spec.shared.txn_timeout,
        spec.shared.stop.clone(),
        Some((Arc::clone(&spec.shared.running), spec.index)),
    ));
    let handles = spawn_clients(&spec, sessions, start, &recorder, &logs, watches);
    let (finished, panics) = await_clients(&spec.shared.stop, handles).await;
    let end = Instant::now();
    ticker.abort();
    dog.abort();
    let mut reconnects = 0;
    let mut connect_time = ConnectTime::default();
    let mut at_end = Vec::new();
    let mut outages = Vec::new();
    let mut aborted = Vec::new();
    for c in finished {
        let ended = c.close().await;
        reconnects += ended.reconnects;
        connect_time.add(ended.connect_time);
        at_end.extend(ended.at_end);
        outages.extend(ended.outages);
        aborted.extend(ended.aborted);
    }
    let mixlog_error = logs.finish(&spec);
    // The ticker is gone: what was recorded since its last swap goes in this final report.
    let rest = std::mem::replace(&mut *recorder.borrow_mut(), Recorder::new(0));
    let tick = end.saturating_duration_since(start).as_secs();
    let _ = ticks.send(TickReport {
        thread: spec.index,
        tick,
        recorder: rest,
        finished: Some(ThreadEnd {
            at: end,
            reconnects,
            connect_time,
            at_end,
            outages,
            mixlog_error,
            panics,
            aborted,
        }),
    });
}

/// Connects the sessions and reports on `ready`, then awaits the start signal; `None` when
/// connecting failed (reported) or the run was aborted before the start (sessions closed).
async fn connect_and_await_start(
    spec: &ThreadSpec,
    ready: std_mpsc::Sender<Result<(), DriverError>>,
    start: oneshot::Receiver<StartSignal>,
) -> Option<(Vec<Vec<Session>>, StartSignal)> {
    let sessions = match connect_all(spec).await {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(e));
            return None;
        }
    };
    let _ = ready.send(Ok(()));
    let Ok(signal) = start.await else {
        for client in sessions {
            for s in client {
                s.close().await;
            }
        }
        return None;
    };
    Some((sessions, signal))
}

/// Opens this thread's mix log when the run writes one; a failure to create it is a warning,
/// and the run goes on without it.
fn open_mixlog(spec: &ThreadSpec, mixlog: Option<(PathBuf, u64)>) -> Option<Rc<RefCell<MixLog>>> {
    match mixlog {
        Some((path, start_ns)) => match MixLog::create(&path, start_ns, spec.index as u32) {
            Ok(log) => Some(Rc::new(RefCell::new(log))),
            Err(e) => {
                spec.events.send(Event::Warning(format!(
                    "cannot write the mix log {}: {e}",
                    path.display()
                )));
                None
            }
        },
        None => None,
    }
}

/// Opens this thread's transaction log (`-l`) in the working dir, named as pgbench names it;
/// a failure to create it is a warning, and the run goes on without it.
fn open_txn_log(spec: &ThreadSpec, txn: Option<TxnLogSpec>) -> Option<Rc<RefCell<TxnLog>>> {
    let txn = txn?;
    let path = txn.path(std::process::id(), spec.index);
    let script_of = spec
        .shared
        .layout
        .groups
        .iter()
        .map(|g| {
            txn.plan
                .script_numbers(g.workload.txn_types().iter().map(|t| t.name.as_str()))
        })
        .collect();
    match TxnLog::create(&path, txn, script_of, spec.index) {
        Ok(log) => Some(Rc::new(RefCell::new(log))),
        Err(e) => {
            spec.events.send(Event::Warning(format!(
                "cannot write the transaction log {}: {e} (run in a writable directory)",
                path.display()
            )));
            None
        }
    }
}

/// The thread's per-transaction logs, shared by its clients (single-threaded: no lock).
#[derive(Clone)]
struct Logs {
    mix: Option<Rc<RefCell<MixLog>>>,
    txn: Option<Rc<RefCell<TxnLog>>>,
}

impl Logs {
    /// At the thread's end: the transaction log's last lines (a failure said as a warning),
    /// and the mix log's error, if any, for the thread's report.
    fn finish(self, spec: &ThreadSpec) -> Option<String> {
        if let Some(e) = self.txn.and_then(|l| l.borrow_mut().finish()) {
            spec.events.send(Event::Warning(format!(
                "the transaction log of driver thread {} is incomplete: {e}",
                spec.index
            )));
        }
        self.mix.and_then(|l| l.borrow_mut().flush())
    }
}

/// Starts one local task per client, each with its sessions and its own seeded generator,
/// all writing the thread's recorder and mix log.
fn spawn_clients(
    spec: &ThreadSpec,
    sessions: Vec<Vec<Session>>,
    start: Instant,
    recorder: &Rc<RefCell<Recorder>>,
    logs: &Logs,
    watches: Vec<Rc<Watch>>,
) -> Vec<evloop::JoinHandle<Client>> {
    let mut handles = Vec::with_capacity(sessions.len());
    for ((id, sessions), watch) in spec.clients.iter().zip(sessions).zip(watches) {
        let role = spec.shared.layout.clients[*id as usize];
        let client = Client::new(
            *id,
            Arc::clone(&spec.shared),
            role,
            sessions,
            Rng::seed_from_u64(client_seed(spec.seed, *id)),
            OnThread {
                recorder: Rc::clone(recorder),
                mixlog: logs.mix.clone(),
                txn_log: logs.txn.clone(),
                watch,
            },
        );
        handles.push(evloop::spawn(client.run(start)));
    }
    handles
}

/// Waits for the clients, in order, and returns those that finished and the messages of those
/// that panicked; after a stop, in-flight transactions get [`STOP_GRACE`], then every client
/// still running is aborted.
async fn await_clients<T: 'static>(
    stop: &Stop,
    mut handles: Vec<evloop::JoinHandle<T>>,
) -> (Vec<T>, Vec<String>) {
    let cut = async {
        stop.wait().await;
        evloop::sleep(STOP_GRACE).await;
    };
    tokio::pin!(cut);
    let mut cut_off = false;
    let mut finished = Vec::with_capacity(handles.len());
    let mut panics = Vec::new();
    for (i, h) in handles.iter_mut().enumerate() {
        if cut_off {
            h.abort();
            continue;
        }
        tokio::select! {
            joined = &mut *h => match joined {
                Ok(c) => finished.push(c),
                Err(e) if e.is_panic() => {
                    panics.push(format!("client {i} panicked: {}", panic_message(e.into_panic())));
                }
                Err(_) => {}
            },
            _ = &mut cut => {
                cut_off = true;
                h.abort();
            }
        }
    }
    (finished, panics)
}

/// The text a panic was raised with (`panic!("...")` gives a `&str` or a `String`).
pub fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p
            .downcast_ref::<&str>()
            .map_or_else(|| "(no message)".to_string(), |s| s.to_string()),
    }
}

/// Every tick, hands what was recorded to the collector and starts a fresh recorder.
async fn tick_loop(
    thread: usize,
    start: Instant,
    keys: usize,
    recorder: Rc<RefCell<Recorder>>,
    logs: Logs,
    ticks: mpsc::UnboundedSender<TickReport>,
) {
    let mut next = start + TICK;
    loop {
        evloop::sleep_until(next).await;
        let elapsed = Instant::now().saturating_duration_since(start).as_secs();
        let taken = std::mem::replace(&mut *recorder.borrow_mut(), Recorder::new(keys));
        if let Some(log) = &logs.mix {
            // Written on the driver thread between transactions: buffered, once a tick.
            log.borrow_mut().flush();
        }
        if let Some(log) = &logs.txn {
            log.borrow_mut().flush();
        }
        let report = TickReport {
            thread,
            tick: elapsed.saturating_sub(1),
            recorder: taken,
            finished: None,
        };
        if ticks.send(report).is_err() {
            return;
        }
        next = start + TICK * (elapsed as u32 + 1);
    }
}

/// Distinct, reproducible seeds per client (splitmix64 of seed and id).
pub fn client_seed(seed: u64, client: u32) -> u64 {
    crate::workload::splitmix(seed, u64::from(client))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_client_is_reported_not_dropped() {
        let (finished, panics) = evloop::block_on(async {
            let handles = vec![
                evloop::spawn(async { 1u32 }),
                evloop::spawn(async {
                    if std::hint::black_box(true) {
                        panic!("a bug in a workload");
                    }
                    2u32
                }),
                evloop::spawn(async { 3u32 }),
            ];
            await_clients(&Stop::new(), handles).await
        })
        .unwrap();
        assert_eq!(finished, [1, 3]);
        assert_eq!(panics, ["client 1 panicked: a bug in a workload"]);
        assert_eq!(panic_message(Box::new(String::from("owned"))), "owned");
        assert_eq!(panic_message(Box::new(7u8)), "(no message)");
    }
}
