//! Telling a connection pooler from a server (issue 57). A pooler in transaction (or
//! statement) mode hands one server session to many client sessions in turn, so what a
//! client leaves on a server session (a named prepared statement) may be missing from the
//! next one it is handed. Both probes watch `pg_backend_pid()`, the one fact a pooler cannot
//! hide: a server session never changes its backend, and two live server sessions never
//! share one. They use the simple protocol only, so they pass any pooler, and run before the
//! run's counters are read, so their few transactions never count in a measured window.

use std::time::Duration;

use tokio_postgres::{error::SqlState, Client, SimpleQueryMessage};

use super::{describe_pg_error, ResolvedTarget, TargetError};

/// The backend serving a statement.
const PID_SQL: &str = "SELECT pg_backend_pid()";
/// How long a probe waits for a statement: a pooler whose servers are all held queues it.
const PROBE_WITHIN: Duration = Duration::from_secs(2);
/// Most sessions the statement probe holds to land on the one server it prepared on.
const MAX_HOLDERS: usize = 4;

/// A statement of the probe ended without an answer (queued, or failed).
enum Read {
    Pid(i32),
    Queued,
}

impl ResolvedTarget {
    /// True when this target's endpoint hands one server session to several client
    /// sessions (a pooler in transaction or statement mode). Session A reads its backend,
    /// session B opens a transaction (holding a server) and reads its own, then A reads
    /// again. A server answers A with one backend twice and B with another; a pooler that
    /// reuses A's idle backend for B, or moves A to another (or makes A wait for B's), is
    /// sharing. A session-mode pooler keeps A on one backend and counts as a server, which
    /// is what matters here: everything a session leaves on it stays.
    pub async fn shares_server_sessions(&self) -> Result<bool, TargetError> {
        let a = self.connect_tokio().await?;
        let b = self.connect_tokio().await?;
        let Read::Pid(first) = self.read_pid(&a, "").await? else {
            return Ok(true);
        };
        let Read::Pid(held) = self.read_pid(&b, "BEGIN; ").await? else {
            return Ok(true);
        };
        if held == first {
            return Ok(true);
        }
        Ok(match self.read_pid(&a, "").await? {
            Read::Pid(again) => again != first,
            Read::Queued => true,
        })
    }

    /// Whether a named prepared statement survives the pooler handing its session another
    /// server session (pgbouncer 1.21+ with `max_prepared_statements` carries them; older
    /// ones and transaction mode without it do not). Session C prepares a statement and runs
    /// it; sessions D₁… open transactions until one holds the backend C prepared on; C runs
    /// the statement again, on another backend. `None` when no holder landed there (the
    /// pooler keeps C's backend for it, or has no idle one to give): nothing showed it lost.
    pub async fn named_statements_survive(&self) -> Result<Option<bool>, TargetError> {
        let c = self.connect_tokio().await?;
        let fail = |e: tokio_postgres::Error| self.probe_error(&e);
        let statement = c.prepare(PID_SQL).await.map_err(fail)?;
        let prepared_on: i32 = match c.query_one(&statement, &[]).await {
            Ok(row) => row.try_get(0).map_err(fail)?,
            Err(e) if lost_statement(&e) => return Ok(Some(false)),
            Err(e) => return Err(fail(e)),
        };
        let mut holders = Vec::with_capacity(MAX_HOLDERS);
        let mut landed = false;
        for _ in 0..MAX_HOLDERS {
            let d = self.connect_tokio().await?;
            let read = self.read_pid(&d, "BEGIN; ").await?;
            holders.push(d);
            match read {
                Read::Pid(pid) if pid == prepared_on => {
                    landed = true;
                    break;
                }
                Read::Pid(_) => {}
                Read::Queued => break,
            }
        }
        if !landed {
            return Ok(None);
        }
        let again = tokio::time::timeout(PROBE_WITHIN, c.query_one(&statement, &[])).await;
        drop(holders);
        match again {
            Ok(Ok(_)) => Ok(Some(true)),
            Ok(Err(e)) if lost_statement(&e) => Ok(Some(false)),
            Ok(Err(e)) => Err(fail(e)),
            Err(_) => Ok(None),
        }
    }

    /// `pg_backend_pid()` on `client`, after `before` (a `BEGIN; ` that holds the backend),
    /// in one simple-protocol message; [`Read::Queued`] when no answer came in time.
    async fn read_pid(&self, client: &Client, before: &str) -> Result<Read, TargetError> {
        let sql = format!("{before}{PID_SQL}");
        let messages = match tokio::time::timeout(PROBE_WITHIN, client.simple_query(&sql)).await {
            Err(_) => return Ok(Read::Queued),
            Ok(result) => result.map_err(|e| self.probe_error(&e))?,
        };
        let pid = messages.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).and_then(|v| v.parse::<i32>().ok()),
            _ => None,
        });
        pid.map(Read::Pid).ok_or_else(|| TargetError::Connect {
            label: self.label.clone(),
            message: format!("`{PID_SQL}` returned no backend; is this a PostgreSQL server?"),
        })
    }

    fn probe_error(&self, e: &tokio_postgres::Error) -> TargetError {
        TargetError::Connect {
            label: self.label.clone(),
            message: format!(
                "probing for a connection pooler failed: {}",
                describe_pg_error(e)
            ),
        }
    }
}

/// The server knows no statement of that name: it was prepared on another backend.
fn lost_statement(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::INVALID_SQL_STATEMENT_NAME)
}
