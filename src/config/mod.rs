//! Configuration in two stages (STYLE.md rule 2): raw values from a TOML file and from flags,
//! with no I/O beyond reading the file, then validation into a typed [`RunPlan`] or
//! [`PreparePlan`]. Flags and files meet in [`RawRun`], so `--clients 8 --duration 30s` and a file
//! saying the same compile into the same Plan.

pub mod duration;
pub mod plan;
pub mod target;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use plan::{PreparePlan, ProtocolName, RunPlan, WorkloadName};
pub use target::TargetSpec;

/// A configuration problem, always naming where it is and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}:{line}: {message}")]
    File {
        file: String,
        line: usize,
        message: String,
    },
    #[error("cannot read config file {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

/// Run settings before validation: every field optional. Deserialized from TOML (unknown keys
/// are errors) and filled from command-line flags.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRun {
    pub workload: Option<WorkloadName>,
    pub scale: Option<u32>,
    pub target: Option<String>,
    pub clients: Option<u32>,
    pub jobs: Option<u32>,
    pub duration: Option<String>,
    pub protocol: Option<ProtocolName>,
    pub rate: Option<f64>,
    pub max_tries: Option<u32>,
    pub progress: Option<String>,
    pub interval: Option<String>,
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
}

impl RawRun {
    /// Values set in `over` win; the rest come from `self`.
    pub fn overlay(self, over: RawRun) -> RawRun {
        RawRun {
            workload: over.workload.or(self.workload),
            scale: over.scale.or(self.scale),
            target: over.target.or(self.target),
            clients: over.clients.or(self.clients),
            jobs: over.jobs.or(self.jobs),
            duration: over.duration.or(self.duration),
            protocol: over.protocol.or(self.protocol),
            rate: over.rate.or(self.rate),
            max_tries: over.max_tries.or(self.max_tries),
            progress: over.progress.or(self.progress),
            interval: over.interval.or(self.interval),
            seed: over.seed.or(self.seed),
            out: over.out.or(self.out),
        }
    }
}

/// Defaults of a run, chosen to match pgbench where pgbench has one.
pub mod defaults {
    pub const CLIENTS: u32 = 1;
    pub const DURATION: &str = "30s";
    pub const MAX_TRIES: u32 = 1;
    pub const PROGRESS: &str = "5s";
    pub const INTERVAL: &str = "30s";
}

/// Reads a TOML run file (if any), lays the flags over it, and validates the result.
/// `cores` decides the default number of driver threads.
pub fn build_run_plan(
    file: Option<&Path>,
    flags: RawRun,
    cores: u32,
    default_seed: u64,
) -> Result<RunPlan, ConfigError> {
    let from_file = match file {
        Some(path) => read_toml::<RawRun>(path)?,
        None => RawRun::default(),
    };
    validate_run(from_file.overlay(flags), cores, default_seed)
}

/// Validates raw run settings into a Plan; every message names the setting and the fix.
pub fn validate_run(raw: RawRun, cores: u32, default_seed: u64) -> Result<RunPlan, ConfigError> {
    let invalid = |m: String| ConfigError::Invalid(m);
    let workload = raw.workload.ok_or_else(|| {
        invalid("no workload given; use --workload tpcb|select-only|simple-update (or `workload = \"tpcb\"` in the config file)".into())
    })?;
    let clients = raw.clients.unwrap_or(defaults::CLIENTS);
    if clients == 0 {
        return Err(invalid(
            "clients must be at least 1 (--clients / -c)".into(),
        ));
    }
    if raw.scale == Some(0) {
        return Err(invalid("scale must be at least 1 (--scale / -s)".into()));
    }
    let jobs = match raw.jobs {
        Some(0) => return Err(invalid("jobs must be at least 1 (--jobs / -j)".into())),
        Some(j) => j.min(clients),
        None => cores.max(1).min(clients),
    };
    let duration = parse_setting("duration", raw.duration.as_deref(), defaults::DURATION)?;
    if duration < Duration::from_secs(1) {
        return Err(invalid(format!(
            "duration {} is too short; runs last at least 1s (--duration / -T)",
            duration::format_duration(duration)
        )));
    }
    let progress = parse_setting("progress", raw.progress.as_deref(), defaults::PROGRESS)?;
    let interval = parse_setting("interval", raw.interval.as_deref(), defaults::INTERVAL)?;
    if interval < Duration::from_secs(1) || interval.subsec_nanos() != 0 {
        return Err(invalid(
            "interval must be a whole number of seconds, at least 1s (--interval)".into(),
        ));
    }
    if !progress.is_zero() && (progress < Duration::from_secs(1) || progress.subsec_nanos() != 0) {
        return Err(invalid(
            "progress must be 0 (off) or a whole number of seconds (--progress / -P)".into(),
        ));
    }
    if let Some(rate) = raw.rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(invalid(format!(
                "rate {rate} is not a positive number of transactions per second (--rate / -R)"
            )));
        }
    }
    let max_tries = raw.max_tries.unwrap_or(defaults::MAX_TRIES);
    if max_tries == 0 {
        return Err(invalid(
            "max-tries must be at least 1 (1 = no retries)".into(),
        ));
    }
    let target = match raw.target.as_deref() {
        Some(t) => TargetSpec::parse(t).map_err(|m| invalid(format!("target: {m}")))?,
        None => TargetSpec::default_instance(),
    };
    Ok(RunPlan {
        workload,
        scale: raw.scale,
        target,
        clients,
        jobs,
        duration,
        protocol: raw.protocol.unwrap_or(ProtocolName::Prepared),
        rate: raw.rate,
        max_tries,
        progress,
        interval,
        seed: raw.seed.unwrap_or(default_seed),
        out: raw.out,
    })
}

