//! PostgreSQL's own facts and counters: the settings a result depends on (for `runtime.toml`)
//! and the `pg_stat_database` transaction counters whose deltas over the measured window go
//! into `summary.json`, so anyone can check the client's counts against the server's.
//!
//! How to read counters exactly (for the driver):
//! - Read them on a session to a *different* database than the measured one ([`stats_dbname`]):
//!   every statement of the reading session is a transaction and would count otherwise.
//! - Backends do not publish their counters at once: PostgreSQL 15 flushes a busy backend's
//!   statistics at most once a second, an idle one's after up to 10 s, and everything at exit.
//!   So read the *end* counters with [`settled_xact_counters`] after closing the benchmark's
//!   sessions.
//! - PostgreSQL counts one commit for each session's startup (it reads the catalogs in a
//!   transaction), published when the session first goes idle. Open the benchmark's sessions
//!   *before* the settled start read and the delta equals the client's committed count exactly
//!   (tests/integration/results.rs checks this); sessions opened inside the window (reconnects)
//!   add one commit each. Likewise, extended-protocol messages sent outside a transaction block
//!   (a Parse…Sync to prepare statements) run in an implicit transaction that counts as a commit.
//! - Each read is its own statement, hence its own transaction: PostgreSQL 15 caches statistics
//!   for the length of a transaction (`stats_fetch_consistency = cache`), never across two.
//! - Every statement is unnamed (`query_typed`): behind a connection pooler in transaction
//!   mode a statement prepared on one server session is missing on the next (issue 57).
//! - A server that restarts (crash recovery after an OOM kill ends every session, the stats
//!   session too) resets its statistics: [`StatsSession`] opens the session again, and a delta
//!   across the reset ([`stats_reset`] changed) is marked as such rather than compared.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::results::ServerDelta;
pub use crate::results::ServerFacts;
use crate::target::{describe_pg_error, ResolvedTarget};

/// Settings that change what a benchmark measures: memory, durability, checkpoints, IO, plans.
pub const SETTINGS: &[&str] = &[
    "autovacuum",
    "checkpoint_completion_target",
    "checkpoint_timeout",
    "default_transaction_isolation",
    "effective_cache_size",
    "effective_io_concurrency",
    "enable_partitionwise_aggregate",
    "enable_partitionwise_join",
    "fsync",
    "full_page_writes",
    "huge_pages",
    "jit",
    "max_connections",
    "max_parallel_workers",
    "max_parallel_workers_per_gather",
    "max_wal_size",
    "min_wal_size",
    "random_page_cost",
    "shared_buffers",
    "synchronous_commit",
    "wal_buffers",
    "wal_compression",
    "wal_level",
    "work_mem",
];

/// Pause between two reads of [`settled_xact_counters`].
pub const SETTLE_STEP: Duration = Duration::from_millis(250);

impl ServerFacts {
    /// Reads the server version and [`SETTINGS`] as `SHOW` prints them (units included).
    /// Settings this server does not have are left out.
    pub async fn collect(client: &Client, label: &str) -> Result<ServerFacts, String> {
        let fail = |e: tokio_postgres::Error| {
            format!(
                "cannot read the settings of '{label}': {}",
                describe_pg_error(&e)
            )
        };
        let version = client
            .query_typed_one("SELECT current_setting('server_version')", &[])
            .await
            .map_err(fail)?;
        // current_setting() resolves units the way SHOW does (128MB, 5min), unlike pg_settings.setting.
        let rows = client
            .query_typed(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1::text[])",
                &[(&SETTINGS, Type::TEXT_ARRAY)],
            )
            .await
            .map_err(fail)?;
        let mut settings = BTreeMap::new();
        for row in rows {
            let name: String = row.try_get(0).map_err(fail)?;
            let value: String = row.try_get(1).map_err(fail)?;
            settings.insert(name, value);
        }
        Ok(ServerFacts {
            label: label.to_string(),
            server_version: version.try_get(0).map_err(fail)?,
            settings,
            address: None,
            vm: None,
        })
    }
}

/// `pg_stat_database.xact_commit` and `xact_rollback` of one database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XactCounters {
    pub commit: i64,
    pub rollback: i64,
}

