//! Running the PostgreSQL programs for one instance: initdb, pg_ctl start/stop/status, psql.
//! Server-side programs run as the server user (see `os_user`); psql runs as tidebench's user
//! and connects over the unix socket as the superuser role (trusted there).

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::error::InstanceError;
use super::os_user::ServerUser;
use super::record::Layout;
use super::settings;

/// How long pg_ctl waits for the server to accept connections (or to stop), in seconds.
const PG_CTL_TIMEOUT_SECS: &str = "120";
/// Lines of server.log shown when a start fails.
const LOG_TAIL_LINES: usize = 20;

/// The postmaster's `oom_score_adj`: never chosen by the OOM killer.
const POSTMASTER_OOM_SCORE_ADJ: &[u8] = b"-1000";
/// Where each child of the postmaster (backends, auxiliary processes) writes its own score
/// after fork (PostgreSQL's `PG_OOM_ADJUST_FILE`), and the value (`PG_OOM_ADJUST_VALUE`).
const CHILD_OOM_FILE: &str = "/proc/self/oom_score_adj";
/// The children's score under a protected postmaster: the normal one.
const CHILD_OOM_SCORE: &str = "0";
/// The children's score when the postmaster's cannot be lowered: the OOM killer's first
/// choice, which a process may always make itself.
const CHILD_OOM_SCORE_UNPROTECTED: &str = "1000";
/// CAP_SYS_RESOURCE's bit in `/proc/self/status`'s `CapEff`: lowering a score needs it.
const CAP_SYS_RESOURCE: u32 = 24;

/// How the postmaster and its children face the OOM killer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OomPolicy {
    /// Not root: as the server would start by hand.
    Untouched,
    /// PostgreSQL's advice: the postmaster at -1000, its children back at 0.
    Protected,
    /// Root without CAP_SYS_RESOURCE (a container took it away): the postmaster stays at 0,
    /// its children raise theirs to 1000, so they are still chosen before it.
    ChildrenFirst,
}

impl OomPolicy {
    fn for_server(root: bool, cap_eff: Option<u64>) -> OomPolicy {
        match (root, cap_eff) {
            (false, _) => OomPolicy::Untouched,
            (true, Some(caps)) if caps & (1 << CAP_SYS_RESOURCE) != 0 => OomPolicy::Protected,
            (true, _) => OomPolicy::ChildrenFirst,
        }
    }
}

/// Whether this process may lower an OOM score (CAP_SYS_RESOURCE: root has it unless a
/// container took it away).
pub fn can_lower_oom_scores() -> bool {
    effective_caps().is_some_and(|caps| caps & (1 << CAP_SYS_RESOURCE) != 0)
}

/// This process's effective capabilities (`CapEff` of `/proc/self/status`).
fn effective_caps() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

pub(crate) struct Server<'a> {
    pub bin: &'a Path,
    pub user: &'a ServerUser,
    pub layout: &'a Layout,
}

