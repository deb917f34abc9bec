//! Errors as the user sees them: one message naming the problem and the fix, and an exit code.
//! 0 ok; 1 the run finished but a check or threshold failed; 2 usage, config or setup error,
//! or a run whose client an error aborted (pgbench's "Run was aborted", issue 38).

use std::fmt;

pub const EXIT_CHECK_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    /// Bad flags, config, DSN, or a server/instance that is not usable: exit 2.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }

    /// The command ran but what it checked did not hold: exit 1.
    pub fn check_failed(message: impl Into<String>) -> CliError {
        CliError {
            code: EXIT_CHECK_FAILED,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

macro_rules! usage_from {
    ($($t:ty),*) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> CliError {
                CliError::usage(e.to_string())
            }
        }
    )*};
}

usage_from!(
    crate::config::ConfigError,
    crate::target::TargetError,
    crate::instance::InstanceError,
    crate::workload::WorkloadError,
    std::io::Error
);
