//! TPC-H (issues 50 and 51): the analytic benchmark, registered as `tpch`.
//!
//! - [`plugin`]: the registered workload, its options, and a query stream per client.
//! - [`loader`]: `prepare` on the loading kit and readiness against `tpch_meta`.
//! - [`record`]: what the streams recorded (the shared runner's record), as the results
//!   dir's `tpch/` files; [`figures`]: the metrics computed from it.
//! - [`role`]: which part each client takes in the test (a query stream, the power test's
//!   stream 0 with its refresh functions, or the throughput test's refresh stream);
//!   [`stream`]: what TPC-H gives the shared query-stream runner
//!   ([`crate::workload::streams`]), which runs those parts' units.
//! - [`refresh`]: the update sets (new orders in the key space's gaps, old ones by index)
//!   and the refresh functions RF1 and RF2 (clause 2.5).
//! - [`rows`]: the scale factor (TPC-H clause 4.1.3) and each table's rows from the `tpchgen`
//!   crate (the DataFusion port of DBGEN, clause 4.2) as COPY text, one part of N at a time.
//! - [`schema`]: the eight tables (clause 1.4), their primary keys, and the foreign keys and
//!   indexes a PostgreSQL user adds, as separate pieces.
//! - [`queries`]: the 22 query templates (clause 2.4), their substitution parameters (qgen's
//!   rules, or the qualification values of clause 2.4.x.4), and each stream's order (Appendix A).
//! - [`qphh`]: `--qphh`, the power test then the throughput test from one command: each
//!   run's options (the runner runs the two).
//! - [`power`]: Power@Size, Throughput@Size and QphH@Size (clauses 5.3.7, 5.4).
//! - [`answers`]: the qualification answer set and its tolerances (clause 2.1.3.5).

pub mod answers;
mod figures;
pub mod loader;
mod plugin;
pub mod power;
pub mod qphh;
pub mod queries;
pub mod record;
pub mod refresh;
#[cfg(test)]
mod refresh_spec;
mod role;
pub mod rows;
pub mod schema;
mod stream;

pub use plugin::{Tpch, TpchKind, TPCH};
