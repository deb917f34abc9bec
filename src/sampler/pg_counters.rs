//! PostgreSQL's own counters over time: per target database (`pg_stat_database`: transactions,
//! block hits and reads, tuples, temp bytes, deadlocks) and per server (`pg_stat_bgwriter`
//! checkpoints and buffer writes, the WAL position in bytes).
//!
//! Each server is read over its own session to a database no target measures (see
//! `sampler::server`: a statement is a transaction and would count in the measured database's
//! `xact_commit`). One round is two statements per server, whatever the number of databases,
//! sent together: one round trip per server (on a loaded 2-core host each round trip waits
//! for a busy server's backend to be scheduled, about a millisecond). They are unnamed
//! (Parse, Bind and Execute in one message train), so they pass a connection pooler in
//! transaction mode, where a statement prepared on one server session is missing on the next
//! (issue 57); parsing them again each round costs the server microseconds.
//!
//! A server that restarts (crash recovery after an OOM kill ends every session) is read on:
//! a round that finds the session closed opens it again and reads its version anew.
//! The counters start from zero after such a restart (PostgreSQL resets its statistics).

use std::collections::BTreeMap;

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::results::system::SERVER_COUNTERS;
use crate::target::{describe_pg_error, ResolvedTarget};

use super::run::Values;
use super::server::StatsSession;

/// `pg_stat_database` columns, in the order of [`DB_SQL`]; all cumulative.
pub const DB_COLUMNS: [&str; 11] = [
    "xact_commit",
    "xact_rollback",
    "blks_hit",
    "blks_read",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "temp_bytes",
    "deadlocks",
];

const DB_SQL: &str = "SELECT datname, xact_commit, xact_rollback, blks_hit, blks_read, \
tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted, temp_bytes, deadlocks \
FROM pg_stat_database WHERE datname = ANY($1::text[])";

/// The WAL position of a primary, or the replayed one of a standby (where
/// `pg_current_wal_lsn()` is an error), as bytes since the start of WAL.
const WAL_BYTES: &str = "(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
ELSE pg_current_wal_lsn() END - '0/0'::pg_lsn)::float8";

/// A primary's replication lag to its standbys (issue 54): the largest of their replay
/// positions behind its own, in bytes, and of their `replay_lag`, in seconds; NULL on a
/// server without standbys (and on a standby, where `pg_current_wal_lsn()` is an error).
const REPLICATION_LAG: &str =
    ", (SELECT max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn))::float8 \
FROM pg_stat_replication WHERE NOT pg_is_in_recovery()), \
(SELECT extract(epoch FROM max(replay_lag))::float8 FROM pg_stat_replication)";

/// The gauges read after [`SERVER_COUNTERS`], in [`REPLICATION_LAG`]'s order.
pub const REPLICATION_GAUGES: [&str; 2] = ["replication_lag_bytes", "replication_lag_s"];

/// PostgreSQL up to 16: checkpoint counters are in `pg_stat_bgwriter`. Columns in
/// [`SERVER_COUNTERS`] order.
const SERVER_SQL: &str = "SELECT checkpoints_timed::float8, checkpoints_req::float8, \
buffers_checkpoint::float8, buffers_clean::float8, buffers_backend::float8, \
buffers_alloc::float8, ";

/// PostgreSQL 17 moved them to `pg_stat_checkpointer` and dropped `buffers_backend`.
const SERVER_SQL_17: &str = "SELECT c.num_timed::float8, c.num_requested::float8, \
c.buffers_written::float8, b.buffers_clean::float8, NULL::float8, b.buffers_alloc::float8, ";

/// One server: its stats session and the databases (with their `db:` sources) on it.
pub struct ServerProbe {
    pub source: String,
    session: StatsSession,
    /// The server's statement, for its version.
    server_sql: String,
    /// The session was opened again: read the server's version anew.
    stale: bool,
    dbnames: Vec<String>,
    /// dbname → `db:<label>` sources (several targets may share a database).
    sources: BTreeMap<String, Vec<String>>,
    /// Last (blks_hit, blks_read) per dbname, for the hit ratio over the round.
    last_blocks: BTreeMap<String, (f64, f64)>,
}

/// Opens one stats session per server of `targets`. A server whose session cannot be opened
/// is a setup error: the user asked for sampling.
pub async fn open(targets: &[ResolvedTarget]) -> Result<Vec<ServerProbe>, String> {
    let mut keys: Vec<(String, u16)> = Vec::new();
    let mut probes: Vec<ServerProbe> = Vec::new();
    for t in targets {
        let k = t.server_key();
        let index = match keys.iter().position(|x| *x == k) {
            Some(i) => i,
            None => {
                let session = StatsSession::open(t, targets)
                    .await
                    .map_err(|e| format!("sampler: {e}"))?;
                let server_sql = server_sql(session.client(), &t.label)
                    .await
                    .map_err(|e| format!("sampler: {e}"))?;
                keys.push(k);
                probes.push(ServerProbe {
                    source: format!("server:{}", t.label),
                    session,
                    server_sql,
                    stale: false,
                    dbnames: Vec::new(),
                    sources: BTreeMap::new(),
                    last_blocks: BTreeMap::new(),
                });
                probes.len() - 1
            }
        };
        let p = &mut probes[index];
        if !p.dbnames.contains(&t.params.dbname) {
            p.dbnames.push(t.params.dbname.clone());
        }
        let sources = p.sources.entry(t.params.dbname.clone()).or_default();
        let source = format!("db:{}", t.label);
        if !sources.contains(&source) {
            sources.push(source);
        }
    }
    Ok(probes)
}

