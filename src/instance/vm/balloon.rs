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
pub const BALLOON_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The guest's balloon driver moves in pages: within 1% of the target is there.
pub fn reached(actual: u64, target: u64) -> bool {
    actual.abs_diff(target) <= target / 100
}

/// The running guest of `instance`, or why there is none.
fn running_guest(instance: &Instance) -> Result<&GuestInfo, InstanceError> {
    let guest = instance.guest().ok_or_else(|| VmError::NotAVm {
        name: instance.name.clone(),
    })?;
    if guest.qemu_pid().is_none() {
        return Err(InstanceError::NotRunning {
            name: instance.name.clone(),
        });
    }
    Ok(guest)
}

fn balloon_error(instance: &Instance, message: String) -> InstanceError {
    VmError::Balloon {
        name: instance.name.clone(),
        message,
    }
    .into()
}

/// Asks the guest's virtio balloon for a new size (QMP `balloon`) and returns at once with the
/// target, clamped by QEMU's rule to the guest's RAM; the guest gives (or takes back) the pages
/// over the next moments, which [`actual`] follows.
pub fn set_balloon(instance: &Instance, bytes: u64) -> Result<u64, InstanceError> {
    let guest = running_guest(instance)?;
    let target = bytes.min(guest.record.memory);
    qemu::qmp(
        &guest.files.qmp(),
        &serde_json::json!({"execute": "balloon", "arguments": {"value": target}}),
    )
    .map_err(|m| balloon_error(instance, m))?;
    Ok(target)
}

/// The memory the guest has now (its RAM less the balloon), as QMP's `query-balloon` says.
pub fn actual(instance: &Instance) -> Result<u64, InstanceError> {
    let guest = running_guest(instance)?;
    let now = qemu::qmp(
        &guest.files.qmp(),
        &serde_json::json!({"execute": "query-balloon"}),
    )
    .map_err(|m| balloon_error(instance, m))?;
    Ok(now.get("actual").and_then(|a| a.as_u64()).unwrap_or(0))
}

/// Sets the guest's memory through its virtio balloon and waits until the guest has given (or
/// taken back) the pages; returns the memory the guest then has, as QMP's `query-balloon`
/// reports it. The target is clamped by QEMU to the guest's RAM.
pub fn balloon(instance: &Instance, bytes: u64) -> Result<u64, InstanceError> {
    let target = set_balloon(instance, bytes)?;
    let started = std::time::Instant::now();
    loop {
        let actual = actual(instance)?;
        if reached(actual, target) {
            return Ok(actual);
        }
        if started.elapsed() > BALLOON_WAIT {
            return Err(balloon_error(instance, not_reached(actual, target)));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Why a balloon did not reach its target within [`BALLOON_WAIT`].
pub fn not_reached(actual: u64, target: u64) -> String {
    format!(
        "the guest holds {actual} bytes after {}s, not the {target} asked for; it may not be \
         able to give more (try a larger size)",
        BALLOON_WAIT.as_secs()
    )
}
