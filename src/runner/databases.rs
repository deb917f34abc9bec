//! The databases a run touches, and the servers behind them: readiness checks, server facts,
//! and the `pg_stat_database` baseline and deltas that let anyone check the client's count
//! against the server's. Counters are read over one session per server, opened to another
//! database than any measured one so its own transactions never count. A server that
//! restarted during the run (crash recovery after an OOM kill ends that session and resets the
//! counters) is read again over a new session; when its statistics were reset on the way
//! (`pg_stat_bgwriter.stats_reset` moved), its delta holds the counts since the reset and is
//! marked `restarted`, not compared.
//!
//! Behind a connection pooler that shares server sessions (issue 57) the pooler opens server
//! sessions as it likes (one commit each) and keeps them past the run (a backend may publish
//! its counters up to 10 s after its last transaction). There the pooler's server sessions on
//! the database are closed through its admin console before each read, and the sessions the
//! server opened meanwhile (`pg_stat_database.sessions`) are counted instead of the clients':
//! two commits each, its startup and the `SET application_name` pgbouncer sends it on first
//! use. That SET comes again whenever a server session passes between clients of different
//! names, so a database whose sessions carry several names is not compared. Where the count
//! cannot be compared, the run says why.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio_postgres::types::Type;

use crate::config::OptionValues;
use crate::driver::session::EndCounts;
use crate::event::{Event, Sink};
use crate::metrics::{KeySpace, Recorder};
use crate::results::{ServerDelta, ServerFacts, ServerReadings};
use crate::sampler::pooler::PoolerConsole;
use crate::sampler::server::{self, StatsSession, XactCounters};
use crate::target::ResolvedTarget;
use crate::workload::{Kind, Loaded};

use super::RunError;

mod hosts;
mod pooled;
use pooled::pooled_read;

/// How long to wait for the servers' statistics to settle before and after the run.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long after the run a server that closed the statistics session may take to accept
/// one again (crash recovery of a small test server takes about a second); a server still
/// down after that is reported and left out, so a dead target never holds the run's end.
const REVIVE_AFTER_RUN: Duration = Duration::from_secs(3);

struct Db {
    label: String,
    dbname: String,
    server: usize,
    targets: Vec<usize>,
    /// The readiness checks passed here: (workload, its options) and the scale found.
    checked: Vec<(String, OptionValues, Loaded)>,
    idle: XactCounters,
    /// The `application_name`s its targets' connection strings give (besides tidebench's
    /// own `tidebench/GROUP/SET`), to know the run's sessions in `pg_stat_activity`.
    app_names: Vec<String>,
    /// Reached through a connection pooler that shares server sessions (issue 57; see
    /// [`Databases::mark_pooled`]).
    pooled: bool,
    /// Behind a pooler in session mode: each client session still costs one commit (the
    /// pooler's `DISCARD ALL` when it leaves), as a session's startup does on a server.
    by_session: bool,
    /// Behind a pooler: the server's `sessions` on the database at the idle reading.
    sessions_before: i64,
    /// Behind a pooler: why its count cannot be compared.
    not_compared: Option<String>,
    /// How many `application_name`s its sessions carry: one per target where tidebench names
    /// them (`tidebench/GROUP/SET`), the connection strings' otherwise.
    names: Vec<String>,
}

struct Server {
    label: String,
    stats: StatsSession,
    /// When the server's statistics were last reset, read before the run (`Err`: unreadable).
    reset_before: Result<Option<String>, String>,
    /// Reached through a pooler that shares server sessions: its admin console, or why it
    /// cannot close them.
    console: Option<Result<PoolerConsole, String>>,
}

/// A server as a profile looks for it (see [`Databases::server_processes`]).
pub struct ServerProcess {
    pub target: ResolvedTarget,
    pub backend_pid: Option<u32>,
    pub data_directory: Option<String>,
}

pub struct Databases {
    dbs: Vec<Db>,
    servers: Vec<Server>,
    /// Every server of each target over a primary and its standbys (see [`hosts`]).
    hosts: Vec<hosts::Host>,
    home: Option<crate::instance::Home>,
}

