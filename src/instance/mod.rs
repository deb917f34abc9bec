//! Managed PostgreSQL instances: find the binaries, initdb, start/stop, settings, cgroups
//! (the emulated VM), and running the server as an unprivileged user when tidebench is root.
//!
//! An instance lives in `<home>/instances/<name>/` (`instance.toml`, `data/`, `server.log`);
//! all instances of a home share the socket dir `<home>/sockets/`, kept short because unix
//! socket paths are limited to 107 bytes. This room never runs a workload.

mod binaries;
mod cgroup;
mod create;
mod error;
mod host_group;
mod os_user;
mod password;
mod reconfigure;
mod record;
mod server;
mod settings;
pub mod tls;
pub mod vm;

use std::path::{Path, PathBuf};

pub use cgroup::{describe_limits, CgroupPaths, CgroupVersion};
pub use error::{CgroupError, InstanceError, OsUserError};
pub use host_group::{hold as balloon_hold, Balloon, HostGroup};
pub use reconfigure::{reconfigure, Reconfigured};
pub use server::can_lower_oom_scores;
pub use settings::{format_size, parse_size, PASSWORD_GROUP};

use record::{Layout, Record};
use server::Server;

use crate::config::instances::{CPUS, MIN_MEMORY};

/// The database created in every new instance.
pub const DEFAULT_DBNAME: &str = crate::config::target::DEFAULT_DBNAME;
/// Room for the longest socket file name, `/.s.PGSQL.65535.lock`, within sun_path (108 bytes
/// including the terminating NUL).
const MAX_SOCKET_DIR_LEN: usize = 107 - "/.s.PGSQL.65535.lock".len();

/// The work dir holding all instances: `$TIDEBENCH_HOME`, default `./tidebench-data`.
#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    pub fn from_env() -> Home {
        let root = std::env::var_os("TIDEBENCH_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("tidebench-data"));
        Home { root }
    }

    pub fn at(root: &Path) -> Home {
        Home {
            root: root.to_path_buf(),
        }
    }

    /// The root as an absolute path: the server and its socket must not depend on a cwd.
    fn absolute(&self) -> Result<PathBuf, InstanceError> {
        if self.root.is_absolute() {
            return Ok(self.root.clone());
        }
        let cwd = std::env::current_dir()
            .map_err(InstanceError::io("read the current directory", "."))?;
        Ok(cwd.join(&self.root))
    }
}

/// What the user asked for when starting an instance.
#[derive(Debug, Clone, Default)]
pub struct InstanceOptions {
    pub port: Option<u16>,
    /// `--set KEY=VALUE` server settings, in the order given.
    pub settings: Vec<(String, String)>,
    /// CPU quota in cores (e.g. 1.5), enforced by a cgroup.
    pub cpus: Option<f64>,
    /// Memory limit in bytes, enforced by a cgroup.
    pub memory: Option<u64>,
    /// The emulated VM to run in: a control group path below `tidebench/` (`host/vm1`)
    /// that several instances may share; the limits above are then the VM's.
    pub vm: Option<String>,
    /// Serve TLS with a certificate of the instance's own CA (`--ssl`).
    pub ssl: bool,
    /// A real VM (`--hypervisor qemu`): `cpus` are then its vCPUs, `memory` its RAM.
    pub guest: Option<vm::GuestOptions>,
}

impl InstanceOptions {
    fn validate(&self) -> Result<(), InstanceError> {
        settings::validate(&self.settings)?;
        if let Some(c) = self.cpus {
            if !CPUS.contains(&c) {
                return Err(InstanceError::CpusOutOfRange { cpus: c });
            }
        }
        if let Some(m) = self.memory.filter(|m| *m < MIN_MEMORY) {
            return Err(InstanceError::MemoryTooSmall { memory: m });
        }
        if let Some(vm) = &self.vm {
            crate::config::instances::check_vm(vm).map_err(invalid("--vm"))?;
        }
        if self.port == Some(0) {
            return Err(InstanceError::PortZero);
        }
        Ok(())
    }
}

