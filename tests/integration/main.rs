//! Integration tests: one binary, real PostgreSQL instances started through tidebench's own
//! `instance` code, in temp dirs on free ports.
//!
//! `make test` runs them in two lanes (scripts/integration.sh): a test that boots a QEMU guest
//! lives in a `vm*` module, whose tests run one at a time; every other test runs two at a
//! time beside them. Budgets on a quiet 2-core machine (the book's reliability chapter has the
//! times): a test outside `vm*` well under 60 s (a new one: seconds), a guest's test under
//! 3 minutes, each lane under 10 minutes.

mod ab;
mod abort;
mod bad_input;
mod ch;
mod consolidate;
mod declared_instances;
mod draws;
mod elastic;
mod events;
mod experiments;
mod failover;
mod faults;
mod instance;
mod knee;
mod libpq_conformance;
mod libpq_defaults;
mod oom;
mod options;
mod per_type;
mod pgbench;
mod pgbench_conformance;
mod pgbench_conformance_cases;
mod pgbench_conformance_judge;
mod pgbench_dropin;
mod pgbench_init;
mod pgbench_logs;
mod pgwire_conn;
mod pooler;
mod profile;
mod readme;
mod recover;
mod report;
mod results;
mod retail;
mod roles;
mod run;
mod sampler;
mod script;
mod script_refusals;
mod shards;
mod slurm;
mod support;
mod tls;
mod tpcc;
mod tpcc_procedures;
mod tpce;
mod tpce_check_fixture;
mod tpce_maintenance;
mod tpce_trades_fixture;
mod tpce_txns;
mod tpch;
mod tpch_refresh;
mod tpcv;
mod transactions;
mod verdict;
mod versions;
mod vm;
mod vm_consolidate;
mod vm_experiments;
mod vm_shared;
mod waits;
