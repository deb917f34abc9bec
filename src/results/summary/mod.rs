//! `summary.json`: the totals of the measured window, per (target, transaction type), and the
//! servers' own transaction counters over the same window.
//!
//! Counting rules (DESIGN.md's accounting invariant):
//! - `total = committed + expected_rollback + failed`; `retried` counts extra tries and
//!   `retried_txns` the transactions that needed any (pgbench's "transactions retried"); neither
//!   is part of `total`.
//! - `tps = (committed + expected_rollback) / duration_s`: transactions that ended as the
//!   workload meant them to (pgbench's tps likewise excludes failed transactions).
//! - Latency is end − scheduled start in milliseconds (3 decimals), over committed and
//!   expected-rollback transactions only; `lag_ms` (start − scheduled start) appears only in
//!   rate-limited runs. Either is absent when nothing was measured.
//! - `type_rules` holds the workload's per-type limits against what was achieved (see
//!   `rules`); `isolation` is each group's level, one value when all agree.
//!
//! - `headline` is the workload's own headline rate (TPC-C's NOTPM per minute, tpce's tpsE or
//!   tpsV per second) when it has one, and each group, phase and group within a phase carries
//!   its `headline` rate in the same unit (see `headline`); `by_role` holds the measured
//!   window per role (always written, one row for a single-role run), and each
//!   `by_target_and_type` row names its type's `role`.
//! - `mix` is each type's completed transactions and share of the drawn types (emulated
//!   types apart, see `mix`); `ratio_rules` the workload's expected ratios between two types
//!   with their verdicts (see `ratios`).
//!
//! - `incidents` lists what happened to the managed instances during the run (OOM kills,
//!   server processes killed, crash restarts) with their times (see `incidents`); a `server`
//!   row's `restarted` says the server's statistics were reset during the run (crash
//!   recovery does that): its deltas count since the reset and cannot be compared with the
//!   client's.
//!
//! Fields added after schema version 1 was first written (`tpm`, `type_rules`, `isolation`,
//! `headline`, `by_role`, `role`, `mix`, `ratio_rules`, the `headline` of groups and phases,
//! a headline's `per` and `per_second`, `incidents`, a server row's `restarted`) default when
//! absent (`role` to `oltp`, `per` to minute, `incidents` empty, `restarted` false), so older
//! results dirs stay readable without a version bump.

mod build;
mod numbers;
mod schema;
#[cfg(test)]
pub mod tests;

pub use numbers::{micros_to_ms, round3, tps};
pub use schema::{
    Connections, FailedByClass, LatencyLimit, LatencyStats, RunFacts, ServerDelta, ServerReadings,
    Stats, Summary, TargetName, TargetTypeStats,
};