/// A managed instance found by name.
#[derive(Debug, Clone)]
pub struct Instance {
    pub name: String,
    pub port: u16,
    pub socket_dir: PathBuf,
    /// The PostgreSQL superuser name (the OS user the server runs as).
    pub superuser: String,
    dir: PathBuf,
    bin_dir: PathBuf,
    cpus: Option<f64>,
    memory: Option<u64>,
    vm: Option<String>,
    cgroups: Option<CgroupPaths>,
    /// Serves TLS: its targets connect over TCP with verify-full (see [`tls`]).
    pub ssl: bool,
    /// A QEMU guest (see [`vm`]): reached over TCP on 127.0.0.1 with its password.
    guest: Option<vm::GuestInfo>,
}

impl Instance {
    pub fn connect_params(&self, dbname: &str) -> pgwire::ConnectParams {
        let params = self.socket_params(dbname);
        match self.guest {
            Some(_) => pgwire::ConnectParams {
                host: pgwire::Host::Tcp("127.0.0.1".into()),
                password: self.password(),
                ..params
            },
            None => params,
        }
    }

    fn socket_params(&self, dbname: &str) -> pgwire::ConnectParams {
        pgwire::ConnectParams {
            host: pgwire::Host::Unix(self.socket_dir.clone()),
            port: self.port,
            user: self.superuser.clone(),
            password: None,
            dbname: dbname.to_string(),
            application_name: crate::config::target::APPLICATION_NAME.to_string(),
            options: String::new(),
            connect_timeout: std::time::Duration::from_secs(10),
            hostaddr: None,
            // The unix socket: libpq never uses TLS there.
            tls: pgwire::Tls::disabled(),
            keepalive: pgwire::KeepAlive::default(),
        }
    }

    /// What a target naming this instance connects with: the unix socket, or, when the
    /// instance serves TLS, TCP with verify-full against its CA and its password.
    pub fn target_params(&self, dbname: &str) -> Result<pgwire::ConnectParams, InstanceError> {
        let params = self.connect_params(dbname);
        if !self.ssl {
            return Ok(params);
        }
        let files = pgwire::TlsFiles {
            root_cert: Some(pgwire::RootCert::File(tls::ca_cert_of(&self.dir))),
            ..Default::default()
        };
        let tls = pgwire::Tls::new(
            pgwire::SslMode::VerifyFull,
            pgwire::Negotiation::Postgres,
            &files,
        )
        .map_err(|e| invalid("the instance's TLS files")(crate::error_chain::one_line(&e)))?;
        Ok(pgwire::ConnectParams {
            host: pgwire::Host::Tcp("127.0.0.1".into()),
            password: self.password(),
            tls,
            ..params
        })
    }

    /// A libpq keyword/value connection string, usable as-is by psql and pgbench: the unix
    /// socket, and the passfile for a TCP login (`host=127.0.0.1` in its place) when the
    /// instance has one. An instance serving TLS gets TCP with verify-full naming its CA.
    pub fn dsn(&self, dbname: &str) -> String {
        let host = match self.ssl || self.guest.is_some() {
            true => "127.0.0.1".to_string(),
            false => dsn_value(&self.socket_dir.to_string_lossy()),
        };
        let mut dsn = format!(
            "host={host} port={} user={} dbname={}",
            self.port,
            dsn_value(&self.superuser),
            dsn_value(dbname)
        );
        if self.ssl {
            dsn.push_str(&format!(
                " sslmode=verify-full sslrootcert={}",
                dsn_value(&tls::ca_cert_of(&self.dir).to_string_lossy())
            ));
        }
        let passfile = password::passfile_of(&self.dir);
        if passfile.exists() {
            dsn.push_str(&format!(
                " passfile={}",
                dsn_value(&passfile.to_string_lossy())
            ));
        }
        dsn
    }

