//! Finding the PostgreSQL server binaries (pg_ctl, initdb, postgres, psql).
//!
//! Order: `$TIDEBENCH_PG_BIN`, `pg_config --bindir`, `pg_ctl` on PATH (symlinks resolved, as
//! Debian's wrappers live elsewhere), then `/usr/lib/postgresql/<major>/bin` with the newest major.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::error::InstanceError;

/// The programs a directory must hold to run a server.
const SERVER_PROGRAMS: [&str; 3] = ["pg_ctl", "initdb", "postgres"];

/// True when `dir` holds pg_ctl, initdb and postgres.
pub(crate) fn is_bin_dir(dir: &Path) -> bool {
    SERVER_PROGRAMS.iter().all(|p| dir.join(p).is_file())
}

/// The directory `--pg-bin` names, when it holds the server binaries.
pub(crate) fn given(dir: &Path) -> Result<PathBuf, InstanceError> {
    if is_bin_dir(dir) {
        return Ok(dir.to_path_buf());
    }
    Err(InstanceError::PgBinFlag {
        dir: dir.to_path_buf(),
    })
}

/// Finds the directory holding the server binaries.
pub(crate) fn find() -> Result<PathBuf, InstanceError> {
    if let Some(dir) = std::env::var_os("TIDEBENCH_PG_BIN").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if is_bin_dir(&dir) {
            return Ok(dir);
        }
        return Err(InstanceError::PgBinDir {
            dir: dir.to_path_buf(),
        });
    }
    let mut looked = vec!["$TIDEBENCH_PG_BIN (unset)".to_string()];
    if let Some(dir) = from_pg_config() {
        if is_bin_dir(&dir) {
            return Ok(dir);
        }
        looked.push(format!("{} (pg_config --bindir)", dir.display()));
    } else {
        looked.push("pg_config --bindir (no pg_config)".into());
    }
    if let Some(dir) = from_path() {
        return Ok(dir);
    }
    looked.push("PATH".into());
    if let Some(dir) = newest_debian_dir(Path::new("/usr/lib/postgresql")) {
        return Ok(dir);
    }
    looked.push("/usr/lib/postgresql/*/bin".into());
    Err(InstanceError::BinariesNotFound {
        looked: looked.join(", "),
    })
}

fn from_pg_config() -> Option<PathBuf> {
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let dir = text.trim();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

fn from_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("pg_ctl"))
        .filter(|p| p.is_file())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .find(|d| is_bin_dir(d))
}

/// `/usr/lib/postgresql/<major>/bin` with the highest numeric major.
fn newest_debian_dir(root: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(root).ok()?;
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let major: f64 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            is_bin_dir(&bin).then_some((major, bin))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, bin)| bin)
}

/// psql from the same installation when it is there, else from PATH.
pub(crate) fn psql(bin_dir: &Path) -> PathBuf {
    let local = bin_dir.join("psql");
    if local.is_file() {
        local
    } else {
        PathBuf::from("psql")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_major_wins_and_incomplete_dirs_are_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        for (major, complete) in [("9.6", true), ("15", true), ("16", false), ("abc", true)] {
            let bin = tmp.path().join(major).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            let programs: &[&str] = if complete {
                &SERVER_PROGRAMS
            } else {
                &["pg_ctl"]
            };
            for p in programs {
                std::fs::write(bin.join(p), "").unwrap();
            }
        }
        let found = newest_debian_dir(tmp.path()).unwrap();
        assert_eq!(found, tmp.path().join("15").join("bin"));
    }
}
