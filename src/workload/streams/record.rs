//! What a group's query streams record over a run, shared by every client of the group: each
//! stream's part, each drawn query's text (so one that failed or timed out can still be rerun
//! by hand), each completed query's time and answer, and each refresh function's time. After
//! the run it becomes the results dir's files under the workload's own directory (`tpch/`,
//! `ch/`), the report's bars, and the workload's metrics (TPC-H's figures).
//!
//! Files, under the results dir's `<dir>/`: `queries/stream<S>_q<N>.sql` (the text as
//! executed, psql-ready), `answers/stream<S>_q<N>.txt` (the answer as the TPC's answer sets
//! write it: a header line of column names, then rows, values separated by `|`),
//! `times.csv` (stream, query, seconds of each completed query) and, with refresh functions,
//! `refresh.csv` (stream, function, pair, seconds).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use super::role::{Role, Unit};
use crate::results::UnitTime;

/// A query that completed.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub stream: u32,
    pub query: u8,
    pub started: Instant,
    pub seconds: f64,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A refresh function that completed.
#[derive(Debug, Clone, PartialEq)]
pub struct Refreshed {
    /// The stream's label (`stream 0` in the power test, `refresh` in the throughput test).
    pub stream: String,
    pub unit: Unit,
    pub started: Instant,
    pub seconds: f64,
}

/// The streams' record; queries keyed by (stream, query), refresh functions in the order
/// they ended.
#[derive(Debug)]
pub struct Record {
    /// The results dir's directory the files go under (the workload's name).
    dir: &'static str,
    roles: Mutex<Vec<Role>>,
    texts: Mutex<BTreeMap<(u32, u8), String>>,
    done: Mutex<BTreeMap<(u32, u8), Done>>,
    refreshed: Mutex<Vec<Refreshed>>,
}

