//! What a run's events do to a managed instance (issue 53): fail it as a host that loses
//! power, freeze and thaw it, start it again. Each call blocks (signals, QMP, `pg_ctl`), so
//! the runner calls them off the driver's threads.
//!
//! A local instance fails by SIGKILL of its postmaster and then of every process it had
//! forked: a host that dies takes its backends with it, and a backend left behind would hold
//! the old shared memory and keep the restart from starting. A VM fails by QMP `quit`: QEMU
//! ends at once, the guest's disks as a power cut leaves them.
//!
//! A freeze stops the server without losing anything: `cgroup.freeze` where the instance has a
//! cgroup v2 of its own, else SIGSTOP of the postmaster first (so it forks nothing more), then
//! of its children; QMP `stop` for a VM. [`Frozen`] knows how to undo it.

use std::path::PathBuf;

use super::error::InstanceError;
use super::types::{Home, Instance};
use super::{cgroup::CgroupVersion, lifecycle, vm, InstanceOptions};

/// How a frozen instance was stopped, so [`Frozen::thaw`] undoes the same.
#[derive(Debug)]
pub enum Frozen {
    /// Its own cgroup v2's `cgroup.freeze` file.
    Cgroup(PathBuf),
    /// The pids stopped with SIGSTOP, postmaster first.
    Signals(Vec<u32>),
    /// The guest, stopped through its QMP socket.
    Vm(Box<vm::GuestInfo>),
}

fn refused(action: &'static str, instance: &Instance, message: impl Into<String>) -> InstanceError {
    InstanceError::Disrupt {
        action,
        name: instance.name.clone(),
        message: message.into(),
    }
}

/// The pids whose parent is `pid` (from /proc).
fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    // The command may hold spaces and parentheses: the fields after it start
                    // past its last ')'.
                    let rest = &s[s.rfind(')')? + 2..];
                    rest.split(' ').nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

fn signal(pid: u32, sig: libc::c_int) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill has no memory preconditions; a pid that has gone answers ESRCH.
    unsafe { libc::kill(pid, sig) == 0 }
}

/// The postmaster's pid, when it runs.
fn postmaster(action: &'static str, instance: &Instance) -> Result<u32, InstanceError> {
    instance
        .pid()
        .filter(|p| signal(*p, 0))
        .ok_or_else(|| refused(action, instance, "it is not running"))
}

fn qmp(
    action: &'static str,
    instance: &Instance,
    guest: &vm::GuestInfo,
    command: &str,
) -> Result<(), InstanceError> {
    vm::qemu::qmp(
        &guest.files.qmp(),
        &serde_json::json!({ "execute": command }),
    )
    .map(|_| ())
    .map_err(|m| refused(action, instance, m))
}

/// Kills the server at once; says what was killed.
pub fn fail(instance: &Instance) -> Result<String, InstanceError> {
    if let Some(guest) = instance.guest() {
        let Some(pid) = guest.qemu_pid() else {
            return Err(refused("fail", instance, "its VM is not running"));
        };
        // As `destroy` ends a guest: QMP `quit`, waited for, SIGKILL if QEMU outlives it (QEMU
        // may close the socket before it answers, so the answer alone says little).
        vm::qemu::quit(&guest.files);
        return Ok(format!("QMP quit: QEMU {pid} ended"));
    }
    let pm = postmaster("fail", instance)?;
    // The children are read before the kill: once the postmaster is gone they are orphans.
    let kids = children(pm);
    if !signal(pm, libc::SIGKILL) {
        return Err(refused(
            "fail",
            instance,
            format!("SIGKILL of pid {pm} was refused"),
        ));
    }
    let killed = kids.iter().filter(|k| signal(**k, libc::SIGKILL)).count();
    Ok(format!(
        "SIGKILL of postmaster {pm} and {killed} server processes"
    ))
}

/// Stops the server without killing it.
pub fn freeze(instance: &Instance) -> Result<Frozen, InstanceError> {
    if let Some(guest) = instance.guest() {
        qmp("freeze", instance, guest, "stop")?;
        return Ok(Frozen::Vm(Box::new(guest.clone())));
    }
    let own_v2 = instance
        .cgroup_paths()
        .filter(|c| c.version == CgroupVersion::V2 && instance.vm().is_none())
        .map(|c| c.cpu.join("cgroup.freeze"))
        .filter(|f| f.exists());
    if let Some(file) = own_v2 {
        std::fs::write(&file, "1")
            .map_err(|e| refused("freeze", instance, format!("{}: {e}", file.display())))?;
        return Ok(Frozen::Cgroup(file));
    }
    let pm = postmaster("freeze", instance)?;
    if !signal(pm, libc::SIGSTOP) {
        return Err(refused(
            "freeze",
            instance,
            format!("SIGSTOP of pid {pm} was refused"),
        ));
    }
    let mut stopped = vec![pm];
    stopped.extend(
        children(pm)
            .into_iter()
            .filter(|k| signal(*k, libc::SIGSTOP)),
    );
    Ok(Frozen::Signals(stopped))
}

