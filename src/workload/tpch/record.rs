//! What TPC-H's streams record over a run is the shared runner's record
//! ([`crate::workload::streams::record`]), under the results dir's `tpch/`; the test's
//! metrics are computed from it in [`super::figures`].

pub use crate::workload::streams::record::{Done, Record, Refreshed};

/// The record of a TPC-H run, whose files go under `tpch/`.
pub fn new() -> Record {
    Record::new("tpch")
}
