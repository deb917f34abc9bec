//! A real VM that several instances share (`instance start NAME --hypervisor qemu --vm PATH`):
//! the real form of the emulated `--vm PATH`, and the 1/M/M scheme of a consolidation.
//!
//! The VM lives in `$TIDEBENCH_HOME/vms/PATH/` (0700): its `vm/` files (overlay, data disk,
//! config, console, QMP and stats sockets, `state.toml`) and `server.log`, which every member's
//! own `server.log` links to (each line prefixed with the instance's name). Each member keeps
//! its own record, port, password and TLS files in its instance dir; its PGDATA is
//! `/data/i-NAME-HASH` on the VM's data disk (see `config::shared_pgdata`), and it listens in the guest on its host port number.
//!
//! The members start and stop together, as the databases of one VM do: a start boots the VM
//! with every member, `stop` of any member stops the VM, and a member added to a running VM
//! reboots it (the guest's config is read at boot). `destroy` of a member ends the VM; the next
//! boot removes that member's PGDATA, and the last member's destroy removes the VM's dir.

use std::path::{Path, PathBuf};

use super::qemu::VmFiles;
use super::{GuestRecord, VmError};
use crate::instance::error::InstanceError;
use crate::instance::record::{self, Layout, Record};

/// The dir of the VM at `path` (`host1/vm1`).
pub(crate) fn vm_dir(home: &Path, path: &str) -> PathBuf {
    home.join("vms").join(path)
}

/// The VM's files.
pub(crate) fn files(home: &Path, path: &str) -> VmFiles {
    let dir = vm_dir(home, path);
    VmFiles {
        dir: dir.join("vm"),
        server_log: dir.join("server.log"),
    }
}

/// Every instance recorded in the VM at `path` (real VMs only), by name.
pub(crate) fn members(home: &Path, path: &str) -> Vec<(Layout, Record)> {
    let Ok(entries) = std::fs::read_dir(record::instances_dir(home)) else {
        return Vec::new();
    };
    let mut out: Vec<(Layout, Record)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let layout = Layout::new(home, &name);
            let rec = Record::load(&layout.record()).ok()?;
            (rec.guest.is_some() && rec.vm.as_deref() == Some(path)).then_some((layout, rec))
        })
        .collect();
    out.sort_by(|a, b| a.1.name.cmp(&b.1.name));
    out
}

/// A new member's guest takes the VM's size and placement when it leaves them out, and must
/// agree with them when it gives them (one VM has one size).
pub(crate) fn join(
    home: &Path,
    path: &str,
    mut guest: GuestRecord,
    sized: bool,
) -> Result<GuestRecord, InstanceError> {
    let Some((_, first)) = members(home, path).into_iter().next() else {
        return Ok(guest);
    };
    let Some(vm) = first.guest else {
        return Ok(guest);
    };
    if !sized {
        guest.vcpus = vm.vcpus;
        guest.memory = vm.memory;
    }
    guest.accel = guest.accel.or(vm.accel);
    guest.cgroup = guest.cgroup.or(vm.cgroup.clone());
    guest.mem_merge = guest.mem_merge.or(vm.mem_merge);
    if guest != vm {
        return Err(VmError::SharedShape {
            vm: path.to_string(),
            member: first.name,
            recorded: shape(&vm),
            requested: shape(&guest),
        }
        .into());
    }
    Ok(guest)
}

fn shape(g: &GuestRecord) -> String {
    format!(
        "--cpus {} --memory {}MiB{}",
        g.vcpus,
        g.memory >> 20,
        g.accel
            .map_or(String::new(), |a| format!(" --accel {}", a.name()))
    )
}

/// A new size for the VM (a sweep over its vCPUs or memory): every member's record says it.
pub(crate) fn resize(home: &Path, path: &str, guest: &GuestRecord) -> Result<(), InstanceError> {
    for (layout, mut rec) in members(home, path) {
        if rec.guest.as_ref() != Some(guest) {
            rec.guest = Some(guest.clone());
            rec.save(&layout.record())?;
        }
    }
    Ok(())
}

/// The member's `server.log`: a link to the VM's, where every member's server writes.
pub(crate) fn link_log(layout: &Layout, files: &VmFiles) -> Result<(), InstanceError> {
    let log = layout.log();
    let _ = std::fs::remove_file(&log);
    std::os::unix::fs::symlink(&files.server_log, &log).map_err(InstanceError::io("link", &log))
}

/// After a member's dir is gone: the VM's dir goes too when no member is left.
pub(crate) fn forget_if_empty(home: &Path, path: &str) {
    if !members(home, path).is_empty() {
        return;
    }
    let dir = vm_dir(home, path);
    let _ = std::fs::remove_dir_all(&dir);
    // The levels of PATH above it, and vms/ itself, while nothing else is in them.
    let top = vm_dir(home, "");
    for parent in dir.ancestors().skip(1) {
        if !parent.starts_with(&top) || std::fs::remove_dir(parent).is_err() {
            break;
        }
    }
}
