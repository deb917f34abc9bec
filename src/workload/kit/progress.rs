//! Load progress as events: [`Event::LoadStarted`], then [`Event::LoadProgress`] a few times a
//! second while rows are copied, [`Event::LoadStep`] for what follows (vacuum, keys, ...),
//! and [`Event::LoadStopped`] when the count ends, however it ends. The sink decides how to
//! show them (the terminal: a bar on a TTY, a plain line every few seconds otherwise).
//!
//! Loader tasks only bump an atomic row counter; a ticker task turns it into events, so the
//! COPY loops never wait on the sink.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::event::{Event, LoadProgress, Sink};

/// Often enough for a smooth bar; a sink that shows lines picks its own pace.
const TICK: Duration = Duration::from_millis(100);

pub struct Progress {
    rows: Arc<AtomicU64>,
    events: Arc<dyn Sink>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    /// Starts reporting rows loaded out of `total`. Must be called inside a tokio runtime.
    pub fn start(what: &str, total: u64, events: Arc<dyn Sink>) -> Progress {
        let rows = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&rows);
        events.send(Event::LoadStarted {
            what: what.to_string(),
            total,
        });
        let what = what.to_string();
        let sink = Arc::clone(&events);
        let ticker = tokio::spawn(async move {
            let started = Instant::now();
            loop {
                tokio::time::sleep(TICK).await;
                sink.send(Event::LoadProgress(LoadProgress {
                    what: what.clone(),
                    done: counter.load(Ordering::Relaxed),
                    total,
                    elapsed: started.elapsed(),
                }));
            }
        });
        Progress {
            rows,
            events,
            ticker: Some(ticker),
        }
    }

    /// The counter loader tasks add their rows to.
    pub fn counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.rows)
    }

    /// Ends the row count and tells what happens next (vacuum, primary keys, ...).
    pub fn phase(&mut self, what: &str) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        self.events.send(Event::LoadStep(what.to_string()));
    }
}

impl Drop for Progress {
    /// Also runs when the prepare future is dropped on Ctrl-C: the ticker must not outlive it.
    fn drop(&mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        self.events.send(Event::LoadStopped);
    }
}
