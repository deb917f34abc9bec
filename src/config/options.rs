//! Per-group workload options: the transaction isolation every session of the group starts
//! with, and TPC-C's terminal settings (spec keying and think times, stored procedures, clients
//! per warehouse). A run file sets them at the top (for a one-group run or as every group's
//! default) or inside a `[[group]]`; flags override the top level.

use serde::{Deserialize, Serialize};

use super::plan::WorkloadName;

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

/// Keying and think times of TPC-C's terminal model (clause 5.2.5).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum ThinkMode {
    /// No keying or think time: each client sends its next transaction at once (the seed's
    /// "thinktime=zero"; DBT-2's and HammerDB's usual setting).
    #[default]
    Zero,
    /// The spec's fixed keying time before and negative-exponential think time after each
    /// transaction: about 12 transactions per minute per client.
    Spec,
}

/// What one group's sessions and transactions are told, beyond the workload's name and scale.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadOptions {
    pub isolation: Isolation,
    pub think: ThinkMode,
    /// TPC-C: call the PL/pgSQL functions `prepare` installs instead of client-side SQL.
    pub procedures: bool,
    /// TPC-C: clients sharing one home warehouse before the next warehouse gets one; unset
    /// spreads clients over warehouses round-robin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients_per_warehouse: Option<u32>,
}

/// The options as written (top level or group), every one optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawOptions {
    pub isolation: Option<Isolation>,
    pub think: Option<ThinkMode>,
    pub procedures: Option<bool>,
    pub clients_per_warehouse: Option<u32>,
}

impl RawOptions {
    /// Values set in `self` win over `base`.
    pub fn or(self, base: RawOptions) -> RawOptions {
        RawOptions {
            isolation: self.isolation.or(base.isolation),
            think: self.think.or(base.think),
            procedures: self.procedures.or(base.procedures),
            clients_per_warehouse: self.clients_per_warehouse.or(base.clients_per_warehouse),
        }
    }

    /// The run-level options a group of `workload` inherits: TPC-C's own options pass only to
    /// TPC-C groups, so `--think spec` on a mixed run sets up its TPC-C groups.
    pub fn inherited_by(self, workload: WorkloadName) -> RawOptions {
        if workload == WorkloadName::Tpcc {
            return self;
        }
        RawOptions {
            isolation: self.isolation,
            ..RawOptions::default()
        }
    }

    /// Checks the options fit `workload`; the message names the option and the fix.
    pub fn validate(self, workload: WorkloadName) -> Result<WorkloadOptions, String> {
        let tpcc_only = [
            (
                "think = \"spec\" (--think spec)",
                self.think == Some(ThinkMode::Spec),
            ),
            ("procedures (--procedures)", self.procedures == Some(true)),
            (
                "clients_per_warehouse (--clients-per-warehouse)",
                self.clients_per_warehouse.is_some(),
            ),
        ];
        if workload != WorkloadName::Tpcc {
            if let Some((what, _)) = tpcc_only.iter().find(|(_, set)| *set) {
                return Err(format!(
                    "{what} applies to the tpcc workload only, not {}; remove it",
                    workload.as_str()
                ));
            }
        }
        if self.clients_per_warehouse == Some(0) {
            return Err(
                "clients_per_warehouse must be at least 1 (the spec's terminal model has 10)"
                    .into(),
            );
        }
        Ok(WorkloadOptions {
            isolation: self.isolation.unwrap_or_default(),
            think: self.think.unwrap_or_default(),
            procedures: self.procedures.unwrap_or(false),
            clients_per_warehouse: self.clients_per_warehouse,
        })
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

    #[test]
    fn tpcc_options_are_refused_for_pgbench_workloads() {
        let raw = RawOptions {
            procedures: Some(true),
            ..RawOptions::default()
        };
        let err = raw.validate(WorkloadName::Tpcb).unwrap_err();
        assert!(err.contains("procedures") && err.contains("tpcc"), "{err}");
        assert!(raw.validate(WorkloadName::Tpcc).unwrap().procedures);
        let iso = RawOptions {
            isolation: Some(Isolation::Serializable),
            ..RawOptions::default()
        };
        assert_eq!(
            iso.validate(WorkloadName::SelectOnly).unwrap().isolation,
            Isolation::Serializable
        );
    }

    #[test]
    fn group_values_win_over_the_top_level() {
        let top = RawOptions {
            think: Some(ThinkMode::Spec),
            isolation: Some(Isolation::Serializable),
            ..RawOptions::default()
        };
        let group = RawOptions {
            isolation: Some(Isolation::RepeatableRead),
            ..RawOptions::default()
        };
        let o = group.or(top).validate(WorkloadName::Tpcc).unwrap();
        assert_eq!(
            (o.isolation, o.think),
            (Isolation::RepeatableRead, ThinkMode::Spec)
        );
    }
}
