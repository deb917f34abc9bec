//! The writer's syncer: a thread that fsyncs the results files appended every interval, so
//! a machine crash loses little more than a killed process would, without the collector's
//! runtime ever waiting on a disk.

use std::fs::File;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use super::atomic::WriteError;

/// How often the appended files are fsync'd. Flushing each interval already makes them
/// survive a killed process; fsync guards against a machine crash, and costs a disk flush,
/// which on a disk busy with the servers' checkpoints can take a second. Every 5 s bounds the
/// loss to 5 s beyond the interval in flight whatever `--interval` is (1 s in tests, 30 s by
/// default), and the syncs run on their own thread: the collector shares a single-threaded
/// runtime with Ctrl-C handling, the samplers and the Prometheus endpoint, none of which may
/// wait on a disk.
pub const SYNC_EVERY: Duration = Duration::from_secs(5);

/// Fsyncs the appended files every [`SYNC_EVERY`] on its own thread until stopped; the first
/// failure is kept for the writer to report.
pub struct Syncer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    error: Arc<Mutex<Option<WriteError>>>,
}

impl Syncer {
    /// `files` are clones of the writers' handles (an fsync through any handle syncs the
    /// file). A handle that could not be cloned is skipped: that file is synced at `finish`.
    pub fn start(files: Vec<(PathBuf, std::io::Result<File>)>) -> Syncer {
        let files: Vec<(PathBuf, File)> = files
            .into_iter()
            .filter_map(|(p, f)| f.ok().map(|f| (p, f)))
            .collect();
        let error = Arc::new(Mutex::new(None));
        let (tx, rx) = mpsc::channel::<()>();
        let seen = Arc::clone(&error);
        let thread = std::thread::Builder::new()
            .name("tidebench-sync".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(SYNC_EVERY) {
                    for (path, f) in &files {
                        if let Err(e) = f.sync_data() {
                            if let Ok(mut slot) = seen.lock() {
                                slot.get_or_insert(WriteError::new(path, e));
                            }
                            return;
                        }
                    }
                }
            })
            .ok();
        Syncer {
            stop: Some(tx),
            thread,
            error,
        }
    }

    /// A failed fsync, taken (reported once).
    pub fn error(&self) -> Option<WriteError> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }

    /// Stops the thread and waits for a sync in progress to end.
    pub fn stop(mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Syncer {
    /// A writer dropped without `finish` (a run that failed to start) lets the thread end on
    /// its own rather than wait here for a sync.
    fn drop(&mut self) {
        drop(self.stop.take());
    }
}
