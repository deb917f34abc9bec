//! Config validation: flags and files meet in one Plan; every error names where and how to fix.

use super::*;
use crate::workload::Registry;
use std::time::Duration;

fn from_text(text: &str) -> Result<RunPlan, ConfigError> {
    let src = groups::Source {
        file: "run.toml",
        text,
    };
    let raw = parse_run_text(&src, &Registry)?;
    validate_run(&src, raw, 2, 1, &Registry)
}

fn name(n: &str) -> Option<WorkloadName> {
    Some(WorkloadName::new(n))
}

fn flags(raw: RawRun) -> Result<RunPlan, ConfigError> {
    validate_run(
        &groups::Source {
            file: "flags",
            text: "",
        },
        raw,
        2,
        1,
        &Registry,
    )
}

fn err(text: &str) -> String {
    from_text(text).unwrap_err().to_string()
}

#[test]
fn flags_and_file_compile_to_the_same_plan() {
    let text = "workload = \"select-only\"\nclients = 8\nduration = \"10s\"\nseed = 7\n";
    let from_file = from_text(text).unwrap();
    let from_flags = flags(RawRun {
        workload: name("select-only"),
        clients: Some(8),
        duration: Some("10s".into()),
        seed: Some(7),
        // The one default that differs on purpose: a run file goes on after an error no
        // retry helps, a run from flags aborts the client as pgbench does (issue 38).
        continue_on_error: Some(true),
        ..RawRun::default()
    })
    .unwrap();
    assert_eq!(
        toml::to_string(&from_file).unwrap(),
        toml::to_string(&from_flags).unwrap()
    );
    assert_eq!(from_file.jobs, 2);
    assert_eq!(from_file.protocol, ProtocolName::Prepared);
    assert_eq!(from_file.groups.len(), 1);
    assert_eq!(from_file.phases[0].duration, Duration::from_secs(10));
}

#[test]
fn unknown_key_names_file_and_line() {
    let e = err("workload = \"tpcb\"\n\nclinets = 4\n");
    assert!(e.starts_with("run.toml:3:"), "{e}");
    assert!(e.contains("clinets"), "{e}");
    // Inside a group too, and a workload's option is not an unknown key.
    let e = err("[[group]]\nname = \"A\"\nworkload = \"tpcc\"\ninstance = \"default\"\nprocedures = true\nsest = 2\n[[phase]]\nduration = \"10s\"\nshares = { A = 100 }\n");
    assert!(e.starts_with("run.toml:6:") && e.contains("sest"), "{e}");
}

#[test]
fn a_set_maps_roles_to_targets() {
    let text = "[[group]]\nname = \"A\"\nworkload = \"probe\"\n[[group.set]]\noltp = \"instance:a/o\"\ndss = \"instance:b/d\"\n[[group.set]]\noltp = \"instance:a/both\"\n[[phase]]\nduration = \"10s\"\nshares = { A = 100 }\n";
    let plan = from_text(text).unwrap();
    let sets = &plan.groups[0].sets;
    assert_eq!(
        sets[0].targets["dss"],
        TargetSpec::parse("instance:b/d").unwrap()
    );
    assert_eq!(sets[0].distinct_targets().len(), 2);
    // A single target serves every role.
    assert_eq!(sets[1].targets["dss"], sets[1].targets["oltp"]);
    assert_eq!(sets[1].distinct_targets().len(), 1);
    let e = err(&text.replace("dss = ", "olap = "));
    assert!(
        e.starts_with("run.toml:4:") && e.contains("'olap' is not a role"),
        "{e}"
    );
    let e = err("[[group]]\nname = \"A\"\nworkload = \"tpcb\"\n[[group.set]]\noltp = \"instance:a/x\"\ndss = \"instance:a/y\"\n[[phase]]\nduration = \"1s\"\nshares = { A = 100 }\n");
    assert!(e.contains("not a role of workload tpcb"), "{e}");
}

