//! Managed PostgreSQL instances: find the binaries, initdb, start/stop, settings, cgroups
//! (the emulated VM), and running the server as an unprivileged user when tidebench is root.
//!
//! An instance lives in `<home>/instances/<name>/` (`instance.toml`, `data/`, `server.log`);
//! all instances of a home share the socket dir `<home>/sockets/`, kept short because unix
//! socket paths are limited to 107 bytes. This room never runs a workload.
//!
//! This file is the index: the types other rooms hold are in `types`, start, find, status,
//! stop and destroy in `lifecycle`, and what those and `create` and `reconfigure` share in
//! `checks`.

mod binaries;
mod cgroup;
mod checks;
mod create;
pub mod disrupt;
mod error;
mod host_group;
pub mod host_memory;
pub mod initdb_cache;
mod lifecycle;
pub mod noise;
mod os_user;
mod password;
pub mod pooler;
mod reconfigure;
mod record;
mod server;
mod settings;
mod standby;
pub mod tls;
mod types;
pub mod vm;

pub use cgroup::{describe_limits, CgroupPaths, CgroupVersion};
pub use checks::ensure_database;
pub use error::{CgroupError, InstanceError, OsUserError};
pub use host_group::{hold as balloon_hold, Balloon, HostGroup};
pub use initdb_cache::keep_initdb_output_in;
pub use lifecycle::{
    destroy, ensure_running, find, find_running, list, start, start_reporting, status, stop,
};
pub use reconfigure::{reconfigure, Reconfigured};
pub use server::can_lower_oom_scores;
pub use settings::{format_size, parse_size, PASSWORD_GROUP};
pub use standby::{commits_past_promotion, commits_since, promote};
pub use types::{Home, Instance, InstanceOptions, InstanceStatus, StartOutcome, DEFAULT_DBNAME};