impl Databases {
    /// Groups targets by database and opens one statistics session per server.
    pub async fn open(targets: &[ResolvedTarget]) -> Result<Databases, RunError> {
        let mut dbs: Vec<Db> = Vec::new();
        let mut server_keys: Vec<(String, u16)> = Vec::new();
        let mut servers: Vec<Server> = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            let key = t.server_key();
            let server = match server_keys.iter().position(|k| *k == key) {
                Some(s) => s,
                None => {
                    let stats = StatsSession::open(t, targets).await?;
                    server_keys.push(key);
                    servers.push(Server {
                        label: t.label.clone(),
                        stats,
                        reset_before: Err("not read yet".into()),
                        console: None,
                    });
                    servers.len() - 1
                }
            };
            let app_name = t.params.application_name.clone();
            let name = if app_name == crate::config::target::APPLICATION_NAME {
                format!("{app_name}/{i}")
            } else {
                app_name.clone()
            };
            match dbs
                .iter_mut()
                .find(|d| d.server == server && d.dbname == t.params.dbname)
            {
                Some(d) => {
                    d.targets.push(i);
                    if !d.names.contains(&name) {
                        d.names.push(name);
                    }
                    if !d.app_names.contains(&app_name) {
                        d.app_names.push(app_name);
                    }
                }
                None => dbs.push(Db {
                    label: t.label.clone(),
                    dbname: t.params.dbname.clone(),
                    server,
                    targets: vec![i],
                    checked: Vec::new(),
                    idle: XactCounters::default(),
                    app_names: vec![app_name],
                    pooled: false,
                    by_session: false,
                    sessions_before: 0,
                    not_compared: None,
                    names: vec![name],
                }),
            }
        }
        Ok(Databases {
            dbs,
            servers,
            hosts: Vec::new(),
            home: None,
        })
    }

    fn db_of(&self, target: usize) -> usize {
        self.dbs
            .iter()
            .position(|d| d.targets.contains(&target))
            .unwrap_or(0)
    }

    /// Checks the workload's data on target `t`'s database, once per database and
    /// (workload, options) pair (options may ask for more, e.g. TPC-C's functions); returns
    /// its scale.
    pub async fn check_ready(
        &mut self,
        t: usize,
        target: &ResolvedTarget,
        kind: &dyn Kind,
        options: &OptionValues,
    ) -> Result<Loaded, RunError> {
        let d = self.db_of(t);
        let done = self.dbs[d]
            .checked
            .iter()
            .find(|(name, o, _)| name == kind.name() && o == options);
        if let Some((_, _, ready)) = done {
            return Ok(ready.clone());
        }
        let control = target.connect_tokio().await?;
        let ready = kind
            .check_ready(options, &control)
            .await
            .map_err(|source| {
                let target = target.label.clone();
                if source.is_not_prepared() {
                    RunError::NotPrepared { target, source }
                } else {
                    RunError::Check { target, source }
                }
            })?;
        self.dbs[d]
            .checked
            .push((kind.name().to_string(), options.clone(), ready.clone()));
        Ok(ready)
    }

    /// (label, database) of each server whose statistics session was refused every database
    /// but a measured one (issue 39; behind a pooler, issue 57).
    pub fn stats_on_measured(&self) -> Vec<(String, String)> {
        self.servers
            .iter()
            .enumerate()
            .filter(|(s, server)| {
                self.dbs
                    .iter()
                    .any(|d| d.server == *s && d.dbname == server.stats.dbname())
            })
            .map(|(_, server)| (server.label.clone(), server.stats.dbname().to_string()))
            .collect()
    }

    /// Each server's label and statistics session (a session to another database than the
    /// measured ones: what it runs never counts).
    pub fn stats_sessions(&self) -> impl Iterator<Item = (&str, &tokio_postgres::Client)> {
        self.servers
            .iter()
            .map(|s| (s.label.as_str(), s.stats.client()))
    }

    /// Version and key settings of each server.
    pub async fn server_facts(&self) -> Result<Vec<ServerFacts>, RunError> {
        let mut out = Vec::with_capacity(self.servers.len());
        for s in &self.servers {
            let mut facts = ServerFacts::collect(s.stats.client(), &s.label)
                .await
                .map_err(|message| RunError::Server {
                    target: s.label.clone(),
                    message,
                })?;
            let (host, port) = s.stats.target().server_key();
            facts.address = Some(format!("{host}:{port}"));
            out.push(facts);
        }
        Ok(out)
    }

    /// Each server's target, the pid of the backend serving the statistics session (its
    /// parent is the postmaster, when the server is on this host) and its data directory
    /// when the role may read it: what a profile needs to find a server's processes.
    pub async fn server_processes(&self) -> Vec<ServerProcess> {
        let mut out = Vec::with_capacity(self.servers.len());
        for s in &self.servers {
            let client = s.stats.client();
            let backend_pid = match client.query_typed_one("SELECT pg_backend_pid()", &[]).await {
                Ok(row) => row
                    .try_get::<_, i32>(0)
                    .ok()
                    .and_then(|p| u32::try_from(p).ok()),
                Err(_) => None,
            };
            // Readable by superusers and pg_read_all_settings only: an error is "unknown".
            let data_directory = match client
                .query_typed_one("SELECT current_setting('data_directory')", &[])
                .await
            {
                Ok(row) => row.try_get::<_, String>(0).ok(),
                Err(_) => None,
            };
            out.push(ServerProcess {
                target: s.stats.target().clone(),
                backend_pid,
                data_directory,
            });
        }
        out
    }

    /// Waits until no tidebench session is on any database, then reads settled counters (and
    /// when each server's statistics were last reset).
    pub async fn settle_idle(&mut self) -> Result<(), RunError> {
        for s in &mut self.servers {
            s.reset_before = server::stats_reset(s.stats.client()).await;
        }
        for d in 0..self.dbs.len() {
            if self.dbs[d].pooled {
                match pooled_read(&self.servers[self.dbs[d].server], &self.dbs[d]).await {
                    Ok((idle, sessions)) => {
                        self.dbs[d].idle = idle;
                        self.dbs[d].sessions_before = sessions;
                    }
                    Err(why) => self.dbs[d].not_compared = Some(why),
                }
                continue;
            }
            let stats = self.servers[self.dbs[d].server].stats.client();
            wait_for_no_sessions(stats, &self.dbs[d].dbname, &self.dbs[d].app_names).await;
            self.dbs[d].idle =
                server::settled_xact_counters(stats, &self.dbs[d].dbname, SETTLE_TIMEOUT)
                    .await
                    .map_err(|message| RunError::Server {
                        target: self.dbs[d].label.clone(),
                        message,
                    })?;
        }
        self.settle_hosts().await;
        Ok(())
    }

    /// The counters the run's window starts from: the idle reading plus one commit for each
    /// client session opened since (a new session is one transaction at the server). Counting
    /// them instead of waiting for them matters: PostgreSQL 15 may defer a session's first
    /// statistics flush by up to 10 s, which right after a `prepare` held every run's start.
    /// The sessions' commits are all in the final reading, as a backend flushes when it exits.
    /// Behind a pooler in transaction mode a client's session opens no server session: none
    /// are added there (in session mode the pooler's reset on leaving takes the startup's place).
    pub fn baseline(&self, sessions: &[u32]) -> Vec<Baseline> {
        self.dbs
            .iter()
            .map(|d| {
                let opened: i64 = (d.targets.iter())
                    .filter(|_| !d.pooled || d.by_session)
                    .map(|t| i64::from(sessions.get(*t).copied().unwrap_or(0)))
                    .sum();
                Baseline {
                    counters: XactCounters {
                        commit: d.idle.commit + opened,
                        rollback: d.idle.rollback,
                    },
                    sessions: opened,
                }
            })
            .collect()
    }

    /// After the clients closed their sessions: each database's deltas since `before`, beside
    /// what tidebench committed there (and cut in flight at the end, per target in `cut`).
    /// A server that closed the statistics session during the run is read over a new
    /// session; if its statistics were reset meanwhile (crash recovery), its deltas are the
    /// counts since the reset, marked `restarted`. Everything here ends within `budget`, and a
    /// server that does not answer a first query within [`PROBE_WITHIN`] is not waited for:
    /// a stopped or hung server must not hold the run's end. A database whose counters cannot
    /// be read in time is left out, with a warning to `events`.
    pub async fn deltas(
        &mut self,
        before: &[Baseline],
        ran: &RunCounts<'_>,
        budget: Duration,
        events: &dyn Sink,
    ) -> Vec<ServerDelta> {
        let deadline = Instant::now() + budget;
        let (restarted, down) = self.probe_servers(deadline).await;
        // The servers are read at once, each over its own session (its databases in turn):
        // a settled reading takes at least two reads a settle step apart, and in turn the four
        // servers of `make chaos` held its end a second.
        let dbs = &self.dbs;
        let reads = self.servers.iter_mut().enumerate().map(|(k, srv)| {
            let (restarted, down) = (restarted[k], down[k].as_deref());
            async move {
                let mut out = Vec::new();
                for (i, (d, b)) in dbs.iter().zip(before).enumerate() {
                    if d.server == k {
                        let state = (restarted, down);
                        let read = read_after(srv, d, b, state, ran, (deadline, budget)).await;
                        out.push((i, read));
                    }
                }
                out
            }
        });
        let mut read: Vec<(usize, Result<ServerDelta, String>)> =
            futures_util::future::join_all(reads)
                .await
                .into_iter()
                .flatten()
                .collect();
        read.sort_by_key(|(i, _)| *i);
        read.into_iter()
            .filter_map(|(_, r)| {
                r.map_err(|warning| events.send(Event::Warning(warning)))
                    .ok()
            })
            .collect()
    }

    /// Reopens each server's statistics session if it was lost and probes it before
    /// `deadline`. Per server: whether its statistics were reset during the run (a restart),
    /// and why it could not be read, if it could not.
    async fn probe_servers(&mut self, deadline: Instant) -> (Vec<bool>, Vec<Option<String>>) {
        let mut restarted = vec![false; self.servers.len()];
        let mut down: Vec<Option<String>> = vec![None; self.servers.len()];
        for (s, (r, gone)) in self
            .servers
            .iter_mut()
            .zip(restarted.iter_mut().zip(down.iter_mut()))
        {
            match reopen_and_probe(&mut s.stats, deadline).await {
                Ok(reopened) => {
                    let reset_after = server::stats_reset(s.stats.client()).await;
                    *r = match (&s.reset_before, &reset_after) {
                        (Ok(before), Ok(after)) => before != after,
                        // Without the reset time, a lost session is taken as a restart.
                        _ => reopened || s.stats.reopened() > 0,
                    };
                }
                Err(e) => *gone = Some(e),
            }
        }
        (restarted, down)
    }
}

