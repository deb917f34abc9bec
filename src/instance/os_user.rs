//! Which OS user the server runs as, and starting programs as that user (inside a cgroup).
//!
//! PostgreSQL refuses to run as root. When tidebench is root, initdb/pg_ctl/postgres run as the
//! `postgres` system user if it exists, else as a dedicated `tidebench` system user created on
//! demand. As a normal user everything runs as that user. The superuser role is named after it.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use super::error::{InstanceError, OsUserError};

/// The user tidebench creates when it runs as root and there is no `postgres` user.
const DEDICATED_USER: &str = "tidebench";

/// Environment that would change what the PostgreSQL programs connect to or load.
const PG_ENV: [&str; 8] = [
    "PGDATA",
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGUSER",
    "PGDATABASE",
    "PGOPTIONS",
    "PGSERVICE",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// True when tidebench is root and must switch to this user before exec.
    pub switch: bool,
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The user a new instance's server will run as (creating the dedicated user if needed).
pub(crate) fn for_new_instance() -> Result<ServerUser, InstanceError> {
    if !is_root() {
        return current_user();
    }
    if let Some(user) = lookup("postgres") {
        return Ok(user);
    }
    if let Some(user) = lookup(DEDICATED_USER) {
        return Ok(user);
    }
    create_dedicated_user()?;
    lookup(DEDICATED_USER).ok_or_else(|| {
        OsUserError::CreatedButMissing {
            user: DEDICATED_USER,
        }
        .into()
    })
}

/// The user an existing instance runs as, checked against who runs tidebench now.
pub(crate) fn for_existing(recorded: &str, instance: &str) -> Result<ServerUser, InstanceError> {
    if is_root() {
        if recorded == DEDICATED_USER && lookup(recorded).is_none() {
            create_dedicated_user()?;
        }
        return lookup(recorded).ok_or_else(|| {
            OsUserError::Gone {
                instance: instance.to_string(),
                recorded: recorded.to_string(),
            }
            .into()
        });
    }
    let me = current_user()?;
    if me.name != recorded {
        return Err(OsUserError::NotOwner {
            instance: instance.to_string(),
            recorded: recorded.to_string(),
            me: me.name.clone(),
        }
        .into());
    }
    Ok(me)
}

pub(crate) fn current_user() -> Result<ServerUser, InstanceError> {
    // SAFETY: these getters have no preconditions and cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let name = name_of(uid).ok_or_else(|| InstanceError::from(OsUserError::Nameless { uid }))?;
    Ok(ServerUser {
        name,
        uid,
        gid,
        switch: false,
    })
}

fn create_dedicated_user() -> Result<(), InstanceError> {
    let out = Command::new("useradd")
        .args([
            "--system",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
        ])
        .arg(DEDICATED_USER)
        .output()
        .map_err(|e| {
            InstanceError::from(OsUserError::NoUseradd {
                user: DEDICATED_USER,
                source: e,
            })
        })?;
    if out.status.success() || lookup(DEDICATED_USER).is_some() {
        return Ok(());
    }
    Err(OsUserError::UseraddFailed {
        user: DEDICATED_USER,
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    }
    .into())
}

/// Size of the scratch buffer for getpw*_r; generous for any real passwd entry.
const PW_BUF: usize = 16 * 1024;

fn lookup(name: &str) -> Option<ServerUser> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; PW_BUF];
    // SAFETY: passwd is plain data; zeroed is a valid "empty" value that getpwnam_r fills in.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call and buf's length is passed along.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return None;
    }
    Some(ServerUser {
        name: name.to_string(),
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
        switch: true,
    })
}

fn name_of(uid: u32) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; PW_BUF];
    // SAFETY: as in `lookup`.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call and buf's length is passed along.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded, so pw_name points at a NUL-terminated string inside buf.
    let name = unsafe { CStr::from_ptr(pwd.pw_name) };
    name.to_str().ok().map(str::to_string)
}

impl ServerUser {
    /// Gives `path` to this user when tidebench switches users (no-op otherwise).
    pub(crate) fn own(&self, path: &Path) -> Result<(), InstanceError> {
        if !self.switch {
            return Ok(());
        }
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .map_err(InstanceError::io("change the owner of", path))
    }

