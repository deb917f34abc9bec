//! `tidebench consolidate --hypervisor qemu --balloon` (issue 40, part 3): the M/M/M scheme
//! with two real QEMU guests of 512MiB under whatever accelerator the host gives (TCG here),
//! at 0 % and 50 % overcommitment. The 50 % point balloons each guest to its share of
//! MEM_avail through QMP: the recorded balloons add up to what was asked, the guests' own
//! /proc/meminfo shows the memory gone, and no QEMU outlives the instances.

use serde_json::Value;

use crate::support::{self, output_text};
use crate::vm::{alive, skip_without_qemu};
use tidebench::instance;

const GUEST_MEMORY: u64 = 512 << 20;
const MIB: u64 = 1 << 20;
const KSM_RUN: &str = "/sys/kernel/mm/ksm/run";

/// The QEMU processes whose command line names `home` (this test's guests).
fn qemus_of(home: &std::path::Path) -> Vec<u32> {
    let home = home.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let text = String::from_utf8_lossy(&cmdline);
            text.starts_with("qemu-system") && text.contains(&home)
        })
        .collect()
}

fn bytes(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} recorded: {v}"))
}

#[test]
fn consolidate_on_real_vms_balloons_each_guest_to_its_share() {
    if skip_without_qemu("consolidate_on_real_vms_balloons_each_guest_to_its_share") {
        return;
    }
    let Some(home) = support::home_with_cgroups("a consolidation on real VMs") else {
        return;
    };
    let host = format!("vmcons{}", std::process::id());
    let out = home.path().join("cons");
    let ksm_before = std::fs::read_to_string(KSM_RUN).ok();
    let o = support::run_tidebench(
        &home,
        &[
            "consolidate",
            "-w",
            "tpcb",
            "--scale",
            "1",
            "--memory",
            "512MiB",
            "--cpus",
            "1",
            "--schemes",
            "M/M/M",
            "--overcommit",
            "50",
            "--balloon",
            "--hypervisor",
            "qemu",
            "--ksm",
            "off",
            "--periods",
            "2",
            "--period",
            "3s",
            "--ramp-up",
            "1s",
            "--high",
            "2",
            "--low",
            "1",
            "--host-group",
            &host,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let said = output_text(&o);
    let names = [format!("{host}-mmm-1"), format!("{host}-mmm-2")];
    let instances: Vec<_> = names
        .iter()
        .filter_map(|n| instance::find(&home.home, n).ok())
        .collect();
    let pids: Vec<u32> = instances.iter().filter_map(|i| i.pid()).collect();
    let merging: Vec<Option<bool>> = instances
        .iter()
        .map(|i| i.guest().and_then(|g| g.record.mem_merge))
        .collect();
    // Whatever happened, the guests go: destroy stops QEMU and removes its group.
    for n in &names {
        let _ = support::run_tidebench(&home, &["instance", "destroy", n]);
    }
    assert!(o.status.success(), "{said}");
    assert_eq!(pids.len(), 2, "both guests ran: {said}");
    assert!(
        pids.iter().all(|p| !alive(*p)),
        "destroy leaves no QEMU: {pids:?}"
    );
    assert_eq!(qemus_of(home.path()), Vec::<u32>::new(), "no QEMU is left");
    // --ksm off: QEMU's mem-merge off, and the host's KSM switch as it was after the runs.
    assert_eq!(merging, [Some(false), Some(false)]);
    assert_eq!(std::fs::read_to_string(KSM_RUN).ok(), ksm_before);

    let e = support::experiment(&out);
    assert_eq!(e["complete"], true, "{said}");
    let guests = &e["request"]["consolidate"]["guests"];
    assert_eq!(guests["hypervisor"], "qemu", "{guests}");
    assert_eq!(guests["ksm"], false, "{guests}");
    let rows = e["analysis"]["consolidate"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "one scheme at 0 % and 50 %");
    for row in rows {
        let periods = row["periods"].as_array().unwrap();
        assert_eq!(periods.len(), 2, "{row}");
        assert!(row["mean"].as_f64().unwrap() > 0.0, "{row}");
    }

    // Each point's guests as the run recorded them: all RAM at 0 %, the balloon at 50 %.
    let point_guests = |i: usize| -> Vec<Value> {
        let run = &e["points"][i]["runs"][0];
        let g = run["consolidation"]["guests"].as_array().cloned();
        g.unwrap_or_else(|| panic!("point {i} records its guests: {run}"))
    };
    let (full, ballooned) = (point_guests(0), point_guests(1));
    assert_eq!(e["points"][1]["values"]["overcommit"], "50");
    assert_eq!((full.len(), ballooned.len()), (2, 2));
    let accel = instances[0].guest().unwrap().state.as_ref().unwrap().accel;
    let vms_line = format!("VMs: real qemu guests, accelerator {}", accel.name());
    assert!(
        said.contains(&vms_line),
        "the console says what the VMs were: {said}"
    );
    for g in full.iter().chain(&ballooned) {
        assert_eq!(g["accel"].as_str(), Some(accel.name()), "{g}");
        assert!(
            g["samples"].as_u64().unwrap() > 0,
            "read during the run: {g}"
        );
    }
    for g in &full {
        assert_eq!(bytes(g, "actual_bytes"), GUEST_MEMORY, "{g}");
    }
    for i in 0..2 {
        let c = &e["points"][i]["runs"][0]["consolidation"];
        assert!(c["ksm_pages_sharing"].as_u64().is_some(), "KSM read: {c}");
    }
    // MEM_avail at 50 % of 1GiB is 512MiB: the balloons take the other 512MiB between them.
    let taken: u64 = ballooned
        .iter()
        .map(|g| GUEST_MEMORY - bytes(g, "actual_bytes"))
        .sum();
    assert!(
        taken.abs_diff(512 * MIB) <= 16 * MIB,
        "the balloons add up to the overcommitment asked: {taken} bytes, {ballooned:?}"
    );
    eprintln!("ballooned guests: {ballooned:?}");
    for (before, after) in full.iter().zip(&ballooned) {
        assert_eq!(bytes(after, "target_bytes"), 256 * MIB, "{after}");
        let shrank = |key: &str| bytes(before, key).saturating_sub(bytes(after, key));
        assert!(
            shrank("mem_total_bytes") >= 200 * MIB || shrank("mem_available_bytes") >= 200 * MIB,
            "the guest's own meminfo shows the balloon: {before} -> {after}"
        );
    }

    // The page says what the VMs were, and shows the balloons.
    let page = std::fs::read_to_string(out.join("experiment.html")).unwrap();
    assert!(page.contains("Real VMs: each VM is a qemu guest"), "{page}");
    assert!(!page.contains("Emulation: a VM is a control group"));
    assert!(page.contains("<h2>Balloons</h2>"));
    // Each guest's memory chart: what its QEMU takes from the host, what the guest has.
    assert!(page.contains("QEMU RSS") && page.contains("guest memory"));
    let vms = e["points"][1]["runs"][0]["consolidation"]["vms"]
        .as_array()
        .unwrap();
    assert_eq!(vms.len(), 2);
    for vm in vms {
        // Printed: what a ballooned guest's QEMU took from the host group, for the allowance.
        eprintln!(
            "ballooned {}: QEMU peak RSS {} MiB",
            vm["vm"],
            bytes(vm, "peak_usage_bytes") >> 20
        );
        assert!(bytes(vm, "peak_usage_bytes") > 0, "the QEMU's RSS: {vm}");
        assert!(
            vm["cpu_seconds"].as_f64().unwrap() > 0.0,
            "the QEMU's CPU: {vm}"
        );
    }
    if accel == instance::vm::Accel::Tcg {
        assert!(page.contains("these figures are emulated"));
    }
}

/// `knee --hypervisor qemu`: the instance the knee steps is a guest, rebooted with each
/// point's RAM; every run says so in its runtime.toml, and the guest's own kernel sees the
/// last point's memory.
#[test]
fn knee_on_a_vm_steps_the_guests_ram() {
    if skip_without_qemu("knee_on_a_vm_steps_the_guests_ram") {
        return;
    }
    let home = support::temp_home();
    let name = format!("kneevm{}", std::process::id());
    let out = home.path().join("knee");
    let o = support::run_tidebench(
        &home,
        &[
            "knee",
            "-S",
            "--scale",
            "1",
            "-c",
            "1",
            "--target",
            &format!("instance:{name}"),
            "--memory",
            "384MB,512MB,640MB",
            "--keep",
            "shared_buffers=64MB",
            "--hypervisor",
            "qemu",
            "-T",
            "2s",
            "-P",
            "0",
            "--sample",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let said = output_text(&o);
    let inst = instance::find(&home.home, &name);
    let meminfo = inst
        .as_ref()
        .ok()
        .map(|i| support::psql(i, "postgres", "SELECT pg_read_file('/proc/meminfo')"));
    let pid = inst.as_ref().ok().and_then(|i| i.pid());
    let _ = support::run_tidebench(&home, &["instance", "destroy", &name]);
    assert!(o.status.success(), "{said}");
    assert!(
        pid.is_some_and(|p| !alive(p)),
        "destroy leaves no QEMU: {pid:?}"
    );
    assert_eq!(qemus_of(home.path()), Vec::<u32>::new(), "no QEMU is left");

    let e = support::experiment(&out);
    assert_eq!(e["complete"], true, "{said}");
    let points = e["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    for (p, mib) in points.iter().zip([384u64, 512, 640]) {
        let run = &p["runs"][0];
        assert!(run["tps"].as_f64().unwrap() > 0.0, "{p}");
        let runtime: toml::Value = toml::from_str(
            &std::fs::read_to_string(out.join(run["dir"].as_str().unwrap()).join("runtime.toml"))
                .unwrap(),
        )
        .unwrap();
        let vm = &runtime["servers"][0]["vm"];
        assert_eq!(vm["hypervisor"].as_str(), Some("qemu"), "{runtime}");
        assert_eq!(
            vm["memory_bytes"].as_integer(),
            Some((mib * MIB) as i64),
            "the guest's RAM is the point's memory: {runtime}"
        );
    }
    // The last point left the guest with 640MB: its kernel sees more than the first's 384MB.
    let total = meminfo.expect("the guest answered");
    let kib: u64 = total
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("MemTotal");
    assert!(
        kib * 1024 > 512 * MIB && kib * 1024 <= 640 * MIB,
        "MemTotal {kib} kB"
    );
}
