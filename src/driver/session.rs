//! A client's session to one target, with the capped exponential backoff that paces
//! reconnection attempts after the target went away.

use std::time::{Duration, Instant};

const BACKOFF_FIRST: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

pub struct Session {
    pub conn: Option<pgwire::Connection>,
    backoff: Duration,
    next_try: Option<Instant>,
    /// Sessions opened after the first (each is one transaction at the server).
    pub reconnects: u64,
    /// What became of the tries in flight at the run's end (and those cut by the timeout).
    pub at_end: EndCounts,
    /// When the session was lost, and when it was open again (`None`: not again).
    pub outages: Vec<(Instant, Option<Instant>)>,
    /// A moving average of how long a try that ended by itself took here (ns): what a card
    /// for this target costs while the target is down.
    typical_ns: u64,
    /// A reconnection attempt is under way (its startup may reach the server after all).
    pub connecting: bool,
}

/// What the server counts of a session beside the measured transactions, for the server
/// check: PostgreSQL counts one commit per session it opens, and commits of transactions the
/// client gave up on or finished after the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndCounts {
    /// Given up half-way with their fate unknown (the server may have committed them): tries
    /// cut by the timeout or still running a moment after the end, and reconnection attempts
    /// abandoned after their startup was sent (the server may open the session later).
    pub cut_in_flight: u64,
    /// Let finish for a moment after the end, and committed then.
    pub committed_after_end: u64,
    /// Sessions opened again during the run: one commit each at the server.
    pub reopened: u64,
    /// Counted as committed (pgbench counts them) though the script left their block open
    /// and it was rolled back: no commit at the server.
    pub left_open: u64,
}

impl EndCounts {
    pub fn add(&mut self, other: EndCounts) {
        self.cut_in_flight += other.cut_in_flight;
        self.committed_after_end += other.committed_after_end;
        self.reopened += other.reopened;
        self.left_open += other.left_open;
    }

    pub fn is_empty(&self) -> bool {
        *self == EndCounts::default()
    }
}

/// pgbench's `-C`: sessions a client opened for its transactions and the time spent opening
/// them and saying goodbye to the previous one (pgbench's "connection time").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectTime {
    pub connects: u64,
    pub total: Duration,
}

impl ConnectTime {
    pub fn add(&mut self, other: ConnectTime) {
        self.connects += other.connects;
        self.total += other.total;
    }
}

/// What a try is taken to cost before any has ended on the session.
const TYPICAL_FIRST_NS: u64 = 1_000_000;

impl Session {
    pub fn open(conn: pgwire::Connection) -> Session {
        Session {
            conn: Some(conn),
            backoff: BACKOFF_FIRST,
            next_try: None,
            reconnects: 0,
            at_end: EndCounts::default(),
            outages: Vec::new(),
            typical_ns: TYPICAL_FIRST_NS,
            connecting: false,
        }
    }

    /// The session broke: drop it; the next attempt may come at once.
    pub fn lost(&mut self) {
        self.conn = None;
        self.mark_down();
    }

    /// A try was cut while this session was being opened again: the attempt is abandoned,
    /// and the server may still open it (its startup was likely sent), so it joins the
    /// margin of the server check.
    pub fn abandon_connect(&mut self) {
        if std::mem::take(&mut self.connecting) {
            self.at_end.cut_in_flight += 1;
        }
    }

    /// The target stopped answering this session (it broke, or a try on it timed out): an
    /// outage begins, unless one is already open.
    pub fn mark_down(&mut self) {
        if !matches!(self.outages.last(), Some((_, None))) {
            self.outages.push((Instant::now(), None));
        }
    }

    /// A try that ended by itself took `took`: an exponential moving average over about the
    /// last eight, so it follows the target's load without one outlier swinging it.
    #[inline]
    pub fn note_try(&mut self, took: Duration) {
        let took = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.typical_ns = self.typical_ns - self.typical_ns / 8 + took / 8;
    }

    /// What a try here typically takes.
    pub fn typical(&self) -> Duration {
        Duration::from_nanos(self.typical_ns)
    }

    pub fn may_try(&self, now: Instant) -> bool {
        self.next_try.is_none_or(|t| now >= t)
    }

    pub fn next_try(&self) -> Instant {
        self.next_try.unwrap_or_else(Instant::now)
    }

    /// One reconnection attempt; on failure the next one waits twice as long (up to a cap).
    /// With `follow` (a target over a primary and its standbys), the attempt goes to each of
    /// its servers in order and keeps the first that is not in recovery: after a fail-over,
    /// the promoted standby.
    pub async fn reconnect(
        &mut self,
        params: &pgwire::ConnectParams,
        follow: &[pgwire::ConnectParams],
    ) -> bool {
        self.connecting = true;
        let opened = match follow.is_empty() {
            true => pgwire::Connection::connect(params).await,
            false => primary_of(follow).await,
        };
        self.connecting = false;
        match opened {
            Ok(c) => {
                self.conn = Some(c);
                self.reconnects += 1;
                self.at_end.reopened += 1;
                if let Some((_, back @ None)) = self.outages.last_mut() {
                    *back = Some(Instant::now());
                }
                self.backoff = BACKOFF_FIRST;
                self.next_try = None;
                true
            }
            Err(e) => {
                if matches!(e.kind, pgwire::ErrorKind::Timeout) {
                    // The startup may have been sent and the server open the session later.
                    self.at_end.cut_in_flight += 1;
                }
                self.next_try = Some(Instant::now() + self.backoff);
                self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
                false
            }
        }
    }

    pub async fn close(mut self) -> u64 {
        if let Some(c) = self.conn.take() {
            c.close().await;
        }
        self.reconnects
    }
}

/// A session on the first of `servers` that takes writes: PostgreSQL 14 and later say so at
/// login (`in_hot_standby`), older ones are asked `pg_is_in_recovery()`. A server that does
/// not answer, or is a standby, is passed over; none fits: the last error.
async fn primary_of(
    servers: &[pgwire::ConnectParams],
) -> Result<pgwire::Connection, pgwire::Error> {
    let mut last = pgwire::Error::client("no server to look for the primary on".to_string());
    for params in servers {
        let mut conn = match pgwire::Connection::connect(params).await {
            Ok(c) => c,
            Err(e) => {
                last = e;
                continue;
            }
        };
        let standby = match conn.server_param("in_hot_standby") {
            Some(v) => v == "on",
            None => match conn.simple_query("SELECT pg_is_in_recovery()").await {
                Ok(r) => r.get_str(0, 0) != Some("f"),
                Err(e) => {
                    last = e;
                    continue;
                }
            },
        };
        if !standby {
            return Ok(conn);
        }
        conn.close().await;
        last = pgwire::Error::client(format!("{} is a standby (in recovery)", params.port));
    }
    Err(last)
}
