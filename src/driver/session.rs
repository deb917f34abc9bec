//! A client's session to one target, with the capped exponential backoff that paces
//! reconnection attempts after the target went away. On a target over a primary and its
//! standbys (issue 54) the session also knows which of its servers it is on, so a
//! CancelRequest goes there, and counts what each server saw of it for the per-host check.

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
    /// Which of the target's `follow` servers the session is (or was last) on; 0 without them.
    pub host: usize,
}

/// What one server of a target over a primary and its standbys saw of a client's sessions
/// (issue 54), for the per-host server check: a commit lands on the server the session is on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCounts {
    /// Transactions that committed there (in the measured window or after its end).
    pub committed: u64,
    /// Sessions opened there: the first, those opened again, and those opened only to learn
    /// it is a standby; one commit each at the server (two where `pg_is_in_recovery()` was
    /// asked, on servers older than 14).
    pub opened: u64,
    /// Tries whose fate the client never learnt: the session broke or was given up during
    /// them, or a startup timed out. The server may have committed each.
    pub unknown: u64,
}

impl HostCounts {
    fn add(&mut self, other: HostCounts) {
        self.committed += other.committed;
        self.opened += other.opened;
        self.unknown += other.unknown;
    }
}

/// What the server counts of a session beside the measured transactions, for the server
/// check: PostgreSQL counts one commit per session it opens, and commits of transactions the
/// client gave up on or finished after the end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// Per server of a target over a primary and its standbys, in its `follow` order (issue
    /// 54); empty for a target of one server.
    pub hosts: Vec<HostCounts>,
}

