//! A density series (the Nutanix study: add one database VM at a time until the host is
//! full): step n runs n managed instances at once, each in its own control group with the
//! same CPU quota and memory limit (or, with `--hypervisor qemu`, each a QEMU guest with that
//! many vCPUs and that much RAM), each with its own database and its own clients under the
//! same load — the base run's — on one clock. The steps are ordinary independent-mode runs
//! made from the base: one `[[instance]]`, one `[[group]]` and one phase column per instance.

use toml::{Table, Value};

use crate::config::{self, defaults, Catalog};
use crate::instance::vm::{Accel, Hypervisor};

use super::base::{BaseRun, PointRun};

/// Instance names are `density-1`, `density-2`, ... unless `--instance-prefix` says otherwise.
pub const INSTANCE_PREFIX: &str = "density";
/// The varied key of a density series.
pub use crate::results::experiment::DENSITY_KEY as KEY;

/// What every instance of a density series gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// CPU quota per instance in cores.
    pub cpus: Option<f64>,
    /// Memory limit per instance, as written (`8GB`).
    pub memory: Option<String>,
    /// Instance `i` is named `{prefix}-{i}`. Control groups are per host: two homes on one
    /// host need different prefixes.
    pub prefix: String,
    /// Server settings of every instance (`--set`), in the order given.
    pub settings: Vec<(String, String)>,
    /// Real VMs (`--hypervisor qemu`): `cpus` are then whole vCPUs and `memory` each guest's
    /// RAM; `None`: control groups.
    pub guest: Option<GuestShape>,
}

/// The `hypervisor` and `accel` keys of every instance of a density series on real VMs.
#[derive(Debug, Clone, PartialEq)]
pub struct GuestShape {
    pub hypervisor: Hypervisor,
    /// Forced (`--accel`); `None`: KVM when it boots, else TCG.
    pub accel: Option<Accel>,
}

impl Shape {
    /// Refuses what a series on real VMs cannot be: a CPU quota that is not whole vCPUs.
    pub fn check(&self) -> Result<(), String> {
        match (self.guest.as_ref(), self.cpus) {
            (Some(_), Some(c)) if c < 1.0 || c.fract() != 0.0 => Err(format!(
                "--cpus {c} is not a number of vCPUs: with --hypervisor each instance is a VM \
                 with whole vCPUs; give --cpus 1 or more (or leave --hypervisor out for control \
                 groups, which take fractions)"
            )),
            _ => Ok(()),
        }
    }

    /// The `[[instance]]` table of instance `name`.
    fn instance(&self, name: &str) -> Table {
        let mut inst = Table::new();
        inst.insert("name".into(), Value::String(name.to_string()));
        if let Some(c) = self.cpus {
            // A guest's vCPUs are written as an integer, as a user would.
            let v = match &self.guest {
                Some(_) => Value::Integer(c as i64),
                None => Value::Float(c),
            };
            inst.insert("cpus".into(), v);
        }
        if let Some(m) = &self.memory {
            inst.insert("memory".into(), Value::String(m.clone()));
        }
        if !self.settings.is_empty() {
            let set: Table = self
                .settings
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            inst.insert("settings".into(), Value::Table(set));
        }
        if let Some(g) = &self.guest {
            inst.insert(
                "hypervisor".into(),
                Value::String(g.hypervisor.name().into()),
            );
            if let Some(a) = g.accel {
                inst.insert("accel".into(), Value::String(a.name().into()));
            }
        }
        inst
    }
}

/// Instance `i` (1-based) of a density series.
pub fn instance_name(prefix: &str, i: u32) -> String {
    format!("{prefix}-{i}")
}

