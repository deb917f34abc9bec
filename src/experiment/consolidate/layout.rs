//! From a scheme to VMs, instances and a run: where each database lives under the scheme,
//! and the independent-mode run that sends the complementary traffic of the study's Figure 6
//! to them (one group per database; in period p the database ((p − 1) mod M) + 1 is busy with
//! `high` clients, the others get `low`; a ramp phase with the new period's clients before
//! every period but the first, whose ramp is the run's unmeasured ramp-up).

use toml::{Table, Value};

use crate::config::Catalog;
use crate::results::experiment::consolidate::{InstanceLayout, SchemeLayout, VmLayout};

use super::super::base::{BaseRun, PointRun};
use super::spec::{Scheme, Spec};

/// Phases named so are the measured traffic periods; `ramp-N` phases are not counted.
pub const PERIOD_PREFIX: &str = "period-";
pub const RAMP_PREFIX: &str = "ramp-";

/// Database `i` (1-based).
pub fn database(i: u32) -> String {
    format!("db{i}")
}

/// The VMs, instances and databases of `scheme`.
pub fn layout(spec: &Spec, scheme: Scheme) -> SchemeLayout {
    let m = spec.databases;
    let host = &spec.host_group;
    let slug = scheme.slug();
    let instance = |i: u32| format!("{host}-{slug}-{i}");
    let vm = |j: u32, memory: u64, instances: Vec<(String, Vec<String>)>| {
        let count = instances.len() as u32;
        let buffers = spec.shared_buffers.per_instance(memory, count);
        VmLayout {
            name: format!("vm{j}"),
            cgroup: format!("{host}/{slug}-vm{j}"),
            cpus: spec.cpus,
            memory_bytes: memory,
            instances: instances
                .into_iter()
                .map(|(name, databases)| InstanceLayout {
                    name,
                    shared_buffers: format!("{}MB", buffers >> 20),
                    databases,
                })
                .collect(),
        }
    };
    let all = spec.mem_config();
    let vms = match scheme {
        Scheme::OneOneM => vec![vm(
            1,
            all,
            vec![(instance(1), (1..=m).map(database).collect())],
        )],
        Scheme::OneMM => vec![vm(
            1,
            all,
            (1..=m).map(|i| (instance(i), vec![database(i)])).collect(),
        )],
        Scheme::MMM => (1..=m)
            .map(|i| vm(i, spec.memory_bytes, vec![(instance(i), vec![database(i)])]))
            .collect(),
    };
    SchemeLayout {
        scheme: scheme.name().to_string(),
        mem_config_bytes: vms.iter().map(|v| v.memory_bytes).sum(),
        vms,
    }
}

/// The clients of database `db` (1-based) in period `p` (1-based).
pub fn clients(spec: &Spec, p: u32, db: u32) -> u32 {
    if (p - 1) % spec.databases + 1 == db {
        spec.high
    } else {
        spec.low
    }
}

