//! One shard of a run spread over several driver processes (issue 26): which part this process
//! is (`--shard I/N`, or `auto/N` from the launcher's environment), the run they all belong to
//! (`--run-id`), and the instant every shard starts its clients at (`--start-at`).
//!
//! Clients are dealt by id: shard I runs the clients whose global id is I modulo N, with the
//! seeds, decks and state they would have in one process, so the union of the shards is
//! exactly the one-process run. Every shard must therefore share the plan's seed: when none
//! was given, it is derived from the run id, which every shard shares.
//!
//! The start instant is absolute (RFC 3339), or `+DUR@FILE`: the first shard to arrive writes
//! now + DUR into FILE (a file on storage the shards share) and the others read it, so a
//! launcher that cannot compute an instant for all (a Kubernetes Job) still gets one clock.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::duration::{parse_duration, serde_duration};

/// The largest clock offset against the servers a shard accepts by default.
pub const DEFAULT_MAX_CLOCK_OFFSET: Duration = Duration::from_millis(50);

/// This process's part of a sharded run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardPlan {
    /// 0-based.
    pub index: u32,
    pub count: u32,
    /// Shared by every shard of the run; `merge` refuses dirs of different runs.
    pub run_id: String,
    /// When every shard starts its clients (RFC 3339 in files).
    #[serde(with = "rfc3339")]
    pub start_at: SystemTime,
    /// A shard whose clock is further than this from a target server's refuses to run.
    #[serde(with = "serde_duration")]
    pub max_clock_offset: Duration,
    /// The host this shard runs on.
    pub host: String,
}

impl ShardPlan {
    /// Whether the client with global id `client` is this shard's.
    pub fn runs_client(&self, client: u32) -> bool {
        client % self.count == self.index
    }

    /// `I/N` as `--shard` takes it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// Reads `--shard`: `I/N` (I from 0, as the launchers count: 0/3, 1/3, 2/3), `auto/N`, or
/// `auto`. `auto` takes the index from the launcher (Slurm's `SLURM_PROCID`, a Kubernetes
/// Indexed Job's `JOB_COMPLETION_INDEX`) and the count from `N`, else `SLURM_NTASKS`.
pub fn parse_shard(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<(u32, u32), String> {
    let fix = "write --shard I/N with I from 0 to N-1 (1/3 is the second of three), or --shard \
               auto/N under a launcher";
    let (index, count) = match text.split_once('/') {
        Some((i, n)) => (i.trim(), Some(n.trim())),
        None => (text.trim(), None),
    };
    let count = match count {
        Some(n) => n
            .parse::<u32>()
            .map_err(|_| format!("--shard {text}: the count '{n}' is not a whole number; {fix}"))?,
        None if index == "auto" => env("SLURM_NTASKS")
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| {
                "--shard auto: no SLURM_NTASKS in the environment to take the count from; give \
                 it: --shard auto/N"
                    .to_string()
            })?,
        None => return Err(format!("--shard {text}: no count; {fix}")),
    };
    if count == 0 {
        return Err(format!(
            "--shard {text}: a run has at least one shard; {fix}"
        ));
    }
    let index = if index == "auto" {
        let (var, value) = ["SLURM_PROCID", "JOB_COMPLETION_INDEX"]
            .iter()
            .find_map(|v| env(v).map(|value| (*v, value)))
            .ok_or_else(|| {
                format!(
                    "--shard {text}: neither SLURM_PROCID (Slurm) nor JOB_COMPLETION_INDEX (a \
                     Kubernetes Indexed Job) is set; outside a launcher write --shard I/N"
                )
            })?;
        let i: u32 = value
            .trim()
            .parse()
            .map_err(|_| format!("--shard {text}: {var}={value} is not a whole number"))?;
        if i >= count {
            return Err(format!(
                "--shard {text}: {var}={i} but the run has {count} shard(s) (0 to {}); give the \
                 launcher as many tasks as shards",
                count - 1
            ));
        }
        i
    } else {
        let i: u32 = index
            .parse()
            .map_err(|_| format!("--shard {text}: '{index}' is not a whole number; {fix}"))?;
        if i >= count {
            return Err(format!(
                "--shard {text}: shards are numbered 0 to {}; {fix}",
                count - 1
            ));
        }
        i
    };
    Ok((index, count))
}

/// Reads `--start-at`: an RFC 3339 instant, `+DUR` (from now: one process, or a launcher
/// that hands every shard the same text is better off with an instant), or `+DUR@FILE` (the
/// first shard writes now + DUR into FILE, the others read it). The instant must be ahead.
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, String> {
    let at = match text.strip_prefix('+') {
        Some(rest) => {
            let (lead, file) = match rest.split_once('@') {
                Some((d, f)) => (d, Some(f)),
                None => (rest, None),
            };
            let lead = parse_duration(lead).map_err(|e| format!("--start-at {text}: {e}"))?;
            match file {
                Some(f) => shared_instant(Path::new(f), now + lead)
                    .map_err(|e| format!("--start-at {text}: {e}"))?,
                None => now + lead,
            }
        }
        None => humantime::parse_rfc3339_weak(text).map_err(|e| {
            format!(
                "--start-at {text}: {e}; write an RFC 3339 instant (2026-11-25T21:00:00Z), \
                 +30s, or +30s@FILE on storage the shards share"
            )
        })?,
    };
    if at <= now {
        let ago = now.duration_since(at).unwrap_or_default();
        return Err(format!(
            "--start-at {text}: {} is {:.1} s in the past; give an instant ahead (or +30s@FILE \
             with a new FILE)",
            humantime::format_rfc3339_millis(at),
            ago.as_secs_f64()
        ));
    }
    Ok(at)
}

/// The instant in `file`, written there first if no shard has yet: published whole with a
/// hard link, so a reader never sees a half-written file.
fn shared_instant(file: &Path, proposed: SystemTime) -> Result<SystemTime, String> {
    if !file.exists() {
        let text = humantime::format_rfc3339_nanos(proposed).to_string();
        let temp = file.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&temp, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", temp.display()))?;
        // Another shard may win the race: then its instant is the one.
        let _ = std::fs::hard_link(&temp, file);
        let _ = std::fs::remove_file(&temp);
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    humantime::parse_rfc3339_weak(text.trim())
        .map_err(|e| format!("{} does not hold an RFC 3339 instant ({e})", file.display()))
}

/// A run id from the run's name and its start instant: the same for every shard that was
/// given the same start, so launchers need not make one up.
pub fn default_run_id(name: &str, start_at: SystemTime) -> String {
    let stamp = humantime::format_rfc3339_seconds(start_at)
        .to_string()
        .replace([':', '-'], "");
    format!("{name}-{stamp}")
}

/// The plan's seed for a sharded run that gave none: a hash of the run id, the same on every
/// shard; 63 bits, as TOML (`runtime.toml`) holds signed integers only.
pub fn seed_of_run(run_id: &str) -> u64 {
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let h = run_id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    h >> 1
}

/// This host's name, for the results of each shard.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".to_string())
}

/// `SystemTime` as RFC 3339 text in files.
mod rfc3339 {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_nanos(*t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn shards_are_read_one_based_and_checked() {
        let none = env(&[]);
        assert_eq!(parse_shard("0/3", &none), Ok((0, 3)));
        assert_eq!(parse_shard("2/3", &none), Ok((2, 3)));
        for bad in ["3/2", "2/2", "0/0", "x/2", "2", "1/x"] {
            assert!(parse_shard(bad, &none).is_err(), "{bad}");
        }
        assert!(parse_shard("3/2", &none).unwrap_err().contains("0 to 1"));
        assert!(parse_shard("0/0", &none)
            .unwrap_err()
            .contains("at least one"));
    }

    #[test]
    fn auto_reads_the_launcher() {
        let slurm = env(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "4")]);
        assert_eq!(parse_shard("auto", &slurm), Ok((2, 4)));
        assert_eq!(parse_shard("auto/4", &slurm), Ok((2, 4)));
        assert!(parse_shard("auto/2", &slurm)
            .unwrap_err()
            .contains("SLURM_PROCID=2"));
        let kube = env(&[("JOB_COMPLETION_INDEX", "1")]);
        assert_eq!(parse_shard("auto/3", &kube), Ok((1, 3)));
        assert!(parse_shard("auto", &kube).unwrap_err().contains("auto/N"));
        assert!(parse_shard("auto/3", &env(&[])).is_err());
    }