    /// The superuser's password for TCP logins (from the instance's passfile); `None` for
    /// instances made before they had one.
    pub fn password(&self) -> Option<String> {
        password::read(&self.dir)
    }

    /// The instance's directory (`instance.toml`, `data/`, `server.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn data_dir(&self) -> PathBuf {
        match &self.guest {
            Some(g) => g.files.data(),
            None => self.dir.join("data"),
        }
    }

    /// The QEMU guest behind the instance, when it is a real VM.
    pub fn guest(&self) -> Option<&vm::GuestInfo> {
        self.guest.as_ref()
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// The directory holding pg_ctl, psql and friends for this instance.
    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    /// The postmaster's pid while the server runs (from postmaster.pid).
    /// For a VM: QEMU's pid, the host's view of the guest.
    pub fn pid(&self) -> Option<u32> {
        match &self.guest {
            Some(g) => g.qemu_pid(),
            None => server::read_pid(&self.data_dir()),
        }
    }

    /// The instance's cgroup (the emulated VM), when started with `--cpus` or `--memory`.
    pub fn cgroup_paths(&self) -> Option<&CgroupPaths> {
        self.cgroups.as_ref()
    }

    /// The emulated VM it shares with other instances, when it has one (`host/vm1`).
    pub fn vm(&self) -> Option<&str> {
        self.vm.as_deref()
    }

    /// CPU quota in cores and memory limit in bytes, as created.
    pub fn limits(&self) -> (Option<f64>, Option<u64>) {
        (self.cpus, self.memory)
    }

    /// Runs SQL with psql as the superuser; returns unaligned, tuples-only output.
    pub fn psql(&self, dbname: &str, sql: &str) -> Result<String, InstanceError> {
        // A guest is reached on the host's forward, with the instance's passfile.
        let (host, passfile) = match self.guest {
            Some(_) => (
                PathBuf::from("127.0.0.1"),
                Some(password::passfile_of(&self.dir)),
            ),
            None => (self.socket_dir.clone(), None),
        };
        server::psql(
            &self.bin_dir,
            &host,
            passfile.as_deref(),
            self.port,
            &self.superuser,
            dbname,
            sql,
        )
    }
}

/// Quotes a libpq keyword value when it needs it (spaces, quotes, backslashes, empty).
fn dsn_value(v: &str) -> String {
    if !v.is_empty() && !v.contains([' ', '\'', '\\', '\t', '\n']) {
        return v.to_string();
    }
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// What `start` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartOutcome {
    /// initdb ran: a new instance.
    Created,
    Started,
    AlreadyRunning,
}

/// Creates (initdb) on first use and starts; returns when the server accepts connections.
pub fn start(home: &Home, name: &str, opts: &InstanceOptions) -> Result<Instance, InstanceError> {
    start_reporting(home, name, opts).map(|(instance, _)| instance)
}

/// As [`start`], also telling whether the instance was created, started or already running.
pub fn start_reporting(
    home: &Home,
    name: &str,
    opts: &InstanceOptions,
) -> Result<(Instance, StartOutcome), InstanceError> {
    check_name("instance", name)?;
    opts.validate()?;
    let layout = Layout::new(&home.absolute()?, name);
    check_socket_dir(&layout.sockets)?;
    if let (false, Some(guest)) = (layout.record().exists(), &opts.guest) {
        return vm::create(&layout, name, opts, guest);
    }
    if !layout.record().exists() {
        return create::create(&layout, name, opts).map(|i| (i, StartOutcome::Created));
    }
    let record = Record::load(&layout.record())?;
    record.check_matches(opts)?;
    if record.guest.is_some() {
        return vm::start(&layout, &record, &opts.guest.clone().unwrap_or_default());
    }
    let user = os_user::for_existing(&record.os_user, name)?;
    let instance = instance_from(&layout, &record)?;
    let server = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    };
    if server.is_running()? {
        return Ok((instance, StartOutcome::AlreadyRunning));
    }
    check_bin_dir(&record, name)?;
    let procs = match &instance.cgroups {
        Some(cg) => {
            // The groups vanish on reboot; recreate them and rewrite the limits every start.
            cg.create(record.cpus, record.memory)?;
            cg.procs_files()?
        }
        None => Vec::new(),
    };
    server.start(name, procs)?;
    Ok((instance, StartOutcome::Started))
}

