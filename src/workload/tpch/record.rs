//! What TPC-H's streams record over a run, shared by every client of a group: each drawn
//! query's text (so one that failed or timed out can still be rerun by hand), and each
//! completed query's time and answer. After the run it becomes the results dir's `tpch/`
//! files and the power test's Power@Size (clause 5.4.1, from stream 0's 22 times).
//!
//! Files, under the results dir: `tpch/queries/stream<S>_q<N>.sql` (the text as executed,
//! psql-ready), `tpch/answers/stream<S>_q<N>.txt` (the answer as the TPC's answer sets write
//! it: a header line of column names, then rows, values separated by `|`), and
//! `tpch/times.csv` (stream, query, seconds of each completed query).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, MutexGuard};

use super::power::{power_at_size, QUERIES};
use super::queries::QueryText;
use super::rows::ScaleFactor;
use crate::results::Figure;

/// A query that completed.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub stream: u32,
    pub query: u8,
    pub seconds: f64,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The streams' record, keyed by (stream, query).
#[derive(Debug, Default)]
pub struct Record {
    texts: Mutex<BTreeMap<(u32, u8), String>>,
    done: Mutex<BTreeMap<(u32, u8), Done>>,
}

/// A lock whose holder panicked still holds whole entries (each is inserted in one call).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Record {
    /// Keeps a drawn query's text.
    pub fn text(&self, q: &QueryText) {
        lock(&self.texts).insert((q.stream, q.number), q.sql());
    }

    /// Keeps a completed query's time and answer.
    pub fn done(&self, d: Done) {
        lock(&self.done).insert((d.stream, d.query), d);
    }

    /// The power test's Power@Size over stream 0's times: not valid (and without refresh
    /// functions, which part 2 adds, never spec-complete) when a query did not complete.
    pub fn power(&self, sf: ScaleFactor) -> Figure {
        let done = lock(&self.done);
        let times: Vec<Option<f64>> = (1..=QUERIES as u8)
            .map(|q| done.get(&(0, q)).map(|d| d.seconds))
            .collect();
        let missing: Vec<String> = times
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_none())
            .map(|(i, _)| format!("Q{}", i + 1))
            .collect();
        let label = "Power@Size".to_string();
        if !missing.is_empty() {
            return Figure {
                label,
                value: None,
                valid: false,
                note: format!(
                    "stream 0 did not complete {} (failed, timed out or cut)",
                    missing.join(", ")
                ),
            };
        }
        let times: Vec<f64> = times.into_iter().flatten().collect();
        match power_at_size(sf.get(), &times, &[]) {
            Ok(p) => Figure {
                label,
                value: Some(p.value),
                valid: true,
                note: format!(
                    "SF {sf}, stream 0's 22 queries{}; without the refresh functions RF1, RF2",
                    if p.floored {
                        ", short ones raised to max/1000 (clause 5.4.1.4)"
                    } else {
                        ""
                    }
                ),
            },
            Err(e) => Figure {
                label,
                value: None,
                valid: false,
                note: e.to_string(),
            },
        }
    }

    /// The `tpch/` files of the results dir.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = lock(&self.texts)
            .iter()
            .map(|((s, q), text)| (format!("tpch/queries/stream{s}_q{q}.sql"), text.clone()))
            .collect();
        let done = lock(&self.done);
        let mut times = String::from("stream,query,seconds\n");
        for ((s, q), d) in done.iter() {
            out.push((format!("tpch/answers/stream{s}_q{q}.txt"), answer_text(d)));
            let _ = writeln!(times, "{s},{q},{:.6}", d.seconds);
        }
        if !done.is_empty() {
            out.push(("tpch/times.csv".into(), times));
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
mod tests {
    use super::*;

    fn done(stream: u32, query: u8, seconds: f64) -> Done {
        Done {
            stream,
            query,
            seconds,
            columns: vec!["a".into(), "b".into()],
            rows: vec![vec!["1".into(), "x".into()]],
        }
    }

    #[test]
    fn power_needs_every_query_of_stream_zero() {
        let sf = ScaleFactor::new(1.0).unwrap();
        let r = Record::default();
        for q in 1..=21 {
            r.done(done(0, q, 1.0));
        }
        r.done(done(1, 22, 1.0));
        let f = r.power(sf);
        assert!(
            !f.valid && f.value.is_none() && f.note.contains("Q22"),
            "{f:?}"
        );
        r.done(done(0, 22, 1.0));
        // 22 intervals of 1 s: 3600 × 1 / 1.
        let f = r.power(sf);
        assert_eq!((f.value, f.valid), (Some(3600.0), true));
    }

    #[test]
    fn files_hold_texts_answers_and_times() {
        let r = Record::default();
        r.done(done(2, 5, 0.25));
        let files = r.files();
        let answer = files
            .iter()
            .find(|(p, _)| p == "tpch/answers/stream2_q5.txt")
            .unwrap();
        assert_eq!(answer.1, "a|b\n1|x\n");
        let times = files.iter().find(|(p, _)| p == "tpch/times.csv").unwrap();
        assert_eq!(times.1, "stream,query,seconds\n2,5,0.250000\n");
    }
}
