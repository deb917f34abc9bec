//! TPC-E-like workload `tpce` (issue 11), being built: not yet in the registry, so nothing can
//! load or run it. What exists so far is the deterministic data generator core, pure functions
//! that the loader and the driver will share so both compute the same rows without a database
//! round trip (tpce.md §6 "What the run-time generator must reproduce", §9):
//!
//! - [`rng`]: counter-based draws, every value a function of (seed, stream, entity id, field);
//! - [`scale`]: the knobs (customers in load units, trade days, scale factor), their
//!   validation, row counts, the initial trade-id space, tiers and accounts per customer;
//! - [`names`]: person, company, broker and street names, ticker symbols and tax ids from our
//!   own syllable tables, unique where the transactions look them up;
//! - [`price`]: the $20–30 triangle-wave price curve per security and the times limit and
//!   stop orders fire;
//! - [`customer`]: a customer's tier, names, tax id, accounts (CA_ID range), each account's
//!   broker and permitted executors.
//!
//! Still to come: the schema, the loader, the market emulator and the transactions. EGen's
//! code and data lists are not used (tpce.md §6, License): every list here is our own.

pub mod customer;
pub mod gen;
pub mod inputs;
pub mod loader;
pub mod mix;
pub mod names;
pub mod price;
pub mod procedures;
pub mod rng;
pub mod scale;
pub mod txn;
