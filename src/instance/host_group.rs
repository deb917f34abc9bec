//! The emulated host of a consolidation experiment: one parent control group over all its
//! VMs (`tidebench/<host>/<vm>`), whose memory limit is the memory the host makes available
//! to them (MEM_avail of the vPostgres study's Equation 1). The kernel charges every VM's
//! usage, page cache included, to the parent too, and reclaims (or OOM-kills) inside the
//! parent when the VMs together reach its limit, however much each VM's own limit allows.
//!
//! A balloon stands for the study's "dummy VM": a process inside the parent group that
//! allocates and locks memory, so the host's memory is really taken rather than only capped
//! (`--balloon`). It is this same binary run as `tidebench balloon-hold BYTES` (hidden),
//! entered into the parent group before exec, protected from the OOM killer (the dummy VM
//! had a full reservation), and it exits when its stdin closes: with tidebench.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::cgroup::{CgroupPaths, CgroupVersion};
use super::error::{invalid, CgroupError, InstanceError};

/// The parent group of a consolidation experiment's VMs.
#[derive(Debug, Clone)]
pub struct HostGroup {
    pub name: String,
    paths: CgroupPaths,
}

impl HostGroup {
    /// Names the group `tidebench/<name>` in the mounted hierarchy (no writes).
    pub fn locate(name: &str) -> Result<HostGroup, InstanceError> {
        crate::config::instances::check_vm(name).map_err(invalid("a host group's name"))?;
        Ok(HostGroup {
            name: name.to_string(),
            paths: CgroupPaths::locate(name)?,
        })
    }

    /// Creates the group if needed and sets its memory limit (`None`: unlimited); no CPU
    /// quota. Lowering the limit below what the VMs hold makes the kernel reclaim first; when
    /// it cannot (shared buffers are not reclaimable without swap), the error says so.
    /// A limit refused because the VMs hold more than it (cgroup v1) is
    /// [`InstanceError::CgroupBusy`].
    pub fn set_memory_limit(&self, bytes: Option<u64>) -> Result<(), InstanceError> {
        let what = bytes.map_or("unlimited".into(), super::format_size);
        self.paths.create(None, bytes).map_err(|e| match e {
            InstanceError::CgroupBusy {
                value,
                path,
                source,
                ..
            } => InstanceError::CgroupBusy {
                context: Some(format!(
                    "cannot limit host group '{}' to {what} while its VMs run: ",
                    self.name
                )),
                value,
                path,
                source,
            },
            e => CgroupError::HostLimit {
                group: self.name.clone(),
                limit: what.clone(),
                source: Box::new(e),
            }
            .into(),
        })
    }

    /// The memory limit as the kernel reports it; `None` when unlimited or unreadable.
    pub fn memory_limit(&self) -> Option<u64> {
        read_limit(&self.paths)
    }

    /// The `memory` directory of the group, for readers of its statistics.
    pub fn memory_dir(&self) -> &Path {
        &self.paths.memory
    }

    /// Starts a balloon holding `bytes` of locked memory in this group; returns once the
    /// memory is held. Dropping the [`Balloon`] releases it.
    pub fn inflate(&self, bytes: u64) -> Result<Balloon, InstanceError> {
        let exe = std::env::current_exe().map_err(InstanceError::io("find", "tidebench"))?;
        let procs = self.paths.procs_files()?;
        let mut cmd = Command::new(exe);
        cmd.arg("balloon-hold")
            .arg(bytes.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: only raw open/write/close on paths prepared before fork (see os_user).
        unsafe {
            cmd.pre_exec(move || super::os_user::enter_cgroups(&procs));
        }
        let mut child = cmd.spawn().map_err(|source| CgroupError::BalloonStart {
            group: self.name.clone(),
            source,
        })?;
        let mut line = String::new();
        let ready = child
            .stdout
            .take()
            .map(|out| BufReader::new(out).read_line(&mut line).is_ok() && line == "ready\n")
            .unwrap_or(false);
        if !ready {
            let _ = child.kill();
            let out = child.wait_with_output().ok();
            let why = out
                .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "it was killed, most likely by the OOM killer".into());
            return Err(CgroupError::BalloonHeld {
                size: super::format_size(bytes),
                group: self.name.clone(),
                why,
            }
            .into());
        }
        Ok(Balloon { child, bytes })
    }
}

/// A running balloon; dropping it ends the process and frees its memory.
pub struct Balloon {
    child: Child,
    pub bytes: u64,
}

impl Balloon {
    /// Whether the balloon still holds its memory (the OOM killer may take it where the
    /// kernel does not let it protect itself).
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Balloon {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The body of `tidebench balloon-hold BYTES`: take `bytes` of the host group's memory, say
/// `ready`, then hold until stdin closes. Never returns normally.
///
/// The memory is a memfd's pages, allocated with `fallocate` and never mapped: tmpfs pages are
/// charged to the memory cgroup of the task that allocates them (this one, inside the host
/// group), cannot be reclaimed without swap, and count in no process's RSS. So the OOM killer,
/// which ranks processes by their RSS, picks the VMs' backends, never this small process, even
/// where the kernel does not let it lower its own `oom_score_adj` (root without
/// CAP_SYS_RESOURCE): the dummy VM keeps its full reservation either way.
pub fn hold(bytes: u64) -> Result<(), String> {
    let _ = std::fs::write("/proc/self/oom_score_adj", "-1000");
    let len = libc::off_t::try_from(bytes).map_err(|_| format!("{bytes} bytes is too large"))?;
    // SAFETY: a NUL-terminated name and no flags; the result is checked.
    let fd = unsafe { libc::memfd_create(c"tidebench-balloon".as_ptr(), 0) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is the memfd opened above; fallocate allocates its pages up to `len`.
    if unsafe { libc::fallocate(fd, 0, 0, len) } != 0 {
        return Err(format!(
            "fallocate: {} (the host group cannot hold that much)",
            std::io::Error::last_os_error()
        ));
    }
    let mut out = std::io::stdout();
    out.write_all(b"ready\n")
        .and_then(|_| out.flush())
        .map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    // The fd closes with the process: its pages go back to the host group.
    Ok(())
}

fn read_limit(paths: &CgroupPaths) -> Option<u64> {
    let file = match paths.version {
        CgroupVersion::V1 => "memory.limit_in_bytes",
        CgroupVersion::V2 => "memory.max",
    };
    let text = std::fs::read_to_string(paths.memory.join(file)).ok()?;
    let v: u64 = text.trim().parse().ok()?;
    // v1 reports "unlimited" as the largest page-aligned i64.
    (v < (1 << 62)).then_some(v)
}
