//! `tidebench compare`: results dirs side by side. Each page is a file of its own: the
//! headline numbers of runs ([`runs`], also the text-table helper the others share), the
//! medians of experiment dirs ([`experiment`]), the profiles ([`profile`]), the wait
//! profiles ([`waits`]) and the per-unit times and workload figures ([`units`], TPC-H's
//! queries) of compared runs; the verdict per figure ([`verdict`], over the [`figures`] of
//! each side's runs) and its formats ([`verdict_out`]); the recoveries of runs that played the
//! same events, event by event ([`recoveries`]).

pub mod experiment;
pub mod figures;
pub mod profile;
pub mod recoveries;
pub mod runs;
pub mod units;
pub mod verdict;
pub mod verdict_out;
pub mod waits;

pub use runs::{html, sides, table, Side, Spread};
