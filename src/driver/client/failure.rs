//! What a client does with an error a try returned, besides counting it by class (issue 38):
//! the first error of each kind goes in full into the thread's recorder, so no failure is
//! silent, and an error no retry helps (class `other`) ends the client when the run's mode
//! says so, as pgbench 15 ends one ("client 0 script 0 aborted in command 1 query 0: ...").
//! A script's own runtime error ends the client in every mode, as before. With
//! `--verbose-errors`, a try failed by a serialization failure or deadlock is also sent as an
//! event, then whether it is retried (pgbench 15's "got an error" and "repeats" lines).

use std::time::Instant;

use crate::event::{Event, TryError};
use crate::metrics::errors::{server_text, ErrorKey, FirstError};
use crate::metrics::ErrorClass;

use super::{Client, Work};

impl Client {
    /// Notes `err` (of class `class`, from a try of `work`) in the thread's error tally and
    /// decides whether it ends this client. Cheap for a kind already seen on this thread's
    /// tick: a scan of a few entries and a counter.
    pub(super) fn on_failure(&mut self, err: &pgwire::Error, class: ErrorClass, work: Work<'_>) {
        let command = match (work, &err.kind) {
            (Work::Drawn { group, .. }, pgwire::ErrorKind::Db { .. }) => {
                self.terminals[group].failed_command()
            }
            _ => None,
        };
        let txn = self.watch.what();
        let key = ErrorKey {
            class,
            sqlstate: err.sqlstate().copied(),
        };
        let client = self.id;
        if class.is_retryable() {
            self.tell_error(err, txn, command);
        }
        self.recorder
            .borrow_mut()
            .errors
            .note(key, || first_error(err, client, txn, command));
        if let pgwire::ErrorKind::Client(why) = &err.kind {
            // pgbench ends a client on its script's runtime error; the caller rolls back
            // first, so the session is left clean.
            self.aborted = Some((Instant::now(), why.clone()));
        } else if class == ErrorClass::Other
            && self.shared.on_error.aborts()
            && !err.is_connection_lost()
            // An emulator's job that failed goes back to its emulator (requeued or given
            // up), as the market resubmits: it is not the client's own transaction.
            && matches!(work, Work::Drawn { .. })
        {
            let why = self.abort_text(err, txn, command);
            self.aborted = Some((Instant::now(), why));
        }
    }

    /// `--verbose-errors`: the retryable error that failed this try, as the server wrote it.
    /// Off (the default) it costs a branch; on, only failed tries pay for the text.
    fn tell_error(&self, err: &pgwire::Error, txn: usize, command: Option<u32>) {
        let Some(events) = &self.shared.verbose_errors else {
            return;
        };
        events.send(Event::TryError(TryError::Got {
            client: self.id,
            txn_type: self.txn_name(txn).to_string(),
            command,
            text: error_text(err),
        }));
    }

    /// `--verbose-errors`: after try `try_no` of a transaction due at `scheduled` failed by a
    /// retryable error, whether the client tries again (and, with `-L`, how much of the
    /// limit the tries have used, as pgbench tells it).
    pub(super) fn tell_next(&self, try_no: u32, max_tries: u32, again: bool, scheduled: Instant) {
        let Some(events) = &self.shared.verbose_errors else {
            return;
        };
        let limit_used = self.shared.latency_limit.map(|limit| {
            100.0 * scheduled.elapsed().as_secs_f64() / limit.as_secs_f64().max(f64::MIN_POSITIVE)
        });
        events.send(Event::TryError(TryError::Next {
            client: self.id,
            try_no,
            max_tries,
            again,
            limit_used,
        }));
    }

    /// Notes a try the watchdog abandoned at the transaction timeout (no server error to
    /// show: the server never answered).
    pub(super) fn on_timeout(&mut self) {
        let key = ErrorKey {
            class: ErrorClass::Timeout,
            sqlstate: None,
        };
        let (client, txn) = (self.id, self.watch.what());
        let limit = self.shared.txn_timeout.unwrap_or_default();
        self.recorder.borrow_mut().errors.note(key, || FirstError {
            at: Instant::now(),
            client,
            txn,
            command: None,
            severity: String::new(),
            message: format!(
                "no answer within the transaction timeout ({limit:?}); the try was abandoned \
                 (CancelRequest sent) and the session reopened"
            ),
            more: None,
        });
    }

    /// Why the client was aborted: the transaction type, the command (a script's), and the
    /// server's error as pgbench prints it.
    fn abort_text(&self, err: &pgwire::Error, txn: usize, command: Option<u32>) -> String {
        let name = self.txn_name(txn);
        let text = error_text(err);
        match command {
            Some(c) => format!("\"{name}\" command {c}: {text}"),
            None => format!("\"{name}\": {text}"),
        }
    }

    /// The name of global transaction type `txn`, from the first group that has it.
    pub(super) fn txn_name(&self, txn: usize) -> &str {
        self.shared
            .layout
            .groups
            .iter()
            .find_map(|g| {
                let local = g.txn_map.iter().position(|t| *t == txn)?;
                g.workload.txn_types().get(local).map(|t| t.name.as_str())
            })
            .unwrap_or("?")
    }
}

/// The error as the server wrote it (`ERROR:  ...` with its DETAIL, HINT, CONTEXT lines).
fn error_text(err: &pgwire::Error) -> String {
    match &err.kind {
        pgwire::ErrorKind::Db {
            severity, message, ..
        } => server_text(severity, message, err.more()),
        _ => err.to_string(),
    }
}

/// The full record of the first error of a kind.
fn first_error(err: &pgwire::Error, client: u32, txn: usize, command: Option<u32>) -> FirstError {
    let (severity, message) = match &err.kind {
        pgwire::ErrorKind::Db {
            severity, message, ..
        } => (severity.clone(), message.clone()),
        _ => (String::new(), err.to_string()),
    };
    FirstError {
        at: Instant::now(),
        client,
        txn,
        command,
        severity,
        message,
        more: err.more().cloned(),
    }
}