impl XactCounters {
    /// The summary's record of a window from `before` to `self`.
    pub fn delta_since(self, before: XactCounters, target: &str, dbname: &str) -> ServerDelta {
        ServerDelta {
            target: target.to_string(),
            dbname: dbname.to_string(),
            xact_commit_delta: self.commit - before.commit,
            xact_rollback_delta: self.rollback - before.rollback,
            client_committed: 0,
            restarted: false,
            cut_in_flight: 0,
            readings: None,
        }
    }
}

/// The database to read a target's counters from: any database but the measured one (see the
/// module header). `template1` accepts connections on every stock cluster, as does `postgres`.
pub fn stats_dbname(target_db: &str) -> &'static str {
    if target_db == "postgres" {
        "template1"
    } else {
        "postgres"
    }
}

/// When the server's statistics were last reset, as text (`pg_stat_bgwriter.stats_reset`).
/// Crash recovery resets every statistic and stamps this one (PostgreSQL 15 discards them
/// all; older versions start the statistics collector without its file), so a value that
/// changed during a run says its counters started over. `None` when never reset.
pub async fn stats_reset(client: &Client) -> Result<Option<String>, String> {
    let row = client
        .query_typed_one("SELECT stats_reset::text FROM pg_stat_bgwriter", &[])
        .await
        .map_err(|e| {
            format!(
                "cannot read when the statistics were reset: {}",
                describe_pg_error(&e)
            )
        })?;
    row.try_get(0)
        .map_err(|e| format!("cannot read pg_stat_bgwriter.stats_reset: {e}"))
}

/// How long one attempt to open a stats session again may take: a server in crash recovery
/// refuses at once; one that hangs must not hold a sampling round for long.
const REOPEN_TIMEOUT: Duration = Duration::from_secs(3);

/// A session for reading one server's statistics, opened to a database no target measures
/// (see the module header), that can be opened again after the server closed it.
pub struct StatsSession {
    target: ResolvedTarget,
    dbname: String,
    client: Client,
    reopened: u32,
}

impl StatsSession {
    /// Opens the session to `target`'s server; `all` are the run's targets. A server that
    /// refuses the other database to the target's user (pg_hba admitting it to its own
    /// database only) gets the session on the target's database, as psql would connect
    /// (issue 39): its reads then count among that database's commits.
    pub async fn open(
        target: &ResolvedTarget,
        all: &[ResolvedTarget],
    ) -> Result<StatsSession, crate::target::TargetError> {
        let (client, dbname) = target
            .connect_tokio_or_own(target.stats_dbname(all))
            .await?;
        Ok(StatsSession {
            client,
            target: target.clone(),
            dbname,
            reopened: 0,
        })
    }

    /// The database the session reads from.
    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The target the session was opened for.
    pub fn target(&self) -> &ResolvedTarget {
        &self.target
    }

    /// The label of the target the session was opened for.
    pub fn label(&self) -> &str {
        &self.target.label
    }

    /// How many times the session was opened again.
    pub fn reopened(&self) -> u32 {
        self.reopened
    }

    /// True when the server closed the session (it restarted, or dropped the connection).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Opens the session again, once, within [`REOPEN_TIMEOUT`].
    pub async fn reopen(&mut self) -> Result<(), String> {
        let label = &self.target.label;
        let client = tokio::time::timeout(
            REOPEN_TIMEOUT,
            self.target.connect_tokio_to(&self.dbname),
        )
        .await
        .map_err(|_| {
            format!("cannot reconnect to '{label}' for statistics: no answer in {REOPEN_TIMEOUT:?}")
        })?
        .map_err(|e| format!("cannot reconnect for statistics: {e}"))?;
        self.client = client;
        self.reopened += 1;
        Ok(())
    }

    /// Opens the session again if the server closed it, trying until `within` has passed (a
    /// server in crash recovery refuses connections for a while). True when it was reopened.
    pub async fn revive(&mut self, within: Duration) -> Result<bool, String> {
        if !self.is_closed() {
            return Ok(false);
        }
        let deadline = Instant::now() + within;
        loop {
            match self.reopen().await {
                Ok(()) => return Ok(true),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(SETTLE_STEP).await,
            }
        }
    }
}

