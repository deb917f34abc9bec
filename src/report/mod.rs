//! Reports: read a results dir (never the driver) and present it again. `--by` re-aggregates a
//! finished run at another granularity from `intervals.csv` and `latency.hlog`; `--mix-log`
//! merges the per-thread transaction logs into one CSV ordered by time.

pub mod by;
pub mod cases_view;
pub mod charts;
pub mod commands_view;
pub mod compare;
pub mod compare_experiment;
pub mod compare_profile;
pub mod compare_waits;
pub mod experiment;
pub mod flame;
pub mod html;
pub mod load;
pub mod mixlog;
pub mod roles_view;
pub mod rules_view;
pub mod synthetic;
pub mod system_view;

pub use by::{aggregate, Dim};