impl Server<'_> {
    fn program(&self, name: &str, cgroup_procs: Vec<CString>) -> Command {
        self.user
            .command(&self.bin.join(name), &self.layout.dir, cgroup_procs, None)
    }

    /// Creates the data dir: trust auth (pg_hba is rewritten next), UTF8, C locale; without
    /// syncing it to disk when `sync` is false (a server with fsync off).
    /// Unsynced, it copies initdb's kept output instead when a cache dir was asked for
    /// (see `initdb_cache`), and keeps its own output there when there was none yet.
    pub fn initdb(&self, superuser: &str, sync: bool) -> Result<(), InstanceError> {
        let cache = (!sync)
            .then(|| super::initdb_cache::Entry::for_initdb(self.bin, superuser))
            .flatten();
        if cache
            .as_ref()
            .is_some_and(|c| c.copy_to(&self.layout.data()))
        {
            return Ok(());
        }
        self.run_initdb(superuser, sync)?;
        if let Some(cache) = cache {
            cache.keep(&self.layout.data());
        }
        Ok(())
    }

    fn run_initdb(&self, superuser: &str, sync: bool) -> Result<(), InstanceError> {
        let mut cmd = self.program("initdb", Vec::new());
        cmd.arg("-D").arg(self.layout.data()).args([
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "-U",
            superuser,
        ]);
        if !sync {
            cmd.arg("--no-sync");
        }
        run(cmd, "initdb")
    }

    /// A streaming copy of a running primary (`pg_basebackup -R`) reached by `conninfo`: its
    /// data dir with `standby.signal`, and `conninfo` as its `primary_conninfo`.
    pub fn base_backup(&self, conninfo: &str, sync: bool) -> Result<(), InstanceError> {
        let mut cmd = self.program("pg_basebackup", Vec::new());
        cmd.arg("-D")
            .arg(self.layout.data())
            .args(["-R", "-X", "stream", "-c", "fast", "-d", conninfo]);
        if !sync {
            cmd.arg("--no-sync");
        }
        run(cmd, "pg_basebackup")
    }

    /// `pg_ctl promote -w`: the standby ends recovery and takes writes; returns once it does.
    pub fn promote(&self) -> Result<(), InstanceError> {
        let mut cmd = self.program("pg_ctl", Vec::new());
        cmd.arg("promote").arg("-D").arg(self.layout.data()).args([
            "-w",
            "-t",
            PG_CTL_TIMEOUT_SECS,
        ]);
        run(cmd, "pg_ctl promote")
    }

    /// The commit records in this server's WAL on `timeline` from the LSN `start` on, as
    /// `pg_waldump` reads them from `pg_wal`. The end of the written WAL (an invalid record),
    /// or no record after `start` at all, ends the count; any other error is returned.
    pub fn commits_in_wal(&self, timeline: u32, start: &str) -> Result<u64, InstanceError> {
        let mut cmd = self.program("pg_waldump", Vec::new());
        cmd.arg("--path")
            .arg(self.layout.data().join("pg_wal"))
            .arg("--timeline")
            .arg(timeline.to_string())
            .args(["--start", start, "--rmgr", "Transaction"]);
        let out = output(cmd, "pg_waldump")?;
        let err = String::from_utf8_lossy(&out.stderr);
        let at_the_end =
            err.contains("error in WAL record") || err.contains("could not find a valid record");
        if !out.status.success() && !at_the_end {
            return Err(InstanceError::Command {
                program: "pg_waldump".into(),
                detail: output_text(&out),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.lines().filter(|l| l.contains("desc: COMMIT")).count() as u64)
    }

    /// Writes tidebench.conf (included from postgresql.conf) and pg_hba.conf into the data dir.
    pub fn write_config(&self, conf: &str) -> Result<(), InstanceError> {
        let data = self.layout.data();
        let conf_path = data.join(settings::CONF_FILE);
        std::fs::write(&conf_path, conf).map_err(InstanceError::io("write", &conf_path))?;
        self.user.own(&conf_path)?;
        let hba = data.join("pg_hba.conf");
        std::fs::write(&hba, settings::HBA).map_err(InstanceError::io("write", &hba))?;
        let main = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&main).map_err(InstanceError::io("read", &main))?;
        let include = format!("include '{}'", settings::CONF_FILE);
        if !text.lines().any(|l| l.trim() == include) {
            text.push_str(&format!(
                "\n# tidebench's settings; they override the above.\n{include}\n"
            ));
            std::fs::write(&main, text).map_err(InstanceError::io("write", &main))?;
        }
        Ok(())
    }

    /// `pg_ctl start -w`, with the server inside the given cgroups from its first instruction.
    ///
    /// The postmaster is protected from the OOM killer as PostgreSQL's documentation advises
    /// (server runtime, "Linux Memory Overcommit"): it starts with `oom_score_adj` -1000 and
    /// every child it forks sets its own back to 0 (`PG_OOM_ADJUST_FILE`/`VALUE`). A memory
    /// limit that is too small then costs backends, which the postmaster replaces after crash
    /// recovery, instead of the whole server (without it, a postmaster that touched more
    /// shared memory than the freshly forked backends is the largest process, and is killed).
    ///
    /// Lowering a score needs CAP_SYS_RESOURCE, so this is only done when tidebench is root
    /// (and starts the server as another user: the score is written in the child before the
    /// switch, and inherited). A root without that capability (some containers) cannot lower
    /// it: the children raise theirs to 1000 instead, which needs no privilege and still makes
    /// them the OOM killer's choice. Not root: the server starts as it always did.
    pub fn start(&self, name: &str, cgroup_procs: Vec<CString>) -> Result<(), InstanceError> {
        let log = self.layout.log();
        let policy = OomPolicy::for_server(self.user.switch, effective_caps());
        let mut cmd = self.user.command(
            &self.bin.join("pg_ctl"),
            &self.layout.dir,
            cgroup_procs,
            (policy == OomPolicy::Protected).then_some(POSTMASTER_OOM_SCORE_ADJ),
        );
        let child_score = match policy {
            OomPolicy::Untouched => None,
            OomPolicy::Protected => Some(CHILD_OOM_SCORE),
            OomPolicy::ChildrenFirst => Some(CHILD_OOM_SCORE_UNPROTECTED),
        };
        if let Some(score) = child_score {
            cmd.env("PG_OOM_ADJUST_FILE", CHILD_OOM_FILE)
                .env("PG_OOM_ADJUST_VALUE", score);
        }
        cmd.arg("start")
            .arg("-D")
            .arg(self.layout.data())
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", PG_CTL_TIMEOUT_SECS])
            .stdin(Stdio::null());
        let failed = |reason: String| InstanceError::StartFailed {
            name: name.to_string(),
            reason,
            log: log.clone(),
            log_tail: log_tail(&log),
        };
        let out = cmd.output().map_err(|e| {
            failed(format!(
                "cannot run pg_ctl ({e}); check cgroup and user permissions"
            ))
        })?;
        if out.status.success() {
            return Ok(());
        }
        Err(failed(format!("pg_ctl start: {}", output_text(&out))))
    }

    /// `pg_ctl stop -m fast -w`: disconnects clients, checkpoints, exits.
    pub fn stop(&self) -> Result<(), InstanceError> {
        let mut cmd = self.program("pg_ctl", Vec::new());
        cmd.arg("stop").arg("-D").arg(self.layout.data()).args([
            "-m",
            "fast",
            "-w",
            "-t",
            PG_CTL_TIMEOUT_SECS,
        ]);
        run(cmd, "pg_ctl stop")
    }

    /// `pg_ctl status`: exit 0 = running, 3 = not running, 4 = no usable data dir.
    pub fn is_running(&self) -> Result<bool, InstanceError> {
        if !self.layout.data().join("postmaster.pid").exists() {
            return Ok(false);
        }
        let mut cmd = self.program("pg_ctl", Vec::new());
        cmd.arg("status").arg("-D").arg(self.layout.data());
        let out = output(cmd, "pg_ctl status")?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(3) => Ok(false),
            _ => Err(InstanceError::Command {
                program: "pg_ctl status".into(),
                detail: format!(
                    "{}; check {} exists and belongs to '{}'",
                    output_text(&out),
                    self.layout.data().display(),
                    self.user.name
                ),
            }),
        }
    }
}

