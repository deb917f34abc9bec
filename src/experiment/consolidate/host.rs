//! Around each consolidation run: the experiment's other instances stopped (another scheme's
//! VMs must take neither memory nor CPU), and, once the point's instances run and hold their
//! data, the host group limited to MEM_avail (or to MEM_config with a balloon taking the
//! difference; real VMs: MEM_avail and each QEMU's allowance, the guests ballooned first) for
//! the run only. Loading data under the limit would measure the load.
//!
//! Limiting can itself OOM-kill a server process (the VMs already hold their shared buffers,
//! and a balloon takes its memory at once), and PostgreSQL then goes through crash recovery.
//! The point's instances are watched across the limit ([`hold_for_run`]), and the run starts
//! once every server accepts connections again, with what happened recorded as the run's
//! incidents.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::driver::Stop;
use crate::event::{Event, Incident, Sink};
use crate::instance::{self, Balloon, Home, HostGroup, InstanceError};
use crate::sampler::cgroup::InstanceProbe;

use super::super::base::HostSetup;
use super::guests::{Guests, QEMU_ALLOWANCE};

/// The host group as set for a run; dropping it ends the balloon and lifts the limit, so no
/// limit outlives the run (a killed tidebench leaves it: the next run lifts it first).
pub struct HostHold {
    group: HostGroup,
    balloon: Option<Balloon>,
    /// Real VMs: their balloons and KSM, undone after the limit is lifted.
    pub guests: Option<Guests>,
    /// The limit the kernel reported after it was set.
    pub limit: Option<u64>,
    /// Why the point's instances were restarted under the limit, when they were.
    pub restarted: Option<String>,
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
        // Deflated only now: under the limit, giving the guests their RAM back could OOM-kill
        // a QEMU.
        drop(self.guests.take());
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

/// Limits the host group (and inflates the balloon) for the run. Where the kernel refuses a
/// limit below what the running VMs hold (cgroup v1: their shared buffers cannot be
/// reclaimed without swap; v2 OOM-kills instead), the point's instances are stopped, the
/// limit set, and the instances started again under it; `restarted` says so.
fn limit(setup: &HostSetup, home: &Home, instances: &[String]) -> Result<HostHold, String> {
    let group = HostGroup::locate(&setup.group).map_err(|e| e.to_string())?;
    // Real VMs give their ballooned pages back to the host before the limit comes.
    let mut guests = match setup.guests.is_empty() {
        true => None,
        false => Some(Guests::set(&setup.guests, setup.ksm, home)?),
    };
    let total = match &guests {
        Some(_) => setup.avail + QEMU_ALLOWANCE * setup.guests.len() as u64,
        None => setup.avail + setup.balloon.unwrap_or(0),
    };
    let mut restarted = None;
    match group.set_memory_limit(Some(total)) {
        Ok(()) => {}
        Err(busy @ InstanceError::CgroupBusy { .. }) => {
            let why = busy.to_string();
            for name in instances {
                instance::stop(home, name).map_err(|e| e.to_string())?;
            }
            group
                .set_memory_limit(Some(total))
                .map_err(|e| e.to_string())?;
            for name in instances {
                instance::ensure_running(home, name).map_err(|e| {
                    format!("instance '{name}' did not start under the host group's limit: {e}")
                })?;
            }
            restarted = Some(why);
            // Rebooted guests have all their RAM again.
            if let Some(g) = guests.as_mut() {
                g.balloon()?;
            }
        }
        Err(e) => return Err(e.to_string()),
    }
    let mut hold = HostHold {
        limit: group.memory_limit(),
        group,
        balloon: None,
        guests,
        restarted,
    };
    if let Some(bytes) = setup.balloon {
        hold.balloon = Some(hold.group.inflate(bytes).map_err(|e| e.to_string())?);
    }
    Ok(hold)
}

/// The host group limited for a run of the point's `instances`, once every server accepts
/// connections again: what the limit did to them goes into `before_run` (kept when this
/// fails), and both it and a restart under the limit are said as warnings.
pub async fn hold_for_run(
    setup: &HostSetup,
    home: &Home,
    instances: &[String],
    stop: &Stop,
    events: &Arc<dyn Sink>,
    before_run: &mut Vec<Incident>,
) -> Result<HostHold, String> {
    let mut settling = Settling::watch(home, instances)?;
    let hold = limit(setup, home, instances)?;
    if let Some(why) = &hold.restarted {
        events.send(Event::Warning(format!(
            "the instances were restarted under the host group's limit, their shared buffers cold: {why}"
        )));
        // A restart on purpose is no crash: watch from the restarted servers.
        settling = Settling::watch(home, instances)?;
    }
    let settled = settling.settle(stop).await;
    let (Ok(seen) | Err((_, seen))) = &settled;
    before_run.extend(seen.iter().cloned());
    settled.map_err(|(e, _)| e)?;
    if !before_run.is_empty() {
        events.send(Event::Warning(format!(
            "limiting the host group hit the instances before the run (recorded with it): {}",
            listed(before_run)
        )));
    }
    Ok(hold)
}

/// How long the point's servers get to accept connections again after the limit (crash
/// recovery replays the WAL since the last checkpoint).
const SETTLE_LIMIT: Duration = Duration::from_secs(120);
/// The kernel kills at once, the postmaster notices a moment later: the first look waits
/// this long, so a server about to restart is not taken for a ready one.
const SETTLE_FIRST_LOOK: Duration = Duration::from_secs(1);

/// The point's instances, watched from before the host group is limited.
struct Settling {
    probes: Vec<InstanceProbe>,
}

impl Settling {
    /// Takes the starting point of every instance named (OOM counter, log, postmaster).
    fn watch(home: &Home, names: &[String]) -> Result<Settling, String> {
        let instances = names
            .iter()
            .map(|n| instance::find(home, n).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut probes = InstanceProbe::for_instances(&instances);
        for p in &mut probes {
            p.incidents_now(0.0);
        }
        Ok(Settling { probes })
    }

    /// Waits until every server accepts connections, and returns what happened to them since
    /// [`Settling::watch`]; an error (naming the incidents, and with them) when one stopped or
    /// is not back in time.
    async fn settle(mut self, stop: &Stop) -> Result<Vec<Incident>, (String, Vec<Incident>)> {
        let started = Instant::now();
        tokio::time::sleep(SETTLE_FIRST_LOOK).await;
        while !self.probes.iter().all(InstanceProbe::server_ready) {
            let gone = !self.probes.iter().all(InstanceProbe::server_running);
            if gone || stop.is_set() || started.elapsed() > SETTLE_LIMIT {
                let seen = self.incidents();
                let down: Vec<&str> = self
                    .probes
                    .iter()
                    .filter(|p| !p.server_ready())
                    .map(|p| p.source.as_str())
                    .collect();
                let state = if gone {
                    "stopped"
                } else {
                    "not accepting connections"
                };
                let error = format!(
                    "{} {state} {:.0} s after the host group was limited{}; ask for less overcommitment",
                    down.join(", "),
                    started.elapsed().as_secs_f64(),
                    said(&seen)
                );
                return Err((error, seen));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        Ok(self.incidents())
    }

    fn incidents(&mut self) -> Vec<Incident> {
        self.probes
            .iter_mut()
            .flat_map(|p| p.incidents_now(0.0))
            .collect()
    }
}

/// ` (a oom_kill: ...; b crash_restart: ...)`, or nothing.
fn said(incidents: &[Incident]) -> String {
    if incidents.is_empty() {
        return String::new();
    }
    format!(" ({})", listed(incidents))
}

/// `a oom_kill: ...; b crash_restart: ...`.
fn listed(incidents: &[Incident]) -> String {
    let each: Vec<String> = incidents
        .iter()
        .map(|i| format!("{} {}: {}", i.instance, i.kind.name(), i.detail))
        .collect();
    each.join("; ")
}
