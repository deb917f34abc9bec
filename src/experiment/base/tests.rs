use super::*;
use crate::config::RunSource;
use crate::workload::Registry;

fn base(text: &str, flags: RawRun) -> BaseRun {
    BaseRun {
        label: "run.toml".into(),
        text: text.into(),
        flags,
    }
}

fn plan_of(base: &BaseRun, specs: &[&str]) -> Result<RunPlan, String> {
    let varies: Vec<Vary> = specs.iter().map(|s| Vary::parse(s).unwrap()).collect();
    let values: Vec<(&Vary, &str)> = varies.iter().map(|v| (v, v.values[0].as_str())).collect();
    base.point(&values, &Registry)?
        .plan(2, 1, &Registry)
        .map_err(|e| e.to_string())
}

#[test]
fn a_varied_run_key_wins_over_the_flag_and_the_file() {
    let flags = RawRun {
        clients: Some(4),
        ..RawRun::default()
    };
    let b = base("workload = \"tpcb\"\nclients = 2\n", flags);
    assert_eq!(plan_of(&b, &["clients=16"]).unwrap().clients, 16);
    assert_eq!(plan_of(&b, &[]).unwrap().clients, 4);
    let e = plan_of(&b, &["clients=0"]).unwrap_err();
    assert!(e.contains("clients must be at least 1"), "{e}");
}

#[test]
fn group_keys_and_group_clients_reach_the_plan() {
    let (_, text) = crate::config::run_text(
        RunSource::Preset("consolidation-2db"),
        &RawRun::default(),
        2,
    )
    .unwrap();
    let b = base(&text, RawRun::default());
    let plan = plan_of(&b, &["group.DB_1.scale=7", "group.DB_2.clients=5"]).unwrap();
    assert_eq!(plan.groups[0].scale, Some(7));
    assert!(
        plan.phases.iter().all(|p| p.groups[1].clients == 5),
        "{:?}",
        plan.phases
    );
    let e = plan_of(&b, &["group.DB_9.scale=1"]).unwrap_err();
    assert!(
        e.contains("no group 'DB_9'") && e.contains("DB_1, DB_2"),
        "{e}"
    );
}

#[test]
fn instance_values_declare_the_runs_managed_instance() {
    let flags = RawRun {
        workload: Some(crate::config::WorkloadName::new("tpcb")),
        target: Some("instance:vm1/db".into()),
        ..RawRun::default()
    };
    let b = base("", flags);
    let plan = plan_of(
        &b,
        &[
            "instance.cpus=1.5",
            "instance.set.shared_buffers=256MB",
            "instance.memory=1GB",
        ],
    )
    .unwrap();
    assert_eq!(plan.instances.len(), 1);
    let i = &plan.instances[0];
    assert_eq!(i.name, "vm1");
    assert_eq!((i.cpus, i.memory_bytes), (Some(1.5), Some(1 << 30)));
    assert_eq!(
        i.setting_pairs(),
        [("shared_buffers".to_string(), "256MB".to_string())]
    );
    let dsn = base(
        "",
        RawRun {
            workload: Some(crate::config::WorkloadName::new("tpcb")),
            target: Some("postgresql://u@h/db".into()),
            ..RawRun::default()
        },
    );
    assert!(plan_of(&dsn, &["instance.cpus=1"])
        .unwrap_err()
        .contains("no managed instance"));
}

#[test]
fn a_declared_vm_keeps_its_hypervisor_and_takes_whole_vcpus_from_a_sweep() {
    let text = "workload = \"tpcb\"\ntarget = \"instance:g\"\n\n[[instance]]\nname = \"g\"\n\
                hypervisor = \"qemu\"\naccel = \"tcg\"\ncpus = 1\nmemory = \"512MiB\"\n";
    let b = base(text, RawRun::default());
    let plan = plan_of(&b, &["instance.cpus=2", "instance.g.memory=768MiB"]).unwrap();
    let i = &plan.instances[0];
    assert_eq!(i.hypervisor.as_deref(), Some("qemu"));
    assert_eq!(i.accel.as_deref(), Some("tcg"));
    assert_eq!((i.cpus, i.memory_bytes), (Some(2.0), Some(768 << 20)));
    // A VM's vCPUs are whole: refused before the first run, naming the key.
    let e = plan_of(&b, &["instance.cpus=1.5"]).unwrap_err();
    assert!(e.contains("not a number of vCPUs"), "{e}");
}
