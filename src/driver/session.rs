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
    /// Tries cut in flight at the run's end on this session.
    pub cut_in_flight: u64,
}

impl Session {
    pub fn open(conn: pgwire::Connection) -> Session {
        Session {
            conn: Some(conn),
            backoff: BACKOFF_FIRST,
            next_try: None,
            reconnects: 0,
            cut_in_flight: 0,
        }
    }

    /// The session broke: drop it; the next attempt may come at once.
    pub fn lost(&mut self) {
        self.conn = None;
    }

    pub fn may_try(&self, now: Instant) -> bool {
        self.next_try.map_or(true, |t| now >= t)
    }

    pub fn next_try(&self) -> Instant {
        self.next_try.unwrap_or_else(Instant::now)
    }

    /// One reconnection attempt; on failure the next one waits twice as long (up to a cap).
    pub async fn reconnect(&mut self, params: &pgwire::ConnectParams) -> bool {
        match pgwire::Connection::connect(params).await {
            Ok(c) => {
                self.conn = Some(c);
                self.reconnects += 1;
                self.backoff = BACKOFF_FIRST;
                self.next_try = None;
                true
            }
            Err(_) => {
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
