//! `summary.json`'s `shard`: which part of a run spread over several driver processes this
//! results dir holds (issue 26), so `tidebench merge` can check the dirs belong together and
//! say which host did what. Absent for a run in one process.
//!
//! | field | meaning |
//! |---|---|
//! | `run_id` | shared by every shard of the run |
//! | `index`, `count` | this shard, from 0, of `count` |
//! | `host` | the driver host it ran on |
//! | `start_at` | the instant every shard started its clients (RFC 3339) |
//! | `clock_offsets` | per server: this host's clock minus the server's, in ms, and the half round trip that bounds the reading |
//!
//! A merged dir keeps `run_id` and `count`, and lists every shard it was made of in `merged`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardFacts {
    pub run_id: String,
    pub index: u32,
    pub count: u32,
    pub host: String,
    pub start_at: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_offsets: Vec<ClockOffset>,
    /// In a merged dir: the shards it holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<MergedShard>,
}

/// This host's clock against one server's: `offset_ms` is local minus server, measured at the
/// midpoint of a `clock_timestamp()` read, within ± `within_ms` (half its round trip).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    pub server: String,
    pub offset_ms: f64,
    pub within_ms: f64,
}

/// One shard of a merged dir.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    pub index: u32,
    pub host: String,
    pub dir: String,
    /// The largest clock offset it measured, in ms.
    pub max_clock_offset_ms: f64,
    /// Its measured window's commits and tps.
    pub committed: u64,
    pub tps: f64,
    /// Its host's mean CPU use (user + system, percent of all CPUs) over the run, from its
    /// `system.csv`; absent when it sampled nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_pct: Option<f64>,
    /// Its driver's p95 lag behind the schedule (a `--rate` run), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_p95_ms: Option<f64>,
}