/// The run of a scheme: its instances, a group per database, the periods.
pub fn run(
    base: &BaseRun,
    spec: &Spec,
    scheme: &SchemeLayout,
    catalog: &dyn Catalog,
) -> Result<PointRun, String> {
    let raw = base.one_group(
        "consolidate makes its own groups, phases and instances from [consolidate]",
        catalog,
    )?;
    if raw.target.is_some() || raw.mode.is_some() || raw.clients.is_some() {
        return Err(
            "consolidate makes its own targets and clients (--high, --low); leave out target, mode and clients"
                .into(),
        );
    }
    // Which workload is the user's (or the preset's) to say: nothing here picks one.
    let Some(workload) = raw.workload.as_ref().map(|w| w.as_str().to_string()) else {
        let names: Vec<&str> = catalog.all().iter().map(|w| w.name()).collect();
        return Err(format!(
            "consolidate needs a workload for its databases; give --workload {} (or \
             `workload =` in the file, or --preset NAME)",
            names.join("|")
        ));
    };
    let mut doc = Table::new();
    doc.insert("mode".into(), Value::String("independent".into()));
    doc.insert("ramp_up".into(), Value::String(spec.ramp_up.clone()));
    let mut instances = Vec::new();
    let mut groups = Vec::new();
    for vm in &scheme.vms {
        for inst in &vm.instances {
            instances.push(Value::Table(declare(vm, inst, spec)));
            for db in &inst.databases {
                let mut g = Table::new();
                g.insert("name".into(), Value::String(db.clone()));
                g.insert("workload".into(), Value::String(workload.clone()));
                if let Some(s) = raw.scale {
                    g.insert("scale".into(), Value::Integer(s.into()));
                }
                g.insert(
                    "target".into(),
                    Value::String(format!("instance:{}/{db}", inst.name)),
                );
                groups.push((db.clone(), Value::Table(g)));
            }
        }
    }
    // Groups in database order, whichever VM holds them.
    groups.sort_by_key(|(db, _)| db[2..].parse::<u32>().unwrap_or(0));
    let mut phases = Vec::new();
    for p in 1..=spec.periods {
        let mut per_db = Table::new();
        for d in 1..=spec.databases {
            per_db.insert(database(d), Value::Integer(clients(spec, p, d).into()));
        }
        let ramp = crate::config::duration::parse_duration(&spec.ramp_up).unwrap_or_default();
        if p > 1 && !ramp.is_zero() {
            phases.push(phase(
                &format!("{RAMP_PREFIX}{p}"),
                &spec.ramp_up,
                per_db.clone(),
            ));
        }
        phases.push(phase(&format!("{PERIOD_PREFIX}{p}"), &spec.period, per_db));
    }
    doc.insert("instance".into(), Value::Array(instances));
    doc.insert(
        "group".into(),
        Value::Array(groups.into_iter().map(|(_, g)| g).collect()),
    );
    doc.insert("phase".into(), Value::Array(phases));
    // What stays of the base is run-wide (protocol, options such as TPC-C's think, ...).
    let mut over = raw;
    over.workload = None;
    over.scale = None;
    over.duration = None;
    over.rate = None;
    over.ramp_up = None;
    over.phase_duration = None;
    over.out = None;
    Ok(PointRun {
        label: format!("scheme {}", scheme.scheme),
        text: toml::to_string(&doc).map_err(|e| e.to_string())?,
        over,
        host: None,
    })
}

/// An `[[instance]]` of the point's run: an emulated VM's (its group), or with `--hypervisor`
/// a QEMU guest whose QEMU sits in the VM's group (1/M/M's instances share one guest).
fn declare(vm: &VmLayout, inst: &InstanceLayout, spec: &Spec) -> Table {
    let guests = spec.guests.as_ref();
    let mut t = Table::new();
    t.insert("name".into(), Value::String(inst.name.clone()));
    match guests {
        // A QEMU guest: its QEMU runs in the VM's group below the host group.
        Some(g) => {
            t.insert("hypervisor".into(), Value::String("qemu".into()));
            if let Some(a) = g.accel {
                t.insert("accel".into(), Value::String(a.name().into()));
            }
            t.insert("cgroup".into(), Value::String(vm.cgroup.clone()));
            // 1/M/M: the VM's instances share one guest (named as its group).
            if vm.instances.len() > 1 {
                t.insert("vm".into(), Value::String(vm.cgroup.clone()));
            }
            if let Some(k) = g.ksm {
                t.insert("mem_merge".into(), Value::Boolean(k));
            }
        }
        None => {
            t.insert("vm".into(), Value::String(vm.cgroup.clone()));
        }
    }
    if let Some(c) = vm.cpus {
        t.insert("cpus".into(), Value::Float(c));
    }
    t.insert(
        "memory".into(),
        Value::String(format!("{}MB", vm.memory_bytes >> 20)),
    );
    let mut settings: Table = spec
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    settings.insert(
        "shared_buffers".into(),
        Value::String(inst.shared_buffers.clone()),
    );
    t.insert("settings".into(), Value::Table(settings));
    t
}

