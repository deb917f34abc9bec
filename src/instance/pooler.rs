//! A managed connection pooler (issue 57): Debian's pgbouncer started in front of a managed
//! instance (`instance start NAME --pooler transaction`) and stopped with it. Its files live
//! in `<instance dir>/pooler/`: `pgbouncer.ini`, the auth file and a passfile holding the
//! instance's password (mode 0600), `pgbouncer.log` and `pgbouncer.pid`. It listens on
//! 127.0.0.1 only, asks clients for the instance's password (SCRAM), serves every database
//! of the instance (a `*` entry, so the statistics session reaches `postgres` through it),
//! and lets the superuser read its admin console (`SHOW STATS`, `SHOW POOLS`), which the
//! run's sampler reads.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::checks::{instance_from, load_existing};
use super::error::InstanceError;
use super::os_user;
use super::record::Layout;
use super::settings::choose_port;
use super::types::{Home, Instance};

/// Where Debian's package installs pgbouncer (not on a user's PATH: it is in sbin).
const DEBIAN_PGBOUNCER: &str = "/usr/sbin/pgbouncer";
/// How long a starting pgbouncer may take to listen, and a stopping one to exit.
const WITHIN: Duration = Duration::from_secs(10);
/// Client sessions the pooler admits: enough for a many-session run (2,000 and more).
const MAX_CLIENTS: u32 = 10_000;

/// How the pooler hands server sessions to client sessions (pgbouncer's `pool_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PoolMode {
    /// One server session per client session, for the session's life.
    Session,
    /// A server session per transaction: the common production setting.
    Transaction,
    /// A server session per statement (multi-statement transactions are refused).
    Statement,
}

impl PoolMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PoolMode::Session => "session",
            PoolMode::Transaction => "transaction",
            PoolMode::Statement => "statement",
        }
    }
}

/// What the pooler is asked to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolerOptions {
    pub mode: PoolMode,
    /// Server sessions per (database, user) pair: pgbouncer's `default_pool_size`.
    pub pool_size: u32,
}

/// A running managed pooler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pooler {
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
}

impl Pooler {
    /// A libpq connection string to `dbname` through the pooler, the password in its
    /// passfile (never on a command line).
    pub fn dsn(&self, instance: &Instance, dbname: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user={} dbname={dbname} passfile={}",
            self.port,
            instance.superuser,
            self.dir.join(super::password::PASSFILE).display()
        )
    }

    /// pgbouncer's log.
    pub fn log(&self) -> PathBuf {
        self.dir.join("pgbouncer.log")
    }
}

fn pooler_dir(instance_dir: &Path) -> PathBuf {
    instance_dir.join("pooler")
}

fn failed(name: &str) -> impl Fn(String) -> InstanceError + '_ {
    move |message| InstanceError::Pooler {
        name: name.to_string(),
        message,
    }
}

