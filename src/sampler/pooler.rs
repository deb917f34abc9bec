//! A connection pooler's own counters (issue 57), read from pgbouncer's admin console (the
//! `pgbouncer` database, simple protocol only) every round beside the server's: what the
//! pooler did for the measured database. `pooler:<label>` rows in `system.csv`:
//! - from `SHOW POOLS` (gauges, summed over the pool's users): client sessions active and
//!   waiting for a server session, server sessions active, idle and used, and the longest
//!   wait of a client now waiting (`maxwait_s`);
//! - from `SHOW STATS` (cumulative since the pooler started): transactions and queries it
//!   passed, and the time clients spent waiting for a server session (`wait_time_s`).
//!
//! Only targets the pooler probe found sharing server sessions are tried, and a pooler that
//! refuses its console to the target's user (not in `stats_users`) is said once, not an error.
//!
//! [`PoolerConsole`] closes the pooler's server sessions of a database (`RECONNECT`, an admin
//! command) so the server's counters can be read settled around a run: a backend publishes
//! its counters for certain only when it exits, and the pooler's sessions otherwise outlive
//! the run.

use std::time::{Duration, Instant};

use tokio_postgres::{Client, SimpleQueryMessage, SimpleQueryRow};

use crate::target::{describe_pg_error, ResolvedTarget};

use super::run::Values;

/// The admin console's database name in pgbouncer.
pub const CONSOLE: &str = "pgbouncer";

/// `SHOW POOLS` columns summed into the metric of the same name.
pub const POOL_GAUGES: &[&str] = &["cl_active", "cl_waiting", "sv_active", "sv_idle", "sv_used"];

/// `SHOW STATS` columns and the metric each becomes; times are in microseconds there.
const STATS: &[(&str, &str, f64)] = &[
    ("total_xact_count", "xact_count", 1.0),
    ("total_query_count", "query_count", 1.0),
    ("total_wait_time", "wait_time_s", 1e-6),
];

/// One pooler's console session and the database whose pool it reads.
pub struct PoolerProbe {
    pub source: String,
    client: Client,
    dbname: String,
}

impl PoolerProbe {
    /// Opens the console of the pooler in front of `target`; the refusal's message otherwise.
    pub async fn open(target: &ResolvedTarget) -> Result<PoolerProbe, String> {
        let client = target
            .connect_tokio_to(CONSOLE)
            .await
            .map_err(|e| e.to_string())?;
        Ok(PoolerProbe {
            source: format!("pooler:{}", target.label),
            client,
            dbname: target.params.dbname.clone(),
        })
    }

    /// Appends this round's rows; a failed read is returned as a message and yields none.
    pub async fn sample(&mut self, out: &mut Values) -> Result<(), String> {
        let fail = |e: tokio_postgres::Error| {
            format!(
                "cannot read the pooler's counters of {}: {}",
                self.source,
                describe_pg_error(&e)
            )
        };
        let pools = self.client.simple_query("SHOW POOLS").await.map_err(fail)?;
        let stats = self.client.simple_query("SHOW STATS").await.map_err(fail)?;
        let pools: Vec<&SimpleQueryRow> = rows_of(&pools, &self.dbname).collect();
        for gauge in POOL_GAUGES {
            out.push(
                &self.source,
                gauge,
                pools.iter().map(|r| number(r, gauge)).sum(),
            );
        }
        let maxwait = pools
            .iter()
            .map(|r| number(r, "maxwait") + number(r, "maxwait_us") * 1e-6)
            .fold(0.0, f64::max);
        out.push(&self.source, "maxwait_s", maxwait);
        if let Some(row) = rows_of(&stats, &self.dbname).next() {
            for (column, metric, scale) in STATS {
                out.push(&self.source, metric, number(row, column) * scale);
            }
        }
        Ok(())
    }
}

/// A session on the admin console of the pooler in front of a target, for closing its server
/// sessions of a database around the server's reads.
pub struct PoolerConsole {
    client: Client,
}

impl PoolerConsole {
    /// Opens the console as the target's user; the refusal's message otherwise.
    pub async fn open(target: &ResolvedTarget) -> Result<PoolerConsole, String> {
        let client = target
            .connect_tokio_to(CONSOLE)
            .await
            .map_err(|e| e.to_string())?;
        Ok(PoolerConsole { client })
    }

    /// Closes every server session the pooler holds on `dbname` and waits, at most `within`,
    /// until it lists none; returns the server's pids of those it saw (`remote_pid`), whose
    /// backends may still be exiting. `RECONNECT` closes an idle one at once and a busy one
    /// when its client releases it; new ones open as clients need them. It needs the console's
    /// admin rights (pgbouncer's `admin_users`).
    pub async fn close_server_sessions(
        &self,
        dbname: &str,
        within: Duration,
    ) -> Result<Vec<i32>, String> {
        if dbname.contains('"') {
            return Err(format!(
                "the database name {dbname:?} holds a double quote, which pgbouncer's console \
                 cannot be given"
            ));
        }
        let fail = |what: &str, e: tokio_postgres::Error| {
            format!(
                "the pooler's console refused `{what}`: {}",
                describe_pg_error(&e)
            )
        };
        let reconnect = format!("RECONNECT \"{dbname}\"");
        let show = |e| fail("SHOW SERVERS", e);
        let before = self
            .client
            .simple_query("SHOW SERVERS")
            .await
            .map_err(show)?;
        let mut pids: Vec<i32> = remote_pids(&before, dbname).collect();
        self.client
            .simple_query(&reconnect)
            .await
            .map_err(|e| fail(&reconnect, e))?;
        let deadline = Instant::now() + within;
        loop {
            let servers = self
                .client
                .simple_query("SHOW SERVERS")
                .await
                .map_err(show)?;
            let held = rows_of(&servers, dbname).count();
            pids.extend(remote_pids(&servers, dbname));
            if held == 0 {
                pids.sort_unstable();
                pids.dedup();
                return Ok(pids);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the pooler still holds {held} server session(s) on '{dbname}' {within:?} \
                     after `{reconnect}` (a client still in a transaction?)"
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The server's pids of the server sessions in a `SHOW SERVERS` answer for `dbname`.
fn remote_pids<'a>(
    servers: &'a [SimpleQueryMessage],
    dbname: &'a str,
) -> impl Iterator<Item = i32> + 'a {
    rows_of(servers, dbname).filter_map(|r| text(r, "remote_pid")?.parse().ok())
}

/// The rows of a console answer for database `dbname`.
fn rows_of<'a>(
    messages: &'a [SimpleQueryMessage],
    dbname: &'a str,
) -> impl Iterator<Item = &'a SimpleQueryRow> + 'a {
    messages.iter().filter_map(move |m| match m {
        SimpleQueryMessage::Row(row) if text(row, "database") == Some(dbname) => Some(row),
        _ => None,
    })
}

/// A column of a console row; `None` where this pgbouncer has no such column.
fn text<'a>(row: &'a SimpleQueryRow, column: &str) -> Option<&'a str> {
    let at = row.columns().iter().position(|c| c.name() == column)?;
    row.get(at)
}

/// A numeric column of a console row; 0 where this pgbouncer has no such column.
fn number(row: &SimpleQueryRow, column: &str) -> f64 {
    text(row, column)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}
