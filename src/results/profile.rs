//! The CPU profiles of a run (issue 29) on disk: `profile.json` holds what the report and
//! `compare` print (per profiled subject: samples, the split by kind of code, the top
//! functions by self and by total share, and what could not be resolved), and
//! `profile/<subject>.folded` the folded stacks a flame graph is drawn from (one line per
//! distinct stack, `root;...;leaf count`, the format of Brendan Gregg's `stackcollapse` and of
//! inferno). Both are written once, after the measured window, through [`atomic`]; a run
//! without `--profile` has neither.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{atomic, ResultsError, SCHEMA_VERSION};

pub const PROFILE_FILE: &str = "profile.json";
pub const PROFILE_DIR: &str = "profile";

/// `profile.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProfileFile {
    pub schema_version: u32,
    /// `instances` or `host`.
    pub scope: String,
    pub hz: u32,
    /// `fp` or `dwarf`.
    pub call_graph: String,
    /// What `perf --version` said.
    pub perf_version: String,
    /// The span the samples were kept from, seconds since the run's start: the measured
    /// window, cut short when the run was stopped.
    pub window_s: (f64, f64),
    /// CPUs the host had (a bound on the samples: hz × window × CPUs).
    pub cpus: u32,
    pub subjects: Vec<ProfiledSubject>,
    /// Samples perf took in the window that belong to no subject (other processes, idle).
    pub unattributed_samples: u64,
    /// What is missing from the profiles and why (perf stopped early, a target out of reach,
    /// kernel symbols hidden), each with its fix.
    #[serde(default)]
    pub missing: Vec<String>,
}

/// One profiled subject: a managed instance, a local server, the driver, or the host.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProfiledSubject {
    pub name: String,
    /// `instance`, `server`, `driver` or `host`.
    pub kind: String,
    /// The root of its process tree (a postmaster, the driver); `None` for the host.
    pub pid: Option<u32>,
    pub samples: u64,
    /// Percent of its samples whose leaf frame is in each kind of code.
    pub split: DsoSplit,
    /// Percent of its samples whose leaf frame has no symbol (static functions of a stripped
    /// binary, JIT code, hidden kernel symbols).
    pub unknown_pct: f64,
    /// Functions by the samples they were the leaf of, largest first.
    pub top_self: Vec<FunctionShare>,
    /// Functions by the samples they were anywhere on the stack of, largest first.
    pub top_total: Vec<FunctionShare>,
    /// The folded stacks, relative to the results dir.
    pub folded: String,
}

/// Where the leaf frames were, in percent of a subject's samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DsoSplit {
    pub kernel: f64,
    pub postgres: f64,
    pub libc: f64,
    pub other: f64,
}

/// A function's share of a subject's samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionShare {
    pub function: String,
    /// The file it is in (basename), or `[kernel.kallsyms]`.
    pub dso: String,
    pub samples: u64,
    pub pct: f64,
}

impl ProfiledSubject {
    /// "instance default", "server postgresql://…", "driver (tidebench, pid 12)", "host
    /// (every process)".
    pub fn heading(&self) -> String {
        match (self.kind.as_str(), self.pid) {
            ("driver", Some(pid)) => format!("driver (tidebench, pid {pid})"),
            ("host", _) => "host (every process)".into(),
            (kind, _) => format!("{kind} {}", self.name),
        }
    }
}

impl FunctionShare {
    /// `ExecScan [postgres]`, `finish_task_switch [kernel]`, cut to `width` characters.
    pub fn label(&self, width: usize) -> String {
        let dso = if self.dso.starts_with("[kernel") {
            "kernel"
        } else {
            self.dso.trim_start_matches('[').trim_end_matches(']')
        };
        let name: String = if self.function.chars().count() > width {
            let mut cut: String = self
                .function
                .chars()
                .take(width.saturating_sub(1))
                .collect();
            cut.push('…');
            cut
        } else {
            self.function.clone()
        };
        format!("{name} [{dso}]")
    }
}

impl ProfileFile {
    pub fn new() -> ProfileFile {
        ProfileFile {
            schema_version: SCHEMA_VERSION,
            ..ProfileFile::default()
        }
    }

    /// Writes `profile.json` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), ResultsError> {
        let json = serde_json::to_vec_pretty(self).map_err(|e| ResultsError::Io {
            what: "encode",
            path: dir.join(PROFILE_FILE),
            source: std::io::Error::other(e),
        })?;
        atomic::write(&dir.join(PROFILE_FILE), &json).map_err(ResultsError::from)
    }

    /// Reads `dir/profile.json`; `None` when the run took no profile.
    pub fn read(dir: &Path) -> Result<Option<ProfileFile>, ResultsError> {
        let path = dir.join(PROFILE_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ResultsError::Io {
                    what: "read",
                    path,
                    source,
                })
            }
        };
        let file: ProfileFile = serde_json::from_str(&text).map_err(|e| ResultsError::Io {
            what: "parse",
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        if file.schema_version != SCHEMA_VERSION {
            return Err(ResultsError::Io {
                what: "read",
                path,
                source: std::io::Error::other(format!(
                    "schema_version {}; this tidebench reads {SCHEMA_VERSION}",
                    file.schema_version
                )),
            });
        }
        Ok(Some(file))
    }

    pub fn subject(&self, name: &str) -> Option<&ProfiledSubject> {
        self.subjects.iter().find(|s| s.name == name)
    }
}

/// Where a subject's folded stacks go, relative to the results dir: its name made safe for a
/// file name.
pub fn folded_path(subject: &str) -> PathBuf {
    let safe: String = subject
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    Path::new(PROFILE_DIR).join(format!("{safe}.folded"))
}

/// Writes folded stacks (`stack count` lines) to `dir/rel`, creating `profile/`.
pub fn write_folded<'a>(
    dir: &Path,
    rel: &Path,
    lines: impl Iterator<Item = (&'a str, u64)>,
) -> Result<(), ResultsError> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ResultsError::Io {
            what: "create",
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let mut text = String::new();
    for (stack, count) in lines {
        text.push_str(stack);
        text.push(' ');
        text.push_str(&count.to_string());
        text.push('\n');
    }
    atomic::write(&path, text.as_bytes()).map_err(ResultsError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        assert!(ProfileFile::read(dir.path()).unwrap().is_none());
        let mut p = ProfileFile::new();
        p.scope = "instances".into();
        p.hz = 99;
        p.subjects.push(ProfiledSubject {
            name: "vm 1".into(),
            kind: "instance".into(),
            samples: 10,
            folded: folded_path("vm 1").display().to_string(),
            top_self: vec![FunctionShare {
                function: "ExecScan".into(),
                dso: "postgres".into(),
                samples: 4,
                pct: 40.0,
            }],
            ..ProfiledSubject::default()
        });
        p.write(dir.path()).unwrap();
        let back = ProfileFile::read(dir.path()).unwrap().unwrap();
        assert_eq!(back.subjects[0].folded, "profile/vm_1.folded");
        assert_eq!(back.subject("vm 1").unwrap().top_self[0].pct, 40.0);
        let rel = folded_path("vm 1");
        write_folded(dir.path(), &rel, [("postgres;main", 3u64)].into_iter()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(rel)).unwrap();
        assert_eq!(text, "postgres;main 3\n");
    }
}
