//! The rules of a completed trade, written once for both sides that must agree on them to the
//! cent: the loader's simulated initial market ([`crate::workload::tpce::gen::trades`]) and the
//! transactions (Trade-Result, and Trade-Order's estimate, [`crate::workload::tpce::txn`]).
//! Neither side owns them, so they live beside both (tpce.md §3.2 Trade-Result frames 2–6).
//!
//! - [`lots`]: which lots of an (account, security) pair a trade closes, shrinks or opens;
//! - [`money`]: charge, commission, tax and the settlement amount, in integer cents.
//!
//! The PL/pgSQL back end (`procedures/trades.sql`) states the same rules in SQL; the
//! integration tests run both back ends of Trade-Result against loaded rows.

pub mod lots;
pub mod money;
