//! Samplers: host facts and PostgreSQL counters, read beside the driver, never on its threads.
//! `run` is the loop writing `system.csv`; `prometheus` serves live counters during a run.

pub mod cgroup;
pub mod disk;
pub mod freshness;
pub mod guest;
pub mod host;
pub mod host_stats;
pub mod incidents;
pub mod noise;
pub mod pg_counters;
pub mod pooler;
pub mod proc_tree;
pub mod prometheus;
pub mod run;
pub mod server;
pub mod waits;

pub use run::{LatestSamples, RunningSampler, Sampler, SamplerReport};
