//! `summary.json`'s `errors`: every kind of error the run met, so no failure is silent
//! (issue 38). A kind is an error class and a SQLSTATE (none for what the session or the
//! client raised itself: a lost socket, a transaction timeout, a script's runtime error);
//! each keeps its count and the first error of its kind in full.
//!
//! | field | meaning |
//! |---|---|
//! | `class` | `serialization`, `deadlock`, `connection`, `timeout` or `other` |
//! | `sqlstate` | the server's SQLSTATE; absent when the error was not the server's |
//! | `severity` | `ERROR`, `FATAL`...; absent when the error was not the server's |
//! | `message`, `detail`, `hint`, `context` | the first error's text (the last three when given) |
//! | `count` | errors of this kind over the whole run (ramps included), retried tries included |
//! | `first_at_s` | seconds since the run started, of the first |
//! | `client`, `txn_type` | the client and transaction type of the first |
//! | `command` | a script's command of the first, counted from 0 as pgbench's abort line |
//!
//! Passwords cannot appear: the texts are the server's messages and the session's own.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorEntry {
    pub class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqlstate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub count: u64,
    pub first_at_s: f64,
    pub client: u32,
    pub txn_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<u32>,
}

impl ErrorEntry {
    /// The error as psql and pgbench show it (`ERROR:  message`, then DETAIL, HINT and
    /// CONTEXT lines).
    pub fn text(&self) -> String {
        let mut text = match &self.severity {
            Some(s) => format!("{s}:  {}", self.message),
            None => self.message.clone(),
        };
        for (label, value) in [
            ("DETAIL", &self.detail),
            ("HINT", &self.hint),
            ("CONTEXT", &self.context),
        ] {
            if let Some(v) = value {
                text.push_str(&format!("\n{label}:  {v}"));
            }
        }
        text
    }

    /// Where the first happened: `client 0, "bad.sql" command 1`.
    pub fn place(&self) -> String {
        match self.command {
            Some(c) => format!("client {}, \"{}\" command {c}", self.client, self.txn_type),
            None => format!("client {}, \"{}\"", self.client, self.txn_type),
        }
    }

    /// The kind, as a label: `other, SQLSTATE 42P01`.
    pub fn kind(&self) -> String {
        match &self.sqlstate {
            Some(code) => format!("{}, SQLSTATE {code}", self.class),
            None => self.class.clone(),
        }
    }
}

/// Entries of several shards as one list: counts of one kind summed, the earliest first kept.
pub fn merge(all: impl IntoIterator<Item = ErrorEntry>) -> Vec<ErrorEntry> {
    let mut merged: Vec<ErrorEntry> = Vec::new();
    for e in all {
        match merged
            .iter_mut()
            .find(|m| m.class == e.class && m.sqlstate == e.sqlstate)
        {
            Some(m) => {
                let count = m.count + e.count;
                if e.first_at_s < m.first_at_s {
                    *m = e;
                }
                m.count = count;
            }
            None => merged.push(e),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at: f64, client: u32) -> ErrorEntry {
        ErrorEntry {
            class: "other".into(),
            sqlstate: Some("42P01".into()),
            severity: Some("ERROR".into()),
            message: "relation \"nope\" does not exist".into(),
            detail: None,
            hint: Some("h".into()),
            context: None,
            count: 2,
            first_at_s: at,
            client,
            txn_type: "bad.sql".into(),
            command: Some(1),
        }
    }

    #[test]
    fn shards_merge_by_kind_keeping_the_earliest() {
        let merged = merge([entry(2.0, 1), entry(1.0, 7)]);
        assert_eq!(merged.len(), 1);
        assert_eq!((merged[0].count, merged[0].client), (4, 7));
    }

    #[test]
    fn the_text_and_place_read_as_pgbench_prints_them() {
        let e = entry(0.0, 0);
        assert_eq!(
            e.text(),
            "ERROR:  relation \"nope\" does not exist\nHINT:  h"
        );
        assert_eq!(e.place(), "client 0, \"bad.sql\" command 1");
        assert_eq!(e.kind(), "other, SQLSTATE 42P01");
    }
}
