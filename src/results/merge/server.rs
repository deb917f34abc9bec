//! The server check over every shard of a run: on each database, the server's commit count
//! from the earliest idle reading to the latest final one, against the sum of what every
//! shard committed there (with one commit per session each opened).
//!
//! Why the earliest idle reading: a shard reads its database idle before its own clients
//! connect, so the smallest reading precedes every shard's sessions (a shard whose sessions
//! had already been counted would have read earlier, and smaller). Why the latest final
//! reading: each shard waits, before its final reading, until no tidebench session is left on
//! the database, whichever shard opened it.

use super::super::{ServerDelta, ServerReadings};

/// The merged deltas, and the databases left out with the reason.
pub struct ServerCheck {
    pub deltas: Vec<ServerDelta>,
    pub notes: Vec<String>,
}

/// `shards` holds each shard's `server` list.
pub fn merged_deltas(shards: &[&[ServerDelta]]) -> ServerCheck {
    // Databases in the first shard's order; each shard lists the same ones.
    let mut keys: Vec<(String, String)> = Vec::new();
    for s in shards {
        for d in s.iter() {
            let key = (d.target.clone(), d.dbname.clone());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let mut out = ServerCheck {
        deltas: Vec::new(),
        notes: Vec::new(),
    };
    for (target, dbname) in keys {
        let rows: Vec<&ServerDelta> = shards
            .iter()
            .filter_map(|s| s.iter().find(|d| d.target == target && d.dbname == dbname))
            .collect();
        if rows.len() < shards.len() {
            out.notes.push(format!(
                "{target}: {} of {} shards could read its counters after the run, so the \
                 server's count is not compared",
                rows.len(),
                shards.len()
            ));
            continue;
        }
        let readings: Option<Vec<ServerReadings>> = rows.iter().map(|d| d.readings).collect();
        let Some(readings) = readings else {
            out.notes.push(format!(
                "{target}: a shard's summary has no raw counter readings (written by an older \
                 tidebench), so the server's count is not compared"
            ));
            continue;
        };
        let idle = readings.iter().map(|r| r.idle_commit).min().unwrap_or(0);
        let sessions: i64 = readings.iter().map(|r| r.sessions).sum();
        let last = readings.iter().map(|r| r.final_commit).max().unwrap_or(0);
        let merged = ServerReadings {
            idle_commit: idle,
            sessions,
            final_commit: last,
        };
        out.deltas.push(ServerDelta {
            target: target.clone(),
            dbname: dbname.clone(),
            xact_commit_delta: last - (idle + sessions),
            // Rollbacks are not split per shard's window: the sum of what each shard saw.
            xact_rollback_delta: rows.iter().map(|d| d.xact_rollback_delta).sum(),
            client_committed: rows.iter().map(|d| d.client_committed).sum(),
            restarted: rows.iter().any(|d| d.restarted),
            cut_in_flight: rows.iter().map(|d| d.cut_in_flight).sum(),
            readings: Some(merged),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(idle: i64, sessions: i64, last: i64, committed: i64) -> ServerDelta {
        ServerDelta {
            target: "t".into(),
            dbname: "d".into(),
            xact_commit_delta: last - idle - sessions,
            xact_rollback_delta: 0,
            client_committed: committed,
            restarted: false,
            cut_in_flight: 0,
            readings: Some(ServerReadings {
                idle_commit: idle,
                sessions,
                final_commit: last,
            }),
        }
    }

    #[test]
    fn the_window_runs_from_the_first_idle_reading_to_the_last_final_one() {
        // Shard A read idle at 100 and opened 2 sessions, B read at 102 (A's sessions already
        // counted) and opened 3; together they committed 500, all in the final 605.
        let a = [delta(100, 2, 604, 300)];
        let b = [delta(102, 3, 605, 200)];
        let check = merged_deltas(&[&a, &b]);
        assert!(check.notes.is_empty());
        let d = &check.deltas[0];
        assert_eq!(d.xact_commit_delta, 605 - 100 - 5);
        assert_eq!(d.client_committed, 500);
    }

    #[test]
    fn a_shard_without_readings_leaves_the_database_unchecked() {
        let a = [delta(1, 1, 10, 8)];
        let mut old = delta(1, 1, 10, 8);
        old.readings = None;
        let check = merged_deltas(&[&a, &[old]]);
        assert!(check.deltas.is_empty());
        assert!(check.notes[0].contains("older"));
    }
}
