//! tidebench: a benchmark kit for PostgreSQL under consolidation, virtualization and elastic,
//! multi-tenant load. See `DESIGN.md` for the data flow; the rooms below import only downwards:
//! cli → experiment → runner → driver → sampler/profile → workload → results/metrics → target →
//! instance → config, and any of them → event (what a run says while it works, sent to a
//! sink; only `cli` prints) and → error_chain (an error's causes, said).

pub mod cli;
pub mod config;
pub mod driver;
pub mod error_chain;
pub mod event;
pub mod experiment;
pub mod instance;
pub mod launch;
pub mod metrics;
pub mod profile;
pub mod report;
pub mod results;
pub mod runner;
pub mod sampler;
pub mod target;
pub mod workload;