fn phase(name: &str, duration: &str, clients: Table) -> Value {
    let mut t = Table::new();
    t.insert("name".into(), Value::String(name.into()));
    t.insert("duration".into(), Value::String(duration.into()));
    t.insert("clients".into(), Value::Table(clients));
    Value::Table(t)
}

#[cfg(test)]
mod tests {
    use super::super::spec::{GuestSpec, RawSpec};
    use super::*;

    fn spec() -> Spec {
        Spec::check(RawSpec {
            memory: Some("4GB".into()),
            cpus: Some(3.0),
            ..RawSpec::default()
        })
        .unwrap()
    }

    #[test]
    fn schemes_lay_out_as_table_3() {
        let s = spec();
        let one = layout(&s, Scheme::OneOneM);
        assert_eq!(one.vms.len(), 1);
        assert_eq!(one.vms[0].memory_bytes, 8 << 30);
        assert_eq!(one.vms[0].instances[0].shared_buffers, "2048MB");
        assert_eq!(one.vms[0].instances[0].databases, vec!["db1", "db2"]);
        let os = layout(&s, Scheme::OneMM);
        assert_eq!(os.vms[0].instances.len(), 2);
        assert_eq!(os.vms[0].instances[1].shared_buffers, "1024MB");
        let vms = layout(&s, Scheme::MMM);
        assert_eq!(vms.vms.len(), 2);
        assert_eq!(vms.vms[1].cgroup, "consolidate/mmm-vm2");
        assert_eq!(vms.vms[1].instances[0].name, "consolidate-mmm-2");
        assert_eq!(vms.vms[1].instances[0].shared_buffers, "1024MB");
        for l in [one, os, vms] {
            assert_eq!(l.mem_config_bytes, 8 << 30);
        }
    }

    #[test]
    fn every_instance_has_the_settings_and_the_consolidations_shared_buffers() {
        let s = Spec {
            settings: [("fsync", "off"), ("shared_buffers", "1GB")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            ..spec()
        };
        let lay = layout(&s, Scheme::MMM);
        for vm in &lay.vms {
            let t = declare(vm, &vm.instances[0], &s);
            assert_eq!(t["settings"]["fsync"].as_str(), Some("off"), "{t}");
            assert_eq!(
                t["settings"]["shared_buffers"].as_str(),
                Some(vm.instances[0].shared_buffers.as_str()),
                "{t}"
            );
        }
    }

    #[test]
    fn on_real_vms_1_m_m_instances_share_one_guest_and_m_m_m_ones_have_their_own() {
        let plain = spec();
        let s = Spec {
            guests: Some(GuestSpec {
                accel: None,
                ksm: None,
            }),
            ..plain.clone()
        };
        let shared = layout(&s, Scheme::OneMM);
        let vm = &shared.vms[0];
        for inst in &vm.instances {
            let t = declare(vm, inst, &s);
            assert_eq!(t["hypervisor"].as_str(), Some("qemu"));
            assert_eq!(t["vm"].as_str(), Some(vm.cgroup.as_str()), "{t}");
            assert_eq!(t["cgroup"].as_str(), Some(vm.cgroup.as_str()), "{t}");
        }
        let own = layout(&s, Scheme::MMM);
        let t = declare(&own.vms[1], &own.vms[1].instances[0], &s);
        assert!(t.get("vm").is_none(), "a guest of its own: {t}");
        let t = declare(&own.vms[1], &own.vms[1].instances[0], &plain);
        assert_eq!(
            t["vm"].as_str(),
            Some("consolidate/mmm-vm2"),
            "an emulated VM: {t}"
        );
    }

    #[test]
    fn traffic_is_complementary() {
        let s = spec();
        assert_eq!((clients(&s, 1, 1), clients(&s, 1, 2)), (30, 2));
        assert_eq!((clients(&s, 2, 1), clients(&s, 2, 2)), (2, 30));
        assert_eq!(clients(&s, 3, 1), 30);
    }
}
