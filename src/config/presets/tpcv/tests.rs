//! The tpcv preset: its tables, sizing rules and knobs, and the run plans its TOML compiles to.

use super::super::PresetKnobs;
use super::*;

fn input(knobs: &PresetKnobs, cores: u32, memory: u64) -> PresetInput<'_> {
    PresetInput {
        knobs,
        cores,
        memory: Some(memory),
        phase_duration: None,
    }
}

#[test]
fn table_1_picks_the_smallest_valid_count_at_its_edges() {
    assert_eq!(sets_for_tpsv(10.0), 1, "below the table");
    assert_eq!(sets_for_tpsv(100.0), 1);
    assert_eq!(sets_for_tpsv(400.0), 1, "1 and 2 are both valid");
    assert_eq!(sets_for_tpsv(1_600.0), 1);
    assert_eq!(sets_for_tpsv(1_600.5), 2);
    assert_eq!(sets_for_tpsv(4_000.0), 2, "the paper's example");
    assert_eq!(sets_for_tpsv(25_600.0), 2);
    assert_eq!(sets_for_tpsv(25_601.0), 3);
    assert_eq!(sets_for_tpsv(409_500.0), 3);
    assert_eq!(sets_for_tpsv(409_501.0), 4);
    assert_eq!(sets_for_tpsv(6_553_601.0), 5);
    assert_eq!(sets_for_tpsv(104_857_601.0), 6);
    assert_eq!(sets_for_tpsv(1e12), 6);
}

#[test]
fn table_2_averages_ten_twenty_thirty_forty() {
    for phase in PHASE_SHARES {
        assert_eq!(phase.iter().sum::<u32>(), 100, "{phase:?}");
    }
    for (g, want) in [10, 20, 30, 40].into_iter().enumerate() {
        let sum: u32 = PHASE_SHARES.iter().map(|p| p[g]).sum();
        assert_eq!(sum, want * 10, "group {g}");
    }
}

#[test]
fn limits_follow_table_3_in_proportion() {
    // 8 cores and 16 GiB: D's oltp VM gets the 8 cores, A's oltp 12/40 of them.
    assert_eq!(cpus(GROUPS[3].oltp, 8, 1), 8.0);
    assert_eq!(cpus(GROUPS[0].oltp, 8, 1), 2.4);
    assert_eq!(cpus(GROUPS[0].dss, 8, 1), 0.8);
    assert_eq!(cpus(GROUPS[3].oltp, 8, 2), 4.0, "two sets halve each VM");
    assert_eq!(cpus(GROUPS[0].dss, 1, 2), MIN_CPUS, "the floor");
    let host = 16u64 << 30;
    let all: u64 = GROUPS
        .iter()
        .map(|g| memory(g.dss, host, 1) + memory(g.oltp, host, 1))
        .sum();
    assert!(all <= host / 2 && all > host / 2 - (8 << 20), "{all}");
    let ratio = memory(GROUPS[3].dss, host, 1) as f64 / memory(GROUPS[0].oltp, host, 1) as f64;
    assert!((ratio - 278.0 / 39.0).abs() < 0.01, "{ratio}");
    assert_eq!(memory(GROUPS[0].oltp, 1 << 30, 4), MIN_MEMORY, "the floor");
    assert_eq!(memory(GROUPS[2].dss, host, 1) % (1 << 20), 0, "whole MiB");
}

#[test]
fn knobs_are_checked() {
    let bad = |knobs: PresetKnobs| toml(&input(&knobs, 2, 8 << 30)).unwrap_err();
    let e = bad(PresetKnobs {
        sets: Some(7),
        ..Default::default()
    });
    assert!(e.contains("--sets 7") && e.contains("1 to 6"), "{e}");
    let e = bad(PresetKnobs {
        sets: Some(2),
        target_tpsv: Some(10.0),
        ..Default::default()
    });
    assert!(e.contains("give one"), "{e}");
    let e = bad(PresetKnobs {
        target_tpsv: Some(-1.0),
        ..Default::default()
    });
    assert!(e.contains("--target-tpsv"), "{e}");
    let e = bad(PresetKnobs {
        lu_base: Some(u32::MAX / 2),
        ..Default::default()
    });
    assert!(e.contains("--lu-base"), "{e}");
}

#[test]
fn the_ramp_up_is_one_phase() {
    let knobs = PresetKnobs::default();
    let text = toml(&input(&knobs, 2, 8 << 30)).unwrap();
    assert!(text.contains("ramp_up = \"12m\""), "{text}");
    let short = PresetInput {
        phase_duration: Some(Duration::from_secs(60)),
        ..input(&knobs, 2, 8 << 30)
    };
    assert!(toml(&short).unwrap().contains("ramp_up = \"1m\""));
}

