//! The databases of a run reached through a connection pooler that shares server sessions
//! (issue 57): readying their count (the pooler's admin console, a server that counts its
//! sessions, one `application_name` on the database) and reading it with the pooler's server
//! sessions on the database closed (see the parent module's header).

use std::time::{Duration, Instant};

use tokio_postgres::types::Type;

use crate::sampler::pooler::PoolerConsole;
use crate::sampler::server::{self, StatsSession, XactCounters};
use crate::target::{describe_pg_error, ResolvedTarget};

use super::{wait_for_no_sessions, Databases, Db, RunError, Server, SETTLE_TIMEOUT};

impl Databases {
    /// Marks the databases reached through `pooler`, a pooler that shares server sessions,
    /// and readies their count: its admin console, which must let the target's user close
    /// server sessions, and a server that counts its sessions (PostgreSQL 14 and later). With
    /// `direct` (the managed instance behind its managed pooler) the statistics session is
    /// opened on the server itself, not through the pooler. A shard of a run (`sharded`) is
    /// not compared: each driver would close the server sessions the others are using.
    /// `by_session`: a pooler in session mode, which gives each client session a server
    /// session of its own and resets it (`DISCARD ALL`, a commit) when the client leaves.
    pub async fn mark_pooled(
        &mut self,
        pooler: &ResolvedTarget,
        direct: Option<&ResolvedTarget>,
        sharded: bool,
        by_session: bool,
    ) -> Result<(), RunError> {
        let key = pooler.server_key();
        let Some(s) = (self.servers.iter()).position(|s| s.stats.target().server_key() == key)
        else {
            return Ok(());
        };
        if let Some(direct) = direct {
            // Each measured database named on the server, so the session avoids them all.
            let measured: Vec<ResolvedTarget> = (self.dbs.iter().filter(|d| d.server == s))
                .map(|d| {
                    let mut t = direct.clone();
                    t.params.dbname = d.dbname.clone();
                    t
                })
                .collect();
            self.servers[s].stats = StatsSession::open(direct, &measured).await?;
        }
        let console = self.console(s, pooler).await;
        self.servers[s].console = Some(console);
        for d in self.dbs.iter_mut().filter(|d| d.server == s) {
            d.pooled = true;
            d.by_session = by_session;
            if sharded {
                d.not_compared = Some(
                    "it is a shard of a run, and each shard's driver would close the pooler's \
                     server sessions that the others use"
                        .into(),
                );
            } else if d.names.len() > 1 {
                d.not_compared = Some(format!(
                    "its sessions carry {} application names, and the pooler sends a server \
                     session `SET application_name` (a commit) whenever it hands it to a client \
                     of another name",
                    d.names.len()
                ));
            }
        }
        Ok(())
    }

    /// The admin console of the pooler in front of server `s`, or why its count cannot be
    /// compared: the statistics session reads on a measured database, the server counts no
    /// sessions, or the console refuses the target's user.
    async fn console(&self, s: usize, pooler: &ResolvedTarget) -> Result<PoolerConsole, String> {
        let stats = &self.servers[s].stats;
        if (self.dbs.iter()).any(|d| d.server == s && d.dbname == stats.dbname()) {
            return Err(format!(
                "the statistics session reads through the pooler on the measured database \
                 '{}', where its own reads count",
                stats.dbname()
            ));
        }
        let version = server::version_num(stats.client()).await?;
        if version < 140_000 {
            return Err(format!(
                "PostgreSQL {} has no pg_stat_database.sessions to count the server sessions \
                 the pooler opens (14 and later have it)",
                version / 10_000
            ));
        }
        PoolerConsole::open(pooler).await.map_err(|e| {
            format!(
                "the pooler's admin console refused the target's user ({e}), so its server \
                 sessions cannot be closed around the reads; add the user to pgbouncer's \
                 admin_users"
            )
        })
    }
}

/// Pooled database `d`'s settled counters and the sessions its server has opened on it, read
/// once the pooler's server sessions on it are closed and their backends gone; why its count
/// cannot be compared otherwise.
pub(super) async fn pooled_read(server: &Server, d: &Db) -> Result<(XactCounters, i64), String> {
    if let Some(why) = &d.not_compared {
        return Err(why.clone());
    }
    let console = match &server.console {
        Some(Ok(console)) => console,
        Some(Err(why)) => return Err(why.clone()),
        None => return Err("no console of its pooler was opened".into()),
    };
    let closed = console
        .close_server_sessions(&d.dbname, SETTLE_TIMEOUT)
        .await?;
    let stats = server.stats.client();
    // A backend publishes its counters as it exits: wait until those the pooler closed (of
    // whatever application name) are gone, and the run's own.
    wait_for_backends_gone(stats, &closed).await?;
    wait_for_no_sessions(stats, &d.dbname, &d.app_names).await;
    server::settled_xact_counters(stats, &d.dbname, SETTLE_TIMEOUT).await?;
    server::read_counters_and_sessions(stats, &d.dbname).await
}

/// Waits, at most [`SETTLE_TIMEOUT`], until none of the backends `pids` is in
/// `pg_stat_activity`.
async fn wait_for_backends_gone(
    stats: &tokio_postgres::Client,
    pids: &[i32],
) -> Result<(), String> {
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    loop {
        let row = stats
            .query_typed_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)",
                &[(&pids, Type::INT4_ARRAY)],
            )
            .await
            .map_err(|e| format!("cannot read pg_stat_activity: {}", describe_pg_error(&e)))?;
        let left: i64 = row
            .try_get(0)
            .map_err(|e| format!("cannot read pg_stat_activity: {e}"))?;
        if left == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{left} backend(s) of the pooler's closed server sessions still run \
                 {SETTLE_TIMEOUT:?} after they were closed"
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
