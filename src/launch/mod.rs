//! Launch files for a run spread over several driver hosts (scale-out, issue 26): a Slurm batch
//! script (`slurm`) and Kubernetes manifests (`kube`). Both are pure text generators: the CLI
//! reads what they need and prints what they return.
//!
//! Every launcher runs the same thing on each host, [`shard_command`]:
//!
//! ```text
//! tidebench run RUN.toml --shard auto/N --start-at +30s@DIR/start-at --run-id ID \
//!     --out DIR/shard-{shard} [run args...]
//! ```
//!
//! and [`merge_command`] once they are all done. Building both argv here, once, is what keeps a
//! pod's command equal to a Slurm task's: the launchers differ only in how they start N copies
//! and how they wait for them. `auto/N` leaves the index to the launcher's environment
//! (`SLURM_PROCID`, `JOB_COMPLETION_INDEX`), so one command serves every shard; the start file
//! gives the shards one clock without the launcher knowing when they will be scheduled.

pub mod args;
pub mod kube;
mod shell;
pub mod slurm;
mod yaml;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub use shell::{shell_line, shell_quote};

/// The binary every generated command names; the Slurm script may name another path.
pub const PROGRAM: &str = "tidebench";
/// How long after the first shard arrives all of them start their clients.
pub const DEFAULT_START_LEAD: Duration = Duration::from_secs(30);
/// The file, in the results dir, where the first shard writes the start instant.
pub const START_FILE: &str = "start-at";
/// The dir, in the results dir, that `merge` writes.
pub const MERGED_DIR: &str = "merged";
/// The file whose presence in a shard's dir says the shard finished: a results dir appears
/// whole (renamed from `.partial`) with it inside.
pub const SUMMARY_FILE: &str = "summary.json";
/// The merge flag that keeps what the finished shards measured when some did not finish, and
/// marks the merged run incomplete.
pub const ALLOW_MISSING: &str = "--allow-missing";

/// `run` flags the launcher sets itself; a run arg naming one would contradict it.
const LAUNCHER_FLAGS: [&str; 4] = ["--shard", "--start-at", "--run-id", "--out"];

/// One run spread over `drivers` shards, as every launcher needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchSpec {
    /// The run file, as the user gave it: the shards resolve it where they run.
    pub run_file: PathBuf,
    /// Shards, one per driver process; at least 1.
    pub drivers: u32,
    /// Extra `tidebench run` flags every shard gets, e.g. `["-T", "60s"]`.
    pub run_args: Vec<String>,
    /// A dir every shard can write: shard I writes `<dir>/shard-I`, merge `<dir>/merged`.
    pub results_dir: String,
    /// From the first shard's arrival to the common start.
    pub start_lead: Duration,
    /// Shared by every shard; `merge` refuses dirs of different runs.
    pub run_id: String,
}

/// A launch that cannot work, with the fix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LaunchError {
    #[error("--drivers 0: a run needs at least one driver; give --drivers N with N >= 1")]
    NoDrivers,
    #[error(
        "a --start-lead under 1 s leaves the other shards no time to arrive before the start; \
         give the time they need to be scheduled and connect, e.g. --start-lead 30s"
    )]
    NoLead,
    #[error("the results dir is empty; give --results-dir DIR on storage every shard can write")]
    NoResultsDir,
    #[error("the run id is empty; give --run-id ID or leave it out for one from the time")]
    NoRunId,
    #[error("the run arg {arg} is set by the launcher; {fix}")]
    LauncherFlag { arg: String, fix: &'static str },
    #[error("{flag} {value:?}: {why}")]
    BadValue {
        flag: &'static str,
        value: String,
        why: String,
    },
}

