//! Samplers: host facts and PostgreSQL counters, read beside the driver, never on its threads.

pub mod host;
pub mod server;
