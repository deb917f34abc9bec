//! tidebench: a benchmark kit for PostgreSQL under consolidation, virtualization and elastic,
//! multi-tenant load. See `docs/DESIGN.md` for the map of the code; the rooms below import only
//! downwards: cli (and main) → launch → experiment → runner → report → driver →
//! sampler/profile → workload → results/metrics → target → instance → config (the floor).
//! Any of them may use the shared leaves `event` (what a run says while it works, sent to a
//! sink; only `cli` prints), `prng` (the random generators) and `error_chain` (an error's
//! causes, said), which import nothing of the crate. `scripts/rooms.py` (run by `make test`) holds the code to the order of DESIGN.md.

pub mod cli;
pub mod config;
pub mod driver;
pub mod error_chain;
pub mod event;
pub mod experiment;
pub mod instance;
pub mod launch;
pub mod metrics;
pub mod prng;
pub mod profile;
pub mod report;
pub mod results;
pub mod runner;
pub mod sampler;
pub mod target;
pub mod workload;