/// The postmaster's pid from the first line of postmaster.pid, if the file is there.
pub(crate) fn read_pid(data: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// How long psql waits for a server in crash recovery (after an OOM kill, say) to take
/// connections again before it gives up.
const RECOVERY_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// What a server says to a login it cannot take yet: starting up, or recovering from a crash.
/// The SQL never ran, so it is safe to try again.
fn not_yet_accepting(stderr: &str) -> bool {
    stderr.contains("the database system is not yet accepting connections")
        || stderr.contains("the database system is starting up")
        || stderr.contains("the database system is in recovery mode")
}

/// Runs SQL with psql on the instance's socket (or a TCP host with a passfile); returns unaligned, tuples-only output. A
/// server still recovering is waited for, up to [`RECOVERY_WAIT`].
pub(crate) fn psql(
    bin: &Path,
    host: &Path,
    passfile: Option<&Path>,
    port: u16,
    user: &str,
    dbname: &str,
    sql: &str,
) -> Result<String, InstanceError> {
    let mut cmd = Command::new(super::binaries::psql(bin));
    if let Some(passfile) = passfile {
        cmd.env("PGPASSFILE", passfile);
    }
    cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"])
        .arg(host)
        .args(["-p", &port.to_string(), "-U", user, "-d", dbname, "-c", sql])
        .env_remove("PGOPTIONS")
        .env_remove("PGSERVICE")
        .stdin(Stdio::null());
    let waited = std::time::Instant::now();
    let mut out = output_of(&mut cmd, "psql")?;
    while !out.status.success()
        && not_yet_accepting(&String::from_utf8_lossy(&out.stderr))
        && waited.elapsed() < RECOVERY_WAIT
    {
        std::thread::sleep(std::time::Duration::from_millis(250));
        out = output_of(&mut cmd, "psql")?;
    }
    if !out.status.success() {
        return Err(InstanceError::Command {
            program: "psql".into(),
            detail: format!("{} (running: {sql})", output_text(&out)),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

fn output(mut cmd: Command, what: &str) -> Result<Output, InstanceError> {
    output_of(&mut cmd, what)
}

fn output_of(cmd: &mut Command, what: &str) -> Result<Output, InstanceError> {
    cmd.output().map_err(|e| InstanceError::Command {
        program: what.to_string(),
        detail: format!("cannot run {} ({e})", cmd.get_program().to_string_lossy()),
    })
}

fn run(cmd: Command, what: &str) -> Result<(), InstanceError> {
    let out = output(cmd, what)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(InstanceError::Command {
            program: what.to_string(),
            detail: output_text(&out),
        })
    }
}

/// stderr (or stdout when stderr is empty), trimmed, for error messages.
fn output_text(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let text = if err.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout)
    } else {
        err
    };
    let text = text.trim();
    if text.is_empty() {
        format!("exited with {}", out.status)
    } else {
        text.to_string()
    }
}

/// The last lines of the server log, or a note that there is none.
pub(crate) fn log_tail(log: &PathBuf) -> String {
    match std::fs::read_to_string(log) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
        }
        Err(e) => format!("(no log: {e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oom_policy_follows_privileges() {
        let all = u64::MAX;
        let without = all & !(1 << CAP_SYS_RESOURCE);
        assert_eq!(OomPolicy::for_server(true, Some(all)), OomPolicy::Protected);
        assert_eq!(
            OomPolicy::for_server(true, Some(without)),
            OomPolicy::ChildrenFirst
        );
        assert_eq!(OomPolicy::for_server(true, None), OomPolicy::ChildrenFirst);
        assert_eq!(
            OomPolicy::for_server(false, Some(all)),
            OomPolicy::Untouched
        );
        assert!(effective_caps().is_some());
    }
}
