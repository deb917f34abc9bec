//! Wait sampling (issue 41): `--sample-waits N` times a second, on the main tokio runtime
//! (never on a driver thread), one statement per server reads `pg_stat_activity` and, for the
//! sessions waiting on a lock, `pg_blocking_pids`. The run's sessions are known by their
//! `application_name` (see `classify`); each is counted under the timeline's segment the
//! round fell in, its group and set, and its class (`results::waits`).
//!
//! The sampler's session is its own: opened like the counters' (`server::StatsSession`, on a
//! database no target measures, named `tidebench-control`, which is no group's), left out of
//! what it reads by its pid. A server where that session could only reach a measured database
//! (issue 39) is not sampled: its reads would count in that database's commits, so in the
//! server agreement.

mod classify;
pub mod statements;
pub mod types;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_postgres::Row;

pub use classify::{classify, parse_app_name, Owners};

use crate::config::timeline::Segment;
use crate::results::waits::{LockKey, TypeKey, WaitKey, WaitRecord};
use crate::target::{describe_pg_error, ResolvedTarget};

use super::server::StatsSession;

/// One round's read: every backend but the reader, and the blockers of those waiting on a
/// lock (`pg_blocking_pids` takes the lock manager's locks, so it is asked only for those).
const ACTIVITY_SQL: &str = "SELECT pid, datname::text, application_name, state, \
wait_event_type, wait_event, backend_type::text, \
CASE WHEN wait_event_type = 'Lock' THEN pg_blocking_pids(pid) END, query \
FROM pg_stat_activity WHERE pid <> pg_backend_pid()";

/// How long one server's read may take: a hung server must not hold the rounds.
const READ_WITHIN: Duration = Duration::from_millis(500);
/// Least time between two attempts to reopen a closed session.
const REOPEN_EVERY: Duration = Duration::from_secs(1);
/// Most rounds a second (each is one statement per server): config's bound on
/// `--sample-waits`, kept there so validation needs no import of the sampler.
pub use crate::config::MAX_SAMPLE_WAITS as MAX_PER_SECOND;

struct Probe {
    session: StatsSession,
    failed_rounds: u64,
    first_error: Option<String>,
    last_reopen: Option<Instant>,
    /// `pg_stat_statements` where readable: the server's measured databases and the
    /// snapshots at the measured window's edges.
    statements: Option<Statements>,
}

struct Statements {
    dbnames: Vec<String>,
    before: Option<statements::Snapshot>,
    after: Option<statements::Snapshot>,
}

/// The wait sampler, its sessions open, ready to start on the run's clock.
pub struct WaitSampler {
    every: Duration,
    per_second: u32,
    probes: Vec<Probe>,
    owners: Owners,
    segments: Vec<(Duration, Duration)>,
    /// The measured window, as offsets from the run's start.
    measured: (Duration, Duration),
    warnings: Vec<String>,
    live: LiveWaits,
}

/// Samples so far per (group, class), ramps included, for the Prometheus endpoint: replaced
/// after each round (a lock taken 10 times a second by the sampler and per scrape, never by
/// a client).
#[derive(Debug, Clone, Default)]
pub struct LiveWaits(Arc<Mutex<BTreeMap<(String, String), u64>>>);

