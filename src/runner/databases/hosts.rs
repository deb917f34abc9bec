//! The server check on every host of a target over a primary and its standbys (issue 54).
//! Each server of `instance:a,b` gets its own statistics session and its own idle reading of
//! the measured database at the start; a server not in recovery also gives its WAL position
//! just before the clients connect. After the run each host's count since the start is set
//! beside the commits the clients saw land there (the driver counts per host, as a session
//! knows which server it is on) and the sessions they opened there. A server that died in the run cannot be asked:
//! its count is the commit records in its WAL from the start position to the end of what it
//! wrote (`pg_waldump`), which holds only transactions that wrote, so it is set beside the
//! clients' commits alone, exact for a workload whose every transaction writes.

use std::time::{Duration, Instant};

use crate::driver::layout::PlannedTarget;
use crate::instance::Home;
use crate::results::{HostAgreement, HostSource};
use crate::sampler::server::{self, StatsSession, XactCounters};
use crate::target::ResolvedTarget;

use super::{reopen_and_probe, settled_after, wait_for_no_sessions, Databases, RunCounts};

/// One server of a target over a primary and its standbys.
pub(super) struct Host {
    target: usize,
    label: String,
    /// The managed instance's name.
    name: String,
    dbname: String,
    /// Its place in the target's `follow` list: the driver's index.
    k: usize,
    stats: Result<StatsSession, String>,
    idle: Result<XactCounters, String>,
    /// (timeline, LSN) at the idle reading, on a server not in recovery.
    wal_start: Option<(u32, String)>,
}

impl Databases {
    /// Opens a statistics session on every server of each target over several instances. A
    /// server that cannot be reached is noted and compared with no count.
    pub async fn watch_hosts(
        &mut self,
        planned: &[PlannedTarget],
        resolved: &[ResolvedTarget],
        home: &Home,
    ) {
        self.home = Some(home.clone());
        for (t, (p, r)) in planned.iter().zip(resolved).enumerate() {
            let names = p.spec.instances();
            if r.follow.len() < 2 || names.len() != r.follow.len() {
                continue;
            }
            for (k, (name, params)) in names.iter().zip(&r.follow).enumerate() {
                let one = ResolvedTarget {
                    params: params.clone(),
                    follow: Vec::new(),
                    ..r.clone()
                };
                let stats = StatsSession::open(&one, resolved)
                    .await
                    .map_err(|e| e.to_string());
                self.hosts.push(Host {
                    target: t,
                    label: r.label.clone(),
                    name: name.to_string(),
                    dbname: r.params.dbname.clone(),
                    k,
                    stats,
                    idle: Err("not read".into()),
                    wal_start: None,
                });
            }
        }
    }

    /// Each host's idle reading, once no session of the run is on it.
    pub(super) async fn settle_hosts(&mut self) {
        for h in 0..self.hosts.len() {
            let app_names = self.app_names_of(self.hosts[h].target);
            let host = &mut self.hosts[h];
            let Ok(stats) = &host.stats else { continue };
            let client = stats.client();
            wait_for_no_sessions(client, &host.dbname, &app_names).await;
            host.idle =
                server::settled_xact_counters(client, &host.dbname, super::SETTLE_TIMEOUT).await;
        }
    }

    /// Where the WAL of each host not in recovery is, just before the clients connect: what
    /// the run's own setup writes before then (the wait sampler's `CREATE EXTENSION` in another
    /// database) is not the clients' and must not be counted.
    pub async fn mark_wal_start(&mut self) {
        for host in &mut self.hosts {
            if let Ok(stats) = &host.stats {
                host.wal_start = wal_position(stats.client()).await;
            }
        }
    }

    fn app_names_of(&self, target: usize) -> Vec<String> {
        self.dbs
            .iter()
            .find(|d| d.targets.contains(&target))
            .map(|d| d.app_names.clone())
            .unwrap_or_default()
    }

