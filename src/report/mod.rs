//! Reports: read a results dir (never the driver) and present it again. `--by` re-aggregates a
//! finished run at another granularity from `intervals.csv` and `latency.hlog`; `--mix-log`
//! merges the per-thread transaction logs into one CSV ordered by time.
//!
//! `html/` holds `report.html` and its sections (with `html::markup`, the pieces every page is
//! written with), `compare/` the pages of `tidebench compare`, `experiment/` the experiment
//! pages; `load` and `system_view` are what they all read a run through.

pub mod by;
pub mod charts;
pub mod compare;
pub mod experiment;
pub mod flame;
pub mod html;
pub mod load;
pub mod mixlog;
pub mod pooler_view;
pub mod system_view;

pub use by::{aggregate, Dim};

// The paths these had before `compare/` and `results::synthetic` (issue 48), kept while the
// CLI's commands still name them.
pub use crate::results::synthetic;
pub use compare::{
    experiment as compare_experiment, profile as compare_profile, units as compare_units,
    waits as compare_waits,
};
