//! The freshness probe (issue 52): beside the clients, a few times a second per primary and
//! hot standby the run uses, how long after the primary's newest commit the standby can
//! show it to a query. What a sample means, and why an LSN and not a row, is in
//! `results::freshness`; this module only takes the samples, on the main tokio runtime and
//! never on the driver's threads.

use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_postgres::Client;

use crate::results::freshness::{Pair, Sample};
use crate::target::{describe_pg_error, ResolvedTarget};

/// The primary's WAL insert position: every commit that has answered its client lies at or
/// before it, whatever `synchronous_commit` is.
const INSERTED_SQL: &str = "SELECT pg_current_wal_insert_lsn()::text";
/// Whether the standby has replayed up to a position (then a query sees those commits).
const REPLAYED_SQL: &str = "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::text::pg_lsn, false)";

/// Samples a second per pair: enough for percentiles over a phase of seconds, few enough that
/// the probe's own statements are nothing beside the clients'.
const EVERY: Duration = Duration::from_millis(100);
/// Between two asks of the standby: the figure's resolution.
const POLL: Duration = Duration::from_millis(1);
/// A standby that has not caught up by then is counted as not seen, and the probe moves on
/// (a standby minutes behind must not stop the sampling of the next phase).
const GIVE_UP: Duration = Duration::from_secs(5);
/// How long one statement may take: a hung server must not hold the run's end.
const READ_WITHIN: Duration = Duration::from_millis(500);

struct Watched {
    primary: Client,
    standby: Client,
    replayed: tokio_postgres::Statement,
    failed: u64,
    first_error: Option<String>,
}

/// The probe, its sessions open, ready to start on the run's clock.
pub struct FreshnessProbe {
    pairs: Vec<Pair>,
    watched: Vec<(usize, Watched)>,
    segments: Vec<(Duration, Duration)>,
    warnings: Vec<String>,
}

/// What the probe measured and what went wrong.
#[derive(Debug, Default)]
pub struct FreshnessReport {
    /// The pairs the run has, watched or not (a sample's `pair` indexes them).
    pub pairs: Vec<Pair>,
    pub samples: Vec<Sample>,
    pub warnings: Vec<String>,
}

/// The probe running; [`RunningFreshness::stop`] ends it.
pub struct RunningFreshness {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<FreshnessReport>,
}

impl FreshnessProbe {
    /// One session to each side of each pair, to a database no group measures (see
    /// `ResolvedTarget::connect_for_stats`). A pair that cannot be opened is a warning.
    pub async fn open(
        pairs: &[(Pair, &ResolvedTarget, &ResolvedTarget)],
        all: &[ResolvedTarget],
        segments: &[crate::config::timeline::Segment],
    ) -> FreshnessProbe {
        let mut watched = Vec::new();
        let mut warnings = Vec::new();
        for (i, (pair, primary, standby)) in pairs.iter().enumerate() {
            match open_pair(primary, standby, all).await {
                Ok(w) => watched.push((i, w)),
                Err(e) => {
                    warnings.push(format!("freshness of '{}' not measured: {e}", pair.standby))
                }
            }
        }
        FreshnessProbe {
            pairs: pairs.iter().map(|(p, _, _)| p.clone()).collect(),
            watched,
            segments: segments.iter().map(|s| (s.start, s.end)).collect(),
            warnings,
        }
    }

    /// Starts sampling on the run's clock (`t0`, the zero of the segments).
    pub fn start(self, t0: Instant) -> RunningFreshness {
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(self.run(t0, stopped));
        RunningFreshness { stop, task }
    }

    async fn run(mut self, t0: Instant, mut stopped: oneshot::Receiver<()>) -> FreshnessReport {
        let mut samples = Vec::new();
        let mut ticker = tokio::time::interval_at(t0.into(), EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        'rounds: loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = ticker.tick() => {}
            }
            for (pair, w) in &mut self.watched {
                let Some(segment) = segment_at(&self.segments, t0.elapsed()) else {
                    continue;
                };
                match sample(w, &mut stopped).await {
                    Ok(Some(ms)) => samples.push(Sample {
                        pair: *pair,
                        segment,
                        ms,
                    }),
                    // Stopped while waiting for the standby: the sample is not taken.
                    Ok(None) => break 'rounds,
                    Err(e) => {
                        w.failed += 1;
                        w.first_error.get_or_insert(e);
                    }
                }
            }
        }
        let mut warnings = self.warnings;
        for (_, w) in &self.watched {
            if let Some(e) = &w.first_error {
                warnings.push(format!(
                    "freshness: {} sample(s) not taken, the first: {e}",
                    w.failed
                ));
            }
        }
        FreshnessReport {
            pairs: self.pairs,
            samples,
            warnings,
        }
    }
}

impl RunningFreshness {
    /// Ends the probe and returns what it measured.
    pub async fn stop(self) -> FreshnessReport {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_else(|e| FreshnessReport {
            pairs: Vec::new(),
            samples: Vec::new(),
            warnings: vec![format!("freshness probe ended abnormally: {e}")],
        })
    }
}

async fn open_pair(
    primary: &ResolvedTarget,
    standby: &ResolvedTarget,
    all: &[ResolvedTarget],
) -> Result<Watched, String> {
    let primary = primary
        .connect_for_stats(all)
        .await
        .map_err(|e| e.to_string())?;
    let standby = standby
        .connect_for_stats(all)
        .await
        .map_err(|e| e.to_string())?;
    let replayed = standby
        .prepare(REPLAYED_SQL)
        .await
        .map_err(|e| describe_pg_error(&e))?;
    Ok(Watched {
        primary,
        standby,
        replayed,
        failed: 0,
        first_error: None,
    })
}

/// One sample: the primary's insert position, then the standby asked every [`POLL`] until it
/// has replayed it. `Ok(None)`: stopped meanwhile; `Ok(Some(None))`: not seen within
/// [`GIVE_UP`].
async fn sample(
    w: &Watched,
    stopped: &mut oneshot::Receiver<()>,
) -> Result<Option<Option<f64>>, String> {
    let lsn: String = within(w.primary.query_one(INSERTED_SQL, &[]))
        .await?
        .try_get(0)
        .map_err(|e| describe_pg_error(&e))?;
    let from = Instant::now();
    loop {
        let seen: bool = within(w.standby.query_one(&w.replayed, &[&lsn]))
            .await?
            .try_get(0)
            .map_err(|e| describe_pg_error(&e))?;
        if seen {
            return Ok(Some(Some(from.elapsed().as_secs_f64() * 1e3)));
        }
        if from.elapsed() >= GIVE_UP {
            return Ok(Some(None));
        }
        tokio::select! {
            _ = &mut *stopped => return Ok(None),
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// A statement's row, or why there is none (an error, or no answer within [`READ_WITHIN`]).
async fn within(
    q: impl std::future::Future<Output = Result<tokio_postgres::Row, tokio_postgres::Error>>,
) -> Result<tokio_postgres::Row, String> {
    match tokio::time::timeout(READ_WITHIN, q).await {
        Ok(Ok(row)) => Ok(row),
        Ok(Err(e)) => Err(describe_pg_error(&e)),
        Err(_) => Err(format!("no answer within {READ_WITHIN:?}")),
    }
}

/// The segment of the timeline at `at` since the run's start; `None` after its end.
fn segment_at(segments: &[(Duration, Duration)], at: Duration) -> Option<usize> {
    segments.iter().position(|(s, e)| *s <= at && at < *e)
}