/// The server statement of a round on a stats session to the server of target `label`.
async fn server_sql(client: &Client, label: &str) -> Result<String, String> {
    // Unnamed, as every statement here (see the module header).
    let version: i32 = client
        .query_typed_one("SELECT current_setting('server_version_num')::int", &[])
        .await
        .and_then(|r| r.try_get(0))
        .map_err(|e| {
            format!(
                "cannot read the version of '{label}': {}",
                describe_pg_error(&e)
            )
        })?;
    let (head, from) = if version >= 170_000 {
        (
            SERVER_SQL_17,
            "FROM pg_stat_checkpointer c, pg_stat_bgwriter b",
        )
    } else {
        (SERVER_SQL, "FROM pg_stat_bgwriter")
    };
    Ok(format!("{head}{WAL_BYTES}{REPLICATION_LAG} {from}"))
}

impl ServerProbe {
    /// How many times the stats session was opened again (after the server restarted).
    pub fn reconnects(&self) -> u32 {
        self.session.reopened()
    }

    /// Opens the stats session again if the server closed it, and reads the server's version
    /// anew; the hit ratio starts over (the server's counters did).
    async fn revive(&mut self) -> Result<(), String> {
        if self.session.is_closed() {
            self.session
                .reopen()
                .await
                .map_err(|e| format!("cannot read counters of {}: {e}", self.source))?;
            self.stale = true;
            self.last_blocks.clear();
        }
        if self.stale {
            self.server_sql = server_sql(self.session.client(), self.session.label())
                .await
                .map_err(|e| format!("cannot read counters of {}: {e}", self.source))?;
            self.stale = false;
        }
        Ok(())
    }

    /// Appends this round's `db:` and `server:` rows. A failed read is returned as a message
    /// (the caller warns once) and yields no rows; the run goes on, and a later round
    /// reconnects.
    pub async fn sample(&mut self, out: &mut Values) -> Result<(), String> {
        self.revive().await?;
        let fail = |e: tokio_postgres::Error| {
            format!(
                "cannot read counters of {}: {}",
                self.source,
                describe_pg_error(&e)
            )
        };
        // Both statements are in flight at once: tokio-postgres pipelines them on the session.
        let dbnames: [(&(dyn tokio_postgres::types::ToSql + Sync), Type); 1] =
            [(&self.dbnames, Type::TEXT_ARRAY)];
        let client = self.session.client();
        let (rows, server_row) = tokio::join!(
            client.query_typed(DB_SQL, &dbnames),
            client.query_typed_one(&self.server_sql, &[])
        );
        let rows = rows.map_err(fail)?;
        for row in rows {
            let dbname: String = row.try_get(0).map_err(fail)?;
            let mut values = [0.0; DB_COLUMNS.len()];
            for (i, v) in values.iter_mut().enumerate() {
                *v = row
                    .try_get::<_, Option<i64>>(i + 1)
                    .map_err(fail)?
                    .unwrap_or(0) as f64;
            }
            let ratio = hit_ratio(self.last_blocks.get(&dbname).copied(), values[2], values[3]);
            self.last_blocks
                .insert(dbname.clone(), (values[2], values[3]));
            for source in self.sources.get(&dbname).into_iter().flatten() {
                for (metric, v) in DB_COLUMNS.iter().zip(values) {
                    out.push(source, metric, v);
                }
                if let Some(r) = ratio {
                    out.push(source, "hit_ratio", r);
                }
            }
        }
        let row = server_row.map_err(fail)?;
        let metrics = SERVER_COUNTERS.iter().chain(REPLICATION_GAUGES.iter());
        for (i, metric) in metrics.enumerate() {
            if let Ok(Some(v)) = row.try_get::<_, Option<f64>>(i) {
                out.push(&self.source, metric, v);
            }
        }
        Ok(())
    }
}

/// Blocks hit over blocks accessed since the last round; `None` without a previous round or
/// without block accesses in between.
pub fn hit_ratio(last: Option<(f64, f64)>, hit: f64, read: f64) -> Option<f64> {
    let (h0, r0) = last?;
    let (dh, dr) = (hit - h0, read - r0);
    (dh + dr > 0.0).then(|| dh / (dh + dr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_ratio_is_over_the_round() {
        assert_eq!(hit_ratio(None, 100.0, 10.0), None);
        assert_eq!(hit_ratio(Some((100.0, 10.0)), 190.0, 20.0), Some(0.9));
        assert_eq!(hit_ratio(Some((100.0, 10.0)), 100.0, 10.0), None);
    }

    #[test]
    fn server_query_fits_each_version() {
        assert!(SERVER_SQL.matches("::float8").count() == 6);
        assert!(SERVER_SQL_17.contains("NULL::float8"));
        assert_eq!(DB_SQL.matches(", ").count(), DB_COLUMNS.len());
    }
}
