//! A new guest's first PGDATA, made on the host (issue 49). The guest runs the host's own
//! PostgreSQL build (see `image`), so the host's `initdb` makes the same data dir, with the same
//! options, superuser and password, that the guest's would: in a second or two, where the
//! guest's, emulated under TCG, took 15 s on a quiet host and a minute on a busy one. The dir
//! goes into the new data disk through `mkfs.ext4 -d`, and the guest's init gives it to its own
//! server user at boot (`guest_init`). A server with no PGDATA on a disk that already exists (an
//! instance joining a shared VM, or made again in one) is still initdb'd inside the guest.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::VmError;
use crate::instance::error::InstanceError;
use crate::instance::os_user::ServerUser;
use crate::instance::record::Record;

/// Where the guest mounts its data disk: a PGDATA's path there is below it.
const DATA_MOUNT: &str = "/data";

/// A staging dir on the host, removed when dropped: `root/` becomes the data disk's root.
pub(super) struct Seed {
    dir: PathBuf,
}

impl Seed {
    /// What `mkfs.ext4 -d` copies into the new disk.
    pub(super) fn root(&self) -> PathBuf {
        self.dir.join("root")
    }
}

impl Drop for Seed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs the host's `initdb` for the server `record` names, at `pgdata` (its path in the guest,
/// below `/data`), as the guest's would run it: local trust, SCRAM over TCP, UTF8, C locale,
/// `password` for the superuser, TZ=UTC. Without a sync: the files only feed `mkfs.ext4`.
pub(super) fn make(
    record: &Record,
    user: &ServerUser,
    pgdata: &str,
    password: &str,
) -> Result<Seed, InstanceError> {
    let relative = Path::new(pgdata)
        .strip_prefix(DATA_MOUNT)
        .map_err(|_| VmError::Config {
            message: format!("a guest's PGDATA must be below {DATA_MOUNT}, not {pgdata}"),
        })?;
    let dir = std::env::temp_dir().join(format!(
        "tidebench-seed-{}-{}",
        record.name,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).map_err(InstanceError::io("create", &dir))?;
    let seed = Seed { dir };
    let private = std::fs::Permissions::from_mode(0o700);
    std::fs::set_permissions(&seed.dir, private.clone())
        .map_err(InstanceError::io("set permissions of", &seed.dir))?;
    let root = seed.root();
    std::fs::create_dir(&root).map_err(InstanceError::io("create", &root))?;
    std::fs::set_permissions(&root, private)
        .map_err(InstanceError::io("set permissions of", &root))?;
    // initdb runs as the server user (never root): the staging dirs and the password file are
    // its own, and it must reach them.
    let pwfile = seed.dir.join("pw");
    create_private(&pwfile, format!("{password}\n").as_bytes())?;
    for path in [&seed.dir, &root, &pwfile] {
        user.own(path)?;
    }
    user.check_traversable(&root)?;
    let initdb = record.pg_bin_dir.join("initdb");
    let mut cmd = user.command(&initdb, &seed.dir, Vec::new(), None);
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TZ", "UTC")
        .env("LANG", "C")
        .arg("-D")
        .arg(root.join(relative))
        .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
        .args(["--encoding=UTF8", "--locale=C", "-U", &record.superuser])
        .arg(format!("--pwfile={}", pwfile.display()))
        .arg("--no-sync");
    let ran = run(cmd, &initdb);
    let _ = std::fs::remove_file(&pwfile);
    ran.map(|()| seed)
}

/// A new file only its owner can read (it fails if the file exists), holding `bytes`.
pub(super) fn create_private(path: &Path, bytes: &[u8]) -> Result<(), InstanceError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(InstanceError::io("create", path))?;
    std::io::Write::write_all(&mut f, bytes).map_err(InstanceError::io("write", path))
}

fn run(mut cmd: Command, program: &Path) -> Result<(), InstanceError> {
    let out = cmd.output().map_err(|source| VmError::CannotRun {
        program: program.display().to_string(),
        source,
        fix: "check the PostgreSQL installation",
    })?;
    if !out.status.success() {
        let mut stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if stderr.is_empty() {
            stderr = String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        return Err(VmError::Failed {
            what: program.display().to_string(),
            stderr,
            fix: String::new(),
        }
        .into());
    }
    Ok(())
}
