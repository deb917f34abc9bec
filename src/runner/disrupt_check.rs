//! Refuses, before any instance starts, a run's `[[event]]` its target cannot take (issue 53):
//! what the run file's own validation cannot see because it needs the home's instances (is
//! the target a VM, has it a cgroup, how much RAM did its guest boot with, is the standby one).

use crate::config::{Action, Disruption, RunPlan};
use crate::instance::{self, Home, InstanceError};

use super::RunError;

/// Refuses, before any instance is started, an event its target cannot take: a target that
/// is not a managed instance of this home (and not declared by the run file), a `freeze` or
/// `fail` of an external server.
pub fn check(plan: &RunPlan, home: &Home) -> Result<(), RunError> {
    for d in &plan.events {
        let refuse = |message: String| RunError::Event {
            event: d.describe(),
            message,
        };
        if let Action::Noise { .. } = &d.action {
            check_noise().map_err(refuse)?;
            continue;
        }
        let shape = shape_of(plan, home, d).map_err(refuse)?;
        if let Action::Failover { standby, .. } = &d.action {
            if shape.vm {
                return Err(refuse(
                    "a failover acts on local instances; a VM has no standby here".into(),
                ));
            }
            super::standbys::check_failover(plan, home, &d.target, standby).map_err(refuse)?;
        }
        if let Action::Promote = &d.action {
            if shape.vm {
                return Err(refuse(
                    "a promote acts on local instances; a VM is never a standby here".into(),
                ));
            }
            super::standbys::check_promote(plan, home, &d.target).map_err(refuse)?;
        }
        if let Action::Resize { cpus, memory, .. } = &d.action {
            if shape.vm && cpus.is_some() {
                return Err(refuse(
                    "a VM's CPUs cannot change while it runs; resize its memory only".into(),
                ));
            }
            if let Some((memory, ram)) = memory.zip(shape.ram).filter(|(m, r)| m > r) {
                return Err(refuse(format!(
                    "memory = {} is more than VM '{}' was booted with ({}): its balloon can \
                     only take memory away; give at most {}, or boot it with more \
                     (--memory)",
                    crate::config::size::format_size(memory),
                    d.target,
                    crate::config::size::format_size(ram),
                    crate::config::size::format_size(ram)
                )));
            }
            if !shape.vm && !shape.limited {
                return Err(refuse(format!(
                    "instance '{}' has no limits to change (no cgroup); give it cpus or memory \
                     in its [[instance]] table, or create it with --cpus/--memory",
                    d.target
                )));
            }
        }
    }
    Ok(())
}

/// What the event's target is: a declared instance (created by the run), the default one
/// (created by its first use), or a managed instance of this home.
fn shape_of(plan: &RunPlan, home: &Home, d: &Disruption) -> Result<Shape, String> {
    if let Some(i) = plan.instances.iter().find(|i| i.name == d.target) {
        return Ok(Shape {
            vm: i.hypervisor.is_some(),
            limited: i.cpus.is_some() || i.memory_bytes.is_some() || i.vm.is_some(),
            ram: i.memory_bytes.filter(|_| i.hypervisor.is_some()),
        });
    }
    if d.target == crate::config::target::DEFAULT_INSTANCE {
        return Ok(Shape {
            vm: false,
            limited: false,
            ram: None,
        });
    }
    match instance::find(home, &d.target) {
        Ok(i) => Ok(Shape {
            vm: i.guest().is_some(),
            limited: i.cgroup_paths().is_some(),
            ram: i.guest().map(|g| g.record.memory),
        }),
        Err(InstanceError::NotFound { .. }) if d.action == Action::Promote => {
            Err(super::standbys::missing(plan, d))
        }
        Err(InstanceError::NotFound { .. }) => Err(format!(
            "no managed instance '{}' in this home; declare it in an [[instance]] table or \
             create it with `tidebench instance start {}`",
            d.target, d.target
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Noise needs control groups and stress-ng.
fn check_noise() -> Result<(), String> {
    if !instance::CgroupPaths::can_create() {
        return Err(
            "noise runs in a control group of its own: run as root on a host with a \
                    cgroup tree"
                .into(),
        );
    }
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("stress-ng").is_file()));
    if !found {
        return Err(
            "stress-ng is not installed; install it (Debian: apt-get install stress-ng; \
                    `make setup` does)"
                .into(),
        );
    }
    Ok(())
}

/// What an event's target is, as far as the check needs.
struct Shape {
    vm: bool,
    limited: bool,
    /// A VM's RAM, as booted (its balloon can only take from it).
    ram: Option<u64>,
}
