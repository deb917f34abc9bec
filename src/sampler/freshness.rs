//! The freshness probe (issue 52): beside the clients, a few times a second per primary and
//! hot standby the run uses, how long after the primary's newest commit the standby can
//! show it to a query. What a sample means, and why an LSN and not a row, is in
//! `results::freshness`; this module only takes the samples, on the main tokio runtime and
//! never on the driver's threads.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_postgres::Client;

use crate::results::freshness::{Pair, Sample};
use crate::target::{describe_pg_error, ResolvedTarget};

/// The primary's WAL insert position: every commit that has answered its client lies at or
/// before it, whatever `synchronous_commit` is.
const INSERTED_SQL: &str = "SELECT pg_current_wal_insert_lsn()::text";
/// How far the standby has replayed (then a query there sees the commits up to it); NULL on
/// a server not in recovery.
const REPLAYED_SQL: &str = "SELECT pg_last_wal_replay_lsn()::text";

/// Marks a second per pair: enough for percentiles over a phase of seconds, few enough that
/// the probe's own statements are nothing beside the clients'.
const EVERY: Duration = Duration::from_millis(100);
/// Between two asks of the standby, while a mark waits: the figure's resolution. One ask
/// answers every mark waiting, however far behind the standby is.
const POLL: Duration = Duration::from_millis(2);
/// How long one statement may take: a hung server must not hold the run's end.
const READ_WITHIN: Duration = Duration::from_millis(500);

struct Watched {
    primary: Client,
    standby: Client,
    /// Marks the standby has not shown yet: (position, when the primary gave it, segment).
    pending: VecDeque<(u64, Instant, usize)>,
    failed: u64,
    first_error: Option<String>,
}

impl Watched {
    fn fail(&mut self, e: String) {
        self.failed += 1;
        self.first_error.get_or_insert(e);
    }
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

    /// Every [`EVERY`] a mark from each primary; every [`POLL`] while marks wait, the
    /// standby's replay position, which settles every mark at or before it. A mark the
    /// standby has not shown by the run's end is a sample not seen.
    async fn run(mut self, t0: Instant, mut stopped: oneshot::Receiver<()>) -> FreshnessReport {
        let mut samples = Vec::new();
        if self.watched.is_empty() {
            // Nothing to watch (freshness is n/a): no ticks for the run's length.
            let _ = stopped.await;
            return FreshnessReport {
                pairs: self.pairs,
                samples,
                warnings: self.warnings,
            };
        }
        let mut ticker = tokio::time::interval_at(t0.into(), POLL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut next_mark = t0;
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = ticker.tick() => {}
            }
            let mark = Instant::now() >= next_mark;
            if mark {
                next_mark += EVERY;
            }
            for (pair, w) in &mut self.watched {
                if let Some(segment) = segment_at(&self.segments, t0.elapsed()).filter(|_| mark) {
                    match position(&w.primary, INSERTED_SQL).await {
                        Ok(lsn) => w.pending.push_back((lsn, Instant::now(), segment)),
                        Err(e) => w.fail(e),
                    }
                }
                if w.pending.is_empty() {
                    continue;
                }
                match position(&w.standby, REPLAYED_SQL).await {
                    Ok(replayed) => {
                        let now = Instant::now();
                        while let Some(&(lsn, at, segment)) = w.pending.front() {
                            if lsn > replayed {
                                break;
                            }
                            w.pending.pop_front();
                            samples.push(Sample {
                                pair: *pair,
                                segment,
                                ms: Some((now - at).as_secs_f64() * 1e3),
                            });
                        }
                    }
                    Err(e) => w.fail(e),
                }
            }
        }
        let mut warnings = self.warnings;
        for (pair, w) in &self.watched {
            samples.extend(w.pending.iter().map(|&(_, _, segment)| Sample {
                pair: *pair,
                segment,
                ms: None,
            }));
            if let Some(e) = &w.first_error {
                warnings.push(format!(
                    "freshness: {} read(s) failed, the first: {e}",
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
    Ok(Watched {
        primary,
        standby,
        pending: VecDeque::new(),
        failed: 0,
        first_error: None,
    })
}

/// A WAL position `sql` reads, as a number.
async fn position(client: &Client, sql: &str) -> Result<u64, String> {
    let text: Option<String> = within(client.query_one(sql, &[]))
        .await?
        .try_get(0)
        .map_err(|e| describe_pg_error(&e))?;
    let text = text.ok_or("the server is not in recovery (promoted?)")?;
    parse_lsn(&text).ok_or_else(|| format!("'{text}' is not a WAL position"))
}

/// `16/B374D848` as one number: the high and low 32 bits in hex.
fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some(u64::from_str_radix(hi, 16).ok()? << 32 | u64::from_str_radix(lo, 16).ok()?)
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

#[cfg(test)]
mod tests {
    #[test]
    fn wal_positions_compare_as_numbers() {
        let a = super::parse_lsn("0/FFFFFFFF").unwrap();
        let b = super::parse_lsn("1/0").unwrap();
        assert!(a < b && b == 1 << 32);
        assert_eq!(super::parse_lsn("16/B374D848"), Some(0x16_B374_D848));
        assert_eq!(super::parse_lsn("nope"), None);
    }
}