impl LaunchSpec {
    /// Checks what every launcher needs; the launchers call it first.
    pub fn validate(&self) -> Result<(), LaunchError> {
        if self.drivers == 0 {
            return Err(LaunchError::NoDrivers);
        }
        if self.start_lead < Duration::from_secs(1) {
            return Err(LaunchError::NoLead);
        }
        if self.results_dir.trim().is_empty() {
            return Err(LaunchError::NoResultsDir);
        }
        if self.run_id.trim().is_empty() {
            return Err(LaunchError::NoRunId);
        }
        for arg in &self.run_args {
            let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
            if let Some(f) = LAUNCHER_FLAGS.iter().find(|f| **f == flag) {
                return Err(LaunchError::LauncherFlag {
                    arg: arg.clone(),
                    fix: launcher_flag_fix(f),
                });
            }
            // `-o DIR`, `-oDIR`: no other short flag of `run` starts with o.
            if arg.starts_with("-o") {
                return Err(LaunchError::LauncherFlag {
                    arg: arg.clone(),
                    fix: launcher_flag_fix("--out"),
                });
            }
        }
        Ok(())
    }

    /// `auto/N`: every shard takes its index from the launcher's environment.
    pub fn auto_shard(&self) -> String {
        format!("auto/{}", self.drivers)
    }

    /// `+LEAD@DIR/start-at`: the first shard to arrive writes now + LEAD there, the others read
    /// it, so all start together however late the launcher schedules them.
    pub fn start_at(&self) -> String {
        let lead = if self.start_lead.subsec_millis() == 0 {
            format!("{}s", self.start_lead.as_secs())
        } else {
            format!("{}ms", self.start_lead.as_millis())
        };
        format!("+{lead}@{}", self.path_in(START_FILE))
    }

    /// `DIR/leaf`, without a doubled slash when DIR ends in one.
    pub fn path_in(&self, leaf: &str) -> String {
        format!("{}/{leaf}", self.results_dir.trim_end_matches('/'))
    }

    /// The dir shard `index` writes.
    pub fn shard_dir(&self, index: u32) -> String {
        self.path_in(&format!("shard-{index}"))
    }
}

fn launcher_flag_fix(flag: &str) -> &'static str {
    match flag {
        "--out" => "give the shared dir with --results-dir: shard I writes DIR/shard-I",
        "--run-id" => "give it to the launcher: --run-id ID",
        "--start-at" => "the shards share one start through a file; tune it with --start-lead",
        _ => "the launcher gives each shard its index; set the count with --drivers",
    }
}

/// The argv of one shard: `tidebench run <run file> --shard <shard_arg> --start-at <start_at>
/// --run-id <id> --out <dir>/shard-{shard} <run args...>`. `run` replaces `{shard}` with the
/// shard's index; the run args come last, so they may add flags but not repeat these.
pub fn shard_command(spec: &LaunchSpec, shard_arg: &str, start_at: &str) -> Vec<String> {
    let mut argv: Vec<String> = vec![
        PROGRAM.into(),
        "run".into(),
        spec.run_file.to_string_lossy().into_owned(),
        "--shard".into(),
        shard_arg.into(),
        "--start-at".into(),
        start_at.into(),
        "--run-id".into(),
        spec.run_id.clone(),
        "--out".into(),
        spec.path_in("shard-{shard}"),
    ];
    argv.extend(spec.run_args.iter().cloned());
    argv
}

/// The argv that merges every shard's dir into `<dir>/merged`.
pub fn merge_command(spec: &LaunchSpec) -> Vec<String> {
    let mut argv: Vec<String> = vec![PROGRAM.into(), "merge".into()];
    argv.extend((0..spec.drivers).map(|i| spec.shard_dir(i)));
    argv.push("--out".into());
    argv.push(spec.path_in(MERGED_DIR));
    argv
}

/// A run id from the run file's name and the time: `tpcc-20261125T210000Z`. The launcher makes
/// one id for all shards, so they agree on it (and on the seed `run` derives from it).
pub fn default_run_id(run_file: &Path, now: SystemTime) -> String {
    let stem = run_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "run".to_string());
    // The same form `run` makes for shards given no --run-id.
    crate::config::shard::default_run_id(&stem, now)
}

/// `text` as an RFC 1123 label of at most `max` (10 or more) characters: lowercase letters, digits and
/// `-`, starting and ending with a letter or digit. A name cut short ends in a hash of the
/// whole, so two long run ids that differ only at the end still get two names.
pub fn dns_label(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars().map(|c| c.to_ascii_lowercase()) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    fit(out.trim_end_matches('-').to_string(), text, max)
}

