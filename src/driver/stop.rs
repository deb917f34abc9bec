//! The stop signal: set by Ctrl-C/SIGTERM (or an error), seen by every client before its next
//! transaction (an atomic load), and awaited by each driver thread to cut in-flight work short.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::watch;

use crate::event::{Event, Sink};

#[derive(Clone)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Stop {
    fn default() -> Self {
        Self::new()
    }
}

impl Stop {
    pub fn new() -> Stop {
        let (tx, _) = watch::channel(false);
        Stop {
            flag: Arc::new(AtomicBool::new(false)),
            tx: Arc::new(tx),
        }
    }

    pub fn trigger(&self) {
        self.flag.store(true, Ordering::Relaxed);
        self.tx.send_replace(true);
    }

    #[inline]
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// Resolves once the stop is triggered (immediately if it already was).
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        // An error means the sender is gone, which cannot happen while `self` holds it.
        let _ = rx.wait_for(|stopped| *stopped).await;
    }

    /// Triggers the stop on SIGINT or SIGTERM, telling `events` first; a second signal calls
    /// `again` (the CLI exits at once: the user insists, and the `.partial` dir keeps what was
    /// written). Runs on the caller's runtime.
    pub async fn on_signals(self, events: Arc<dyn Sink>, again: fn() -> !) {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = self.wait() => return,
        }
        events.send(Event::Interrupted);
        self.trigger();
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        again();
    }
}