/// Database `d`'s delta after the run over its server's session `srv`, or the warning that
/// says why it cannot be read: its server is down (`state`: whether it restarted during the
/// run, and why it cannot be read), or its counters do not settle by `deadline` (`budget`
/// after the run).
async fn read_after(
    srv: &mut Server,
    d: &Db,
    b: &Baseline,
    state: (bool, Option<&str>),
    ran: &RunCounts<'_>,
    (deadline, budget): (Instant, Duration),
) -> Result<ServerDelta, String> {
    let (restarted, down) = state;
    if let Some(e) = down {
        return Err(format!(
            "could not read the counters of {} after the run: {e}",
            d.label
        ));
    }
    if d.pooled {
        let read = tokio::time::timeout_at(deadline.into(), pooled_read(srv, d))
            .await
            .unwrap_or_else(|_| Err(format!("its counters did not settle within {budget:?}")));
        // Each server session the pooler opened: its startup, and the `SET application_name`
        // pgbouncer sends it on first use (it opens server sessions without the clients' name).
        return match read {
            Ok((after, sessions)) => Ok(delta_of(
                d,
                b,
                after,
                restarted,
                ran,
                2 * (sessions - d.sessions_before),
            )),
            Err(why) => Err(format!(
                "{} is reached through a connection pooler that shares server sessions: {why}, \
                 so the server's count is not compared",
                d.label
            )),
        };
    }
    let settled = tokio::time::timeout_at(
        deadline.into(),
        settled_after(&mut srv.stats, &d.dbname, &d.app_names),
    )
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "its counters did not settle within {budget:?} after the run, so the server's \
             count is not compared"
        ))
    });
    match settled {
        Ok(after) => Ok(delta_of(d, b, after, restarted, ran, 0)),
        Err(e) => Err(format!(
            "could not read the counters of {} after the run: {e}",
            d.label
        )),
    }
}