/// One read of `dbname`'s counters, as published so far.
pub async fn read_xact_counters(client: &Client, dbname: &str) -> Result<XactCounters, String> {
    let fail = |e: tokio_postgres::Error| {
        format!(
            "cannot read pg_stat_database for '{dbname}': {}",
            describe_pg_error(&e)
        )
    };
    let row = client
        .query_typed_opt(
            "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = $1",
            &[(&dbname, Type::TEXT)],
        )
        .await
        .map_err(fail)?
        .ok_or_else(|| {
            format!("database '{dbname}' is not in pg_stat_database; check the target's dbname")
        })?;
    Ok(XactCounters {
        commit: row.try_get(0).map_err(fail)?,
        rollback: row.try_get(1).map_err(fail)?,
    })
}

/// One read of `dbname`'s counters and of the sessions the server has opened on it
/// (`pg_stat_database.sessions`, PostgreSQL 14 and later), in one statement so both come from
/// the same published state: a backend publishes its session and its startup commit together.
pub async fn read_counters_and_sessions(
    client: &Client,
    dbname: &str,
) -> Result<(XactCounters, i64), String> {
    let fail = |e: tokio_postgres::Error| {
        format!(
            "cannot read pg_stat_database.sessions for '{dbname}': {}",
            describe_pg_error(&e)
        )
    };
    let row = client
        .query_typed_opt(
            "SELECT xact_commit, xact_rollback, sessions FROM pg_stat_database WHERE datname = $1",
            &[(&dbname, Type::TEXT)],
        )
        .await
        .map_err(fail)?
        .ok_or_else(|| format!("database '{dbname}' is not in pg_stat_database"))?;
    let counters = XactCounters {
        commit: row.try_get(0).map_err(fail)?,
        rollback: row.try_get(1).map_err(fail)?,
    };
    Ok((counters, row.try_get(2).map_err(fail)?))
}

/// The server's version as a number (`server_version_num`, 150004 for 15.4).
pub async fn version_num(client: &Client) -> Result<i32, String> {
    let row = client
        .query_typed_one("SELECT current_setting('server_version_num')::int", &[])
        .await
        .map_err(|e| {
            format!(
                "cannot read the server's version: {}",
                describe_pg_error(&e)
            )
        })?;
    row.try_get(0)
        .map_err(|e| format!("cannot read the server's version: {e}"))
}

/// Pause between two reads of [`settled_xact_counters`] on PostgreSQL 14 and older, whose
/// statistics collector rewrites the file backends read at most every 500 ms
/// (`PGSTAT_STAT_INTERVAL`) and lets a reader take one that old: two reads [`SETTLE_STEP`]
/// apart can see the same stale file and agree before the last sessions' counters arrive
/// (found by `make test-versions` on a busy machine: 12 of 111 commits missing).
pub const SETTLE_STEP_COLLECTOR: Duration = Duration::from_millis(1_100);

/// Reads until two consecutive reads [`SETTLE_STEP`] apart agree (more apart on a server with
/// the old statistics collector, [`SETTLE_STEP_COLLECTOR`]), i.e. until every backend that
/// worked on `dbname` has published its counters. Fails if they still move after `timeout`:
/// another client is using the database, so the server's delta cannot be exact.
pub async fn settled_xact_counters(
    client: &Client,
    dbname: &str,
    timeout: Duration,
) -> Result<XactCounters, String> {
    let deadline = Instant::now() + timeout;
    // Shared-memory statistics came with 15; before, a file written by the collector.
    let step = match version_num(client).await {
        Ok(v) if v < 150_000 => SETTLE_STEP_COLLECTOR,
        _ => SETTLE_STEP,
    };
    let mut last = read_xact_counters(client, dbname).await?;
    loop {
        tokio::time::sleep(step).await;
        let now = read_xact_counters(client, dbname).await?;
        if now == last {
            return Ok(now);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the transaction counters of '{dbname}' still change after {timeout:?} \
                 (commits {} -> {}); another client is using this database, so the server's \
                 count cannot be compared exactly",
                last.commit, now.commit
            ));
        }
        last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stats_from_another_database() {
        assert_eq!(stats_dbname("tidebench"), "postgres");
        assert_eq!(stats_dbname("postgres"), "template1");
    }

    #[test]
    fn deltas_subtract() {
        let before = XactCounters {
            commit: 10,
            rollback: 2,
        };
        let after = XactCounters {
            commit: 110,
            rollback: 3,
        };
        let d = after.delta_since(before, "instance:a/db", "db");
        assert_eq!((d.xact_commit_delta, d.xact_rollback_delta), (100, 1));
    }
}
