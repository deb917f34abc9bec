//! The errors a run met, by kind, so no failure is silent (issue 38, item 4): a kind is an
//! error class and a SQLSTATE (no SQLSTATE for what the session or the client itself raised:
//! a lost socket, a timeout, a script's runtime error). Each kind keeps its count and the
//! first error of its kind in full (the server's ERROR, DETAIL, HINT and CONTEXT, the client,
//! the transaction type and, for scripts, the command).
//!
//! It lives in the thread's [`super::Recorder`], so it travels with the tick's counts: the
//! first error of a kind is copied once per tick and thread, every later one only bumps a
//! counter after a scan of a few entries. Merging keeps the earliest first.

use std::time::Instant;

use super::ErrorClass;

/// One kind of error: its class and SQLSTATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorKey {
    pub class: ErrorClass,
    /// `None` when the error did not come from the server.
    pub sqlstate: Option<[u8; 5]>,
}

/// Where and when the first error of a kind happened, and what it said.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstError {
    pub at: Instant,
    pub client: u32,
    /// Global transaction type index (the key space's).
    pub txn: usize,
    /// A script's command (0-based, as pgbench numbers them), when the workload knows it.
    pub command: Option<u32>,
    /// `ERROR`, `FATAL`...; empty when the error did not come from the server.
    pub severity: String,
    pub message: String,
    pub more: Option<pgwire::DbMore>,
}

impl FirstError {
    /// The error as psql and pgbench show it: `ERROR:  message`, then `DETAIL:  `, `HINT:  `
    /// and `CONTEXT:  ` lines where the server gave them.
    pub fn text(&self) -> String {
        server_text(&self.severity, &self.message, self.more.as_ref())
    }
}

/// `ERROR:  message` (two spaces, as libpq writes it) with DETAIL/HINT/CONTEXT lines; the
/// message alone when there is no severity (a client-side error).
pub fn server_text(severity: &str, message: &str, more: Option<&pgwire::DbMore>) -> String {
    let mut text = if severity.is_empty() {
        message.to_string()
    } else {
        format!("{severity}:  {message}")
    };
    if let Some(m) = more {
        for (label, value) in [
            ("DETAIL", &m.detail),
            ("HINT", &m.hint),
            ("CONTEXT", &m.context),
        ] {
            if let Some(v) = value {
                text.push_str(&format!("\n{label}:  {v}"));
            }
        }
    }
    text
}

/// A kind's count and its first error.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorSeen {
    pub key: ErrorKey,
    pub count: u64,
    pub first: FirstError,
}

/// The kinds of error one recorder saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorTally {
    pub kinds: Vec<ErrorSeen>,
}

impl ErrorTally {
    /// Counts one error of kind `key`; `first` makes its record only when the kind is new
    /// here, so a repeated error allocates nothing.
    pub fn note(&mut self, key: ErrorKey, first: impl FnOnce() -> FirstError) {
        match self.kinds.iter_mut().find(|k| k.key == key) {
            Some(k) => k.count += 1,
            None => self.kinds.push(ErrorSeen {
                key,
                count: 1,
                first: first(),
            }),
        }
    }

    /// Adds `other`'s counts; of two firsts of one kind the earlier stays.
    pub fn merge(&mut self, other: &ErrorTally) {
        for o in &other.kinds {
            match self.kinds.iter_mut().find(|k| k.key == o.key) {
                Some(k) => {
                    k.count += o.count;
                    if o.first.at < k.first.at {
                        k.first = o.first.clone();
                    }
                }
                None => self.kinds.push(o.clone()),
            }
        }
    }

    pub fn clear(&mut self) {
        self.kinds.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(at: Instant, client: u32) -> FirstError {
        FirstError {
            at,
            client,
            txn: 0,
            command: Some(1),
            severity: "ERROR".into(),
            message: format!("from client {client}"),
            more: None,
        }
    }

    const OTHER: ErrorKey = ErrorKey {
        class: ErrorClass::Other,
        sqlstate: Some(*b"42P01"),
    };

    #[test]
    fn a_kind_keeps_its_first_error_and_counts_the_rest() {
        let t0 = Instant::now();
        let mut a = ErrorTally::default();
        a.note(OTHER, || first(t0, 0));
        a.note(OTHER, || panic!("a known kind builds no record"));
        let serial = ErrorKey {
            class: ErrorClass::Serialization,
            sqlstate: Some(*b"40001"),
        };
        a.note(serial, || first(t0, 3));
        assert_eq!(a.kinds.len(), 2);
        assert_eq!(a.kinds[0].count, 2);
        assert_eq!(a.kinds[0].first.client, 0);
    }

    #[test]
    fn merging_sums_counts_and_keeps_the_earliest_first() {
        let t0 = Instant::now();
        let later = t0 + std::time::Duration::from_millis(5);
        let mut a = ErrorTally::default();
        a.note(OTHER, || first(later, 1));
        let mut b = ErrorTally::default();
        b.note(OTHER, || first(t0, 2));
        b.note(OTHER, || first(t0, 2));
        a.merge(&b);
        assert_eq!(a.kinds.len(), 1);
        assert_eq!(a.kinds[0].count, 3);
        assert_eq!(a.kinds[0].first.client, 2);
    }

    #[test]
    fn the_text_reads_as_libpq_writes_it() {
        let more = pgwire::DbMore {
            detail: Some("d1".into()),
            hint: None,
            context: Some("c1".into()),
            position: None,
        };
        assert_eq!(
            server_text("ERROR", "boom", Some(&more)),
            "ERROR:  boom\nDETAIL:  d1\nCONTEXT:  c1"
        );
        assert_eq!(
            server_text("", "undefined variable", None),
            "undefined variable"
        );
    }
}
