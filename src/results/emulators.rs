//! What each set's emulator (tpce's market exchange) held when the run ended, as
//! `summary.json`'s `emulators` states it: work handed out, work given up, and work still
//! pending (due and not yet run, or waiting for its time: a scheduled Trade-Result, an armed
//! limit-order trigger), so a market that could not keep up, or a set whose server died, is
//! visible rather than silently short of Trade-Results.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmulatorEnd {
    pub group: String,
    pub set: String,
    /// Jobs handed to clients over the whole run.
    pub issued: u64,
    /// Jobs given up after failing, and orders whose trigger can never fire.
    pub abandoned: u64,
    /// Work not done when the clients stopped: `overdue_at_end` plus work waiting its time.
    pub pending_at_end: u64,
    /// Of it, jobs already due that no client had taken.
    pub overdue_at_end: u64,
    /// How late the most overdue of them was, in ms.
    pub lag_ms_at_end: f64,
}
