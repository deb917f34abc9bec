//! Per-group options: the transaction isolation every session of the group starts with, and
//! the workload's own options (declared by the workload, see [`super::catalog`]). A run file
//! sets them at the top (for a one-group run or as every group's default) or inside a
//! `[[group]]`; flags override the top level.

use serde::{Deserialize, Serialize};

use super::catalog::OptionValues;

/// The isolation level a group's sessions default to (`default_transaction_isolation`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// PostgreSQL's default; what DBT-2 and HammerDB run TPC-C with.
    #[default]
    ReadCommitted,
    RepeatableRead,
    /// BenchBase's sample TPC-C setting; conflicts are retried with --max-tries.
    Serializable,
}

impl Isolation {
    /// The level as SQL spells it ("read committed").
    pub fn as_sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The startup `options` that make it the session default; empty for the server default,
    /// so a plain run sends exactly what pgbench sends.
    pub fn startup_options(self) -> String {
        match self {
            Isolation::ReadCommitted => String::new(),
            // A backslash keeps the space inside one option (libpq's options syntax).
            other => format!(
                "-c default_transaction_isolation={}",
                other.as_sql().replace(' ', "\\ ")
            ),
        }
    }
}

/// `NAME=VALUE` settings every benchmark session starts with (`--session-set`, pgbench users'
/// `PGOPTIONS`), validated: a name as PostgreSQL spells settings, a value without control
/// characters.
pub fn session_settings(given: &[String]) -> Result<Vec<(String, String)>, String> {
    given
        .iter()
        .map(|s| {
            let (name, value) = s.split_once('=').ok_or_else(|| {
                format!("session-set '{s}' is not NAME=VALUE; e.g. --session-set synchronous_commit=off")
            })?;
            let name = name.trim();
            let good_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            if !good_name {
                return Err(format!(
                    "session-set '{s}': '{name}' is not a setting name (letters, digits, _ and .)"
                ));
            }
            if value.is_empty() || value.chars().any(char::is_control) {
                return Err(format!(
                    "session-set '{s}': give a value, e.g. {name}=off"
                ));
            }
            Ok((name.to_string(), value.to_string()))
        })
        .collect()
}

/// One setting as a startup option: `-c name=value`, with spaces and backslashes escaped as
/// libpq's options syntax wants.
pub fn startup_option(name: &str, value: &str) -> String {
    let value = value.replace('\\', "\\\\").replace(' ', "\\ ");
    format!("-c {name}={value}")
}

/// What one group's sessions and transactions are told beyond the workload's name and scale:
/// the isolation level (any workload) and the workload's own options, resolved by it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupOptions {
    pub isolation: Isolation,
    /// The workload's own options with its defaults filled in; written flat beside
    /// `isolation` in `runtime.toml`, as plans before the workload registry wrote them.
    #[serde(flatten)]
    pub workload: OptionValues,
}

#[cfg(test)]
mod session_tests {
    use super::*;

    #[test]
    fn session_settings_become_startup_options() {
        let s = session_settings(&["synchronous_commit=off".into(), "search_path=a, b".into()])
            .unwrap();
        assert_eq!(s[0], ("synchronous_commit".into(), "off".into()));
        assert_eq!(startup_option(&s[1].0, &s[1].1), "-c search_path=a,\\ b");
        for bad in ["nothing", "=off", "a b=1", "work_mem="] {
            assert!(session_settings(&[bad.into()]).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_committed_sends_nothing_and_others_escape_their_space() {
        assert_eq!(Isolation::ReadCommitted.startup_options(), "");
        assert_eq!(
            Isolation::RepeatableRead.startup_options(),
            "-c default_transaction_isolation=repeatable\\ read"
        );
        assert_eq!(
            Isolation::Serializable.startup_options(),
            "-c default_transaction_isolation=serializable"
        );
    }
}
