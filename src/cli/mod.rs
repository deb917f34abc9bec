//! Command line: flags to config, commands to calls, errors to exit codes. No business logic.

pub mod error;

pub use error::CliError;
