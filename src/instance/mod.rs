//! Managed PostgreSQL instances: find the binaries, initdb, start/stop, settings, cgroups
//! (the emulated VM), and running the server as an unprivileged user when tidebench is root.
//!
//! (Skeleton: the API below is the contract the rest of the code uses.)

use std::path::{Path, PathBuf};

/// The work dir holding all instances: `$TIDEBENCH_HOME`, default `./tidebench-data`.
#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    pub fn from_env() -> Home {
        let root = std::env::var_os("TIDEBENCH_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("tidebench-data"));
        Home { root }
    }

    pub fn at(root: &Path) -> Home {
        Home {
            root: root.to_path_buf(),
        }
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
}

#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error("{0}")]
    Setup(String),
}

/// A managed instance found by name.
#[derive(Debug, Clone)]
pub struct Instance {
    pub name: String,
    pub port: u16,
    pub socket_dir: PathBuf,
    /// The PostgreSQL superuser name (the OS user the server runs as).
    pub superuser: String,
}

impl Instance {
    pub fn connect_params(&self, dbname: &str) -> pgwire::ConnectParams {
        pgwire::ConnectParams {
            host: pgwire::Host::Unix(self.socket_dir.clone()),
            port: self.port,
            user: self.superuser.clone(),
            password: None,
            dbname: dbname.to_string(),
            application_name: "tidebench".to_string(),
            connect_timeout: std::time::Duration::from_secs(10),
        }
    }
}

/// Creates (initdb) on first use and starts; returns when the server accepts connections.
pub fn start(_home: &Home, _name: &str, _opts: &InstanceOptions) -> Result<Instance, InstanceError> {
    Err(InstanceError::Setup("instances are not implemented yet".into()))
}

/// Starts the instance if it exists and is stopped, creates it with defaults if it does not exist.
pub fn ensure_running(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    start(home, name, &InstanceOptions::default())
}

/// Creates database `dbname` on a running instance if it does not exist.
pub fn ensure_database(_instance: &Instance, _dbname: &str) -> Result<(), InstanceError> {
    Err(InstanceError::Setup("instances are not implemented yet".into()))
}

/// Finds an existing instance by name and checks that it is running.
pub fn find_running(_home: &Home, name: &str) -> Result<Instance, InstanceError> {
    Err(InstanceError::Setup(format!(
        "no running instance '{name}'; start it with `tidebench instance start {name}`"
    )))
}
