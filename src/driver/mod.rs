//! The driver: client tasks sharded over single-threaded runtimes (one OS thread each, like
//! pgbench's `-j`), a per-thread tick that hands recorders to the collector, the stop signal.
//! It runs whatever [`Workload`] it is given and never looks at which one it is.
//!
//! A run has two steps so the caller can read the server's counters in between: [`connect`]
//! opens every client's session, then [`Connected::run`] starts all clients on one clock.

pub mod client;
pub mod collector;
pub mod deck;
pub mod progress;
pub mod schedule;
pub mod shard;
pub mod stop;

use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::metrics::{KeySpace, Recorder};
use crate::workload::Workload;

pub use collector::IntervalSink;
pub use stop::Stop;

use client::ClientShared;
use shard::{ShardSpec, TickReport};

/// What the driver needs to know; built from a `RunPlan` by the caller.
pub struct DriverPlan {
    pub workload: Workload,
    pub protocol: pgwire::Protocol,
    pub params: pgwire::ConnectParams,
    pub max_tries: u32,
    pub clients: u32,
    pub jobs: u32,
    pub duration: Duration,
    /// Total rate over all clients, transactions per second.
    pub rate: Option<f64>,
    pub seed: u64,
    pub interval: Duration,
    pub progress: Duration,
    pub keys: KeySpace,
}

/// Clients connected and waiting for the start.
pub struct Connected {
    threads: Vec<std::thread::JoinHandle<()>>,
    starts: Vec<oneshot::Sender<Instant>>,
    ticks: mpsc::UnboundedReceiver<TickReport>,
    keys: usize,
    duration: Duration,
    interval: Duration,
    progress: Duration,
}

/// What a run measured.
pub struct DriverResult {
    pub total: Recorder,
    /// From the start until the last client finished.
    pub measured: Duration,
    /// False when the stop signal cut the run short.
    pub complete: bool,
    /// Sessions reopened during the run (each is one transaction at the server).
    pub reconnects: u64,
}

/// Opens every client's session on its driver thread. Fails with the first connect error.
pub async fn connect(plan: DriverPlan, stop: Stop) -> Result<Connected, pgwire::Error> {
    let shared = Arc::new(ClientShared {
        workload: plan.workload,
        protocol: plan.protocol,
        params: plan.params,
        max_tries: plan.max_tries,
        txn_types: plan.keys.txn_types.len(),
        target: 0,
        stop,
    });
    let jobs = plan.jobs.clamp(1, plan.clients.max(1)) as usize;
    let client_rate = plan.rate.map(|r| r / f64::from(plan.clients));
    let (tick_tx, tick_rx) = mpsc::unbounded_channel();
    let (ready_tx, ready_rx) = std_mpsc::channel();
    let mut threads = Vec::with_capacity(jobs);
    let mut starts = Vec::with_capacity(jobs);
    for index in 0..jobs {
        // Round-robin, so threads differ by at most one client.
        let clients: Vec<u32> = (0..plan.clients)
            .filter(|c| *c as usize % jobs == index)
            .collect();
        let (start_tx, start_rx) = oneshot::channel();
        let spec = ShardSpec {
            index,
            clients,
            shared: Arc::clone(&shared),
            keys: plan.keys.len(),
            seed: plan.seed,
            client_rate,
            duration: plan.duration,
        };
        threads.push(shard::spawn(
            spec,
            ready_tx.clone(),
            start_rx,
            tick_tx.clone(),
        )?);
        starts.push(start_tx);
    }
    drop(ready_tx);
    drop(tick_tx);
    let connected = Connected {
        threads,
        starts,
        ticks: tick_rx,
        keys: plan.keys.len(),
        duration: plan.duration,
        interval: plan.interval,
        progress: plan.progress,
    };
    // Threads report readiness from their own runtimes; wait for them off this runtime's thread.
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
        Ok(None) => Ok(connected),
        Ok(Some(e)) => {
            connected.abort().await;
            Err(e)
        }
        Err(join) => {
            connected.abort().await;
            Err(pgwire::Error::from(std::io::Error::other(join.to_string())))
        }
    }
}

impl Connected {
    /// Starts every client on one clock and collects until they finish. `sink` receives each
    /// interval as it completes.
    pub async fn run(
        self,
        stop: &Stop,
        sink: &mut IntervalSink<'_>,
    ) -> Result<DriverResult, String> {
        let start = Instant::now();
        for s in self.starts {
            let _ = s.send(start);
        }
        let collector = collector::Collector::new(
            self.keys,
            self.threads.len(),
            start,
            self.duration,
            self.interval,
            self.progress,
            sink,
        );
        let collected = collector.run(self.ticks).await;
        let threads = self.threads;
        let _ = tokio::task::spawn_blocking(move || {
            for t in threads {
                let _ = t.join();
            }
        })
        .await;
        let collected = collected?;
        let ended = collected.ended.unwrap_or_else(Instant::now);
        Ok(DriverResult {
            total: collected.total,
            measured: ended.saturating_duration_since(start),
            complete: !stop.is_set(),
            reconnects: collected.reconnects,
        })
    }

    /// Closes all sessions without running (dropping the start senders tells threads to stop).
    pub async fn abort(self) {
        drop(self.starts);
        let threads = self.threads;
        let _ = tokio::task::spawn_blocking(move || {
            for t in threads {
                let _ = t.join();
            }
        })
        .await;
    }
}