    #[test]
    fn start_instants_are_ahead_and_shared_through_a_file() {
        let now = SystemTime::now();
        let at = parse_start_at("+30s", now).unwrap();
        assert_eq!(at.duration_since(now).unwrap(), Duration::from_secs(30));
        assert!(parse_start_at("2001-01-01T00:00:00Z", now)
            .unwrap_err()
            .contains("in the past"));
        assert!(parse_start_at("soon", now)
            .unwrap_err()
            .contains("RFC 3339"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("start");
        let spec = format!("+20s@{}", file.display());
        let first = parse_start_at(&spec, now).unwrap();
        // A later shard with another clock reading gets the first one's instant.
        let second = parse_start_at(&spec, now + Duration::from_secs(3)).unwrap();
        assert_eq!(first, second);
        assert_eq!(first.duration_since(now).unwrap(), Duration::from_secs(20));
    }

    #[test]
    fn run_ids_and_seeds_agree_across_shards() {
        let at = humantime::parse_rfc3339("2026-11-25T21:00:00Z").unwrap();
        assert_eq!(default_run_id("tpcb", at), "tpcb-20261125T210000Z");
        assert_eq!(seed_of_run("a"), seed_of_run("a"));
        assert_ne!(seed_of_run("a"), seed_of_run("b"));
        let plan = ShardPlan {
            index: 1,
            count: 3,
            run_id: "r".into(),
            start_at: at,
            max_clock_offset: DEFAULT_MAX_CLOCK_OFFSET,
            host: "h".into(),
        };
        let mine: Vec<u32> = (0..7).filter(|c| plan.runs_client(*c)).collect();
        assert_eq!(mine, [1, 4]);
        assert_eq!(plan.label(), "1/3");
        let text = toml::to_string(&plan).unwrap();
        assert!(text.contains("2026-11-25T21:00:00"), "{text}");
        assert_eq!(toml::from_str::<ShardPlan>(&text).unwrap(), plan);
    }
}
