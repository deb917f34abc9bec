//! TPC-E-like brokerage workload `tpce` (issue 11; the TPC-V kit's workload): the 33
//! tables, a deterministic generator by load unit, a parallel loader, the twelve transactions
//! with client-side SQL or PL/pgSQL, the customer emulator's mix, the market exchange emulator
//! (issue 12) and the consistency check.
//! Facts and sources are in tpce.md; EGen's code and data lists are not used (tpce.md §6,
//! License): every list and algorithm here is our own.
//!
//! - [`rng`], [`scale`], [`names`], [`price`], [`customer`]: pure functions of (seed, ids)
//!   that the loader and the driver share, so both compute the same attributes without a
//!   database round trip (tpce.md §6 "What the run-time generator must reproduce");
//! - [`gen`]: the rows of each unit of load work as COPY text, the simulated initial market
//!   among them; [`loader`]: `prepare`, `tpce_meta` and readiness;
//! - [`inputs`] and [`mix`]: the run-time input generator and the 890-card deck per client;
//! - [`rules`]: the lot and money rules of a completed trade, which the simulated initial
//!   market and the transactions share;
//! - [`txn`]: the transactions, [`procedures`]: their PL/pgSQL back end;
//! - [`market`]: the market exchange emulator per (group, set), which issues Trade-Result,
//!   Market-Feed, Data-Maintenance and Trade-Cleanup;
//! - [`check`]: the consistency conditions of `tidebench check`;
//! - `plugin`: the registered workload.

pub mod check;
pub mod customer;
mod error;
pub mod gen;
pub mod inputs;
pub mod loader;
pub mod market;
pub mod mix;
pub mod names;
mod plugin;
pub mod price;
pub mod procedures;
pub mod rng;
pub mod rules;
pub mod scale;
pub mod txn;

pub use error::TpceError;
pub use plugin::{Args, Tpce, TpceKind, TPCE};