    /// Checks that this user can reach `path`: every existing ancestor must be searchable by it.
    pub(crate) fn check_traversable(&self, path: &Path) -> Result<(), InstanceError> {
        if !self.switch {
            return Ok(());
        }
        for dir in path.ancestors() {
            let Ok(meta) = std::fs::metadata(dir) else {
                continue;
            };
            let mode = meta.mode();
            let bit = if meta.uid() == self.uid {
                0o100
            } else if meta.gid() == self.gid {
                0o010
            } else {
                0o001
            };
            if mode & bit == 0 {
                return Err(OsUserError::CannotEnter {
                    user: self.name.clone(),
                    dir: dir.to_path_buf(),
                    mode: mode & 0o7777,
                }
                .into());
            }
        }
        Ok(())
    }

    /// A command for `program` that, in the child, first joins the cgroups whose `cgroup.procs`
    /// files are given, then writes `oom_score_adj` (if given) to its own
    /// `/proc/self/oom_score_adj`, then switches to this user, then execs. Joining before exec
    /// means pg_ctl, the postmaster and every backend are in the cgroup from their first
    /// instruction; the score is written before the switch because lowering it needs
    /// CAP_SYS_RESOURCE (root has it, unless a container took it away), and a failed write is
    /// ignored (the program runs unprotected).
    pub(crate) fn command(
        &self,
        program: &Path,
        cwd: &Path,
        cgroup_procs: Vec<CString>,
        oom_score_adj: Option<&'static [u8]>,
    ) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(cwd);
        for var in PG_ENV {
            cmd.env_remove(var);
        }
        let switch = self.switch.then_some((self.uid, self.gid));
        if switch.is_some() || !cgroup_procs.is_empty() || oom_score_adj.is_some() {
            // SAFETY: the closure only makes async-signal-safe calls (open, write, close,
            // setgroups, setgid, setuid) on data prepared before fork, and allocates nothing.
            unsafe {
                cmd.pre_exec(move || enter_and_switch(&cgroup_procs, oom_score_adj, switch));
            }
        }
        cmd
    }
}

/// Runs in the forked child: no allocation, raw syscalls only.
fn enter_and_switch(
    cgroup_procs: &[CString],
    oom_score_adj: Option<&[u8]>,
    switch: Option<(u32, u32)>,
) -> io::Result<()> {
    enter_cgroups(cgroup_procs)?;
    if let Some(value) = oom_score_adj {
        // SAFETY: the path is a NUL-terminated literal; value outlives the call. Errors are
        // ignored on purpose: without the right to lower the score the program runs as is.
        unsafe {
            let fd = libc::open(
                c"/proc/self/oom_score_adj".as_ptr(),
                libc::O_WRONLY | libc::O_CLOEXEC,
            );
            if fd >= 0 {
                libc::write(fd, value.as_ptr().cast(), value.len());
                libc::close(fd);
            }
        }
    }
    if let Some((uid, gid)) = switch {
        let groups = [gid as libc::gid_t];
        // SAFETY: plain syscalls; groups outlives the call. Order matters: groups and gid can
        // only be changed while still root.
        unsafe {
            if libc::setgroups(1, groups.as_ptr()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Moves the calling process into each group of `cgroup_procs` (their `cgroup.procs` files).
/// Safe to run between fork and exec: no allocation, raw syscalls only.
pub(super) fn enter_cgroups(cgroup_procs: &[CString]) -> io::Result<()> {
    for procs in cgroup_procs {
        // SAFETY: procs is a valid NUL-terminated path.
        let fd = unsafe { libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // "0" names the writing process itself, in cgroup v1 and v2 alike.
        // SAFETY: fd is open and the buffer holds one byte.
        let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        let err = io::Error::last_os_error();
        // SAFETY: fd is open and closed once.
        unsafe { libc::close(fd) };
        if written != 1 {
            return Err(err);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_user_has_a_name() {
        let me = current_user().unwrap();
        assert!(!me.name.is_empty());
        assert!(!me.switch);
    }

    #[test]
    fn writes_the_oom_score_before_exec_when_allowed() {
        let me = current_user().unwrap();
        let out = me
            .command(
                Path::new("/bin/cat"),
                Path::new("/"),
                Vec::new(),
                Some(b"-500"),
            )
            .arg("/proc/self/oom_score_adj")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let score = String::from_utf8_lossy(&out.stdout).trim().to_string();
        // Only a process with CAP_SYS_RESOURCE may lower it (root, unless a container took the
        // capability away); anyone else runs the program unprotected, without an error.
        if super::super::can_lower_oom_scores() {
            assert_eq!(score, "-500");
        }
    }

    #[test]
    fn root_is_found() {
        let root = lookup("root").unwrap();
        assert_eq!(root.uid, 0);
        assert!(lookup("no-such-user-tidebench-test").is_none());
    }
}