/// A lock whose holder panicked still holds whole entries (each is inserted in one call).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Record {
    /// An empty record whose files go under `dir/`.
    pub fn new(dir: &'static str) -> Record {
        Record {
            dir,
            roles: Mutex::default(),
            texts: Mutex::default(),
            done: Mutex::default(),
            refreshed: Mutex::default(),
        }
    }

    /// Keeps a drawn query's text.
    pub fn text(&self, stream: u32, query: u8, text: String) {
        lock(&self.texts).insert((stream, query), text);
    }

    /// Keeps a completed query's time and answer.
    pub fn done(&self, d: Done) {
        lock(&self.done).insert((d.stream, d.query), d);
    }

    /// Keeps a stream's part, once per client.
    pub fn joined(&self, role: Role) {
        lock(&self.roles).push(role);
    }

    /// Keeps a completed refresh function's time.
    pub fn refreshed(&self, r: Refreshed) {
        lock(&self.refreshed).push(r);
    }

    /// The streams' parts.
    pub fn roles(&self) -> Vec<Role> {
        lock(&self.roles).clone()
    }

    /// Stream `stream`'s query times, by query number.
    pub fn query_times(&self, stream: u32) -> BTreeMap<u8, f64> {
        lock(&self.done)
            .values()
            .filter(|d| d.stream == stream)
            .map(|d| (d.query, d.seconds))
            .collect()
    }

    /// The completed refresh functions.
    pub fn refreshes(&self) -> Vec<Refreshed> {
        lock(&self.refreshed).clone()
    }

    /// From the first unit's start to the last one's end, in seconds (clause 5.3.7's
    /// measurement interval of a throughput test); None before any unit ended.
    pub fn span(&self) -> Option<f64> {
        let done = lock(&self.done);
        let refreshed = lock(&self.refreshed);
        let units = done
            .values()
            .map(|d| (d.started, d.seconds))
            .chain(refreshed.iter().map(|r| (r.started, r.seconds)));
        let mut first: Option<Instant> = None;
        let mut last: Option<Instant> = None;
        for (started, seconds) in units {
            let ended = started + std::time::Duration::from_secs_f64(seconds.max(0.0));
            first = Some(first.map_or(started, |f| f.min(started)));
            last = Some(last.map_or(ended, |l| l.max(ended)));
        }
        Some(last?.duration_since(first?).as_secs_f64())
    }

    /// Each completed query's time, stream by stream in query-number order, for the report's
    /// bars and `compare`.
    pub fn unit_times(&self) -> Vec<UnitTime> {
        let queries: Vec<UnitTime> = lock(&self.done)
            .values()
            .map(|d| UnitTime {
                stream: format!("stream {}", d.stream),
                unit: format!("Q{}", d.query),
                seconds: d.seconds,
            })
            .collect();
        let refreshes = lock(&self.refreshed).clone();
        let rf = |name: &'static str| {
            refreshes
                .iter()
                .filter(move |r| r.unit.name() == name)
                .map(|r| UnitTime {
                    stream: r.stream.clone(),
                    unit: name.to_string(),
                    seconds: r.seconds,
                })
        };
        queries
            .into_iter()
            .chain(rf("RF1"))
            .chain(rf("RF2"))
            .collect()
    }

    /// The files of the results dir, under the workload's directory.
    pub fn files(&self) -> Vec<(String, String)> {
        let dir = self.dir;
        let mut out: Vec<(String, String)> = lock(&self.texts)
            .iter()
            .map(|((s, q), text)| (format!("{dir}/queries/stream{s}_q{q}.sql"), text.clone()))
            .collect();
        let done = lock(&self.done);
        let mut times = String::from("stream,query,seconds\n");
        for ((s, q), d) in done.iter() {
            out.push((format!("{dir}/answers/stream{s}_q{q}.txt"), answer_text(d)));
            let _ = writeln!(times, "{s},{q},{:.6}", d.seconds);
        }
        if !done.is_empty() {
            out.push((format!("{dir}/times.csv"), times));
        }
        let refreshed = lock(&self.refreshed);
        if !refreshed.is_empty() {
            let mut csv = String::from("stream,function,pair,seconds\n");
            for r in refreshed.iter() {
                let pair = match r.unit {
                    Unit::Rf1(p) | Unit::Rf2(p) => p,
                    Unit::Query(_) => 0,
                };
                let _ = writeln!(
                    csv,
                    "{},{},{pair},{:.6}",
                    r.stream,
                    r.unit.name(),
                    r.seconds
                );
            }
            out.push((format!("{dir}/refresh.csv"), csv));
        }
        out
    }
}

/// An answer as the TPC's answer sets write it.
fn answer_text(d: &Done) -> String {
    let mut out = d.columns.join("|");
    out.push('\n');
    for row in &d.rows {
        out.push_str(&row.join("|"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn done(stream: u32, query: u8, seconds: f64) -> Done {
        Done {
            stream,
            query,
            started: Instant::now(),
            seconds,
            columns: vec!["a".into(), "b".into()],
            rows: vec![vec!["1".into(), "x".into()]],
        }
    }

    #[test]
    fn files_hold_texts_answers_and_times_under_the_workloads_dir() {
        let r = Record::new("ch");
        r.text(2, 5, "select 1;\n".into());
        r.done(done(2, 5, 0.25));
        let files = r.files();
        let answer = files
            .iter()
            .find(|(p, _)| p == "ch/answers/stream2_q5.txt")
            .unwrap();
        assert_eq!(answer.1, "a|b\n1|x\n");
        assert!(files
            .iter()
            .any(|(p, t)| p == "ch/queries/stream2_q5.sql" && t == "select 1;\n"));
        let times = files.iter().find(|(p, _)| p == "ch/times.csv").unwrap();
        assert_eq!(times.1, "stream,query,seconds\n2,5,0.250000\n");
        r.done(done(2, 12, 1.0));
        r.done(done(0, 22, 2.0));
        let units: Vec<(String, String)> = r
            .unit_times()
            .into_iter()
            .map(|u| (u.stream, u.unit))
            .collect();
        assert_eq!(
            units,
            [
                ("stream 0".into(), "Q22".into()),
                ("stream 2".into(), "Q5".into()),
                ("stream 2".into(), "Q12".into())
            ]
        );
    }
}
