//! Whole-file outputs written so that no reader ever sees half of one: the bytes go to a temp
//! file beside the target, are fsync'd, and the temp file is renamed over the target (then the
//! dir is fsync'd, so the rename survives a crash). A write that fails (a full disk) removes
//! the temp file and leaves the old file, if any, as it was.
//!
//! Write errors name the file and the free space of its file system ([`free_space`]), so a
//! full disk reads as one at once rather than as a bare `os error 28`.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a file could not be written: which file, the OS's error, and what was free there.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source} ({})", path.display(), free_note(&self.path))]
pub struct WriteError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl WriteError {
    pub fn new(path: &Path, source: std::io::Error) -> WriteError {
        WriteError {
            path: path.to_path_buf(),
            source,
        }
    }

    /// True when the file system is full (or the user's quota is).
    pub fn is_disk_full(&self) -> bool {
        is_disk_full(&self.source)
    }
}

/// ENOSPC or EDQUOT.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// `"12.0 MB free on its file system"`, or why that is unknown; for error messages about a
/// write to `path` (a file or a dir).
pub fn free_note(path: &Path) -> String {
    // The file may not exist (a temp file removed after the failure): ask its dir.
    let dir = if path.is_dir() {
        path
    } else {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    match free_space(dir) {
        Some(bytes) => format!("{} free on its file system", human_bytes(bytes)),
        None => "free space unknown".to_string(),
    }
}

/// Bytes an unprivileged writer may still use on the file system holding `dir` (statvfs's
/// `f_bavail * f_frsize`); `None` when it cannot be asked.
pub fn free_space(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a valid NUL-terminated path and `st` points to writable memory of the
    // right type; statvfs fills it or fails.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)] // the field types differ between targets
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// `1536` → `1.5 kB`; decimal units, one decimal.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1000.0 {
            break;
        }
        v /= 1000.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

/// Writes `bytes` to `path` through a synced temp file and a rename; on failure nothing at
/// `path` changes and the temp file is gone.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let tmp = temp_path(path);
    let written = write_synced(&tmp, bytes).and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(WriteError::new(path, e));
    }
    // The rename is in place; a failed dir sync only weakens crash safety, but say so: the
    // caller asked for a durable file.
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| WriteError::new(path, e))?;
    }
    Ok(())
}

/// `<dir>/.<name>.tmp-<pid>`: hidden, beside the target (a rename never crosses file systems),
/// and one per process, so two writers never share a temp file.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_whole_and_leaves_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("summary.json");
        write(&path, b"old").unwrap();
        write(&path, b"new contents").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");
        let names: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["summary.json"]);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_names_it() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("report.html");
        write(&path, b"whole page").unwrap();
        // A dir where the temp file should go makes the write fail like a full disk would:
        // after the target's name is known, before anything replaced it.
        let blocker = temp_path(&path);
        fs::create_dir(&blocker).unwrap();
        let err = write(&path, b"half").unwrap_err();
        fs::remove_dir(&blocker).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"whole page");
        let msg = err.to_string();
        assert!(msg.contains("report.html"), "{msg}");
        assert!(msg.contains("free on its file system"), "{msg}");
        assert!(!err.is_disk_full());
    }

    #[test]
    fn a_missing_dir_is_an_error_not_a_panic() {
        let err = write(Path::new("/nonexistent-tidebench-dir/x.json"), b"x").unwrap_err();
        assert!(err
            .to_string()
            .contains("/nonexistent-tidebench-dir/x.json"));
        assert!(err.to_string().contains("free space unknown"), "{err}");
    }

    #[test]
    fn free_space_and_units() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(free_space(tmp.path()).is_some());
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_536), "1.5 kB");
        assert_eq!(human_bytes(2_000_000), "2.0 MB");
        assert_eq!(human_bytes(u64::MAX), "18446.7 PB");
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(is_disk_full(&full));
        assert!(WriteError::new(Path::new("a/b"), full).is_disk_full());
    }
}
