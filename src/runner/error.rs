//! Why a run could not start or could not write its results. Each variant carries what went
//! wrong with what (the target, the group, the setting and its value, the lower layer's own
//! error) and its message names the fix. The CLI exits 2 for all of them; experiments tell
//! them apart ([`RunError::is_config`]: a bad plan is not worth another try, a target down is).

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::driver::{DriverError, LayoutError};
use crate::instance::InstanceError;
use crate::results::ResultsError;
use crate::target::TargetError;
use crate::workload::WorkloadError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The run's configuration does not hold (a bad key or value).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A workload name that no workload answers to.
    #[error("unknown workload '{name}'; choose from {known}")]
    UnknownWorkload { name: String, known: String },
    /// `--prometheus` names no address that can be served (its message names the flag).
    #[error("{message}")]
    Prometheus { addr: String, message: String },
    /// `--profile` asked for, but perf cannot be run here (its message says what to install
    /// or allow).
    #[error("--profile: {message}")]
    Profile { message: String },
    /// A group's workload options cannot be built into a workload.
    #[error("group '{group}': {message}")]
    Workload { group: String, message: String },
    /// The clients cannot be laid out over the groups and sets (a deck that cannot hold the
    /// shares); the deck's error names the setting.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// `--shard` leaves this shard without a client.
    #[error(
        "--shard {shard}: the run has {clients} client(s), dealt one by one over {shards} shards, \
         so this one has none; use at most {clients} shards or more clients (-c)"
    )]
    EmptyShard {
        shard: String,
        clients: usize,
        shards: u32,
    },
    /// `-M prepared` through a connection pooler that loses named statements when it hands a
    /// session another server session (issue 57).
    #[error(
        "-M prepared: target '{target}' is reached through a connection pooler that hands each \
         session other server sessions and does not carry named prepared statements to them \
         (one prepared on a server session was missing on the next), so the run's statements \
         would fail; use -M extended or -M simple (unnamed statements pass any pooler), or a \
         pooler that carries them (pgbouncer 1.21 or later with max_prepared_statements above \
         0, or pool_mode = session)"
    )]
    PreparedThroughPooler { target: String },
    /// Session settings the run sends as startup options, through a pooler in transaction
    /// mode, which cannot carry them to the server sessions it hands out (issue 57).
    #[error(
        "target '{target}' is reached through a connection pooler that hands each session \
         other server sessions, and the run would start its sessions with {what}: startup \
         options, which such a pooler refuses (pgbouncer: unsupported startup parameter: \
         options) or cannot carry to the server sessions it hands out; set them on the server \
         instead, where every server session starts with them (ALTER ROLE ... SET, or ALTER \
         DATABASE ... SET), and run without them"
    )]
    StartupOptionsThroughPooler { target: String, what: String },
    /// An `[[event]]` its target cannot take (see `disrupt_check::check`).
    #[error("[[event]] {event}: {message}")]
    Event { event: String, message: String },
    /// A declared standby that cannot be made or used as declared (see `standbys`).
    #[error("[[instance]] '{name}': {message}")]
    Standby { name: String, message: String },
    /// The test knob `TIDEBENCH_CLOCK_SKEW` holds no duration.
    #[error("TIDEBENCH_CLOCK_SKEW={value}: {message}")]
    ClockSkewKnob { value: String, message: String },

    /// A target cannot be resolved or reached.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// pgbench's step before the run refused (no pgbench_branches, or no session for it).
    #[error(transparent)]
    PgbenchBeforeRun(#[from] crate::workload::pgbench::BeforeRunError),
    /// A managed instance behind a target cannot be found.
    #[error(transparent)]
    Instance(#[from] InstanceError),
    /// An `[[instance]]` the run declares cannot be created or started.
    #[error("[[instance]] '{name}' of the run: {source}")]
    DeclaredInstance { name: String, source: InstanceError },
    /// A server answered a query the run needs (its settings, its counters, its clock) with
    /// an error, or not in time.
    #[error("target '{target}': {message}")]
    Server { target: String, message: String },
    /// The sampler cannot open its sessions or files (`--sample 0` turns it off).
    #[error("{message}; run with --sample 0 to go without the sampler")]
    Sampler { message: String },
    /// Checking a target's data failed for another reason than missing data.
    #[error("target '{target}': {source}")]
    Check {
        target: String,
        source: WorkloadError,
    },

    /// A database lacks its workload's data (or holds data of another load); the workload's
    /// message says which `prepare` to run.
    #[error("target '{target}': {source}")]
    NotPrepared {
        target: String,
        source: WorkloadError,
    },
    /// Loading a database's data failed.
    #[error("prepare on '{target}': {source}")]
    PrepareFailed {
        target: String,
        source: WorkloadError,
    },
    /// A group's sets hold data of different loads.
    #[error(
        "group '{group}': its sets hold data of different loads (scale {first} and {second}); \
         prepare them alike with `tidebench prepare`"
    )]
    MixedLoads {
        group: String,
        first: u32,
        second: u32,
    },
    /// A group asks for another scale (or knob) than its data was loaded with.
    #[error(
        "group '{group}' asks for {name} {asked}, but its data was loaded with {name} {loaded}; \
         run with --{name} {loaded} (or leave it out), or load again with \
         `tidebench prepare --workload {workload} --{name} {asked} --force`"
    )]
    OtherScale {
        group: String,
        workload: String,
        name: String,
        asked: u32,
        loaded: u32,
    },

    /// The results dir cannot be created or written.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// What an unfinished earlier attempt of an experiment's run left cannot be removed.
    #[error(
        "cannot remove the unfinished run {}: {source}; remove it by hand, or give the \
         experiment another --out", .dir.display()
    )]
    RemoveUnfinished {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The driver could not run the clients: they could not all connect (the target and the
    /// server's answer), or it stopped without its totals (an interval not written).
    #[error(transparent)]
    Driver(#[from] DriverError),

    /// A shard cannot read a server's clock.
    #[error("shard {shard}: reading the clock of {server} failed: {message}")]
    ShardClock {
        shard: String,
        server: String,
        message: String,
    },
    /// A shard's clock is further off the server's than the bound allows.
    #[error(
        "shard {shard} on {host}: its clock is {offset_ms:+.1} ms off {server}'s (± {within_ms:.1} \
         ms), above the bound of {bound_ms} ms; a merge would misplace its intervals. Synchronize \
         the hosts' clocks (chrony or NTP against the same source), or raise --max-clock-offset"
    )]
    ClockOffset {
        shard: String,
        host: String,
        server: String,
        offset_ms: f64,
        within_ms: f64,
        bound_ms: u128,
    },
    /// A shard got to its start instant after it had passed.
    #[error(
        "shard {shard} on {host} reached the start instant {start_at} {late_s:.1} s late \
         (connecting its clients and reading the baseline took until then); give every shard a \
         later --start-at, e.g. +60s@FILE"
    )]
    StartLate {
        shard: String,
        host: String,
        start_at: String,
        late_s: f64,
    },
    /// The stop signal (Ctrl-C) came before the run's measured window.
    #[error("{during}; nothing was measured, run again")]
    Interrupted { during: String },
    /// The host of a consolidation experiment cannot be set up (its message names the fix).
    #[error("{message}")]
    Host { message: String },
    /// A blocking task of the run panicked or was cancelled: a defect, not bad input.
    #[error("an internal task of the run failed ({0}); please report it")]
    Task(#[from] tokio::task::JoinError),
}