/// Starts pgbouncer in front of the running instance `name`; a pooler already running is
/// kept as it is (stop the instance to change it). Returns when it accepts connections.
pub fn start(home: &Home, name: &str, opts: &PoolerOptions) -> Result<Pooler, InstanceError> {
    let fail = failed(name);
    if opts.pool_size == 0 {
        return Err(fail(
            "--pool-size 0 leaves no server session; give 1 or more".into(),
        ));
    }
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    if record.guest.is_some() {
        return Err(fail(
            "a managed pooler runs on this host, in front of a local instance; a VM instance \
             takes one started by hand in the guest"
                .into(),
        ));
    }
    let instance = instance_from(&layout, &record)?;
    if let Some(running) = find(&instance) {
        return Ok(running);
    }
    let program = program().ok_or_else(|| {
        fail(
            "pgbouncer is not installed; install Debian's package (apt-get install pgbouncer)"
                .into(),
        )
    })?;
    let password = instance.password().ok_or_else(|| {
        fail("the instance has no password (it predates them); destroy and recreate it".into())
    })?;
    let user = os_user::for_existing(&record.os_user, name)?;
    let dir = pooler_dir(instance.dir());
    std::fs::create_dir_all(&dir).map_err(InstanceError::io("create", &dir))?;
    user.own(&dir)?;
    let port = choose_port(&instance.socket_dir, &[instance.port])?;
    let users = dir.join("users.txt");
    write_private(
        &users,
        &format!("\"{}\" \"{password}\"\n", instance.superuser),
    )?;
    user.own(&users)?;
    super::password::write(&dir, port, &instance.superuser, &password)?;
    let ini = dir.join("pgbouncer.ini");
    std::fs::write(&ini, config(&instance, &dir, port, opts))
        .map_err(InstanceError::io("write", &ini))?;
    let _ = std::fs::remove_file(dir.join("pgbouncer.pid"));
    let status = user
        .command(&program, &dir, Vec::new(), None)
        .arg("-d")
        .arg(&ini)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| fail(format!("cannot run {}: {e}", program.display())))?;
    let pooler = Pooler { port, dir };
    let log_tail = || std::fs::read_to_string(pooler.log()).unwrap_or_default();
    if !status.success() {
        return Err(fail(format!(
            "pgbouncer exited ({status}):\n{}",
            log_tail()
        )));
    }
    let began = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if began.elapsed() > WITHIN {
            return Err(fail(format!(
                "pgbouncer did not listen on 127.0.0.1:{port} within {WITHIN:?}:\n{}",
                log_tail()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(pooler)
}

/// pgbouncer's configuration: the instance's databases over its unix socket, clients on
/// 127.0.0.1 with the instance's password, the superuser on the admin console.
fn config(instance: &Instance, dir: &Path, port: u16, opts: &PoolerOptions) -> String {
    let user = &instance.superuser;
    format!(
        "[databases]\n* = host={socket} port={server}\n\n[pgbouncer]\n\
         listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
         auth_type = scram-sha-256\nauth_file = {dir}/users.txt\n\
         admin_users = {user}\nstats_users = {user}\n\
         pool_mode = {mode}\ndefault_pool_size = {size}\nmax_client_conn = {MAX_CLIENTS}\n\
         ignore_startup_parameters = extra_float_digits\n\
         logfile = {dir}/pgbouncer.log\npidfile = {dir}/pgbouncer.pid\n",
        socket = instance.socket_dir.display(),
        server = instance.port,
        dir = dir.display(),
        mode = opts.mode.as_str(),
        size = opts.pool_size,
    )
}

/// The instance's running pooler, if it has one.
pub fn find(instance: &Instance) -> Option<Pooler> {
    let dir = pooler_dir(instance.dir());
    read_pid(&dir).filter(|pid| alive(*pid))?;
    let ini = std::fs::read_to_string(dir.join("pgbouncer.ini")).ok()?;
    let port = ini.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "listen_port")
            .then(|| value.trim().parse().ok())
            .flatten()
    })?;
    Some(Pooler { port, dir })
}

/// The managed instance whose pooler listens on 127.0.0.1:`port`, if one of this home's does:
/// a run through it reads the server's counters on the instance itself (issue 57).
pub fn owner_of(home: &Home, port: u16) -> Option<Instance> {
    let dir = super::record::instances_dir(&home.absolute().ok()?);
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter_map(|name| super::find(home, &name).ok())
        .find(|instance| find(instance).is_some_and(|p| p.port == port))
}

/// Stops the pooler of the instance in `instance_dir` (SIGTERM: its clients are cut off, as
/// a fast shutdown cuts off the server's); false when none was running.
pub(super) fn stop(name: &str, instance_dir: &Path) -> Result<bool, InstanceError> {
    let dir = pooler_dir(instance_dir);
    let Some(pid) = read_pid(&dir).filter(|pid| alive(*pid)) else {
        return Ok(false);
    };
    // SAFETY: kill(2) with a pid read from pgbouncer's own pidfile and checked to be it.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let began = Instant::now();
    while alive(pid) {
        if began.elapsed() > WITHIN {
            return Err(failed(name)(format!(
                "pgbouncer (pid {pid}) did not exit within {WITHIN:?} of SIGTERM; stop it by hand"
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_file(dir.join("pgbouncer.pid"));
    Ok(true)
}

/// pgbouncer: on the PATH, else where Debian puts it.
fn program() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("pgbouncer"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| Some(PathBuf::from(DEBIAN_PGBOUNCER)).filter(|p| p.is_file()))
}

fn read_pid(dir: &Path) -> Option<i32> {
    std::fs::read_to_string(dir.join("pgbouncer.pid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The process is there and is a pgbouncer (a pid left in a stale pidfile may be reused).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|comm| comm.trim() == "pgbouncer")
}

/// Writes a file only its owner reads (it holds a password).
fn write_private(path: &Path, text: &str) -> Result<(), InstanceError> {
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(InstanceError::io("create", path))?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(InstanceError::io("write", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_pidfile_names_no_running_pooler() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(read_pid(tmp.path()), None);
        std::fs::write(tmp.path().join("pgbouncer.pid"), "1\n").unwrap();
        assert_eq!(read_pid(tmp.path()), Some(1));
        // pid 1 is init (or the container's first process), never pgbouncer.
        assert!(!alive(1));
    }
}
