//! Stages 1 and 2 of a run: start the managed instances the run file declares, resolve every
//! database the plan names (starting the `default` instance on demand), then check that each
//! holds its group's workload data, which decides each group's scale, as pgbench reads it from
//! its tables. `prepare` starts declared instances the same way.

use crate::config::{InstancePlan, RunPlan, TargetSpec};
use crate::driver::layout::{self, PlannedTarget, SetSlot};
use crate::event::{Event, Sink};
use crate::instance::{self, Home, Instance, InstanceOptions, StartOutcome};
use crate::sampler::Sampler;
use crate::target::{self, ResolvedTarget};
use crate::workload::{Kind, Loaded, Registry};

use super::databases::Databases;
use super::RunError;

/// The run's databases: planned (group, set, spec), resolved, and each set's target per role.
pub struct Targets {
    /// Each group's workload.
    pub kinds: Vec<&'static dyn Kind>,
    /// Each group's roles, in its workload's order.
    pub roles: Vec<Vec<String>>,
    /// Every distinct database of every set, in plan order (the target index everywhere).
    pub planned: Vec<PlannedTarget>,
    pub resolved: Vec<ResolvedTarget>,
    pub sets: Vec<SetSlot>,
}

/// Stage 1: finds each group's workload and resolves every database of every set.
pub async fn resolve(plan: &RunPlan, home: &Home) -> Result<Targets, RunError> {
    let kinds: Vec<&'static dyn Kind> = plan
        .groups
        .iter()
        .map(|g| {
            Registry::kind(g.workload.as_str())
                .map_err(|_| RunError::unknown_workload(g.workload.as_str()))
        })
        .collect::<Result<_, _>>()?;
    let roles: Vec<Vec<String>> = kinds
        .iter()
        .map(|k| k.roles().iter().map(|r| r.to_string()).collect())
        .collect();
    let (planned, sets) = layout::plan_targets(plan, &roles);
    let mut resolved = Vec::with_capacity(planned.len());
    for t in &planned {
        resolved.push(resolve_target(&t.spec, home).await?);
    }
    Ok(Targets {
        kinds,
        roles,
        planned,
        resolved,
        sets,
    })
}

/// Stage 2: checks every database's data (once per database and workload) and returns what
/// each group's data holds (scale and load facts); the sets of a group must agree.
pub async fn check_ready(
    plan: &RunPlan,
    targets: &Targets,
    dbs: &mut Databases,
    events: &dyn Sink,
) -> Result<Vec<Loaded>, RunError> {
    let mut readies = Vec::with_capacity(plan.groups.len());
    for (g, group) in plan.groups.iter().enumerate() {
        let mut found: Option<Loaded> = None;
        for (t, planned) in targets.planned.iter().enumerate() {
            if planned.group != g {
                continue;
            }
            let resolved = &targets.resolved[t];
            let kind = targets.kinds[g];
            let ready = dbs
                .check_ready(t, resolved, kind, &group.options.workload)
                .await?;
            match &found {
                Some(f) if *f != ready => {
                    return Err(RunError::MixedLoads {
                        group: group.name.clone(),
                        first: f.scale,
                        second: ready.scale,
                    })
                }
                _ => found = Some(ready),
            }
        }
        let ready = found.unwrap_or_else(|| Loaded::scale(1));
        let scale = ready.scale;
        if let Some(asked) = group.scale.filter(|a| *a != scale) {
            let kind = targets.kinds[g];
            let name = kind.scale_name().unwrap_or("scale");
            if kind.refuses_other_scale() {
                return Err(RunError::OtherScale {
                    group: group.name.clone(),
                    workload: kind.name().to_string(),
                    name: name.to_string(),
                    asked,
                    loaded: scale,
                });
            }
            events.send(Event::Warning(format!(
                "group '{}' asks for scale {asked}, but its data has scale {scale}; using {scale}",
                group.name
            )));
        }
        readies.push(ready);
    }
    Ok(readies)
}

/// The samplers of `system.csv` over the run's servers and managed instances, and the
/// consoles of the poolers in front of the `pooled` servers, unless sampling is off.
pub async fn sampler(
    plan: &RunPlan,
    targets: &Targets,
    pooled: &[(String, u16)],
    home: &Home,
    events: &dyn Sink,
) -> Result<Option<Sampler>, RunError> {
    if plan.sample.is_zero() {
        return Ok(None);
    }
    let instances = managed_instances(&targets.planned, home)?;
    let mut sampler = Sampler::open(plan.sample, &targets.resolved, &instances)
        .await
        .map_err(|message| RunError::Sampler { message })?;
    let behind: Vec<&ResolvedTarget> = targets
        .resolved
        .iter()
        .filter(|t| pooled.contains(&t.server_key()))
        .collect();
    for note in sampler.add_poolers(&behind).await {
        events.send(Event::Note(note));
    }
    let noise: Vec<usize> = plan
        .events
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.action, crate::config::Action::Noise { .. }))
        .map(|(k, _)| k + 1)
        .collect();
    sampler.add_noise(&noise);
    Ok(Some(sampler))
}

