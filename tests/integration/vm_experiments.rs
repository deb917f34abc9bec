//! Experiments on real VMs (issue 40, part 4), under whatever accelerator the host gives (TCG
//! here): a density series whose instances are QEMU guests, a sweep over one guest's vCPUs
//! (reusing the series' guests), and `overhead` with both sides made by tidebench, a native
//! instance against a VM of the same size. Kept small: tpcb at
//! scale 1, 1-vCPU guests of 512MiB, runs of a few seconds, as few boots as the checks need.

use std::path::Path;

use serde_json::Value;
use tidebench::instance;

use crate::support::{self, ok, output_text as text, run_tidebench as tb};
use crate::vm::skip_without_qemu;

/// `--set` for every test setting (autovacuum off: the server counts must be the clients').
fn test_sets() -> Vec<String> {
    support::TEST_SETTINGS
        .iter()
        .flat_map(|(k, v)| ["--set".to_string(), format!("{k}={v}")])
        .collect()
}

fn complete_runs(e: &Value) -> usize {
    e["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["runs"].as_array().unwrap())
        .filter(|r| r["status"] == "complete")
        .count()
}

/// Each of the run's databases: the server's commits are tidebench's, and its server was a VM
/// of `vcpus` vCPUs and 512MiB.
fn assert_vm_servers_agree(run: &Path, databases: usize, vcpus: i64) {
    let s = support::summary(run);
    let server = s["server"].as_array().unwrap();
    assert_eq!(server.len(), databases, "{s}");
    for d in server {
        support::assert_server_agrees(d, 0);
        assert!(d["client_committed"].as_i64().unwrap() > 0, "{d}");
    }
    let runtime: toml::Value =
        toml::from_str(&std::fs::read_to_string(run.join("runtime.toml")).unwrap()).unwrap();
    let servers = runtime["servers"].as_array().unwrap();
    assert_eq!(servers.len(), databases, "{runtime}");
    for srv in servers {
        let vm = &srv["vm"];
        assert_eq!(vm["vcpus"].as_integer(), Some(vcpus), "{runtime}");
        assert_eq!(
            vm["memory_bytes"].as_integer(),
            Some(512 << 20),
            "{runtime}"
        );
    }
}

#[test]
fn density_of_two_vms_then_a_sweep_over_one_guests_vcpus() {
    if skip_without_qemu("density_of_two_vms_then_a_sweep_over_one_guests_vcpus") {
        return;
    }
    let home = support::temp_home();
    let out = home.path().join("density");
    let mut args: Vec<String> = [
        "density",
        "-w",
        "tpcb",
        "--scale",
        "1",
        "-c",
        "1",
        "--instances",
        "1..2",
        "--hypervisor",
        "qemu",
        "--cpus",
        "1",
        "--memory",
        "512MiB",
        "-T",
        "3s",
        "-P",
        "0",
        "--instance-prefix",
        "dv",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.to_str().unwrap().into());
    args.extend(test_sets());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ok(tb(&home, &args));
    let said = text(&o);
    let e = support::experiment(&out);
    assert_eq!(e["kind"], "density");
    assert_eq!(complete_runs(&e), 2, "{said}");
    let step2 = &e["analysis"]["density"]["steps"][1];
    assert_eq!(step2["instances"], 2, "{e}");
    let per = step2["per_instance_tps"].as_array().unwrap();
    assert!(per.iter().all(|t| t.as_f64().unwrap() > 0.0), "{step2}");
    assert_vm_servers_agree(&out.join("01-instances=1-r1"), 1, 1);
    assert_vm_servers_agree(&out.join("02-instances=2-r1"), 2, 1);
    for name in ["dv-1", "dv-2"] {
        let inst = instance::find(&home.home, name).unwrap();
        let guest = inst.guest().unwrap_or_else(|| panic!("{name} is a VM"));
        assert_eq!((guest.record.vcpus, guest.record.memory), (1, 512 << 20));
        assert!(inst.pid().is_some(), "{name}'s QEMU runs after the series");
        assert_eq!(
            support::psql(&inst, "tidebench", "SHOW autovacuum"),
            "off",
            "--set reached {name}'s guest"
        );
    }

    // Fractional vCPUs are refused before anything starts, with the fix.
    let o = tb(
        &home,
        &[
            "density",
            "-w",
            "tpcb",
            "--instances",
            "1..2",
            "--hypervisor",
            "qemu",
            "--cpus",
            "0.5",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("give --cpus 1 or more"), "{}", text(&o));

    sweep_over_vcpus(&home);
}

/// `sweep --vary instance.cpus=1,2` over the VM dv-1: the second point reboots it with 2
/// vCPUs, which the guest's own kernel sees.
fn sweep_over_vcpus(home: &support::TempHome) {
    let sweep = |vary: &str, out: &Path| {
        tb(
            home,
            &[
                "sweep",
                "-w",
                "tpcb",
                "-c",
                "1",
                "-T",
                "2s",
                "-P",
                "0",
                "--target",
                "instance:dv-1",
                "--vary",
                vary,
                "--out",
                out.to_str().unwrap(),
            ],
        )
    };
    let o = sweep("instance.cpus=0.5,1", &home.path().join("never"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not a number of vCPUs"), "{}", text(&o));
    let out = home.path().join("sweep");
    let o = ok(sweep("instance.cpus=1,2", &out));
    let said = text(&o);
    assert!(said.contains("instance 'dv-1' restarted"), "{said}");
    let e = support::experiment(&out);
    assert_eq!(complete_runs(&e), 2, "{said}");
    let dirs: Vec<String> = e["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["runs"][0]["dir"].as_str().unwrap().to_string())
        .collect();
    assert_vm_servers_agree(&out.join(&dirs[0]), 1, 1);
    assert_vm_servers_agree(&out.join(&dirs[1]), 1, 2);
    let inst = instance::find(&home.home, "dv-1").unwrap();
    let cpuinfo = support::psql(&inst, "tidebench", "SELECT pg_read_file('/proc/cpuinfo')");
    let processors = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    assert_eq!(processors, 2, "the guest's kernel sees 2 vCPUs: {cpuinfo}");
}

#[test]
fn overhead_makes_a_native_instance_and_a_vm_of_one_size_and_ends_with_a_ratio() {
    if skip_without_qemu(
        "overhead_makes_a_native_instance_and_a_vm_of_one_size_and_ends_with_a_ratio",
    ) {
        return;
    }
    let home = support::temp_home();
    // A side given as --virtual and a made one do not mix; neither does a missing side.
    let o = tb(&home, &["overhead", "--native", "instance:a"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--hypervisor qemu"), "{}", text(&o));
    let o = tb(
        &home,
        &[
            "overhead",
            "--virtual",
            "instance:b",
            "--hypervisor",
            "qemu",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    let out = home.path().join("overhead");
    let o = ok(tb(
        &home,
        &[
            "overhead",
            "--hypervisor",
            "qemu",
            "--cpus",
            "1",
            "--memory",
            "512MiB",
            "-s",
            "1",
            "-c",
            "2",
            "-T",
            "3s",
            "-P",
            "0",
            "--profile",
            "host",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let said = text(&o);
    let ratio: f64 = said
        .split("virtual/native ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("a ratio: {said}"));
    assert!(ratio > 0.0, "{said}");
    let vm = instance::find(&home.home, "overhead-vm").unwrap();
    let state = vm
        .guest()
        .and_then(|g| g.state.clone())
        .expect("a booted VM");
    let emulated = state.accel == instance::vm::Accel::Tcg;
    assert_eq!(
        said.contains("% lost; emulated)") && said.contains("ran under TCG"),
        emulated,
        "the ratio is marked emulated exactly when the guest ran under TCG: {said}"
    );
    // --profile host: the VM's share of the host is its QEMU process's.
    assert!(
        said.contains("on the host, virtual: the VM's QEMU process (instance overhead-vm)"),
        "{said}"
    );
    assert!(
        said.contains("on the host, native: instance overhead-native"),
        "{said}"
    );
    let native = instance::find(&home.home, "overhead-native").unwrap();
    assert!(
        native.guest().is_none(),
        "the native side is a local server"
    );
    if support::cgroups_writable() {
        assert_eq!(native.limits(), (Some(1.0), Some(512 << 20)), "same size");
    }
    // The VM's run saw only the VM (the native side was stopped) and the other way round.
    let e = support::experiment(&out);
    assert_eq!(complete_runs(&e), 2, "{said}");
    let dirs: Vec<String> = e["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["runs"][0]["dir"].as_str().unwrap().to_string())
        .collect();
    let runtime = |d: &str| -> toml::Value {
        toml::from_str(&std::fs::read_to_string(out.join(d).join("runtime.toml")).unwrap()).unwrap()
    };
    assert!(runtime(&dirs[0])["servers"][0].get("vm").is_none());
    let vm_facts = &runtime(&dirs[1])["servers"][0]["vm"];
    assert_eq!(vm_facts["emulated"].as_bool(), Some(emulated));
    assert!(
        native.pid().is_none_or(|_| vm.pid().is_none()),
        "one side runs at a time"
    );
}

#[test]
fn retail_segments_as_vms_hold_the_fact_table_behind_a_local_coordinator() {
    if skip_without_qemu("retail_segments_as_vms_hold_the_fact_table_behind_a_local_coordinator") {
        return;
    }
    let home = support::temp_home();
    let coordinator = support::start_instance(&home, "rc");
    let prepare = |extra: &[&str]| {
        let mut args = vec![
            "prepare",
            "-w",
            "retail",
            "--size",
            "1MB",
            "--target",
            "instance:rc/mpp",
            "--segments",
            "2",
            "--segment-hypervisor",
            "qemu",
        ];
        args.extend_from_slice(extra);
        tb(&home, &args)
    };
    let o = prepare(&["--segment-cpus", "0.5"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not a number of vCPUs"), "{}", text(&o));
    let o = ok(prepare(&["--segment-memory", "512MiB"]));
    assert!(text(&o).contains("over 2 segments"), "{}", text(&o));
    let mut on_segments = 0;
    for name in ["rc-seg1", "rc-seg2"] {
        let seg = instance::find(&home.home, name).unwrap();
        let guest = seg.guest().unwrap_or_else(|| panic!("{name} is a VM"));
        assert_eq!((guest.record.vcpus, guest.record.memory), (1, 512 << 20));
        let rows = support::psql(&seg, "retail", "SELECT count(*) FROM order_lineitems");
        on_segments += rows.parse::<i64>().unwrap();
    }
    // The coordinator reads the fact table through its VM segments (postgres_fdw over the
    // forwarded ports, with their passwords): every row, and the load's own check passes.
    let total = support::psql(&coordinator, "mpp", "SELECT count(*) FROM order_lineitems");
    assert_eq!(total.parse::<i64>().unwrap(), on_segments);
    assert!(on_segments > 0);
    let o = ok(tb(
        &home,
        &["check", "-w", "retail", "--target", "instance:rc/mpp"],
    ));
    assert!(text(&o).contains("each of 2 segments"), "{}", text(&o));
    let out = home.path().join("res");
    ok(tb(
        &home,
        &[
            "run",
            "-w",
            "retail",
            "--target",
            "instance:rc/mpp",
            "-c",
            "1",
            "-T",
            "2s",
            "-P",
            "0",
            "--cases",
            "partial_scan",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let s = support::summary(&out);
    assert_eq!(s["totals"]["failed"], 0, "{}", s["totals"]);
    assert!(
        s["totals"]["committed"].as_i64().unwrap() > 0,
        "{}",
        s["totals"]
    );
}