impl EndCounts {
    pub fn add(&mut self, other: &EndCounts) {
        self.cut_in_flight += other.cut_in_flight;
        self.committed_after_end += other.committed_after_end;
        self.reopened += other.reopened;
        self.left_open += other.left_open;
        if self.hosts.len() < other.hosts.len() {
            self.hosts.resize(other.hosts.len(), HostCounts::default());
        }
        for (mine, theirs) in self.hosts.iter_mut().zip(&other.hosts) {
            mine.add(*theirs);
        }
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
    /// A session opened on `params`, one of `follow` (or the target's one server).
    pub fn open(
        conn: pgwire::Connection,
        params: &pgwire::ConnectParams,
        follow: &[pgwire::ConnectParams],
    ) -> Session {
        let host = host_of(params, follow);
        let mut hosts = vec![HostCounts::default(); follow.len()];
        if let Some(h) = hosts.get_mut(host) {
            h.opened = 1;
        }
        Session {
            conn: Some(conn),
            backoff: BACKOFF_FIRST,
            next_try: None,
            reconnects: 0,
            at_end: EndCounts {
                hosts,
                ..EndCounts::default()
            },
            outages: Vec::new(),
            typical_ns: TYPICAL_FIRST_NS,
            connecting: false,
            host,
        }
    }

    /// The server the session is on: where its CancelRequests go.
    pub fn server<'a>(
        &self,
        params: &'a pgwire::ConnectParams,
        follow: &'a [pgwire::ConnectParams],
    ) -> &'a pgwire::ConnectParams {
        follow_server(self.host, params, follow)
    }

    /// A transaction committed on the server the session is on.
    #[inline]
    pub fn note_commit(&mut self) {
        if let Some(h) = self.at_end.hosts.get_mut(self.host) {
            h.committed += 1;
        }
    }

    /// A try on the server the session is on ended without the client learning its fate.
    pub fn note_unknown(&mut self) {
        if let Some(h) = self.at_end.hosts.get_mut(self.host) {
            h.unknown += 1;
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
            false => match primary_of(follow, &mut self.at_end.hosts).await {
                Ok((host, c)) => {
                    self.host = host;
                    Ok(c)
                }
                Err(e) => Err(e),
            },
        };
        self.connecting = false;
        match opened {
            Ok(c) => {
                if let Some(h) = self.at_end.hosts.get_mut(self.host) {
                    h.opened += 1;
                }
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

/// Server `host` of `follow`, or `params` for a target of one server.
fn follow_server<'a>(
    host: usize,
    params: &'a pgwire::ConnectParams,
    follow: &'a [pgwire::ConnectParams],
) -> &'a pgwire::ConnectParams {
    follow.get(host).unwrap_or(params)
}

/// Which of `follow` `params` names (the same host and port); 0 when none does.
pub fn host_of(params: &pgwire::ConnectParams, follow: &[pgwire::ConnectParams]) -> usize {
    follow
        .iter()
        .position(|f| f.host == params.host && f.port == params.port)
        .unwrap_or(0)
}

/// A session on the first of `servers` that takes writes, and its index: PostgreSQL 14 and
/// later say so at login (`in_hot_standby`), older ones are asked `pg_is_in_recovery()`. A
/// server that does not answer, or is a standby, is passed over; none fits: the last error.
/// Each session opened only to be closed is counted in `hosts` (the server counts it), the
/// one kept by the caller.
async fn primary_of(
    servers: &[pgwire::ConnectParams],
    hosts: &mut [HostCounts],
) -> Result<(usize, pgwire::Connection), pgwire::Error> {
    let mut last = pgwire::Error::client("no server to look for the primary on".to_string());
    for (k, params) in servers.iter().enumerate() {
        let mut conn = match pgwire::Connection::connect(params).await {
            Ok(c) => c,
            Err(e) => {
                if matches!(e.kind, pgwire::ErrorKind::Timeout) {
                    hosts[k].unknown += 1;
                }
                last = e;
                continue;
            }
        };
        let standby = match conn.server_param("in_hot_standby") {
            Some(v) => v == "on",
            None => match conn.simple_query("SELECT pg_is_in_recovery()").await {
                Ok(r) => {
                    // The question is one more commit at the server.
                    hosts[k].opened += 1;
                    r.get_str(0, 0) != Some("f")
                }
                Err(e) => {
                    // Its session's startup; the failed question is a rollback.
                    hosts[k].opened += 1;
                    last = e;
                    continue;
                }
            },
        };
        if !standby {
            return Ok((k, conn));
        }
        hosts[k].opened += 1;
        conn.close().await;
        last = pgwire::Error::client(format!("{} is a standby (in recovery)", params.port));
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(port: u16) -> pgwire::ConnectParams {
        pgwire::ConnectParams {
            host: pgwire::Host::Tcp("localhost".into()),
            port,
            user: "u".into(),
            password: None,
            dbname: "db".into(),
            application_name: "t".into(),
            options: String::new(),
            connect_timeout: Duration::from_secs(1),
            hostaddr: None,
            tls: pgwire::Tls::disabled(),
            keepalive: pgwire::KeepAlive::default(),
        }
    }

    /// A session knows which of its target's servers it is on, so a CancelRequest after a
    /// fail-over goes to the new primary, not the old one (issue 54).
    #[test]
    fn the_server_of_a_session_is_the_one_it_is_on() {
        let follow = [at(5001), at(5002)];
        assert_eq!(host_of(&at(5002), &follow), 1);
        assert_eq!(host_of(&at(5001), &follow), 0);
        assert_eq!(host_of(&at(5003), &[]), 0);
        let server = |host: usize, params: &pgwire::ConnectParams, follow| {
            follow_server(host, params, follow).port
        };
        assert_eq!(server(1, &at(5001), &follow), 5002);
        assert_eq!(server(0, &at(5002), &follow), 5001);
        assert_eq!(server(0, &at(5003), &[]), 5003);
    }

    #[test]
    fn host_counts_add_per_server() {
        let mut a = EndCounts::default();
        let b = EndCounts {
            reopened: 1,
            hosts: vec![
                HostCounts {
                    committed: 3,
                    opened: 1,
                    unknown: 0,
                },
                HostCounts {
                    committed: 2,
                    opened: 2,
                    unknown: 1,
                },
            ],
            ..EndCounts::default()
        };
        a.add(&b);
        a.add(&b);
        assert_eq!(a.reopened, 2);
        assert_eq!(a.hosts[1].committed, 4);
        assert_eq!(a.hosts[1].unknown, 2);
        assert_eq!(a.hosts[0].opened, 2);
    }
}
