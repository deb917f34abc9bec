//! Which transaction type a sampled session is running (issue 41), told by its
//! `pg_stat_activity.query` against the statements its group's workload sends
//! (`Workload::statements`), built once per run.
//!
//! A statement's text is normalised (trimmed, whitespace collapsed, trailing `;` dropped) and
//! cut at its first `$n`: what precedes it is the same whatever protocol sends it (the simple
//! protocol puts the value there, the others `$n`), so a query matches a statement when it
//! starts with that prefix (the whole text when it has no `$n`). A query that matches
//! statements of exactly one type counts under it; any other (no match, or a text several
//! types send, as `BEGIN;` when two types run) under [`UNKNOWN`]. An idle session's query is
//! the last it ran, so between transactions it still names the type it just ran.

/// The type of a session whose query names none (or more than one).
pub const UNKNOWN: &str = crate::results::waits::UNKNOWN_TYPE;

/// One group's statements: (prefix, whole text, type name).
#[derive(Debug, Clone, Default)]
pub struct TypeMap {
    entries: Vec<(String, bool, String)>,
}

impl TypeMap {
    /// `statements`: (type name, text with `$n` where a value goes). A text that is nothing
    /// but a value (a prefix left empty) would match any query: left out.
    pub fn new<'a>(statements: impl IntoIterator<Item = (&'a str, &'a str)>) -> TypeMap {
        let mut entries: Vec<(String, bool, String)> = Vec::new();
        for (txn, sql) in statements {
            let text = normalise(sql);
            let (prefix, whole) = match placeholder_at(&text) {
                Some(i) => (text[..i].to_string(), false),
                None => (text, true),
            };
            let entry = (prefix, whole, txn.to_string());
            if !entry.0.is_empty() && !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        TypeMap { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The one type whose statements match `query`, else `None`.
    pub fn type_of(&self, query: &str) -> Option<&str> {
        let q = normalise(query);
        let mut found: Option<&str> = None;
        for (prefix, whole, txn) in &self.entries {
            let hit = if *whole {
                q == *prefix
            } else {
                q.starts_with(prefix.as_str())
            };
            if !hit {
                continue;
            }
            match found {
                Some(t) if t != txn => return None,
                _ => found = Some(txn),
            }
        }
        found
    }
}

/// Trimmed, every run of whitespace one space, trailing `;` dropped.
fn normalise(sql: &str) -> String {
    let mut out = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    while out.ends_with(';') || out.ends_with(' ') {
        out.pop();
    }
    out
}

/// Byte offset of the first `$` followed by a digit.
fn placeholder_at(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(1)).find(|&i| b[i] == b'$' && b[i + 1].is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_counts_under_the_one_type_that_sends_it_by_any_protocol() {
        let m = TypeMap::new([
            ("tpcb", "BEGIN;"),
            (
                "tpcb",
                "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;",
            ),
            (
                "tpcb",
                "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
            ),
            ("tpcb", "END;"),
            ("su", "BEGIN;"),
            (
                "su",
                "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
            ),
            ("su", "END;"),
            (
                "sel",
                "SELECT abalance FROM pgbench_accounts WHERE aid = $1;",
            ),
            ("odd", "$1"),
        ]);
        // Simple protocol: the values in place; extended: `$n`; whitespace as it comes.
        assert_eq!(
            m.type_of("UPDATE pgbench_branches SET bbalance = bbalance + -42 WHERE bid = 1;"),
            Some("tpcb")
        );
        assert_eq!(
            m.type_of("  UPDATE pgbench_branches\n SET bbalance = bbalance + $1 WHERE bid = $2"),
            Some("tpcb")
        );
        assert_eq!(
            m.type_of("SELECT abalance FROM pgbench_accounts WHERE aid = 7;"),
            Some("sel")
        );
        // Sent by two types: neither.
        assert_eq!(m.type_of("END;"), None);
        assert_eq!(
            m.type_of("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 2;"),
            None
        );
        // A whole text matches only itself; nothing matches what no type sends.
        assert_eq!(m.type_of("SELECT 1"), None);
        assert_eq!(m.type_of(""), None);
        let one = TypeMap::new([("tpcb", "BEGIN;"), ("tpcb", "END;")]);
        assert_eq!(one.type_of("end"), None);
        assert_eq!(one.type_of("END"), Some("tpcb"));
        assert_eq!(one.type_of("END; "), Some("tpcb"));
    }
}
