//! What can go wrong with a managed instance, each message naming the problem and the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// A name or value a shared checker refused (an instance or VM name, the TLS files of
    /// the instance's own CA); `message` is the checker's, naming the value and the fix.
    #[error("{message}")]
    Invalid { what: &'static str, message: String },

    #[error(
        "instance '{name}' is being created by another tidebench (or a failed creation left {} \
         without instance.toml); wait and retry, or remove that directory",
        .dir.display()
    )]
    BeingCreated { name: String, dir: PathBuf },

    #[error(
        "TIDEBENCH_PG_BIN={} does not hold pg_ctl, initdb and postgres; point it at a PostgreSQL \
         bin directory (e.g. /usr/lib/postgresql/15/bin) or unset it",
        .dir.display()
    )]
    PgBinDir { dir: PathBuf },

    #[error(
        "--pg-bin {} does not hold pg_ctl, initdb and postgres; give the bin dir of a PostgreSQL \
         build (where `pg_config --bindir` points)",
        .dir.display()
    )]
    PgBinFlag { dir: PathBuf },

    #[error("{} is damaged ({message}); fix it by hand or remove the instance directory", .path.display())]
    RecordDamaged { path: PathBuf, message: String },

    #[error(
        "{} has schema version {found}, this tidebench reads {reads}; use the tidebench that \
         created it, or destroy and recreate the instance",
        .path.display()
    )]
    RecordVersion {
        path: PathBuf,
        found: u32,
        reads: u32,
    },

    #[error("cannot encode {}: {message}", .path.display())]
    RecordEncode { path: PathBuf, message: String },

    /// The OS user the server runs as: made, looked up, or able to reach the home.
    #[error(transparent)]
    OsUser(#[from] OsUserError),

    /// The VM of a `--hypervisor` instance (its image, QEMU, its boot, its balloon).
    #[error(transparent)]
    Vm(#[from] Box<super::vm::error::VmError>),

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

    /// A run's event could not act on the instance (see `disrupt`).
    #[error("cannot {action} instance '{name}': {message}")]
    Disrupt {
        action: &'static str,
        name: String,
        message: String,
    },

    /// A standby could not be made, or its primary refused (see `standby`).
    #[error("instance '{name}' as a standby of '{primary}': {message}")]
    Standby {
        name: String,
        primary: String,
        message: String,
    },
    /// The managed pooler (pgbouncer) could not be started or stopped (see `pooler`).
    #[error("the pooler of instance '{name}': {message}")]
    Pooler { name: String, message: String },

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

    /// `--cpus`/`--memory` asked for, but the control group could not be made or filled.
    #[error(transparent)]
    Cgroup(#[from] CgroupError),

    /// The kernel refused a memory limit below what the group holds and cannot reclaim
    /// (cgroup v1 answers EBUSY; v2 OOM-kills instead).
    #[error(
        "{}the kernel refused '{value}' in {}: {source} (the group holds more than that, and \
         what is over cannot be reclaimed without swap)",
        .context.as_deref().unwrap_or(""),
        .path.display()
    )]
    CgroupBusy {
        /// What was being limited, as `cannot limit host group 'h' to 1 GiB while its VMs run: `.
        context: Option<String>,
        value: String,
        path: PathBuf,
        source: std::io::Error,
    },
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

/// Maps a shared checker's message to [`InstanceError::Invalid`].
pub(crate) fn invalid(what: &'static str) -> impl Fn(String) -> InstanceError {
    move |message| InstanceError::Invalid { what, message }
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

/// What can go wrong with the OS user a managed server runs as.
#[derive(Debug, thiserror::Error)]
pub enum OsUserError {
    #[error("created the system user '{user}' but cannot look it up; check /etc/passwd")]
    CreatedButMissing { user: &'static str },
    #[error(
        "instance '{instance}' runs as the OS user '{recorded}', which no longer exists; recreate \
         the user or run `tidebench instance destroy {instance}`"
    )]
    Gone { instance: String, recorded: String },
    #[error(
        "instance '{instance}' belongs to the OS user '{recorded}' but tidebench runs as '{me}'; \
         run tidebench as '{recorded}' or as root"
    )]
    NotOwner {
        instance: String,
        recorded: String,
        me: String,
    },
    #[error(
        "the current user (uid {uid}) has no name in the user database; PostgreSQL needs one: \
         add an /etc/passwd entry for uid {uid}"
    )]
    Nameless { uid: u32 },
    #[error(
        "there is no 'postgres' user and `useradd` could not run ({source}); create a system \
         user 'postgres' or '{user}' for the server to run as"
    )]
    NoUseradd {
        user: &'static str,
        source: std::io::Error,
    },
    #[error(
        "could not create the system user '{user}' ({stderr}); create a system user 'postgres' \
         or '{user}' for the server to run as"
    )]
    UseraddFailed { user: &'static str, stderr: String },
    #[error(
        "the server runs as the OS user '{user}', which cannot enter {} (mode {mode:o}); set \
         TIDEBENCH_HOME to a directory it can reach (e.g. /var/tmp/tidebench) or run `chmod o+x \
         {}`",
        .dir.display(),
        .dir.display()
    )]
    CannotEnter {
        user: String,
        dir: PathBuf,
        mode: u32,
    },
}

/// What can go wrong with a control group an instance (or a host group) needs.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("cgroup path {} holds a NUL byte", .path.display())]
    NulInPath { path: PathBuf },
    #[error(
        "cannot remove cgroup {}: {source}; processes may still be in it (see {}/cgroup.procs): \
         stop them, then `rmdir {}`",
        .dir.display(),
        .dir.display(),
        .dir.display()
    )]
    Remove {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cgroup v2 at {} lacks the cpu or memory controller (has: {has}); --cpus/--memory need \
         both: enable them, or leave out --cpus and --memory",
        .root.display()
    )]
    NoControllers { root: PathBuf, has: String },
    #[error(
        "no cgroup hierarchy with cpu and memory controllers under {}; --cpus/--memory need one \
         (v1 or v2): run on a Linux host with cgroups mounted, or leave out --cpus and --memory",
        .root.display()
    )]
    NoHierarchy { root: PathBuf },
    #[error(
        "cannot write '{value}' to {}: {source}; check the value is allowed by the parent group",
        .path.display()
    )]
    Write {
        value: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cgroup {} is not writable ({source}); --cpus/--memory need writable cgroups: run \
         tidebench as root (or, with cgroup v2, delegate a subtree to your user), or leave out \
         --cpus and --memory",
        .path.display()
    )]
    NotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot limit host group '{group}' to {limit}: {source}")]
    HostLimit {
        group: String,
        limit: String,
        source: Box<InstanceError>,
    },
    #[error("cannot start the balloon in '{group}': {source}")]
    BalloonStart {
        group: String,
        source: std::io::Error,
    },
    #[error(
        "the balloon could not hold {size} in host group '{group}': {why}; ask for less \
         overcommitment or leave out --balloon"
    )]
    BalloonHeld {
        size: String,
        group: String,
        why: String,
    },
}
