//! The server check per host of a target over a primary and its standbys (issue 54): where a
//! client's commits landed, against each server's own count. A live server counts in
//! `pg_stat_database`; a server that died in the run (a fail-over's old primary) cannot be
//! asked, so its commits are counted in its WAL instead, from the LSN it had at the run's
//! start to the end of what it wrote.

use serde::{Deserialize, Serialize};

/// Where a host's own count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostSource {
    /// `xact_commit` of the measured database: every transaction, read-only ones and each
    /// session's startup included.
    PgStatDatabase,
    /// The commit records in its WAL (`pg_waldump`): transactions that wrote, in any
    /// database of the server; sessions and read-only transactions leave none.
    Wal,
}

/// One host's agreement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostAgreement {
    /// The target, as the run names it (`instance:a,b`).
    pub target: String,
    /// The host: the managed instance's name.
    pub host: String,
    pub dbname: String,
    pub source: HostSource,
    /// The server's count since the run's start (`None`: not compared, `note` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_commits: Option<i64>,
    /// Transactions the clients saw commit on this host.
    pub client_committed: i64,
    /// Sessions the clients opened on it (one commit each in `pg_stat_database`).
    pub client_sessions: i64,
    /// Tries on this host whose fate the clients never learnt (the session broke or was
    /// given up during them): the server may count up to this many more.
    pub unknown: i64,
    /// No commit the clients saw is missing: `expected <= server_commits`, with `expected`
    /// the clients' count the source can see (up to `unknown` more are theirs too, and what is
    /// past that is [`Self::beside`]). `None` where the source cannot decide: a WAL that holds
    /// fewer commits than the clients saw (read-only transactions leave no commit record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agrees: Option<bool>,
    /// Commits past the clients' own and those of unknown fate: other sessions, autovacuum
    /// and parallel workers commit on the same server, as the per-database check says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub beside: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl HostAgreement {
    /// What the server's count should be by the clients' records: the commits, and in
    /// `pg_stat_database` the sessions too.
    pub fn expected(&self) -> i64 {
        match self.source {
            HostSource::PgStatDatabase => self.client_committed + self.client_sessions,
            HostSource::Wal => self.client_committed,
        }
    }

    /// Sets `server_commits`, whether it agrees and what stands beside the clients' count. A
    /// server that counts fewer than the clients saw commit lost some, except in a WAL, which
    /// never holds a read-only transaction: there fewer decides nothing (a commit a client saw
    /// is always in the WAL, flushed before the answer).
    pub fn compare(&mut self, server: i64) {
        let expected = self.expected();
        self.server_commits = Some(server);
        self.beside = (server - expected - self.unknown).max(0);
        self.agrees = match (self.source, server >= expected) {
            (_, true) => Some(true),
            (HostSource::PgStatDatabase, false) => Some(false),
            (HostSource::Wal, false) => {
                self.note = Some(
                    "the WAL holds only transactions that wrote: read-only ones leave no \
                     commit record"
                        .into(),
                );
                None
            }
        };
    }

    /// One line for the console and the report.
    pub fn line(&self) -> String {
        let how = match self.source {
            HostSource::PgStatDatabase => "pg_stat_database",
            HostSource::Wal => "its WAL",
        };
        let client = match self.source {
            HostSource::PgStatDatabase => format!(
                "{} commits + {} sessions",
                self.client_committed, self.client_sessions
            ),
            HostSource::Wal => format!("{} commits", self.client_committed),
        };
        let unknown = match self.unknown {
            0 => String::new(),
            n => format!(" (+ up to {n} of unknown fate)"),
        };
        let beside = match self.beside {
            0 => String::new(),
            n => format!(", +{n} beside other sessions, autovacuum or parallel workers"),
        };
        match (self.server_commits, self.agrees) {
            (Some(n), Some(agrees)) => format!(
                "host {} of {}: {n} commits in {how}, clients {client}{unknown}: {}{beside}",
                self.host,
                self.target,
                if agrees { "agrees" } else { "DISAGREES" }
            ),
            (Some(n), None) => format!(
                "host {} of {}: {n} commits in {how}, clients {client}{unknown}: not decided ({})",
                self.host,
                self.target,
                self.note.as_deref().unwrap_or("no rule")
            ),
            _ => format!(
                "host {} of {}: not compared ({}); clients {client}{unknown}",
                self.host,
                self.target,
                self.note.as_deref().unwrap_or("no count")
            ),
        }
    }
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(source: HostSource, unknown: i64) -> HostAgreement {
        HostAgreement {
            target: "instance:a,b".into(),
            host: "a".into(),
            dbname: "d".into(),
            source,
            server_commits: None,
            client_committed: 100,
            client_sessions: 4,
            unknown,
            agrees: None,
            beside: 0,
            note: None,
        }
    }

    #[test]
    fn a_host_agrees_within_the_tries_of_unknown_fate() {
        let mut h = host(HostSource::PgStatDatabase, 2);
        h.compare(104);
        assert_eq!(h.agrees, Some(true));
        h.compare(106);
        assert_eq!(h.agrees, Some(true));
        // Past the tries of unknown fate: other sessions' commits, none of the clients' lost.
        h.compare(107);
        assert_eq!((h.agrees, h.beside), (Some(true), 1));
        assert!(
            h.line().contains("agrees, +1 beside other sessions"),
            "{}",
            h.line()
        );
        h.compare(103);
        assert_eq!(h.agrees, Some(false));
        assert!(h.line().contains("DISAGREES"), "{}", h.line());
        // The WAL holds no session's startup.
        let mut w = host(HostSource::Wal, 0);
        w.compare(100);
        assert_eq!(w.agrees, Some(true));
        assert!(w.line().contains("100 commits in its WAL"), "{}", w.line());
        // Fewer in the WAL: read-only transactions, which it never holds; nothing decided.
        w.compare(90);
        assert_eq!(w.agrees, None);
        assert!(w.line().contains("90 commits in its WAL"), "{}", w.line());
        assert!(
            w.line().contains("not decided (the WAL holds only"),
            "{}",
            w.line()
        );
        let n = host(HostSource::Wal, 0);
        assert!(n.line().contains("not compared (no count)"), "{}", n.line());
    }
}
