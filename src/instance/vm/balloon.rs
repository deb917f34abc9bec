//! The guest's balloon: its memory as the balloon driver reports it (QMP `query-balloon` and
//! the driver's guest stats), and moving the balloon to a new target and waiting for it.

use super::qemu;
use super::types::GuestInfo;
use super::VmError;
use crate::instance::error::InstanceError;
use crate::instance::types::Instance;

pub(super) const BALLOON_PATH: &str = "/machine/peripheral/balloon0";

/// The guest's memory as its balloon driver reports it, and the balloon's target, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuestMemory {
    /// The memory the guest has now (its RAM less the balloon).
    pub actual: u64,
    pub total: Option<u64>,
    pub available: Option<u64>,
    pub free: Option<u64>,
}

impl GuestInfo {
    /// The guest's memory through QMP (`query-balloon`, the balloon's guest stats); `None`
    /// when QEMU does not answer.
    pub fn memory_stats(&self) -> Option<GuestMemory> {
        let qmp = self.files.qmp();
        let balloon = qemu::qmp(&qmp, &serde_json::json!({"execute": "query-balloon"})).ok()?;
        let stats = qemu::qmp(
            &qmp,
            &serde_json::json!({"execute": "qom-get", "arguments": {
                "path": BALLOON_PATH, "property": "guest-stats"}}),
        )
        .ok();
        let stat = |name: &str| {
            stats
                .as_ref()
                .and_then(|s| s.get("stats"))
                .and_then(|s| s.get(name))
                .and_then(|v| v.as_u64())
        };
        Some(GuestMemory {
            actual: balloon.get("actual").and_then(|a| a.as_u64())?,
            total: stat("stat-total-memory"),
            available: stat("stat-available-memory"),
            free: stat("stat-free-memory"),
        })
    }
}

/// How long the guest's balloon driver gets to reach a new target.
const BALLOON_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Sets the guest's memory through its virtio balloon (QMP `balloon`) and waits until the
/// guest has given (or taken back) the pages; returns the memory the guest then has, as
/// QMP's `query-balloon` reports it. The target is clamped by QEMU to the guest's RAM.
pub fn balloon(instance: &Instance, bytes: u64) -> Result<u64, InstanceError> {
    let guest = instance.guest().ok_or_else(|| VmError::NotAVm {
        name: instance.name.clone(),
    })?;
    if guest.qemu_pid().is_none() {
        return Err(InstanceError::NotRunning {
            name: instance.name.clone(),
        });
    }
    let target = bytes.min(guest.record.memory);
    let qmp = guest.files.qmp();
    let fail = |message: String| -> InstanceError {
        VmError::Balloon {
            name: instance.name.clone(),
            message,
        }
        .into()
    };
    qemu::qmp(
        &qmp,
        &serde_json::json!({"execute": "balloon", "arguments": {"value": target}}),
    )
    .map_err(fail)?;
    let started = std::time::Instant::now();
    loop {
        let now =
            qemu::qmp(&qmp, &serde_json::json!({"execute": "query-balloon"})).map_err(fail)?;
        let actual = now.get("actual").and_then(|a| a.as_u64()).unwrap_or(0);
        // The driver moves in pages; within 1% of the target is there.
        if actual.abs_diff(target) <= target / 100 {
            return Ok(actual);
        }
        if started.elapsed() > BALLOON_WAIT {
            return Err(fail(format!(
                "the guest holds {actual} bytes after {}s, not the {target} asked for; it may \
                 not be able to give more (try a larger size)",
                BALLOON_WAIT.as_secs()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
