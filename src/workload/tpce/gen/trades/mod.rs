//! A load unit's simulated initial trade history (tpce.md §2.5, §6 "Initial trades"): nominal
//! tpsE running for the initial trade days on the price curve the run's market emulator also
//! follows, every order completed, and what the completions leave behind. Rows: TRADE,
//! TRADE_HISTORY, SETTLEMENT, CASH_TRANSACTION, HOLDING_HISTORY as the market runs; HOLDING,
//! HOLDING_SUMMARY and the unit's BROKER rows (their trade counts and commission totals) at the
//! end. TRADE_REQUEST stays empty: every loaded order has completed.
//!
//! - [`order`]: one loaded trade's order and execution, a pure function of (seed, scale, trade
//!   number), also used to find a loaded trade's account and symbol without the database
//!   ([`loaded_trade`]);
//! - [`lots`]: a pair's open lots, changed by the lot rule shared with Trade-Result
//!   ([`crate::workload::tpce::rules`], with the money rule);
//! - `book`: the unit's per-account facts, computed once; `sim`: the market; `rows`: COPY rows.
//!
//! Trades are spread over the units round-robin ([`crate::workload::tpce::gen::ids`]), so T_IDs
//! are in submission order over the whole database while each unit simulates only its own
//! customers, whose accounts all have brokers of the same unit.

mod book;
pub mod lots;
pub mod order;
mod rows;
mod sim;

pub use order::{loaded_trade, submitted_at, LoadedTrade};

use super::Batch;
use crate::workload::tpce::scale::Scale;

/// Load unit `lu`'s trade history in batches of about [`super::BATCH_BYTES`].
pub fn batches(seed: u64, scale: &Scale, lu: u64) -> Box<dyn Iterator<Item = Batch> + Send> {
    if lu >= scale.load_units() {
        return Box::new(std::iter::empty());
    }
    Box::new(sim::Sim::new(seed, scale, lu))
}

/// The number of loaded trades of load unit `lu`: its share of the round-robin of
/// [`Scale::initial_trades`].
pub fn trades_in_unit(scale: &Scale, lu: u64) -> u64 {
    let (n, lus) = (scale.initial_trades(), scale.load_units());
    if lu >= lus {
        return 0;
    }
    n / lus + u64::from(lu < n % lus)
}

#[cfg(test)]
mod tests;