impl RunError {
    /// A plan that cannot run as given: trying it again cannot help.
    pub fn is_config(&self) -> bool {
        matches!(
            self,
            RunError::Config(_)
                | RunError::UnknownWorkload { .. }
                | RunError::Prometheus { .. }
                | RunError::Profile { .. }
                | RunError::Workload { .. }
                | RunError::Layout(_)
                | RunError::EmptyShard { .. }
                | RunError::ClockSkewKnob { .. }
                | RunError::PreparedThroughPooler { .. }
                | RunError::StartupOptionsThroughPooler { .. }
                | RunError::Event { .. }
                | RunError::Standby { .. }
        )
    }

    /// The workload `name` is not in the registry.
    pub fn unknown_workload(name: &str) -> RunError {
        RunError::UnknownWorkload {
            name: name.to_string(),
            known: crate::workload::Registry::names().join(", "),
        }
    }

    /// Interrupted `during` something (said in the message's first words).
    pub fn interrupted(during: &str) -> RunError {
        RunError::Interrupted {
            during: during.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_plan_is_config_and_a_server_problem_is_not() {
        let unknown = RunError::unknown_workload("tpcx");
        assert!(unknown.is_config());
        let said = unknown.to_string();
        assert!(
            said.starts_with("unknown workload 'tpcx'; choose from "),
            "{said}"
        );
        assert!(
            said.contains("tpcb"),
            "the choices are the registry's: {said}"
        );
        let server = RunError::Server {
            target: "db1".into(),
            message: "connection refused".into(),
        };
        assert!(!server.is_config());
        assert_eq!(server.to_string(), "target 'db1': connection refused");
    }

    #[test]
    fn another_scale_names_both_values_and_the_commands_that_fix_it() {
        let e = RunError::OtherScale {
            group: "g".into(),
            workload: "tpcc".into(),
            name: "warehouses".into(),
            asked: 5,
            loaded: 3,
        };
        let said = e.to_string();
        assert!(said.contains("asks for warehouses 5"), "{said}");
        assert!(said.contains("run with --warehouses 3"), "{said}");
        assert!(
            said.contains("`tidebench prepare --workload tpcc --warehouses 5 --force`"),
            "{said}"
        );
        assert!(
            !e.is_config(),
            "data of another load is fixed by prepare, not the plan"
        );
    }

    #[test]
    fn not_prepared_keeps_the_workloads_error_as_its_source() {
        let e = RunError::NotPrepared {
            target: "t".into(),
            source: WorkloadError::NoLoad {
                load: "tpce",
                table: "tpce_meta",
                prepare: "tidebench prepare --workload tpce --customers N",
            },
        };
        let source = std::error::Error::source(&e).map(|s| s.to_string());
        assert_eq!(
            source.as_deref(),
            Some(
                "target has no complete tpce load (no tpce_meta table); run `tidebench prepare \
                 --workload tpce --customers N` first"
            )
        );
    }
}
