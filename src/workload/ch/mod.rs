//! CH-benCHmark (issue 52): TPC-C's tables and transactions plus SUPPLIER, NATION and REGION
//! and 22 analytic queries adapted from TPC-H, run at the same time on the same data
//! (Cole et al., "The Mixed Workload CH-benCHmark", DBTest 2011). Registered as `ch`, a
//! query-only workload of TPC-C's family: its load is TPC-C's (with what CH adds), and the
//! OLTP side is a `tpcc` group on the same database.
//!
//! - [`plugin`]: the registered workload; its clients are query streams of the shared runner
//!   ([`crate::workload::streams`]), its results the run's `ch/` files.
//! - [`loader`]: `prepare` on TPC-C's loader with CH's additions, and readiness.
//! - [`tables`]: the three added tables, the two added columns, and their rows.
//! - [`queries`]: the 22 texts, and how their dates move to the load's.

pub mod loader;
mod plugin;
pub mod queries;
pub mod tables;

pub use plugin::{Ch, ChKind, CH};