impl LiveWaits {
    pub fn get(&self) -> BTreeMap<(String, String), u64> {
        match self.0.lock() {
            Ok(v) => v.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set_from(&self, record: &WaitRecord) {
        let mut sums: BTreeMap<(String, String), u64> = BTreeMap::new();
        for (k, n) in &record.waits {
            *sums.entry((k.group.clone(), k.class.clone())).or_default() += n;
        }
        match self.0.lock() {
            Ok(mut g) => *g = sums,
            Err(poisoned) => *poisoned.into_inner() = sums,
        }
    }
}

/// What wait sampling counted, and what it could not read.
#[derive(Debug, Clone, Default)]
pub struct WaitsReport {
    pub record: WaitRecord,
    pub warnings: Vec<String>,
}

impl WaitSampler {
    /// Opens one session per server of `targets`. A server that cannot be sampled is a
    /// warning in the report (the run goes on without its waits), not an error.
    pub async fn open(
        per_second: u32,
        targets: &[ResolvedTarget],
        owners: Owners,
        segments: &[Segment],
    ) -> WaitSampler {
        let mut probes: Vec<Probe> = Vec::new();
        let mut keys: Vec<(String, u16)> = Vec::new();
        let mut warnings = Vec::new();
        for t in targets {
            let key = t.server_key();
            if keys.contains(&key) {
                continue;
            }
            keys.push(key);
            match open_probe(t, targets).await {
                Ok(p) => probes.push(p),
                Err(e) => warnings.push(format!("wait sampling skips '{}': {e}", t.label)),
            }
        }
        let measured = segments.iter().filter(|s| s.measured);
        let measured = (
            measured.clone().map(|s| s.start).min().unwrap_or_default(),
            measured.map(|s| s.end).max().unwrap_or_default(),
        );
        let mut sampler = WaitSampler {
            every: Duration::from_secs(1) / per_second.max(1),
            per_second,
            probes,
            owners,
            segments: segments.iter().map(|s| (s.start, s.end)).collect(),
            measured,
            warnings,
            live: LiveWaits::default(),
        };
        // A window from the start: read before any client runs, so its deltas are exact.
        sampler.statements_at(Duration::ZERO).await;
        sampler
    }

    /// The counts so far, for live readers.
    pub fn live(&self) -> LiveWaits {
        self.live.clone()
    }

    /// Starts sampling on the run's clock (`t0`, the zero of the segments).
    pub fn start(self, t0: Instant) -> RunningWaits {
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(self.run(t0, stopped));
        RunningWaits { stop, task }
    }

    async fn run(mut self, t0: Instant, mut stopped: oneshot::Receiver<()>) -> WaitsReport {
        let mut record = WaitRecord {
            per_second: self.per_second,
            ..WaitRecord::default()
        };
        let mut ticker = tokio::time::interval_at(t0.into(), self.every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = ticker.tick() => {}
            }
            self.statements_at(t0.elapsed()).await;
            let Some(segment) = self.segment_at(t0.elapsed()) else {
                continue;
            };
            let second = t0.elapsed().as_secs() as u32;
            let mut counted = false;
            for i in 0..self.probes.len() {
                let Some(rows) = read(&mut self.probes[i]).await else {
                    continue;
                };
                // A read that straddles a phase edge belongs to neither side: left out, so a
                // phase never shows what its neighbour did.
                if self.segment_at(t0.elapsed()) == Some(segment) {
                    count(&self.owners, &rows, (segment, second), &mut record);
                    counted = true;
                }
            }
            if counted {
                *record.rounds.entry(segment).or_default() += 1;
                self.live.set_from(&record);
            }
        }
        // A window to the end: read once the clients have ended, so its deltas are exact.
        self.statements_at(Duration::MAX).await;
        record.statements = self.statement_deltas();
        let mut warnings = self.warnings;
        for p in &self.probes {
            if let Some(e) = &p.first_error {
                warnings.push(format!(
                    "wait sampling: {} round(s) could not read '{}', the first: {e}",
                    p.failed_rounds,
                    p.session.label()
                ));
            }
        }
        WaitsReport { record, warnings }
    }
}

impl WaitSampler {
    /// The segment of the timeline at `at` since the run's start; `None` after its end.
    fn segment_at(&self, at: Duration) -> Option<usize> {
        self.segments.iter().position(|(s, e)| *s <= at && at < *e)
    }

    /// Takes the `pg_stat_statements` snapshots due at `at`: when the measured window starts
    /// and when it ends. A snapshot that fails leaves that server without statements.
    async fn statements_at(&mut self, at: Duration) {
        let (from, to) = self.measured;
        for p in &mut self.probes {
            let Some(st) = &mut p.statements else {
                continue;
            };
            let due = match (&st.before, &st.after) {
                (None, _) => at >= from,
                (Some(_), None) => at >= to,
                _ => false,
            };
            if !due {
                continue;
            }
            // As a round's read: a hung server must not hold the run's end (Ctrl-C included).
            let read = tokio::time::timeout(
                READ_WITHIN,
                statements::snapshot(p.session.client(), &st.dbnames),
            )
            .await
            .unwrap_or_else(|_| Err("no answer".into()));
            match read {
                Ok(snap) if st.before.is_none() => st.before = Some(snap),
                Ok(snap) => st.after = Some(snap),
                Err(e) => {
                    self.warnings.push(format!(
                        "pg_stat_statements of '{}' not read: {e}",
                        p.session.label()
                    ));
                    p.statements = None;
                }
            }
        }
    }