/// The managed instances behind the targets, once each, for the sampler.
pub(super) fn managed_instances(
    planned: &[PlannedTarget],
    home: &Home,
) -> Result<Vec<Instance>, RunError> {
    let mut out: Vec<Instance> = Vec::new();
    for t in planned {
        for name in t.spec.instances() {
            if !out.iter().any(|i| i.name == name) {
                let found = crate::instance::find(home, name);
                out.push(found?);
            }
        }
    }
    Ok(out)
}

/// Creates (on first use) and starts each declared instance with its limits and settings, as
/// `tidebench instance start NAME --cpus .. --memory .. --set k=v` does, and tells `events`
/// which ones it created or started. An instance that exists with other values is refused
/// with both values and the fix (`tidebench instance destroy NAME`); so is a host whose
/// cgroups cannot be written when limits are asked for.
/// What a declared instance asks `instance::start` or `reconfigure` for.
pub fn instance_options(decl: &InstancePlan) -> InstanceOptions {
    InstanceOptions {
        port: None,
        settings: decl.setting_pairs(),
        cpus: decl.cpus,
        memory: decl.memory_bytes,
        vm: decl.vm.clone(),
        ssl: decl.ssl,
        pg_bin: None,
        standby_of: decl.standby_of.clone(),
        synchronous: decl.sync,
        guest: decl
            .hypervisor
            .as_ref()
            .map(|_| instance::vm::GuestOptions {
                accel: match decl.accel.as_deref() {
                    Some("kvm") => Some(instance::vm::Accel::Kvm),
                    Some("tcg") => Some(instance::vm::Accel::Tcg),
                    _ => None,
                },
                cgroup: decl.cgroup.clone(),
                mem_merge: decl.mem_merge,
            }),
    }
}

pub async fn start_instances(
    declared: &[InstancePlan],
    home: &Home,
    events: &dyn Sink,
) -> Result<(), RunError> {
    for decl in declared {
        let opts = instance_options(decl);
        let (name, home) = (decl.name.clone(), home.clone());
        let started =
            tokio::task::spawn_blocking(move || instance::start_reporting(&home, &name, &opts))
                .await?;
        let (_, outcome) = started.map_err(|source| RunError::DeclaredInstance {
            name: decl.name.clone(),
            source,
        })?;
        let what = match outcome {
            StartOutcome::Created => "created and started",
            StartOutcome::Started => "started",
            StartOutcome::AlreadyRunning => continue,
        };
        events.send(Event::Note(format!(
            "instance '{}' {what} ({})",
            decl.name,
            decl.describe_limits()
        )));
    }
    Ok(())
}

/// Says each note the targets' resolution left (a password file ignored, the host chosen
/// among several), once however many targets share it.
pub fn say_notes(targets: &Targets, events: &dyn Sink) {
    let mut said: Vec<&str> = Vec::new();
    for note in targets.resolved.iter().flat_map(|t| &t.notes) {
        if !said.contains(&note.as_str()) {
            events.send(Event::Warning(note.clone()));
            said.push(note);
        }
    }
}

/// Resolves a target on a blocking thread (it may start a managed instance).
pub async fn resolve_target(spec: &TargetSpec, home: &Home) -> Result<ResolvedTarget, RunError> {
    let spec = spec.clone();
    let home = home.clone();
    let resolved = tokio::task::spawn_blocking(move || target::resolve(&spec, &home)).await??;
    // Several hosts, or a demand on the server: one is chosen now, for the whole run.
    Ok(resolved.choose_host().await?)
}

/// Marks the servers that are managed instances in real VMs (found by their forwarded port)
/// with how they ran, and warns when one is emulated (TCG): its figures are not a VM's
/// real overhead.
pub(super) fn with_guests(
    mut facts: Vec<crate::results::ServerFacts>,
    targets: &Targets,
    home: &Home,
    events: &dyn Sink,
) -> Result<Vec<crate::results::ServerFacts>, RunError> {
    for inst in managed_instances(&targets.planned, home)? {
        let Some(guest) = inst.guest() else { continue };
        let Some(state) = &guest.state else { continue };
        let address = format!("127.0.0.1:{}", inst.port);
        let emulated = state.accel == instance::vm::Accel::Tcg;
        for f in facts
            .iter_mut()
            .filter(|f| f.address.as_deref() == Some(&address))
        {
            f.vm = Some(crate::results::VmFacts {
                hypervisor: "qemu".into(),
                accel: state.accel.name().into(),
                emulated,
                vcpus: guest.record.vcpus,
                memory_bytes: guest.record.memory,
                kernel: state.kernel_release.clone(),
            });
        }
        if emulated {
            events.send(crate::event::Event::Warning(format!(
                "instance '{}' is a QEMU guest under TCG (software emulation): its figures are \
                 emulated, not a VM's real overhead; use a host with working KVM for those",
                inst.name
            )));
        }
    }
    Ok(facts)
}