    /// Each host's count since the start beside the clients' (see the module header), all
    /// within `budget`.
    pub async fn host_agreement(
        &mut self,
        ran: &RunCounts<'_>,
        budget: Duration,
    ) -> Vec<HostAgreement> {
        let deadline = Instant::now() + budget;
        let home = self.home.clone();
        let mut out = Vec::with_capacity(self.hosts.len());
        for h in 0..self.hosts.len() {
            let app_names = self.app_names_of(self.hosts[h].target);
            let host = &mut self.hosts[h];
            let counts = ran
                .at_end
                .get(&host.target)
                .and_then(|c| c.hosts.get(host.k))
                .copied()
                .unwrap_or_default();
            let mut a = HostAgreement {
                target: host.label.clone(),
                host: host.name.clone(),
                dbname: host.dbname.clone(),
                source: HostSource::PgStatDatabase,
                server_commits: None,
                client_committed: counts.committed as i64,
                client_sessions: counts.opened as i64,
                unknown: counts.unknown as i64,
                agrees: None,
                beside: 0,
                note: None,
            };
            let read = match &home {
                Some(home) if !runs(home, &host.name) => Err("it was down after the run".into()),
                _ => read_after(host, &app_names, deadline).await,
            };
            match read {
                Ok(n) => a.compare(n),
                Err(why) => match (&host.wal_start, &home) {
                    (Some((timeline, lsn)), Some(home)) => {
                        a.source = HostSource::Wal;
                        match wal_commits(home, &host.name, *timeline, lsn).await {
                            Ok(n) => {
                                a.compare(n);
                                let counted = format!(
                                    "{why}; counted in its WAL from {lsn} on (transactions \
                                     that wrote, in any database)"
                                );
                                // The rule that left it undecided, when one did, comes first.
                                a.note = Some(match a.note.take() {
                                    Some(rule) => format!("{rule}; {counted}"),
                                    None => counted,
                                });
                            }
                            Err(e) => a.note = Some(format!("{why}; its WAL not read: {e}")),
                        }
                    }
                    _ => a.note = Some(why),
                },
            }
            out.push(a);
        }
        out
    }
}

/// The host's commits on its database since the idle reading, read over its statistics
/// session (opened again if the server closed it); why not, when the server is down, was
/// reset, or was never read.
async fn read_after(
    host: &mut Host,
    app_names: &[String],
    deadline: Instant,
) -> Result<i64, String> {
    let idle = host.idle.clone()?;
    let stats = host.stats.as_mut().map_err(|e| e.clone())?;
    reopen_and_probe(stats, deadline).await?;
    let after = tokio::time::timeout_at(
        deadline.into(),
        settled_after(stats, &host.dbname, app_names),
    )
    .await
    .unwrap_or_else(|_| Err("its counters did not settle in time".into()))?;
    if after.commit < idle.commit {
        return Err("its statistics were reset during the run (a restart)".into());
    }
    Ok(after.commit - idle.commit)
}

/// Whether the managed instance's postmaster runs (a server killed in the run does not).
fn runs(home: &Home, name: &str) -> bool {
    crate::instance::find(home, name).is_ok_and(|i| {
        i.pid()
            .is_some_and(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
    })
}

/// (timeline, LSN) of a server not in recovery: where its WAL is now.
async fn wal_position(client: &tokio_postgres::Client) -> Option<(u32, String)> {
    let row = client
        .query_typed_one(
            "SELECT pg_current_wal_lsn()::text, pg_walfile_name(pg_current_wal_lsn()) \
             FROM (SELECT 1) s WHERE NOT pg_is_in_recovery()",
            &[],
        )
        .await
        .ok()?;
    let lsn: String = row.try_get(0).ok()?;
    let file: String = row.try_get(1).ok()?;
    // A WAL file's name begins with its timeline, eight hex digits.
    let timeline = u32::from_str_radix(file.get(..8)?, 16).ok()?;
    Some((timeline, lsn))
}

/// The commit records in a stopped instance's WAL from `lsn` on (a blocking `pg_waldump`).
async fn wal_commits(home: &Home, name: &str, timeline: u32, lsn: &str) -> Result<i64, String> {
    let (home, name, lsn) = (home.clone(), name.to_string(), lsn.to_string());
    tokio::task::spawn_blocking(move || {
        crate::instance::commits_since(&home, &name, timeline, &lsn)
    })
    .await
    .map_err(|e| e.to_string())?
    .map(|n| n as i64)
    .map_err(|e| e.to_string())
}