#[test]
fn zero_and_negative_values_are_refused() {
    let base = RawRun {
        workload: name("tpcb"),
        ..RawRun::default()
    };
    let e = flags(RawRun {
        clients: Some(0),
        ..base.clone()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("clients"), "{e}");
    let e = flags(RawRun {
        duration: Some("-5s".into()),
        ..base.clone()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("negative"), "{e}");
    let e = flags(RawRun {
        scale: Some(0),
        ..base.clone()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("scale"), "{e}");
    let e = flags(RawRun {
        card_run: Some(0),
        ..base.clone()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("card-run must be at least 1"), "{e}");
    let plan = flags(RawRun {
        card_run: Some(1),
        ..base
    })
    .unwrap();
    assert_eq!(plan.card_run, Some(1));
}

const TWO_GROUPS: &str = r#"
clients = 4
[[group]]
name = "A"
workload = "tpcb"
instance = "default"
[[group]]
name = "B"
workload = "select-only"
instance = "default"
sets = 2
"#;

#[test]
fn groups_sets_and_phases_compile() {
    let text = format!(
        "{TWO_GROUPS}[[phase]]\nduration = \"5s\"\nshares = {{ A = 25, B = 75 }}\n[[phase]]\nduration = \"5s\"\nshares = {{ A = 100 }}\nmix = {{ select-only = 1 }}\n"
    );
    let plan = from_text(&text).unwrap();
    assert_eq!(plan.groups.len(), 2);
    assert_eq!(plan.groups[1].sets.len(), 2);
    assert_eq!(
        plan.groups[1].sets[1].targets["oltp"],
        TargetSpec::instance("default", "b_2")
    );
    assert_eq!(plan.phases[1].groups[1].share, 0.0);
    assert_eq!(
        plan.phases[1].groups[0].mix,
        vec![("select-only".to_string(), 1.0)]
    );
    assert_eq!(
        plan.poll,
        Duration::from_secs(10),
        "multi-group runs poll by default"
    );
    let segs = timeline::segments(&plan);
    assert_eq!(segs.len(), 2);
    assert!(segs.iter().all(|s| s.measured));
}

#[test]
fn shares_must_sum_to_100_with_the_line() {
    let text = format!("{TWO_GROUPS}[[phase]]\nduration = \"5s\"\nshares = {{ A = 25, B = 70 }}\n");
    let e = err(&text);
    assert!(
        e.starts_with("run.toml:14:") && e.contains("sum to 95"),
        "{e}"
    );
}

#[test]
fn unknown_group_or_transaction_in_a_phase() {
    let text = format!("{TWO_GROUPS}[[phase]]\nduration = \"5s\"\nshares = {{ A = 50, Z = 50 }}\n");
    let e = err(&text);
    assert!(
        e.contains("unknown group 'Z'") && e.starts_with("run.toml:14:"),
        "{e}"
    );
    let text = format!("{TWO_GROUPS}[[phase]]\nduration = \"5s\"\nshares = {{ A = 50, B = 50 }}\nmix = {{ payment = 1 }}\n");
    let e = err(&text);
    assert!(
        e.contains("unknown transaction 'payment'") && e.starts_with("run.toml:15:"),
        "{e}"
    );
}

#[test]
fn a_group_without_sets_names_its_line() {
    let e = err("[[group]]\nname = \"A\"\nworkload = \"tpcb\"\n[[phase]]\nduration = \"5s\"\nshares = { A = 100 }\n");
    assert!(
        e.starts_with("run.toml:1:") && e.contains("has no sets"),
        "{e}"
    );
}

#[test]
fn a_target_shared_by_conflicting_groups_is_refused() {
    let text = r#"
[[group]]
name = "A"
workload = "tpcb"
scale = 1
target = "instance:vm/shared"
[[group]]
name = "B"
workload = "tpcb"
scale = 5
target = "instance:vm/shared"
[[phase]]
duration = "5s"
shares = { A = 50, B = 50 }
"#;
    let e = err(text);
    assert!(
        e.starts_with("run.toml:7:") && e.contains("need different data"),
        "{e}"
    );
}

#[test]
fn independent_mode_takes_clients_per_group() {
    let text = "mode = \"independent\"\n[[group]]\nname = \"A\"\nworkload = \"tpcb\"\ninstance = \"default\"\n[[group]]\nname = \"B\"\nworkload = \"tpcb\"\ninstance = \"default\"\n[[phase]]\nduration = \"3s\"\nclients = { A = 3, B = 1 }\n[[phase]]\nduration = \"3s\"\nclients = { A = 1, B = 3 }\n";
    let plan = from_text(text).unwrap();
    assert_eq!(plan.mode, DriveMode::Independent);
    assert_eq!(plan.phases[0].groups[0].clients, 3);
    assert_eq!(plan.phases[1].groups[1].clients, 3);
    let e = err(&text.replace("clients = { A = 3, B = 1 }", "shares = { A = 100 }"));
    assert!(e.contains("has no clients"), "{e}");
}

#[test]
fn presets_compile_and_scale_with_phase_duration() {
    // `tpcv` routes decision-support types to a `dss` database; until tpce declares that role
    // its plans are tested with the probe workload (presets/tpcv/tests.rs).
    let tpce_has_dss = Registry
        .get("tpce")
        .is_ok_and(|w| w.roles().contains(&"dss"));
    for p in presets::PRESETS {
        if p.name == "tpcv" && !tpce_has_dss {
            continue;
        }
        let plan = build_run_plan(
            RunSource::Preset(p.name),
            RawRun::default(),
            2,
            1,
            &Registry,
        )
        .unwrap_or_else(|e| panic!("preset {}: {e}", p.name));
        assert!(!plan.phases.is_empty());
        let short = RawRun {
            phase_duration: Some("10s".into()),
            ..RawRun::default()
        };
        let plan = build_run_plan(RunSource::Preset(p.name), short, 2, 1, &Registry).unwrap();
        assert!(plan
            .phases
            .iter()
            .all(|ph| ph.duration == Duration::from_secs(10)));
    }
    let tpcv = build_run_plan(
        RunSource::Preset("tpcv-elastic"),
        RawRun::default(),
        2,
        1,
        &Registry,
    )
    .unwrap();
    assert_eq!(tpcv.phases.len(), 10);
    for g in 0..4 {
        let avg: f64 = tpcv.phases.iter().map(|p| p.groups[g].share).sum::<f64>() / 10.0;
        assert_eq!(
            avg,
            [10.0, 20.0, 30.0, 40.0][g],
            "TPC-V Table 2 average of group {g}"
        );
    }
}

#[test]
fn measure_window_selects_phases_across_iterations() {
    let text = format!("iterations = 2\nramp_up = \"2s\"\nmeasure = {{ first = 2, count = 2 }}\n{TWO_GROUPS}[[phase]]\nduration = \"3s\"\nshares = {{ A = 50, B = 50 }}\n[[phase]]\nduration = \"3s\"\nshares = {{ A = 10, B = 90 }}\n");
    let plan = from_text(&text).unwrap();
    let segs = timeline::segments(&plan);
    let measured: Vec<(u32, usize)> = segs
        .iter()
        .filter(|s| s.measured)
        .map(|s| (s.iteration, s.phase))
        .collect();
    assert_eq!(measured, vec![(1, 1), (2, 0)]);
    assert_eq!(segs[0].label, "ramp-up");
    assert_eq!(plan.total_duration(), Duration::from_secs(14));
    let e = err(&text.replace("count = 2", "count = 4"));
    assert!(e.contains("outside the run's 4 phases"), "{e}");
}

#[test]
fn workload_options_reach_their_groups() {
    let text = r#"
think = "spec"
isolation = "repeatable-read"
[[group]]
name = "A"
workload = "tpcc"
instance = "default"
procedures = true
clients_per_warehouse = 10
[[group]]
name = "B"
workload = "tpcb"
instance = "default"
isolation = "serializable"
[[phase]]
duration = "10s"
shares = { A = 50, B = 50 }
"#;
    let plan = from_text(text).unwrap();
    let (a, b) = (&plan.groups[0].options, &plan.groups[1].options);
    let tpcc = crate::workload::tpcc::Options::from_values(&a.workload);
    assert_eq!(
        (
            tpcc.think,
            a.isolation,
            tpcc.procedures,
            tpcc.clients_per_warehouse
        ),
        (
            crate::workload::tpcc::ThinkMode::Spec,
            Isolation::RepeatableRead,
            true,
            Some(10)
        )
    );
    // The top-level think reaches only the TPC-C group; B keeps its own isolation.
    assert!(b.workload.is_empty(), "{:?}", b.workload);
    assert_eq!(b.isolation, Isolation::Serializable);
}

#[test]
fn tpcc_options_on_other_workloads_are_refused_with_the_line() {
    let text = "[[group]]\nname = \"A\"\nworkload = \"tpcb\"\ninstance = \"default\"\nprocedures = true\n[[phase]]\nduration = \"10s\"\nshares = { A = 100 }\n";
    let e = err(text);
    assert!(
        e.starts_with("run.toml:1:") && e.contains("the tpcc, tpce workloads only, not tpcb"),
        "{e}"
    );
    let e = err("think = \"spec\"\n[[group]]\nname = \"A\"\nworkload = \"tpcb\"\ninstance = \"default\"\n[[phase]]\nduration = \"10s\"\nshares = { A = 100 }\n");
    assert!(e.contains("has none"), "{e}");
    let e = flags(RawRun {
        workload: name("select-only"),
        options: [("think".to_string(), toml::Value::from("spec"))].into(),
        ..RawRun::default()
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--think spec") && e.contains("select-only"),
        "{e}"
    );
}

#[test]
fn issue_38_error_modes_default_by_the_style_of_the_run() {
    let one = |continue_on_error, exit_on_abort| RawRun {
        workload: name("select-only"),
        continue_on_error,
        exit_on_abort,
        ..RawRun::default()
    };
    // pgbench's style (flags, one database): its abort; the flags and keys as given.
    assert_eq!(
        flags(one(None, None)).unwrap().on_error,
        OnError::AbortClient
    );
    assert_eq!(
        flags(one(Some(true), None)).unwrap().on_error,
        OnError::Continue
    );
    assert_eq!(
        flags(one(None, Some(true))).unwrap().on_error,
        OnError::ExitRun
    );
    let both = flags(one(Some(true), Some(true))).unwrap_err().to_string();
    assert!(
        both.contains("--continue-on-error") && both.contains("--exit-on-abort"),
        "{both}"
    );
    // A run file, and a run over two databases, go on; a file may ask for the abort.
    let file = "workload = \"select-only\"\n";
    assert_eq!(from_text(file).unwrap().on_error, OnError::Continue);
    let asked = format!("{file}continue_on_error = false\n");
    assert_eq!(from_text(&asked).unwrap().on_error, OnError::AbortClient);
    assert_eq!(
        from_text(TWO_INSTANCES).unwrap().on_error,
        OnError::Continue
    );
}

#[test]
fn a_strict_isolation_without_retries_gets_a_note() {
    let raw = |tries| RawRun {
        workload: name("tpcc"),
        isolation: Some(Isolation::Serializable),
        max_tries: tries,
        ..RawRun::default()
    };
    let notes = flags(raw(None)).unwrap().notes();
    assert!(
        notes.len() == 1 && notes[0].contains("--max-tries"),
        "{notes:?}"
    );
    assert!(flags(raw(Some(10))).unwrap().notes().is_empty());
}

const TWO_INSTANCES: &str = "[[instance]]\nname = \"vm-a\"\ncpus = 0.5\nmemory = \"256MiB\"\n[[instance]]\nname = \"vm-b\"\nsettings = { work_mem = \"8MB\" }\n[[group]]\nname = \"A\"\nworkload = \"probe\"\n[[group.set]]\noltp = \"instance:vm-a/o\"\ndss = \"instance:vm-b/d\"\n[[phase]]\nduration = \"10s\"\nshares = { A = 100 }\n";

#[test]
fn declared_instances_reach_the_plan_and_runtime_toml() {
    let plan = from_text(TWO_INSTANCES).unwrap();
    assert_eq!(plan.instances.len(), 2);
    assert_eq!(plan.instances[0].cpus, Some(0.5));
    assert_eq!(plan.instances[0].memory_bytes, Some(256 << 20));
    assert_eq!(plan.instances[1].settings["work_mem"], "8MB");
    let text = toml::to_string(&plan).unwrap();
    let back: RunPlan = toml::from_str(&text).unwrap();
    assert_eq!(back.instances, plan.instances, "{text}");
    // Runs without declared instances write none.
    let plain = from_text("workload = \"tpcb\"\n").unwrap();
    assert!(!toml::to_string(&plain).unwrap().contains("instances"));
    // A one-group file may declare the instance its target names.
    let one = from_text("workload = \"tpcb\"\ntarget = \"instance:vm1/x\"\n[[instance]]\nname = \"vm1\"\ncpus = 1\n").unwrap();
    assert_eq!(one.instances[0].cpus, Some(1.0));
    assert!(!one.instances[0].ssl);
    let tls = from_text(&TWO_INSTANCES.replace("cpus = 0.5", "cpus = 0.5\nssl = true")).unwrap();
    assert!(tls.instances[0].ssl && !tls.instances[1].ssl);
}

#[test]
fn declared_instance_errors_name_the_line() {
    let e = err(&TWO_INSTANCES.replace("memory = \"256MiB\"", "memory = \"256 apples\""));
    assert!(
        e.starts_with("run.toml:4:") && e.contains("not a size"),
        "{e}"
    );
    let e = err(&TWO_INSTANCES.replace("cpus = 0.5", "cpu = 0.5"));
    assert!(e.starts_with("run.toml:3:") && e.contains("cpu"), "{e}");
    // Declared but used by no target: most likely a typo.
    let e = err(&TWO_INSTANCES.replace("instance:vm-b/d", "instance:vm-c/d"));
    assert!(
        e.starts_with("run.toml:6:") && e.contains("'vm-b' is declared but no target uses it"),
        "{e}"
    );
}

#[test]
fn preset_knobs_need_a_preset_that_takes_them() {
    let knobs = RawRun {
        preset: PresetKnobs {
            lu_base: Some(2),
            ..Default::default()
        },
        ..RawRun::default()
    };
    let e = build_run_plan(RunSource::Preset("demo"), knobs.clone(), 2, 1, &Registry)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--lu-base is a knob of preset tpcv") && e.contains("demo has none"),
        "{e}"
    );
    let e = build_run_plan(
        RunSource::None,
        RawRun {
            workload: name("tpcb"),
            ..knobs
        },
        2,
        1,
        &Registry,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--preset tpcv"), "{e}");
}

/// Issue 15 item 6/7: names that reach paths and SQL, and counts that size memory.
#[test]
fn names_and_counts_are_bounded_with_the_fix() {
    let group =
        |extra: &str| format!("clients = 1\n[[group]]\nname = \"A\"\nworkload = \"tpcb\"\n{extra}");
    let e = err(&group(
        "[[group.set]]\nname = \"../x\"\noltp = \"instance:default/a\"\n",
    ));
    assert!(e.contains("not a valid set name"), "{e}");
    let e = err(&group(
        "[[group.set]]\nname = \"a\\u0000\"\noltp = \"instance:default/a\"\n",
    ));
    assert!(e.contains("not a valid set name"), "{e}");
    let e = err(&group(
        "[[group.set]]\nname = \"s\"\noltp = \"instance:default/a\"\n[[group.set]]\nname = \"s\"\noltp = \"instance:default/b\"\n",
    ));
    assert!(e.contains("two sets named 's'"), "{e}");
    let e = err(&group("instance = \"default\"\nsets = 4000000000\n"));
    assert!(e.contains("cap of 1000"), "{e}");
    let long = "G".repeat(62);
    let e = err(&format!(
        "[[group]]\nname = \"{long}\"\nworkload = \"tpcb\"\ninstance = \"default\"\nsets = 10\n"
    ));
    assert!(e.contains("shorten the group's name"), "{e}");
    let many: String = (0..1001)
        .map(|i| {
            format!("[[group]]\nname = \"g{i}\"\nworkload = \"tpcb\"\ninstance = \"default\"\n")
        })
        .collect();
    assert!(err(&many).contains("cap of 1000"));
    let e = err(&format!(
        "{TWO_GROUPS}[[phase]]\nduration = \"5s\"\nshares = {{ A = 100 }}\nmix = {{ tpcb = 1e12, select-only = 0.01 }}\n"
    ));
    assert!(e.contains("deck of"), "{e}");
    let e = err(&format!(
        "{TWO_GROUPS}[[phase]]\nname = \"a\\tb\"\nduration = \"5s\"\nshares = {{ A = 100 }}\n"
    ));
    assert!(e.contains("phase name"), "{e}");
    let e = err(&format!(
        "{TWO_GROUPS}[[phase]]\nduration = \"5s\"\nthink = {{ A = \"1e30\" }}\nshares = {{ A = 100 }}\n"
    ));
    assert!(!e.is_empty());
}

#[test]
fn errors_on_a_line_with_a_password_do_not_quote_it() {
    for text in [
        "target = \"postgresql://bob:hunter2@h/db\" x\n",
        "target = \"postgresql://bob:hunter2@h/db\"\nclients = \"many\"\n",
        "workload = \"tpcb\"\ntarget = \"host=h PASSWORD=hunter2\"\ntarget = 1\n",
        "[[group]]\nname = \"A\"\nworkload = \"tpcb\"\ntarget = \"host=h password=hunter2\"\nscale = -1\n",
        "workload = \"tpcb\"\ntarget = 7 # password=hunter2\n",
    ] {
        let e = err(text);
        assert!(!e.contains("hunter2"), "{text}: {e}");
    }
}

#[test]
fn pgbench_logs_and_latency_limit_reach_the_plan_and_are_checked() {
    let base = RawRun {
        workload: name("tpcb"),
        ..RawRun::default()
    };
    let plan = flags(RawRun {
        log: Some(true),
        sampling_rate: Some(0.5),
        latency_limit: Some(5.0),
        ..base.clone()
    })
    .unwrap();
    let log = plan.txn_log.expect("the log is on");
    assert_eq!(log.prefix, "pgbench_log");
    assert_eq!(log.sampling_rate, Some(0.5));
    assert_eq!(plan.latency_limit_ms, Some(5.0));
    let err = |raw: RawRun| flags(raw).unwrap_err().to_string();
    let e = err(RawRun {
        sampling_rate: Some(0.5),
        ..base.clone()
    });
    assert!(
        e.contains("only when logging transactions") && e.contains("--log"),
        "{e}"
    );
    let e = err(RawRun {
        log: Some(true),
        sampling_rate: Some(0.5),
        aggregate_interval: Some(2),
        ..base.clone()
    });
    assert!(e.contains("cannot be used at the same time"), "{e}");
    let e = err(RawRun {
        latency_limit: Some(0.0),
        ..base.clone()
    });
    assert!(e.contains("invalid latency limit"), "{e}");
}

#[test]
fn wait_sampling_is_on_at_ten_a_second_and_bounded() {
    let base = RawRun {
        workload: name("tpcb"),
        ..RawRun::default()
    };
    assert_eq!(flags(base.clone()).unwrap().sample_waits, 10);
    let off = RawRun {
        sample_waits: Some(0),
        ..base.clone()
    };
    assert_eq!(flags(off).unwrap().sample_waits, 0);
    let e = flags(RawRun {
        sample_waits: Some(1000),
        ..base
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--sample-waits") && e.contains("0 (off) to 100"),
        "{e}"
    );
    let from_file = from_text("workload = \"tpcb\"\nsample_waits = 25\n").unwrap();
    assert_eq!(from_file.sample_waits, 25);
}