/// Database `d`'s delta from its baseline `b` to its settled counters `after`, beside what
/// tidebench committed there (`ran`). `restarted`: its server's statistics were reset.
/// `opened`: the commits of the server sessions a pooler opened on it meanwhile.
fn delta_of(
    d: &Db,
    b: &Baseline,
    after: XactCounters,
    restarted: bool,
    ran: &RunCounts<'_>,
    opened: i64,
) -> ServerDelta {
    let reset =
        restarted || after.commit < b.counters.commit || after.rollback < b.counters.rollback;
    // Counters that started over count from zero since.
    let from = if reset {
        XactCounters::default()
    } else {
        XactCounters {
            commit: b.counters.commit + opened,
            ..b.counters
        }
    };
    let mut delta = after.delta_since(from, &d.label, &d.dbname);
    // What `merge` needs to check the server over every shard of a run.
    delta.readings = Some(ServerReadings {
        idle_commit: b.counters.commit - b.sessions,
        sessions: b.sessions + opened,
        final_commit: after.commit,
    });
    let mut at_end = EndCounts::default();
    for t in &d.targets {
        if let Some(c) = ran.at_end.get(t) {
            at_end.add(c);
        }
    }
    // tidebench's commits outside the measured window count too: tries let finish after
    // the end, and the sessions opened again (one commit each; behind a pooler the server
    // sessions it opened are counted instead).
    let reopened = if d.pooled && !d.by_session {
        0
    } else {
        at_end.reopened
    };
    delta.client_committed =
        (committed_on(ran.keys, ran.total, &d.targets) + at_end.committed_after_end + reopened)
            .saturating_sub(at_end.left_open) as i64;
    delta.cut_in_flight = at_end.cut_in_flight as i64;
    delta.restarted = reset;
    delta
}

