//! A noisy neighbour for a run's `noise` event (issue 53): `stress-ng` in a control group of
//! its own beside the instances (`tidebench-noise-PID-N` for event N: this process's own, so
//! two runs on one host never share one), so it competes for the host as another tenant would.
//! Ending it kills stress-ng, reads what the group used and removes the group.
//!
//! CPU noise is a tenant of a given size: one busy worker per started core, capped by the
//! group's CPU quota at the asked cores and given the heaviest CPU weight, so it gets those
//! cores however busy the host is. Why both: a quota alone is a ceiling, and on a busy host a
//! group of default weight gets only a task's share, less than its size; and the group sits
//! at the hierarchy's root, beside `tidebench`, not in it, because `tidebench` itself weighs
//! as one task against the host's other processes, whatever its children weigh. So the
//! noise's size is what it takes, as a neighbour VM with its own cores would (the sampler
//! records it as `noise:N` in `system.csv`). Memory noise touches and keeps its bytes; IO
//! noise runs stress-ng's hdd workers in a directory of the home; neither is weighted.

use std::process::{Child, Stdio};
use std::time::Instant;

use super::cgroup::{CgroupPaths, CgroupVersion};
use super::error::InstanceError;
use super::os_user;
use super::types::Home;
use crate::config::Noise;

/// A noisy neighbour running.
#[derive(Debug)]
pub struct Neighbour {
    child: Child,
    group: CgroupPaths,
    started: Instant,
    cpu_at_start: Option<f64>,
}

fn refused(message: impl Into<String>) -> InstanceError {
    InstanceError::Disrupt {
        action: "start noise beside",
        name: "the instances".into(),
        message: message.into(),
    }
}

/// The noise group of event `event` (numbered from 1) of this process's run.
pub fn group_of(event: usize) -> Result<CgroupPaths, InstanceError> {
    CgroupPaths::locate_top(&format!("tidebench-noise-{}-{event}", std::process::id()))
}

/// The group's CPU seconds so far (v2 `cpu.stat` `usage_usec`, v1 `cpuacct.usage`); `None`
/// when it cannot be read (no such group).
pub fn cpu_seconds(group: &CgroupPaths) -> Option<f64> {
    match group.version {
        CgroupVersion::V2 => std::fs::read_to_string(group.cpu.join("cpu.stat"))
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec "))?
            .trim()
            .parse::<f64>()
            .ok()
            .map(|us| us / 1e6),
        CgroupVersion::V1 => std::fs::read_to_string(group.cpuacct.join("cpuacct.usage"))
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .map(|ns| ns / 1e9),
    }
}

/// Starts `noise` as event `event` (numbered from 1) for `seconds` (stress-ng ends itself
/// then, should this process die).
pub fn start(
    home: &Home,
    event: usize,
    noise: &Noise,
    seconds: u64,
) -> Result<(Neighbour, String), InstanceError> {
    let group = group_of(event)?;
    let (cpus, memory, args) = match noise {
        Noise::Cpu { cpus } => (
            Some(*cpus),
            None,
            vec!["--cpu".to_string(), (cpus.ceil() as u64).max(1).to_string()],
        ),
        Noise::Memory { bytes } => (
            None,
            None,
            vec![
                "--vm".into(),
                "1".into(),
                "--vm-bytes".into(),
                bytes.to_string(),
                "--vm-keep".into(),
            ],
        ),
        Noise::Io { workers } => {
            let dir = home.absolute()?.join("noise");
            std::fs::create_dir_all(&dir)
                .map_err(|e| refused(format!("{}: {e}", dir.display())))?;
            (
                None,
                None,
                vec![
                    "--hdd".into(),
                    workers.to_string(),
                    "--temp-path".into(),
                    dir.display().to_string(),
                ],
            )
        }
    };
    group.create(cpus, memory)?;
    if cpus.is_some() {
        if let Err(e) = group.outweigh() {
            let _ = group.remove();
            return Err(e);
        }
    }
    let me = os_user::current_user()?;
    let program = std::path::Path::new("stress-ng");
    let mut cmd = me.command(program, &home.absolute()?, group.procs_files()?, None);
    cmd.args(&args)
        .args(["--timeout", &format!("{seconds}s"), "--quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = cmd.spawn().map_err(|e| {
        let _ = group.remove();
        refused(format!(
            "cannot run stress-ng ({e}); install it (Debian: apt-get install stress-ng; \
             `make setup` does)"
        ))
    })?;
    let cpu_at_start = cpu_seconds(&group);
    let how = format!("stress-ng {} in {}", args.join(" "), group.cpu.display());
    Ok((
        Neighbour {
            child,
            group,
            started: Instant::now(),
            cpu_at_start,
        },
        how,
    ))
}

impl Neighbour {
    /// Ends the noise; says how many cores its group used while it ran.
    pub fn stop(mut self) -> Result<String, String> {
        let used = match (self.cpu_at_start, cpu_seconds(&self.group)) {
            (Some(a), Some(b)) => {
                let secs = self.started.elapsed().as_secs_f64().max(1e-3);
                format!(
                    "the noise group used {:.2} cores over {secs:.1} s",
                    (b - a) / secs
                )
            }
            _ => "the noise group's CPU could not be read".into(),
        };
        // stress-ng forwards SIGTERM to its workers; a kill leaves them to the group's end.
        let pid = libc::pid_t::try_from(self.child.id()).unwrap_or(0);
        // SAFETY: kill has no memory preconditions.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let _ = self.child.wait();
        // A worker that outlived its parent goes with the group (v2's cgroup.kill).
        let kill = self.group.cpu.join("cgroup.kill");
        if self.group.version == CgroupVersion::V2 && kill.exists() {
            let _ = std::fs::write(&kill, "1");
        }
        self.group.remove().map_err(|e| format!("{used}; {e}"))?;
        Ok(used)
    }
}