/// The plan the preset's TOML compiles to, through the same parser as a user's file. Until
/// tpce declares its `dss` role the groups run `probe`, which has both roles.
fn plan(knobs: PresetKnobs, flags: crate::config::RawRun) -> crate::config::RunPlan {
    use crate::config::{groups::Source, parse_run_text, validate_run, Catalog};
    use crate::workload::Registry;
    let tpce_has_dss = Registry
        .get("tpce")
        .is_ok_and(|w| w.roles().contains(&"dss"));
    let mut text = toml(&input(&knobs, 4, 16 << 30)).unwrap();
    if !tpce_has_dss {
        text = text.replace("workload = \"tpce\"", "workload = \"probe\"");
    }
    let src = Source {
        file: "preset tpcv",
        text: &text,
    };
    let raw = parse_run_text(&src, &Registry).unwrap_or_else(|e| panic!("{e}\n{text}"));
    validate_run(&src, raw.overlay(flags), 4, 1, &Registry).unwrap_or_else(|e| panic!("{e}"))
}

fn knobs(lu_base: u32, sets: u32) -> PresetKnobs {
    PresetKnobs {
        lu_base: Some(lu_base),
        sets: Some(sets),
        ..Default::default()
    }
}

#[test]
fn groups_hold_one_to_four_load_units_of_the_base() {
    for lu_base in [1, 2] {
        let p = plan(knobs(lu_base, 1), Default::default());
        let names: Vec<&str> = p.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["A", "B", "C", "D"]);
        for (i, g) in p.groups.iter().enumerate() {
            let lu = lu_base * (i as u32 + 1);
            assert_eq!(g.scale, Some(lu * 1_000), "group {}", g.name);
        }
    }
}

#[test]
fn every_set_has_an_oltp_and_a_dss_instance_of_its_own() {
    use crate::config::TargetSpec;
    for sets in [1, 2] {
        let p = plan(knobs(1, sets), Default::default());
        let mut instances = Vec::new();
        for g in &p.groups {
            assert_eq!(g.sets.len(), sets as usize, "group {}", g.name);
            for s in &g.sets {
                assert_eq!(s.distinct_targets().len(), 2, "{s:?}");
                for role in ["oltp", "dss"] {
                    let Some(TargetSpec::Instance { name, dbname, .. }) = s.target(role) else {
                        panic!("{role} of {s:?} is not a managed instance");
                    };
                    let (group, set) = (g.name.chars().next().unwrap(), s.name.parse().unwrap());
                    assert_eq!(name, &instance_name(group, set, role));
                    assert_eq!(dbname, &database_name(group, set, role));
                    instances.push(name.clone());
                }
            }
        }
        instances.sort();
        instances.dedup();
        assert_eq!(instances.len(), 8 * sets as usize, "no instance is shared");
        let declared: Vec<&str> = p.instances.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(declared.len(), instances.len());
        assert!(instances.iter().all(|i| declared.contains(&i.as_str())));
    }
}

#[test]
fn declared_limits_are_table_3_scaled_to_the_host() {
    let p = plan(knobs(1, 1), Default::default());
    let limits = |name: &str| {
        let i = p.instances.iter().find(|i| i.name == name).unwrap();
        (i.cpus.unwrap(), i.memory_bytes.unwrap())
    };
    // The 4-core host of `plan`: group D's oltp instance gets all 4 cores.
    assert_eq!(limits("tpcv-d1-oltp").0, 4.0);
    assert_eq!(limits("tpcv-a1-oltp").0, 1.2, "12 of 40 vCPUs");
    assert_eq!(limits("tpcv-c1-dss").0, 1.2, "12 of 40 vCPUs");
    // dss instances get most memory, oltp most CPU, as the paper's VM2 and VM3.
    for g in ['a', 'b', 'c', 'd'] {
        let (oltp, dss) = (
            limits(&format!("tpcv-{g}1-oltp")),
            limits(&format!("tpcv-{g}1-dss")),
        );
        assert!(oltp.0 > dss.0 && dss.1 > oltp.1, "{g}: {oltp:?} {dss:?}");
    }
    let two = plan(knobs(1, 2), Default::default());
    let d2 = two
        .instances
        .iter()
        .find(|i| i.name == "tpcv-d2-dss")
        .unwrap();
    assert_eq!(
        d2.cpus,
        Some(limits("tpcv-d1-dss").0 / 2.0),
        "two sets share the VM"
    );
}

#[test]
fn phases_are_table_2_after_a_one_phase_ramp_up() {
    let p = plan(knobs(1, 1), Default::default());
    assert_eq!(p.phases.len(), 10);
    for (phase, shares) in p.phases.iter().zip(PHASE_SHARES) {
        let got: Vec<f64> = phase.groups.iter().map(|g| g.share).collect();
        let want: Vec<f64> = shares.iter().map(|s| f64::from(*s)).collect();
        assert_eq!(got, want, "{}", phase.name);
        assert_eq!(phase.duration, Duration::from_secs(720));
    }
    assert_eq!(p.ramp_up, Duration::from_secs(720));
    assert_eq!((p.measure_first, p.measure_count), (1, 10));
    assert_eq!(p.mode, crate::config::DriveMode::Shared);
    assert_eq!(p.clients, CLIENTS);
    // The user's flags win over the preset's values.
    let flags = crate::config::RawRun {
        clients: Some(3),
        phase_duration: Some("1m".into()),
        ..Default::default()
    };
    let p = plan(knobs(1, 1), flags);
    assert_eq!(p.clients, 3);
    assert!(p
        .phases
        .iter()
        .all(|ph| ph.duration == Duration::from_secs(60)));
}

