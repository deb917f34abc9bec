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