    fn statement_deltas(&self) -> Vec<crate::results::waits::DbStatements> {
        self.probes
            .iter()
            .filter_map(|p| p.statements.as_ref())
            .filter_map(|st| Some(statements::deltas(st.before.as_ref()?, st.after.as_ref()?)))
            .flatten()
            .collect()
    }
}

async fn open_probe(t: &ResolvedTarget, all: &[ResolvedTarget]) -> Result<Probe, String> {
    let session = StatsSession::open(t, all)
        .await
        .map_err(|e| e.to_string())?;
    let measured = all
        .iter()
        .any(|o| o.server_key() == t.server_key() && o.params.dbname == session.dbname());
    if measured {
        return Err(format!(
            "its session could only reach the measured database '{}', where its reads would \
             count in the server agreement; allow the user to connect to 'postgres' (or \
             'template1') to sample waits",
            session.dbname()
        ));
    }
    // Managed instances load the module and get the extension; others only if theirs has it.
    let managed = t.label.starts_with("instance:");
    let statements = statements::enable(session.client(), managed)
        .await
        .ok()
        .map(|()| Statements {
            dbnames: server_dbnames(t, all),
            before: None,
            after: None,
        });
    Ok(Probe {
        session,
        failed_rounds: 0,
        first_error: None,
        last_reopen: None,
        statements,
    })
}

/// The measured databases on `t`'s server.
fn server_dbnames(t: &ResolvedTarget, all: &[ResolvedTarget]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for o in all.iter().filter(|o| o.server_key() == t.server_key()) {
        if !out.contains(&o.params.dbname) {
            out.push(o.params.dbname.clone());
        }
    }
    out
}

/// One server's rows, or `None` (counted as a failed round) when it could not be read.
async fn read(p: &mut Probe) -> Option<Vec<Row>> {
    let read = tokio::time::timeout(READ_WITHIN, try_read(p))
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {READ_WITHIN:?}")));
    match read {
        Ok(rows) => Some(rows),
        Err(e) => {
            p.failed_rounds += 1;
            p.first_error.get_or_insert(e);
            None
        }
    }
}

async fn try_read(p: &mut Probe) -> Result<Vec<Row>, String> {
    if p.session.is_closed() {
        // A server that restarted: reopen, at most once a second.
        if p.last_reopen.is_some_and(|l| l.elapsed() < REOPEN_EVERY) {
            return Err("the session is closed (server restarting?)".into());
        }
        p.last_reopen = Some(Instant::now());
        p.session.reopen().await?;
    }
    // Unnamed: a statement prepared once would be missing on the next server session a
    // pooler in transaction mode hands the reader (issue 57).
    p.session
        .client()
        .query_typed(ACTIVITY_SQL, &[])
        .await
        .map_err(|e| describe_pg_error(&e))
}

/// One backend as read.
struct Backend {
    pid: i32,
    dbname: String,
    app: String,
    state: Option<String>,
    wait_type: Option<String>,
    event: Option<String>,
    backend_type: String,
    blockers: Option<Vec<i32>>,
    query: String,
}

fn backend(row: &Row) -> Option<Backend> {
    Some(Backend {
        pid: row.try_get(0).ok()?,
        dbname: row
            .try_get::<_, Option<String>>(1)
            .ok()?
            .unwrap_or_default(),
        app: row
            .try_get::<_, Option<String>>(2)
            .ok()?
            .unwrap_or_default(),
        state: row.try_get(3).ok()?,
        wait_type: row.try_get(4).ok()?,
        event: row.try_get(5).ok()?,
        backend_type: row
            .try_get::<_, Option<String>>(6)
            .ok()?
            .unwrap_or_default(),
        blockers: row.try_get(7).ok()?,
        query: row
            .try_get::<_, Option<String>>(8)
            .ok()?
            .unwrap_or_default(),
    })
}

/// Counts the run's sessions of one server's rows into `record`, under the round's segment
/// and second of the run.
fn count(owners: &Owners, rows: &[Row], at: (usize, u32), record: &mut WaitRecord) {
    let (segment, second) = at;
    let backends: Vec<Backend> = rows.iter().filter_map(backend).collect();
    let by_pid: HashMap<i32, &Backend> = backends.iter().map(|b| (b.pid, b)).collect();
    for b in &backends {
        let Some((group, set)) = owners.owner(&b.app, &b.dbname) else {
            continue;
        };
        let (class, event) = classify(
            b.state.as_deref(),
            b.wait_type.as_deref(),
            b.event.as_deref(),
        );
        let txn = TypeKey {
            segment,
            group: group.to_string(),
            txn: owners.txn_type(group, &b.query).to_string(),
            class: class.clone(),
        };
        *record.by_type.entry(txn).or_default() += 1;
        *record
            .over_time
            .entry((second, group.to_string(), class.clone()))
            .or_default() += 1;
        let key = WaitKey {
            segment,
            group: group.to_string(),
            set: set.to_string(),
            class,
            event,
        };
        *record.waits.entry(key).or_default() += 1;
        for pid in b.blockers.iter().flatten() {
            let blocked_by = match by_pid.get(pid) {
                Some(x) => owners.blocker(&x.app, &x.dbname, &x.backend_type),
                // It ended between its listing and ours.
                None => "other:gone".to_string(),
            };
            let key = LockKey {
                segment,
                group: group.to_string(),
                set: set.to_string(),
                blocked_by,
            };
            *record.locks.entry(key).or_default() += 1;
        }
    }
}

/// Wait sampling running beside the driver.
pub struct RunningWaits {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<WaitsReport>,
}

impl RunningWaits {
    /// Stops sampling and returns what it counted.
    pub async fn stop(self) -> WaitsReport {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(r) => r,
            Err(e) => WaitsReport {
                warnings: vec![format!("wait sampling stopped abnormally: {e}")],
                ..WaitsReport::default()
            },
        }
    }
}
