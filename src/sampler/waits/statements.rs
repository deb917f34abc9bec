//! `pg_stat_statements` over the measured window (issue 41): read on the wait sampler's
//! session (a database no target measures) where the server has the module loaded, once when
//! the measured window starts and once when it ends; the deltas per database and statement
//! go to `summary.json`'s `waits.statements`.
//!
//! Managed instances load the module (`instance::record`) and get the extension created in
//! the sampler's database; an external server is read only where its owner installed it.

use std::collections::HashMap;

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::results::waits::{DbStatements, StatementDelta};

/// Per database and statement (`queryid`), summed over users and top-level or not.
const SNAPSHOT_SQL: &str = "SELECT d.datname::text, s.queryid, min(s.query), \
sum(s.calls)::int8, sum(s.total_exec_time)::float8, sum(s.rows)::int8, \
sum(s.shared_blks_hit)::int8, sum(s.shared_blks_read)::int8, \
sum(s.shared_blks_dirtied)::int8, sum(s.wal_bytes)::float8 \
FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid \
WHERE d.datname = ANY($1::text[]) GROUP BY d.datname, s.queryid";

/// Statements kept per database (by total time).
pub const TOP: usize = 10;

/// One statement's cumulative counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub query: String,
    pub calls: i64,
    pub total_ms: f64,
    pub rows: i64,
    pub blks_hit: i64,
    pub blks_read: i64,
    pub blks_dirtied: i64,
    pub wal_bytes: f64,
}

/// (database, queryid) → counters.
pub type Snapshot = HashMap<(String, i64), Counters>;

/// Makes `pg_stat_statements` readable on `client`'s database: creates the extension when
/// `create` (a managed instance) and the module is loaded; `Err` says why it is not readable.
pub async fn enable(client: &Client, create: bool) -> Result<(), String> {
    let loaded: bool = client
        .query_typed_one(
            "SELECT current_setting('shared_preload_libraries') ~ '(^|[ ,])pg_stat_statements($|[ ,])'",
            &[],
        )
        .await
        .and_then(|r| r.try_get(0))
        .map_err(|e| e.to_string())?;
    if !loaded {
        return Err("pg_stat_statements is not in shared_preload_libraries".into());
    }
    if create {
        client
            .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .await
            .map_err(|e| crate::target::describe_pg_error(&e))?;
    }
    Ok(())
}

/// The counters of `dbnames`' statements now.
pub async fn snapshot(client: &Client, dbnames: &[String]) -> Result<Snapshot, String> {
    let rows = client
        .query_typed(SNAPSHOT_SQL, &[(&dbnames, Type::TEXT_ARRAY)])
        .await
        .map_err(|e| crate::target::describe_pg_error(&e))?;
    let mut out = Snapshot::new();
    for r in rows {
        let get = || -> Result<((String, i64), Counters), tokio_postgres::Error> {
            let key = (r.try_get(0)?, r.try_get::<_, Option<i64>>(1)?.unwrap_or(0));
            Ok((
                key,
                Counters {
                    query: r.try_get::<_, Option<String>>(2)?.unwrap_or_default(),
                    calls: r.try_get::<_, Option<i64>>(3)?.unwrap_or(0),
                    total_ms: r.try_get::<_, Option<f64>>(4)?.unwrap_or(0.0),
                    rows: r.try_get::<_, Option<i64>>(5)?.unwrap_or(0),
                    blks_hit: r.try_get::<_, Option<i64>>(6)?.unwrap_or(0),
                    blks_read: r.try_get::<_, Option<i64>>(7)?.unwrap_or(0),
                    blks_dirtied: r.try_get::<_, Option<i64>>(8)?.unwrap_or(0),
                    wal_bytes: r.try_get::<_, Option<f64>>(9)?.unwrap_or(0.0),
                },
            ))
        };
        let (key, c) = get().map_err(|e| e.to_string())?;
        out.insert(key, c);
    }
    Ok(out)
}

/// Per database, the statements that ran between `before` and `after`, the most total time
/// first, at most [`TOP`] each. A statement missing from `before` started from zero (first
/// run, or evicted and back: then its delta is an upper bound).
pub fn deltas(before: &Snapshot, after: &Snapshot) -> Vec<DbStatements> {
    let mut per_db: HashMap<&str, Vec<StatementDelta>> = HashMap::new();
    for ((db, id), a) in after {
        let b = before.get(&(db.clone(), *id)).cloned().unwrap_or_default();
        let calls = a.calls - b.calls;
        if calls <= 0 {
            continue;
        }
        let total_ms = round3(a.total_ms - b.total_ms);
        per_db.entry(db).or_default().push(StatementDelta {
            query: a.query.clone(),
            calls,
            total_ms,
            mean_ms: round3(total_ms / calls as f64),
            rows: a.rows - b.rows,
            shared_blks_hit: a.blks_hit - b.blks_hit,
            shared_blks_read: a.blks_read - b.blks_read,
            shared_blks_dirtied: a.blks_dirtied - b.blks_dirtied,
            wal_bytes: (a.wal_bytes - b.wal_bytes).max(0.0) as u64,
        });
    }
    let mut out: Vec<DbStatements> = per_db
        .into_iter()
        .map(|(db, mut all)| {
            all.sort_by(|x, y| y.total_ms.total_cmp(&x.total_ms));
            let statements = all.len();
            all.truncate(TOP);
            DbStatements {
                database: db.to_string(),
                statements,
                top: all,
            }
        })
        .collect();
    out.sort_by(|a, b| a.database.cmp(&b.database));
    out
}

fn round3(v: f64) -> f64 {
    (v * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(query: &str, calls: i64, total_ms: f64) -> Counters {
        Counters {
            query: query.into(),
            calls,
            total_ms,
            ..Counters::default()
        }
    }

    #[test]
    fn deltas_per_database_most_time_first() {
        let mut before = Snapshot::new();
        before.insert(("db".into(), 1), c("UPDATE a", 10, 5.0));
        before.insert(("db".into(), 2), c("SELECT b", 100, 1.0));
        let mut after = before.clone();
        after.insert(("db".into(), 1), c("UPDATE a", 30, 25.0));
        after.insert(("db".into(), 3), c("INSERT c", 4, 2.0));
        let d = deltas(&before, &after);
        assert_eq!(d.len(), 1);
        // The SELECT did not run in between: left out.
        assert_eq!(d[0].statements, 2);
        assert_eq!(d[0].top[0].query, "UPDATE a");
        assert_eq!((d[0].top[0].calls, d[0].top[0].total_ms), (20, 20.0));
        assert_eq!(d[0].top[0].mean_ms, 1.0);
        assert_eq!(d[0].top[1].calls, 4);
    }
}
