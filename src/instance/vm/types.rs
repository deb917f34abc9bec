//! What a VM instance is, as records and options: the accelerator and hypervisor choices, the
//! options a start takes, the guest's record in the instance's record, the state a boot
//! leaves in `state.toml`, and the guest as callers see it (`GuestInfo`).

use serde::{Deserialize, Serialize};

use super::qemu::{self, VmFiles};
use super::{files_of, read_state};
use crate::instance::record::{Layout, Record};

/// How QEMU runs the guest's CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// Hardware virtualization: the guest runs at native speed.
    Kvm,
    /// Software emulation: every guest instruction translated; figures are emulated ones.
    Tcg,
}

impl Accel {
    pub fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// The hypervisor a managed instance runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Hypervisor {
    Qemu,
}

impl Hypervisor {
    /// The name a run file's `hypervisor` key takes.
    pub fn name(self) -> &'static str {
        match self {
            Hypervisor::Qemu => "qemu",
        }
    }
}

/// What the user asked for a guest (`--hypervisor qemu`, `--accel`); `--cpus` (whole vCPUs)
/// and `--memory` (its RAM) come from the instance options.
#[derive(Debug, Clone, Default)]
pub struct GuestOptions {
    pub accel: Option<Accel>,
    /// The control group (below `tidebench/`) QEMU runs in, with no limits of its own: a
    /// consolidation experiment puts its guests below the host group whose memory limit they
    /// share (real overcommitment).
    pub cgroup: Option<String>,
    /// QEMU's `mem-merge` (KSM may merge the guest's memory); absent: QEMU's default (on).
    pub mem_merge: Option<bool>,
}

/// The guest part of `instance.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestRecord {
    pub hypervisor: Hypervisor,
    pub vcpus: u32,
    pub memory: u64,
    /// Forced with `--accel`; absent: KVM when it boots, else TCG, chosen at each boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<Accel>,
    /// The control group QEMU runs in (see [`GuestOptions::cgroup`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// QEMU's `mem-merge` as asked; absent: QEMU's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_merge: Option<bool>,
}

impl GuestRecord {
    /// `guest`'s placement and memory merging laid over this record (what `reconfigure`
    /// compares and saves); the accelerator is not changed here (`start` refuses that).
    pub(crate) fn overlay(&mut self, guest: &GuestOptions) {
        if guest.cgroup.is_some() {
            self.cgroup = guest.cgroup.clone();
        }
        if guest.mem_merge.is_some() {
            self.mem_merge = guest.mem_merge;
        }
    }
}

/// What the last boot found, in `vm/state.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestState {
    pub accel: Accel,
    /// Seconds from QEMU's start to the host's first connection to the guest's server.
    pub ready_secs: f64,
    /// The guest kernel's release, as the guest itself reported it.
    pub kernel_release: String,
    /// The instances this boot serves (one, or a shared VM's members then).
    #[serde(default)]
    pub members: Vec<String>,
    /// Why KVM was not used, when it was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kvm_note: Option<String>,
    /// Seconds spent building the image at this start (0: it was cached).
    #[serde(default)]
    pub image_build_secs: f64,
    /// The image's size on disk, in bytes.
    #[serde(default)]
    pub image_bytes: u64,
}

/// A guest instance as other rooms see it.
#[derive(Debug, Clone)]
pub struct GuestInfo {
    pub record: GuestRecord,
    /// The last boot's state (absent before the first boot finished).
    pub state: Option<GuestState>,
    pub files: VmFiles,
}

impl GuestInfo {
    pub(crate) fn of(layout: &Layout, record: &Record, guest: &GuestRecord) -> GuestInfo {
        let files = files_of(layout, record);
        let state = read_state(&files);
        GuestInfo {
            record: guest.clone(),
            state,
            files,
        }
    }

    /// QEMU's pid while the guest runs: the host's view of the VM.
    pub fn qemu_pid(&self) -> Option<u32> {
        qemu::running_pid(&self.files)
    }
}