/// The run of step `n`: the base run's load on each of `n` instances.
pub fn step(
    base: &BaseRun,
    n: u32,
    shape: &Shape,
    catalog: &dyn Catalog,
) -> Result<PointRun, String> {
    shape.check()?;
    let raw = base.one_group(
        "density takes a one-group run (flags, or a file without tables): every instance gets that run's load",
        catalog,
    )?;
    if raw.target.is_some() {
        return Err(format!(
            "density makes its own instances ({0}-1, {0}-2, ...); leave --target out",
            shape.prefix
        ));
    }
    if raw.mode.is_some() {
        return Err(
            "density runs its instances side by side (independent mode); leave mode out".into(),
        );
    }
    let Some(workload) = raw.workload.clone() else {
        return Err("density needs a workload: give --workload (e.g. --workload tpcb)".into());
    };
    let clients = raw.clients.unwrap_or(defaults::CLIENTS);
    let mut doc = Table::new();
    doc.insert("mode".into(), Value::String("independent".into()));
    let mut instances = Vec::new();
    let mut groups = Vec::new();
    let mut per_group_clients = Table::new();
    let mut per_group_rate = Table::new();
    for i in 1..=n {
        let name = instance_name(&shape.prefix, i);
        instances.push(Value::Table(shape.instance(&name)));
        let group = format!("db{i}");
        let mut g = Table::new();
        g.insert("name".into(), Value::String(group.clone()));
        g.insert(
            "workload".into(),
            Value::String(workload.as_str().to_string()),
        );
        if let Some(s) = raw.scale {
            g.insert("scale".into(), Value::Integer(s.into()));
        }
        g.insert(
            "target".into(),
            Value::String(format!(
                "instance:{name}/{}",
                config::target::DEFAULT_DBNAME
            )),
        );
        groups.push(Value::Table(g));
        per_group_clients.insert(group.clone(), Value::Integer(clients.into()));
        if let Some(r) = raw.rate {
            per_group_rate.insert(group, Value::Float(r));
        }
    }
    let mut phase = Table::new();
    phase.insert("name".into(), Value::String(format!("{n}-instances")));
    phase.insert(
        "duration".into(),
        Value::String(raw.duration.clone().unwrap_or(defaults::DURATION.into())),
    );
    phase.insert("clients".into(), Value::Table(per_group_clients));
    if !per_group_rate.is_empty() {
        phase.insert("rate".into(), Value::Table(per_group_rate));
    }
    doc.insert("instance".into(), Value::Array(instances));
    doc.insert("group".into(), Value::Array(groups));
    doc.insert("phase".into(), Value::Array(vec![Value::Table(phase)]));
    // What stays of the base is run-wide (protocol, max_tries, progress, options...); what
    // describes the one group moved into the tables above.
    let mut over = raw;
    over.workload = None;
    over.scale = None;
    over.clients = None;
    over.duration = None;
    over.rate = None;
    over.out = None;
    Ok(PointRun {
        label: format!("density step {n}"),
        text: toml::to_string(&doc).map_err(|e| e.to_string())?,
        over,
        host: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawRun;
    use crate::workload::Registry;

    fn base() -> BaseRun {
        BaseRun {
            label: "flags".into(),
            text: String::new(),
            flags: RawRun {
                workload: Some(config::WorkloadName("tpcb".into())),
                clients: Some(2),
                ..RawRun::default()
            },
        }
    }

    fn shape(cpus: f64, guest: Option<GuestShape>) -> Shape {
        Shape {
            cpus: Some(cpus),
            memory: Some("512MiB".into()),
            prefix: "dv".into(),
            settings: vec![("autovacuum".into(), "off".into())],
            guest,
        }
    }

    #[test]
    fn a_step_on_real_vms_declares_each_instance_a_guest() {
        let guest = GuestShape {
            hypervisor: Hypervisor::Qemu,
            accel: Some(Accel::Tcg),
        };
        let run = step(&base(), 2, &shape(1.0, Some(guest)), &Registry).unwrap();
        let plan = run.plan(2, 1, &Registry).unwrap();
        assert_eq!(plan.instances.len(), 2);
        for (i, decl) in plan.instances.iter().enumerate() {
            assert_eq!(decl.name, format!("dv-{}", i + 1));
            assert_eq!(decl.hypervisor.as_deref(), Some("qemu"));
            assert_eq!(decl.accel.as_deref(), Some("tcg"));
            assert_eq!((decl.cpus, decl.memory_bytes), (Some(1.0), Some(512 << 20)));
            assert_eq!(
                decl.settings.get("autovacuum").map(String::as_str),
                Some("off")
            );
        }
        // Without --hypervisor nothing changes: control groups, fractions allowed.
        let run = step(&base(), 1, &shape(0.5, None), &Registry).unwrap();
        let plan = run.plan(2, 1, &Registry).unwrap();
        assert_eq!(plan.instances[0].hypervisor, None);
        assert_eq!(plan.instances[0].cpus, Some(0.5));
    }

    #[test]
    fn fractional_vcpus_are_refused_with_the_fix() {
        let guest = GuestShape {
            hypervisor: Hypervisor::Qemu,
            accel: None,
        };
        let e = step(&base(), 1, &shape(0.5, Some(guest)), &Registry).unwrap_err();
        assert!(e.contains("--cpus 0.5 is not a number of vCPUs"), "{e}");
        assert!(e.contains("give --cpus 1 or more"), "{e}");
    }
}