/// A database's counters at the start of the run's window: the idle reading plus one commit
/// per client session opened since (`sessions`).
#[derive(Debug, Clone, Copy)]
pub struct Baseline {
    pub counters: XactCounters,
    pub sessions: i64,
}

/// What the clients did, for the server check: the recorders' totals and what became of the
/// tries in flight at the end, per global target.
pub struct RunCounts<'a> {
    pub keys: &'a KeySpace,
    pub total: &'a Recorder,
    pub at_end: &'a BTreeMap<usize, EndCounts>,
}

/// How long a server may take to answer the first query after the run before it is taken as
/// stopped or hung and its check is skipped.
const PROBE_WITHIN: Duration = Duration::from_millis(500);

/// Opens the statistics session again if the server closed it (trying until `deadline`, at
/// most [`REVIVE_AFTER_RUN`]), then checks the server answers at all. True when reopened.
async fn reopen_and_probe(stats: &mut StatsSession, deadline: Instant) -> Result<bool, String> {
    let within = deadline
        .saturating_duration_since(Instant::now())
        .min(REVIVE_AFTER_RUN);
    let reopened = stats.revive(within).await?;
    match tokio::time::timeout(PROBE_WITHIN, stats.client().simple_query("SELECT 1")).await {
        Ok(Ok(_)) => Ok(reopened),
        Ok(Err(e)) => Err(format!("the server failed a query: {e}")),
        Err(_) => Err(format!(
            "the server did not answer within {PROBE_WITHIN:?} (stopped or hung?), so its \
             count is not compared"
        )),
    }
}

/// The settled counters of `dbname` once no tidebench session is on it; a session the server
/// closed on the way is opened again and the read retried once.
async fn settled_after(
    stats: &mut StatsSession,
    dbname: &str,
    app_names: &[String],
) -> Result<XactCounters, String> {
    wait_for_no_sessions(stats.client(), dbname, app_names).await;
    match server::settled_xact_counters(stats.client(), dbname, SETTLE_TIMEOUT).await {
        Ok(c) => Ok(c),
        Err(e) if !stats.is_closed() => Err(e),
        Err(_) => {
            stats.revive(REVIVE_AFTER_RUN).await?;
            wait_for_no_sessions(stats.client(), dbname, app_names).await;
            server::settled_xact_counters(stats.client(), dbname, SETTLE_TIMEOUT).await
        }
    }
}

/// Transactions committed on any of `targets`, over the whole run.
fn committed_on(keys: &KeySpace, total: &Recorder, targets: &[usize]) -> u64 {
    keys.sum_where(total, |p| targets.contains(&p.target))
        .committed
}

/// Waits (bounded) until no tidebench session is connected to `dbname`, so every session's
/// statistics have been flushed (PostgreSQL flushes a backend's counters when it exits).
/// The run's sessions are those named `tidebench…` and those named as its connection strings
/// ask (`app_names`).
async fn wait_for_no_sessions(stats: &tokio_postgres::Client, dbname: &str, app_names: &[String]) {
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    while Instant::now() < deadline {
        let row = stats
            .query_typed_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 \
                 AND (application_name LIKE 'tidebench%' OR application_name = ANY($2))",
                &[(&dbname, Type::TEXT), (&app_names, Type::TEXT_ARRAY)],
            )
            .await;
        match row {
            Ok(r) if r.get::<_, i64>(0) == 0 => return,
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => return,
        }
    }
}
