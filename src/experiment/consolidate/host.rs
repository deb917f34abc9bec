//! Around each consolidation run: the experiment's other instances stopped (another scheme's
//! VMs must take neither memory nor CPU), and, once the point's instances run and hold their
//! data, the host group limited to MEM_avail (or to MEM_config with a balloon taking the
//! difference) for the run only. Loading data under the limit would measure the load.

use crate::instance::{self, Balloon, Home, HostGroup, InstanceError};

use super::super::base::HostSetup;

/// The host group as set for a run; dropping it ends the balloon and lifts the limit, so no
/// limit outlives the run (a killed tidebench leaves it: the next run lifts it first).
pub struct HostHold {
    group: HostGroup,
    balloon: Option<Balloon>,
    /// The limit the kernel reported after it was set.
    pub limit: Option<u64>,
}

impl HostHold {
    pub fn balloon_bytes(&self) -> Option<u64> {
        self.balloon.as_ref().map(|b| b.bytes)
    }

    /// A balloon that died (OOM-killed) gave its memory back to the VMs mid-run.
    pub fn balloon_lost(&mut self) -> bool {
        self.balloon.as_mut().is_some_and(|b| !b.is_alive())
    }
}

impl Drop for HostHold {
    fn drop(&mut self) {
        drop(self.balloon.take());
        let _ = self.group.set_memory_limit(None);
    }
}

/// Stops the instances of other schemes and lifts the host group's limit before the point's
/// instances start.
pub fn before_instances(setup: &HostSetup, home: &Home) -> Result<(), String> {
    for name in &setup.idle {
        match instance::stop(home, name) {
            Ok(_) | Err(InstanceError::NotFound { .. }) => {}
            Err(e) => {
                return Err(format!(
                    "cannot stop instance '{name}' of another scheme: {e}"
                ))
            }
        }
    }
    HostGroup::locate(&setup.group)
        .and_then(|g| g.set_memory_limit(None))
        .map_err(|e| e.to_string())
}

/// Limits the host group (and inflates the balloon) for the run.
pub fn limit(setup: &HostSetup) -> Result<HostHold, String> {
    let group = HostGroup::locate(&setup.group).map_err(|e| e.to_string())?;
    let total = setup.avail + setup.balloon.unwrap_or(0);
    group
        .set_memory_limit(Some(total))
        .map_err(|e| e.to_string())?;
    let mut hold = HostHold {
        limit: group.memory_limit(),
        group,
        balloon: None,
    };
    if let Some(bytes) = setup.balloon {
        hold.balloon = Some(hold.group.inflate(bytes).map_err(|e| e.to_string())?);
    }
    Ok(hold)
}
