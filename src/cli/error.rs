//! Errors as the user sees them: the rooms' own typed errors, kept as they are up to `main`,
//! which prints the message (naming the problem and the fix), then each cause (`source()`)
//! on a line of its own, and exits with the code the error's kind calls for:
//! 0 ok; 1 the run finished but a check or threshold failed; 2 usage, config or setup error,
//! or a run whose client an error aborted (pgbench's "Run was aborted", issue 38); 130 a run
//! or prepare interrupted (see `EXIT_INTERRUPTED`).

use crate::config::ConfigError;
use crate::experiment::ExperimentError;
use crate::instance::InstanceError;
use crate::launch::LaunchError;
use crate::results::ResultsError;
use crate::runner::RunError;
use crate::target::TargetError;
use crate::workload::WorkloadError;

/// Exit code of a command that ran but whose check or threshold did not hold.
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code of a usage, config or setup error (and of a run a client's error aborted).
pub const EXIT_USAGE: u8 = 2;

/// What ends a command with an error. The CLI's own refusals are text (each names the flag
/// and the fix); the rooms' errors keep their type, and so their causes.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad flags, config, DSN, or a server/instance that is not usable: exit 2.
    #[error("{0}")]
    Usage(String),
    /// The command ran but what it checked did not hold: exit 1.
    #[error("{0}")]
    CheckFailed(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Instance(#[from] InstanceError),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A run (or an experiment's) could not start or could not write its results (boxed:
    /// the run's error is large, and every command returns this type).
    #[error(transparent)]
    Run(Box<RunError>),
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// An experiment dir's `experiment.json` cannot be read.
    #[error(transparent)]
    ExperimentFile(#[from] crate::results::experiment::ReadError),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<RunError> for CliError {
    fn from(e: RunError) -> CliError {
        CliError::Run(Box::new(e))
    }
}

impl CliError {
    /// Bad flags, config, DSN, or a server/instance that is not usable: exit 2.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage(message.into())
    }

    /// The command ran but what it checked did not hold: exit 1.
    pub fn check_failed(message: impl Into<String>) -> CliError {
        CliError::CheckFailed(message.into())
    }

    /// The process's exit code for this error.
    pub fn code(&self) -> u8 {
        match self {
            CliError::CheckFailed(_) => EXIT_CHECK_FAILED,
            _ => EXIT_USAGE,
        }
    }

    /// What `main` prints: `error: ` and the message, then each cause not already said in
    /// it, indented, one per line.
    pub fn said(&self) -> String {
        let mut text = format!("error: {self}");
        for cause in crate::error_chain::causes(self) {
            text.push_str("\n  caused by: ");
            text.push_str(&cause);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::DriverError;

    /// The driver's connect error reaches `main` through the runner's error with the
    /// server's answer still its cause, printed on a line of its own.
    #[test]
    fn a_typed_error_is_printed_with_its_cause() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused here");
        let e = CliError::from(RunError::from(DriverError::Connect {
            target: "db1".into(),
            source: pgwire::Error::from(refused),
        }));
        assert_eq!(e.code(), EXIT_USAGE);
        let said = e.said();
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), 2, "{said}");
        assert!(
            lines[0].starts_with("error: cannot connect to target db1; "),
            "{said}"
        );
        assert!(lines[0].contains("tidebench target check"), "{said}");
        assert!(lines[1].starts_with("  caused by: "), "{said}");
        assert!(lines[1].contains("refused here"), "{said}");
    }

    /// A message that already embeds its cause ("…: {source}") says it once.
    #[test]
    fn a_cause_in_the_message_is_not_said_twice() {
        let e = CliError::from(ConfigError::Read {
            file: "x.toml".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "not there"),
        });
        assert_eq!(e.said(), "error: cannot read config file x.toml: not there");
    }

    #[test]
    fn a_failed_check_exits_1_and_everything_else_2() {
        assert_eq!(CliError::check_failed("2 of 3 failed").code(), 1);
        assert_eq!(CliError::usage("bad flag").code(), 2);
        assert_eq!(CliError::from(std::io::Error::other("disk")).code(), 2);
    }
}
