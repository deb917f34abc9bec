//! The instance's types: the home all instances live in, the options a start asks for, a
//! managed instance found by name (and how clients reach it), and what a start or a status
//! look reports.

use std::path::{Path, PathBuf};

use super::cgroup::CgroupPaths;
use super::error::{invalid, InstanceError};
use super::{password, server, settings, tls, vm};
use crate::config::instances::{CPUS, MIN_MEMORY};

/// The database created in every new instance.
pub const DEFAULT_DBNAME: &str = crate::config::target::DEFAULT_DBNAME;

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
    pub(super) fn absolute(&self) -> Result<PathBuf, InstanceError> {
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
    /// The server binaries' dir (`--pg-bin`), instead of where `binaries::find` looks.
    pub pg_bin: Option<std::path::PathBuf>,
    /// Make it a streaming standby of this running instance (`--standby-of`, issue 54).
    pub standby_of: Option<String>,
    /// With `standby_of`: the primary waits for it on commit (`--sync`).
    pub synchronous: bool,
}

impl InstanceOptions {
    pub(super) fn validate(&self) -> Result<(), InstanceError> {
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
        if self.synchronous && self.standby_of.is_none() {
            return Err(invalid("--sync")(
                "--sync makes a standby synchronous; give --standby-of PRIMARY with it".into(),
            ));
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
    pub(super) dir: PathBuf,
    pub(super) bin_dir: PathBuf,
    pub(super) cpus: Option<f64>,
    pub(super) memory: Option<u64>,
    pub(super) vm: Option<String>,
    pub(super) cgroups: Option<CgroupPaths>,
    /// Serves TLS: its targets connect over TCP with verify-full (see [`tls`]).
    pub ssl: bool,
    /// A QEMU guest (see [`vm`]): reached over TCP on 127.0.0.1 with its password.
    pub(super) guest: Option<vm::GuestInfo>,
    /// Made as a standby of another instance (see `standby`).
    pub(super) standby: Option<super::record::StandbyRecord>,
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

    /// The primary it was made a standby of, if it was (it may have been promoted since).
    pub fn standby_of(&self) -> Option<&str> {
        self.standby.as_ref().map(|s| s.primary.as_str())
    }

    /// Whether it was made a synchronous standby (`--sync`).
    pub fn synchronous_standby(&self) -> bool {
        self.standby.as_ref().is_some_and(|s| s.synchronous)
    }

    /// Whether its data dir still holds `standby.signal`: a standby not yet promoted.
    pub fn in_recovery(&self) -> bool {
        self.data_dir().join("standby.signal").exists()
    }

    /// `primary`, `standby of a (sync)`, `primary (promoted, was standby of a)`.
    pub fn role(&self) -> String {
        match &self.standby {
            None => "primary".into(),
            Some(s) if self.in_recovery() => format!(
                "standby of {} ({})",
                s.primary,
                if s.synchronous { "sync" } else { "async" }
            ),
            Some(s) => format!("primary (promoted, was standby of {})", s.primary),
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

/// One row of `tidebench instance status`.
#[derive(Debug, Clone)]
pub struct InstanceStatus {
    pub instance: Instance,
    pub running: bool,
    /// The postmaster's pid when running.
    pub pid: Option<u32>,
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
