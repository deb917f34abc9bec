//! `summary.json`'s `down_windows`: when each target was down during the run, as its clients
//! saw it (issue 15, item 2). A client's session to a target is down from the moment it was
//! lost (the server went away, or a try timed out) until it was open again; a target's window
//! is the time at least one client was without its session, so it may outlast the server's
//! own outage by a reconnection backoff (at most 2 s).
//!
//! | field | meaning |
//! |---|---|
//! | `target` | the target's label |
//! | `from_s`, `to_s` | seconds since the run started; `to_s` absent: still down at the end |
//! | `sessions_lost` | sessions lost (or abandoned after a timeout) in the window |
//!
//! Transactions drawn for a down target count as `connection` (or `timeout`) failures; the
//! server's count covers only what reached it, and a server that restarted in the window is
//! marked `restarted` in `server` and not compared.
//!
//! `aborted_clients` lists the clients an error ended ([`AbortedClient`]): a script's runtime
//! error, or a server error no retry helps unless the run goes on after errors (issue 38).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownWindow {
    pub target: String,
    pub from_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_s: Option<f64>,
    pub sessions_lost: u64,
}

impl DownWindow {
    /// "from 6.0 s to 9.3 s" or "from 6.0 s to the end".
    pub fn span_text(&self) -> String {
        match self.to_s {
            Some(to) => format!("from {:.1} s to {to:.1} s", self.from_s),
            None => format!("from {:.1} s to the end", self.from_s),
        }
    }
}

/// `summary.json`'s `aborted_clients`: a client an error ended, as pgbench ends one: a
/// script's runtime error (division by zero, an undefined variable, a `\gset` without its one
/// row), or, unless the run was told to go on (`--continue-on-error`), a server error no retry
/// helps (class `other`: `"bad.sql" command 1: ERROR:  relation "nope" does not exist`, the
/// command counted from 0 as in pgbench's abort line). Its failed transaction is counted under
/// `other` (pgbench leaves it out of its counts); the other clients went on, unless the run
/// stopped at the first abort (`--exit-on-abort`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbortedClient {
    pub client: u32,
    /// Seconds since the run started.
    pub at_s: f64,
    pub message: String,
}