#[test]
fn target_tpsv_sets_the_sets_per_group() {
    let k = PresetKnobs {
        target_tpsv: Some(4_000.0),
        ..Default::default()
    };
    assert_eq!(plan(k, Default::default()).groups[0].sets.len(), 2);
}

#[test]
fn with_hypervisor_every_instance_is_a_guest_of_whole_vcpus() {
    let vms = PresetKnobs {
        hypervisor: Some("qemu"),
        accel: Some("tcg"),
        ..knobs(1, 1)
    };
    let p = plan(vms.clone(), Default::default());
    assert_eq!(p.instances.len(), 8);
    for i in &p.instances {
        assert_eq!(i.hypervisor.as_deref(), Some("qemu"), "{}", i.name);
        assert_eq!(i.accel.as_deref(), Some("tcg"), "{}", i.name);
        let cpus = i.cpus.unwrap();
        assert!(
            cpus >= 1.0 && cpus.fract() == 0.0,
            "{}: {cpus} vCPUs",
            i.name
        );
        assert!(i.memory_bytes.unwrap() >= MIN_GUEST_MEMORY, "{}", i.name);
    }
    let vcpus = |name: &str| p.instances.iter().find(|i| i.name == name).unwrap().cpus;
    // The 4-core host of `plan`: 1.2 cores as a cgroup quota become 1 vCPU, 4 stay 4.
    assert_eq!(vcpus("tpcv-a1-oltp"), Some(1.0));
    assert_eq!(vcpus("tpcv-d1-oltp"), Some(4.0));
    let text = toml(&input(&vms, 4, 16 << 30)).unwrap();
    assert!(text.contains("a real VM, a QEMU guest"), "{text}");
    assert!(
        text.contains("--preset tpcv [--lu-base N] [--trade-days D] --hypervisor qemu --accel tcg"),
        "{text}"
    );
    let plain = toml(&input(&knobs(1, 1), 4, 16 << 30)).unwrap();
    assert!(!plain.contains("hypervisor"), "{plain}");
}

/// Preset hci: a synchronous standby of the same size after every oltp instance, the oltp
/// targets over both, and group A's first primary failed halfway through p6 (the middle of the
/// measured window), its standby promoted a second later.
#[test]
fn hci_adds_a_synchronous_standby_per_oltp_instance_and_the_failover_mid_window() {
    use crate::config::{groups::Source, parse_run_text, validate_run, Action, RawRun};
    use crate::workload::Registry;
    let knobs = PresetKnobs::default();
    let short = PresetInput {
        phase_duration: Some(Duration::from_secs(10)),
        ..input(&knobs, 4, 16 << 30)
    };
    let text = hci_toml(&short).unwrap();
    assert!(
        text.starts_with(&toml(&short).unwrap()[..200]),
        "tpcv's header first"
    );
    let src = Source {
        file: "preset hci",
        text: &text,
    };
    let raw = parse_run_text(&src, &Registry).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let flags = RawRun {
        phase_duration: Some("10s".into()),
        ..RawRun::default()
    };
    let plan =
        validate_run(&src, raw.overlay(flags), 4, 1, &Registry).unwrap_or_else(|e| panic!("{e}"));
    let standbys: Vec<_> = plan
        .instances
        .iter()
        .filter(|i| i.standby_of.is_some())
        .collect();
    assert_eq!(standbys.len(), 4, "one per oltp instance");
    for s in &standbys {
        let primary = s.standby_of.as_deref().unwrap();
        assert!(s.sync && primary.ends_with("-oltp"), "{s:?}");
        assert_eq!(s.name, format!("{primary}-standby"));
        let p = plan.instances.iter().find(|i| i.name == primary).unwrap();
        assert_eq!(
            (p.cpus, p.memory_bytes),
            (s.cpus, s.memory_bytes),
            "the same size"
        );
    }
    for set in plan.groups.iter().flat_map(|g| &g.sets) {
        let oltp = set.targets["oltp"].instances();
        assert_eq!(oltp.len(), 2, "{oltp:?}");
        assert_eq!(set.targets["dss"].instances().len(), 1);
    }
    // 10 s ramp-up, then p1 to p5, then half of p6: the kill at 65 s, the promotion at 66 s.
    let events: Vec<_> = plan
        .events
        .iter()
        .map(|e| (e.at.as_secs(), e.target.as_str(), e.action.clone()))
        .collect();
    assert_eq!(
        events,
        vec![
            (
                65,
                "tpcv-a1-oltp",
                Action::Fail {
                    restart_after: None
                }
            ),
            (66, "tpcv-a1-oltp-standby", Action::Promote),
        ]
    );
    let e = hci_toml(&PresetInput {
        knobs: &PresetKnobs {
            hypervisor: Some("qemu"),
            ..Default::default()
        },
        ..short
    })
    .unwrap_err();
    assert!(e.contains("leave it out"), "{e}");
}