/// `text` as a label value: at most 63 of `A-Za-z0-9._-`, starting and ending with a letter
/// or digit (or empty).
pub fn label_value(text: &str) -> String {
    let kept = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    let out: String = text
        .chars()
        .map(|c| if kept(c) { c } else { '-' })
        .collect();
    let out = out
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string();
    fit(out, text, 63)
}

/// `out` (ASCII), or when longer than `max` (at least 10), its head and a hash of `whole`.
fn fit(out: String, whole: &str, max: usize) -> String {
    if out.len() <= max {
        return out;
    }
    // FNV-1a: the same on every platform and build, so a run's names are too.
    let hash = whole.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let head = out[..max.saturating_sub(9)].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    format!("{head}-{hash:08x}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A spec as the launchers' tests use it, with results on a Kubernetes claim's mount so one
    /// spec serves both.
    pub(crate) fn spec(drivers: u32) -> LaunchSpec {
        LaunchSpec {
            run_file: PathBuf::from("bench/run.toml"),
            drivers,
            run_args: vec![
                "-T".into(),
                "60s".into(),
                "--session-set".into(),
                "a='b c'".into(),
            ],
            results_dir: "/results/run-1".into(),
            start_lead: DEFAULT_START_LEAD,
            run_id: "run-1".into(),
        }
    }

    #[test]
    fn a_shard_runs_the_run_file_with_its_shard_start_id_and_dir_then_the_run_args() {
        let s = spec(3);
        assert_eq!(s.start_at(), "+30s@/results/run-1/start-at");
        let argv = shard_command(&s, &s.auto_shard(), &s.start_at());
        let want = "tidebench run bench/run.toml --shard auto/3 --start-at \
                    +30s@/results/run-1/start-at --run-id run-1 --out \
                    /results/run-1/shard-{shard} -T 60s --session-set a='b c'";
        assert_eq!(argv.join(" "), want);
        let merge = merge_command(&s);
        assert_eq!(
            merge.join(" "),
            "tidebench merge /results/run-1/shard-0 /results/run-1/shard-1 \
             /results/run-1/shard-2 --out /results/run-1/merged"
        );
    }

    #[test]
    fn a_trailing_slash_and_a_fractional_lead_are_written_as_run_reads_them() {
        let mut s = spec(1);
        s.results_dir = "out/".into();
        s.start_lead = Duration::from_millis(1500);
        assert_eq!(s.start_at(), "+1500ms@out/start-at");
        assert_eq!(s.shard_dir(0), "out/shard-0");
    }

    #[test]
    fn specs_that_cannot_run_are_refused_with_the_fix() {
        let ok = spec(2);
        assert_eq!(ok.validate(), Ok(()));
        let e = LaunchSpec {
            drivers: 0,
            ..ok.clone()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("--drivers N with N >= 1"), "{e}");
        let e = LaunchSpec {
            start_lead: Duration::from_millis(999),
            ..ok.clone()
        };
        assert_eq!(e.validate(), Err(LaunchError::NoLead));
        let e = LaunchSpec {
            results_dir: " ".into(),
            ..ok.clone()
        };
        assert_eq!(e.validate(), Err(LaunchError::NoResultsDir));
        let e = LaunchSpec {
            run_id: String::new(),
            ..ok.clone()
        };
        assert_eq!(e.validate(), Err(LaunchError::NoRunId));
        for bad in [
            "--out",
            "--out=x",
            "-o",
            "-ox",
            "--shard=1/2",
            "--run-id",
            "--start-at",
        ] {
            let mut s = ok.clone();
            s.run_args = vec!["-c".into(), "8".into(), bad.into()];
            let e = s.validate().unwrap_err();
            assert!(matches!(e, LaunchError::LauncherFlag { .. }), "{bad}: {e}");
        }
    }

    #[test]
    fn the_default_run_id_is_the_run_files_name_and_the_utc_time() {
        let at = humantime::parse_rfc3339("2026-11-25T21:00:07Z").unwrap();
        assert_eq!(
            default_run_id(Path::new("bench/tpcc.toml"), at),
            "tpcc-20261125T210007Z"
        );
        assert_eq!(default_run_id(Path::new("/"), at), "run-20261125T210007Z");
    }
}
