//! Metrics: recorders that clients write without locks, merged on each tick into interval and
//! run totals. Formats for humans live elsewhere (`results`, the progress line).

pub mod errors;
pub mod live;
pub mod mixlog;
pub mod outcome;
pub mod recorder;
pub mod rollup;
pub mod txnlog;

pub use outcome::{ErrorClass, Outcome};
pub use recorder::{new_histogram, KeySpace, Recorder, Slot, TargetKey};
pub use rollup::{KeyParts, DEFAULT_ROLE};