impl Frozen {
    /// Lets the server go on; an error names what could not be undone.
    pub fn thaw(&self) -> Result<String, String> {
        match self {
            Frozen::Cgroup(file) => std::fs::write(file, "0")
                .map(|()| "cgroup.freeze = 0".to_string())
                .map_err(|e| format!("{}: {e}", file.display())),
            Frozen::Signals(pids) => {
                // Children first, the postmaster last, so it finds its children running.
                for p in pids.iter().rev() {
                    signal(*p, libc::SIGCONT);
                }
                Ok(format!("SIGCONT of {} processes", pids.len()))
            }
            // A VM powered off while frozen (a `fail` event) has nothing left to go on.
            Frozen::Vm(guest) if guest.qemu_pid().is_none() => {
                Ok("nothing to thaw: the VM is off".to_string())
            }
            Frozen::Vm(guest) => vm::qemu::qmp(
                &guest.files.qmp(),
                &serde_json::json!({ "execute": "cont" }),
            )
            .map(|_| "QMP cont".to_string()),
        }
    }

    /// "cgroup.freeze", "SIGSTOP of 6 processes", "QMP stop".
    pub fn how(&self) -> String {
        match self {
            Frozen::Cgroup(_) => "cgroup.freeze = 1".into(),
            Frozen::Signals(p) => format!("SIGSTOP of {} processes", p.len()),
            Frozen::Vm(_) => "QMP stop".into(),
        }
    }
}

/// Starts a failed instance again with its recorded settings; returns when it accepts
/// connections (after its crash recovery).
pub fn restart(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    lifecycle::start(home, name, &InstanceOptions::default())
}

/// A guest's memory as the balloon reports it (pages, so rarely whole MiB): `383.9 MiB`.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// How to put back what [`resize`] changed: the limits the instance was created with.
#[derive(Debug)]
pub enum Resized {
    Cgroup {
        instance: Instance,
        cpus: Option<f64>,
        memory: Option<u64>,
    },
    Vm {
        instance: Instance,
        memory: u64,
        /// The balloon's target the resize asked for.
        to: u64,
    },
}

/// Changes an instance's limits for a while: a local instance's cgroup CPU quota and memory
/// limit (what is not given stays as created), a VM's memory through its balloon. A balloon
/// only gets its new target here: the guest gives the pages over the next moments (see
/// [`Resized::balloon_target`]), and a slow guest must not hold the step. The instance's
/// record is not rewritten.
pub fn resize(
    instance: &Instance,
    cpus: Option<f64>,
    memory: Option<u64>,
) -> Result<(Resized, String), InstanceError> {
    if let Some(guest) = instance.guest() {
        let Some(bytes) = memory.filter(|_| cpus.is_none()) else {
            return Err(refused(
                "resize",
                instance,
                "a VM's CPUs cannot change while it runs; resize its memory only",
            ));
        };
        let had = vm::balloon::actual(instance)?;
        let to = vm::balloon::set_balloon(instance, bytes)?;
        let back = Resized::Vm {
            instance: instance.clone(),
            memory: guest.record.memory,
            to,
        };
        return Ok((
            back,
            format!(
                "balloon target {} (the guest had {})",
                super::format_size(to),
                mib(had)
            ),
        ));
    }
    let Some(cg) = instance.cgroup_paths() else {
        return Err(refused(
            "resize",
            instance,
            "it has no cgroup (no --cpus or --memory when created); create it with limits",
        ));
    };
    let (was_cpus, was_memory) = instance.limits();
    let (to_cpus, to_memory) = (cpus.or(was_cpus), memory.or(was_memory));
    cg.create(to_cpus, to_memory)?;
    let back = Resized::Cgroup {
        instance: instance.clone(),
        cpus: was_cpus,
        memory: was_memory,
    };
    Ok((back, super::describe_limits(to_cpus, to_memory)))
}

impl Resized {
    /// A VM's balloon target, which the guest reaches after the resize returned.
    pub fn balloon_target(&self) -> Option<(&Instance, u64)> {
        match self {
            Resized::Vm { instance, to, .. } => Some((instance, *to)),
            Resized::Cgroup { .. } => None,
        }
    }

    /// Puts the created limits back; says what they are. A VM's balloon is given its old
    /// target without waiting for the guest; a VM powered off since boots with all its RAM.
    pub fn restore(&self) -> Result<String, String> {
        match self {
            Resized::Cgroup {
                instance,
                cpus,
                memory,
            } => {
                let cg = instance
                    .cgroup_paths()
                    .ok_or_else(|| format!("instance '{}' has no cgroup", instance.name))?;
                cg.create(*cpus, *memory).map_err(|e| e.to_string())?;
                Ok(super::describe_limits(*cpus, *memory))
            }
            Resized::Vm {
                instance, memory, ..
            } => match vm::balloon::set_balloon(instance, *memory) {
                Ok(to) => Ok(format!("balloon target {}", super::format_size(to))),
                Err(InstanceError::NotRunning { .. }) => {
                    Ok("nothing to restore: the VM is off".to_string())
                }
                Err(e) => Err(e.to_string()),
            },
        }
    }
}
