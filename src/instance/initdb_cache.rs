//! A kept copy of initdb's output for throwaway instances: the first unsynced initdb of a set
//! of binaries and a superuser is copied into a cache dir, and later ones copy it back instead
//! of running initdb again (about a second each, more on a busy host).
//!
//! Off unless asked for: `TIDEBENCH_INITDB_CACHE=DIR` in the environment, or
//! [`keep_initdb_output_in`] in a process that creates instances itself (the integration tests,
//! which make more than a hundred instances a run). Only instances created with `fsync` off use it
//! (a copy is not synced to disk either). Copies share initdb's system identifier, which no
//! part of tidebench reads. A cache that cannot be read or written costs nothing but the time:
//! initdb runs as without it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable that names the cache dir for a whole process.
pub const ENV: &str = "TIDEBENCH_INITDB_CACHE";

static DIR: OnceLock<PathBuf> = OnceLock::new();
/// Entries this process has staged, for unique staging names.
static STAGED: AtomicU64 = AtomicU64::new(0);

/// Keeps initdb's output in `dir` for this process's later instances (see the module's header);
/// the first call wins.
pub fn keep_initdb_output_in(dir: &Path) {
    let _ = DIR.set(dir.to_path_buf());
}

/// The cache dir, when one was asked for.
fn dir() -> Option<PathBuf> {
    DIR.get()
        .cloned()
        .or_else(|| std::env::var_os(ENV).map(PathBuf::from))
        .filter(|d| !d.as_os_str().is_empty())
}

/// One set of binaries' and one superuser's entry: initdb's output depends on nothing else
/// tidebench passes it. The server binary's size and change time stand for its version.
pub(super) struct Entry {
    path: PathBuf,
}

impl Entry {
    /// The entry for `bin` and `superuser`, when a cache dir was asked for.
    pub fn for_initdb(bin: &Path, superuser: &str) -> Option<Entry> {
        let dir = dir()?;
        let meta = std::fs::metadata(bin.join("postgres")).ok()?;
        use std::os::unix::fs::MetadataExt;
        let binaries: String = bin
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let key = format!("{binaries}-{}-{}-{superuser}", meta.size(), meta.ctime());
        Some(Entry {
            path: dir.join(key),
        })
    }

    /// Copies the kept output to `data` (which must not exist); false when there is none yet
    /// or the copy failed, with nothing left at `data`.
    pub fn copy_to(&self, data: &Path) -> bool {
        if !self.path.is_dir() {
            return false;
        }
        if copy(&self.path, data) {
            return true;
        }
        let _ = std::fs::remove_dir_all(data);
        false
    }

    /// Keeps `data`, fresh from initdb, as the entry: copied beside it, then renamed into
    /// place, so a reader never sees half an entry; another process that kept it first wins.
    pub fn keep(&self, data: &Path) {
        let Some(parent) = self.path.parent() else {
            return;
        };
        if self.path.is_dir() || std::fs::create_dir_all(parent).is_err() {
            return;
        }
        let mut staging = self.path.clone().into_os_string();
        // Unique to this process and this call: threads of one process may keep it at once.
        let call = STAGED.fetch_add(1, Ordering::Relaxed);
        staging.push(format!(".{}-{call}.partial", std::process::id()));
        let staging = PathBuf::from(staging);
        let _ = std::fs::remove_dir_all(&staging);
        if !copy(data, &staging) || std::fs::rename(&staging, &self.path).is_err() {
            let _ = std::fs::remove_dir_all(&staging);
        }
    }
}

/// `cp -a from to`: owners (as root), modes and links kept, as initdb left them.
fn copy(from: &Path, to: &Path) -> bool {
    Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_kept_whole_and_copied_back() {
        let tmp = tempfile::tempdir().unwrap();
        let entry = Entry {
            path: tmp.path().join("cache").join("k"),
        };
        let data = tmp.path().join("data");
        std::fs::create_dir_all(data.join("base")).unwrap();
        std::fs::write(data.join("PG_VERSION"), "15\n").unwrap();
        assert!(!entry.copy_to(&tmp.path().join("none")), "nothing kept yet");
        entry.keep(&data);
        let copy = tmp.path().join("copy");
        assert!(entry.copy_to(&copy));
        assert_eq!(
            std::fs::read_to_string(copy.join("PG_VERSION")).unwrap(),
            "15\n"
        );
        assert!(copy.join("base").is_dir());
        // Nothing staged is left beside the entry.
        let names: Vec<_> = std::fs::read_dir(tmp.path().join("cache"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["k"]);
    }
}
