//! What can go wrong with a managed instance, each message naming the problem and the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// A setup problem whose message already names the fix.
    #[error("{0}")]
    Setup(String),

    #[error(
        "--cpus {cpus} is out of range; give a number of cores between {} and {}, e.g. 0.5 or 2",
        crate::config::instances::CPUS.start(),
        crate::config::instances::CPUS.end()
    )]
    CpusOutOfRange { cpus: f64 },

    #[error(
        "--memory {} is too small for PostgreSQL; give at least {}",
        crate::config::size::format_size(*.memory),
        crate::config::size::format_size(crate::config::instances::MIN_MEMORY)
    )]
    MemoryTooSmall { memory: u64 },

    #[error("--port 0 is not a port; give 1-65535 or leave it out to pick a free one")]
    PortZero,

    #[error("cannot find a free port on 127.0.0.1; give one with --port")]
    NoFreePort,

    /// A `--set` key that is not a setting's name, or one tidebench sets itself.
    #[error("--set {key}=...: {message}")]
    BadSetting { key: String, message: String },

    #[error(
        "the socket dir {} is {len} bytes long, but unix socket paths are limited to 107 bytes \
         (the dir may be at most {most}); set TIDEBENCH_HOME to a shorter path, e.g. \
         /var/tmp/tidebench", .dir.display()
    )]
    SocketDirTooLong {
        dir: PathBuf,
        len: usize,
        most: usize,
    },

    #[error(
        "the socket dir {} contains a comma, which PostgreSQL reads as a list separator; set \
         TIDEBENCH_HOME to a path without commas", .dir.display()
    )]
    SocketDirComma { dir: PathBuf },

    #[error(
        "instance '{name}' was created with the PostgreSQL binaries in {}, which are gone; \
         reinstall that PostgreSQL version, or run `tidebench instance destroy {name}` and \
         create it anew", .bin_dir.display()
    )]
    BinariesGone { name: String, bin_dir: PathBuf },

    #[error(
        "no instance '{name}' in {}; create it with `tidebench instance start {name}` \
         (or set TIDEBENCH_HOME to the home that holds it)",
        .home.display()
    )]
    NotFound { name: String, home: PathBuf },

    #[error("instance '{name}' is not running; start it with `tidebench instance start {name}`")]
    NotRunning { name: String },

    /// Starting an existing instance with other values than it was created with.
    #[error(
        "instance '{name}' was created with {recorded}, not {requested}; start it with the same \
         values (or leave them out), or run `tidebench instance destroy {name}` and create it anew"
    )]
    Conflict {
        name: String,
        recorded: String,
        requested: String,
    },

    #[error(
        "PostgreSQL server binaries not found (looked in {looked}); install them \
         (Debian/Ubuntu: `apt-get install postgresql`, Fedora: `dnf install postgresql-server`) \
         or point TIDEBENCH_PG_BIN at the directory holding pg_ctl, initdb and postgres"
    )]
    BinariesNotFound { looked: String },

    /// The server did not come up; the tail of its log usually says why.
    #[error(
        "instance '{name}' did not start: {reason}\n--- last lines of {} ---\n{log_tail}",
        .log.display()
    )]
    StartFailed {
        name: String,
        reason: String,
        log: PathBuf,
        log_tail: String,
    },

    /// A PostgreSQL program (initdb, pg_ctl, psql) failed.
    #[error("`{program}` failed: {detail}")]
    Command { program: String, detail: String },

    #[error(
        "cannot {action} {}: {source}; check its permissions (and that TIDEBENCH_HOME is the \
         home you meant)",
        .path.display()
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },

    /// `--cpus`/`--memory` asked for, but the cgroup could not be made or filled.
    #[error("{0}")]
    Cgroup(String),

    /// The kernel refused a memory limit below what the group holds and cannot reclaim
    /// (cgroup v1 answers EBUSY; v2 OOM-kills instead).
    #[error("{0}")]
    CgroupBusy(String),
}

impl InstanceError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> InstanceError {
        let path = path.into();
        move |source| InstanceError::Io {
            action,
            path,
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_errors_name_the_value_and_the_range() {
        let cpus = InstanceError::CpusOutOfRange { cpus: 0.0 }.to_string();
        assert!(cpus.starts_with("--cpus 0 is out of range; give a number of cores between "));
        let memory = InstanceError::MemoryTooSmall { memory: 1 << 20 }.to_string();
        assert!(
            memory.starts_with("--memory 1MiB is too small") && memory.contains("give at least"),
            "{memory}"
        );
        let set = InstanceError::BadSetting {
            key: "port".into(),
            message: "tidebench sets it".into(),
        };
        assert_eq!(set.to_string(), "--set port=...: tidebench sets it");
    }
}