/// Starts the instance if it exists and is stopped, creates it with defaults if it does not exist.
pub fn ensure_running(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    start(home, name, &InstanceOptions::default())
}

/// Creates database `dbname` on a running instance if it does not exist.
pub fn ensure_database(instance: &Instance, dbname: &str) -> Result<(), InstanceError> {
    check_name("database", dbname)?;
    let exists = format!("SELECT 1 FROM pg_database WHERE datname = '{dbname}'");
    if instance.psql("postgres", &exists)? == "1" {
        return Ok(());
    }
    match instance.psql("postgres", &format!("CREATE DATABASE \"{dbname}\"")) {
        Ok(_) => Ok(()),
        // Another tidebench may have created it between the check and the CREATE.
        Err(e) => match instance.psql("postgres", &exists) {
            Ok(found) if found == "1" => Ok(()),
            _ => Err(e),
        },
    }
}

/// Finds an existing instance by name and checks that it is running.
pub fn find_running(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    let status = status(home, name)?;
    if !status.running {
        return Err(InstanceError::NotRunning {
            name: name.to_string(),
        });
    }
    Ok(status.instance)
}

/// Finds an existing instance by name, running or not.
pub fn find(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    instance_from(&layout, &record)
}

/// One row of `tidebench instance status`.
#[derive(Debug, Clone)]
pub struct InstanceStatus {
    pub instance: Instance,
    pub running: bool,
    /// The postmaster's pid when running.
    pub pid: Option<u32>,
}

/// The state of one instance (`pg_ctl status` + postmaster.pid).
pub fn status(home: &Home, name: &str) -> Result<InstanceStatus, InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    let instance = instance_from(&layout, &record)?;
    if record.guest.is_some() {
        let pid = instance.pid();
        return Ok(InstanceStatus {
            running: pid.is_some(),
            instance,
            pid,
        });
    }
    let user = os_user::for_existing(&record.os_user, name)?;
    let running = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    }
    .is_running()?;
    let pid = if running { instance.pid() } else { None };
    Ok(InstanceStatus {
        instance,
        running,
        pid,
    })
}

/// The state of every instance in the home, by name.
pub fn list(home: &Home) -> Result<Vec<InstanceStatus>, InstanceError> {
    let dir = record::instances_dir(&home.absolute()?);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(InstanceError::io("list", &dir)(e)),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("instance.toml").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    names.iter().map(|n| status(home, n)).collect()
}

/// Stops a running instance; returns false when it was already stopped.
pub fn stop(home: &Home, name: &str) -> Result<bool, InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    if record.guest.is_some() {
        return Ok(vm::stop(&layout, &record));
    }
    let user = os_user::for_existing(&record.os_user, name)?;
    let server = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    };
    if !server.is_running()? {
        return Ok(false);
    }
    server.stop()?;
    Ok(true)
}

/// Stops the instance if running, removes its cgroups and its directory (data included).
pub fn destroy(home: &Home, name: &str) -> Result<(), InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    if record.guest.is_some() {
        // The data disk goes with the dir: no clean shutdown to wait for (one of a guest
        // still booting could wait a minute for a key press nobody reads).
        vm::discard(&layout, &record);
    } else {
        stop(home, name)?;
    }
    if record.has_cgroup() {
        let cg = CgroupPaths::locate(record.cgroup_name())?;
        match record.vm {
            // A VM shared with other instances stays while they are in it.
            Some(_) => cg.remove_if_unused()?,
            None => cg.remove()?,
        }
    }
    // A VM's QEMU placed in a group (a consolidation's host group) leaves it with the VM.
    if let Some(group) = record.guest.as_ref().and_then(|g| g.cgroup.as_deref()) {
        CgroupPaths::locate(group)?.remove_if_unused()?;
    }
    std::fs::remove_dir_all(&layout.dir).map_err(InstanceError::io("remove", &layout.dir))?;
    vm::forget(&layout, &record);
    Ok(())
}

