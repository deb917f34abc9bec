//! Integration tests: one binary, real PostgreSQL instances started through tidebench's own
//! `instance` code, in temp dirs on free ports.

mod bad_input;
mod consolidate;
mod declared_instances;
mod elastic;
mod experiments;
mod faults;
mod instance;
mod knee;
mod libpq_conformance;
mod libpq_defaults;
mod oom;
mod options;
mod pgbench;
mod pgwire_conn;
mod profile;
mod recover;
mod report;
mod results;
mod retail;
mod roles;
mod run;
mod sampler;
mod script;
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
mod tpcv;