/// Validates `prepare` settings.
pub fn validate_prepare(
    workload: Option<WorkloadName>,
    scale: Option<u32>,
    target: Option<&str>,
    jobs: Option<u32>,
    force: bool,
    cores: u32,
) -> Result<PreparePlan, ConfigError> {
    let workload = workload.ok_or_else(|| {
        ConfigError::Invalid("no workload given; use --workload tpcb (select-only and simple-update use the same tables)".into())
    })?;
    let scale = scale.unwrap_or(1);
    if scale == 0 {
        return Err(ConfigError::Invalid(
            "scale must be at least 1 (--scale / -s)".into(),
        ));
    }
    let jobs = match jobs {
        Some(0) => {
            return Err(ConfigError::Invalid(
                "jobs must be at least 1 (--jobs / -j)".into(),
            ))
        }
        Some(j) => j,
        None => cores.max(1),
    };
    let target = match target {
        Some(t) => {
            TargetSpec::parse(t).map_err(|m| ConfigError::Invalid(format!("target: {m}")))?
        }
        None => TargetSpec::default_instance(),
    };
    Ok(PreparePlan {
        workload,
        scale,
        target,
        jobs,
        force,
    })
}

fn parse_setting(key: &str, value: Option<&str>, default: &str) -> Result<Duration, ConfigError> {
    duration::parse_duration(value.unwrap_or(default))
        .map_err(|m| ConfigError::Invalid(format!("{key}: {m}")))
}

/// Reads and deserializes a TOML file; errors carry file and line.
pub fn read_toml<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    parse_toml(&file, &text)
}

/// Deserializes TOML text; `file` is only used in messages.
pub fn parse_toml<T: for<'de> Deserialize<'de>>(file: &str, text: &str) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        ConfigError::File {
            file: file.to_string(),
            line,
            message: e.message().trim().to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_file_compile_to_the_same_plan() {
        let text = "workload = \"select-only\"\nclients = 8\nduration = \"10s\"\nseed = 7\n";
        let file: RawRun = parse_toml("run.toml", text).unwrap();
        let from_file = validate_run(file, 2, 1).unwrap();
        let flags = RawRun {
            workload: Some(WorkloadName::SelectOnly),
            clients: Some(8),
            duration: Some("10s".into()),
            seed: Some(7),
            ..RawRun::default()
        };
        let from_flags = validate_run(flags, 2, 1).unwrap();
        assert_eq!(
            toml::to_string(&from_file).unwrap(),
            toml::to_string(&from_flags).unwrap()
        );
        assert_eq!(from_file.jobs, 2);
        assert_eq!(from_file.protocol, ProtocolName::Prepared);
    }

    #[test]
    fn unknown_key_names_file_and_line() {
        let text = "workload = \"tpcb\"\n\nclinets = 4\n";
        let err = parse_toml::<RawRun>("run.toml", text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("run.toml:3:"), "{err}");
        assert!(err.contains("clinets"), "{err}");
    }

    #[test]
    fn zero_and_negative_values_are_refused() {
        let base = RawRun {
            workload: Some(WorkloadName::Tpcb),
            ..RawRun::default()
        };
        let zero_clients = RawRun {
            clients: Some(0),
            ..base.clone()
        };
        assert!(validate_run(zero_clients, 2, 1)
            .unwrap_err()
            .to_string()
            .contains("clients"));
        let negative = RawRun {
            duration: Some("-5s".into()),
            ..base.clone()
        };
        assert!(validate_run(negative, 2, 1)
            .unwrap_err()
            .to_string()
            .contains("negative"));
        let zero_scale = RawRun {
            scale: Some(0),
            ..base
        };
        assert!(validate_run(zero_scale, 2, 1)
            .unwrap_err()
            .to_string()
            .contains("scale"));
    }
}