fn check_socket_dir(sockets: &Path) -> Result<(), InstanceError> {
    let len = sockets.as_os_str().len();
    if len > MAX_SOCKET_DIR_LEN {
        return Err(InstanceError::SocketDirTooLong {
            dir: sockets.to_path_buf(),
            len,
            most: MAX_SOCKET_DIR_LEN,
        });
    }
    if sockets.to_string_lossy().contains(',') {
        return Err(InstanceError::SocketDirComma {
            dir: sockets.to_path_buf(),
        });
    }
    Ok(())
}

fn check_bin_dir(record: &Record, name: &str) -> Result<(), InstanceError> {
    if binaries::is_bin_dir(&record.pg_bin_dir) {
        return Ok(());
    }
    Err(InstanceError::BinariesGone {
        name: name.to_string(),
        bin_dir: record.pg_bin_dir.clone(),
    })
}

fn load_existing(layout: &Layout, name: &str) -> Result<Record, InstanceError> {
    if !layout.record().exists() {
        return Err(InstanceError::NotFound {
            name: name.to_string(),
            home: layout.home.clone(),
        });
    }
    Record::load(&layout.record())
}

fn instance_from(layout: &Layout, record: &Record) -> Result<Instance, InstanceError> {
    let cgroups = if record.has_cgroup() {
        Some(CgroupPaths::locate(record.cgroup_name())?)
    } else {
        None
    };
    Ok(Instance {
        name: record.name.clone(),
        port: record.port,
        socket_dir: layout.sockets.clone(),
        superuser: record.superuser.clone(),
        dir: layout.dir.clone(),
        bin_dir: record.pg_bin_dir.clone(),
        cpus: record.cpus,
        memory: record.memory,
        vm: record.vm.clone(),
        cgroups,
        ssl: record.ssl,
        guest: record
            .guest
            .as_ref()
            .map(|g| vm::GuestInfo::of(layout, record, g)),
    })
}

fn check_name(what: &str, name: &str) -> Result<(), InstanceError> {
    crate::config::target::check_name(what, name).map_err(invalid("a name"))
}

/// Maps a shared checker's message to [`InstanceError::Invalid`].
pub(crate) fn invalid(what: &'static str) -> impl Fn(String) -> InstanceError {
    move |message| InstanceError::Invalid { what, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsn_quotes_only_when_needed() {
        assert_eq!(dsn_value("/tmp/x/sockets"), "/tmp/x/sockets");
        assert_eq!(dsn_value("/tmp/my dir"), "'/tmp/my dir'");
        assert_eq!(dsn_value("it's"), "'it\\'s'");
    }

    #[test]
    fn long_socket_dirs_are_refused_with_the_fix() {
        let long = PathBuf::from(format!("/{}", "d".repeat(100)));
        let err = check_socket_dir(&long).unwrap_err().to_string();
        assert!(err.contains("TIDEBENCH_HOME"), "{err}");
        assert!(check_socket_dir(Path::new("/tmp/h/sockets")).is_ok());
    }

    #[test]
    fn option_ranges_are_checked() {
        let opts = InstanceOptions {
            cpus: Some(0.0),
            ..Default::default()
        };
        assert!(opts.validate().is_err());
        let opts = InstanceOptions {
            memory: Some(1 << 20),
            ..Default::default()
        };
        assert!(opts
            .validate()
            .unwrap_err()
            .to_string()
            .contains("at least 64MiB"));
    }
}
