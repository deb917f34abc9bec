//! Managed instances that are real QEMU guests (issue 40), under whatever accelerator the
//! host gives (TCG here): created through the real CLI, loaded, run, counted by the server,
//! seen to be the guest's own kernel and network, stopped without a QEMU left behind.

use crate::support::{self, output_text as text, run_tidebench as tb};
use tidebench::instance;

/// Why a VM cannot run here at all, or None. Only a missing QEMU is a reason: anything else
/// (no KVM, a slow boot) must fail the test, not skip it.
pub(crate) fn no_qemu() -> Option<String> {
    for program in ["qemu-system-x86_64", "qemu-img"] {
        let ran = std::process::Command::new(program)
            .arg("--version")
            .output();
        if !ran.is_ok_and(|o| o.status.success()) {
            return Some(format!(
                "{program} is not installed (scripts/setup.sh installs qemu-system-x86 and qemu-utils)"
            ));
        }
    }
    None
}

/// The QEMU process `pid` still exists (a zombie waiting for its reaper does not count).
fn alive(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty())
}

/// A field of /proc/meminfo, in kB.
fn meminfo_kib(meminfo: &str, field: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in the guest's /proc/meminfo: {meminfo}"))
}

#[test]
fn a_vm_instance_runs_tpcb_in_its_own_guest_balloons_and_stops_cleanly() {
    if let Some(why) = no_qemu() {
        eprintln!(
            "SKIPPED a_vm_instance_runs_tpcb_in_its_own_guest_balloons_and_stops_cleanly: {why}"
        );
        return;
    }
    let home = support::temp_home();
    let mut args = vec![
        "instance",
        "start",
        "vm1",
        "--hypervisor",
        "qemu",
        "--cpus",
        "2",
        "--memory",
        "512MiB",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    for (k, v) in support::TEST_SETTINGS {
        args.extend(["--set".to_string(), format!("{k}={v}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = tb(&home, &args);
    assert!(o.status.success(), "start: {}", text(&o));
    let shown = text(&o);
    assert!(shown.contains("first connection"), "{shown}");

    let inst = instance::find(&home.home, "vm1").unwrap();
    let guest = inst.guest().expect("a VM instance").clone();
    let state = guest.state.clone().expect("the boot's state is recorded");
    let accel = match state.accel {
        instance::vm::Accel::Kvm => "accelerator KVM",
        instance::vm::Accel::Tcg => "accelerator TCG",
    };
    assert!(shown.contains(accel), "the accelerator is printed: {shown}");

    // The server is the guest's: its kernel, its network address, its memory.
    let release = support::psql(
        &inst,
        "tidebench",
        "SELECT pg_read_file('/proc/sys/kernel/osrelease')",
    );
    assert_eq!(release.trim(), state.kernel_release);
    assert!(
        release.contains("cloud-amd64"),
        "Debian's cloud kernel: {release}"
    );
    let addr = support::psql(&inst, "tidebench", "SELECT host(inet_server_addr())");
    assert_eq!(addr, "10.0.2.15", "reached through QEMU's user network");
    let meminfo = support::psql(&inst, "tidebench", "SELECT pg_read_file('/proc/meminfo')");
    let total_kib = meminfo_kib(&meminfo, "MemTotal:");
    assert!(
        total_kib <= 512 * 1024,
        "the guest has its 512MiB: {total_kib} kB"
    );
    assert_eq!(
        support::psql(&inst, "tidebench", "SHOW autovacuum"),
        "off",
        "--set reached the guest"
    );

    support::prepare_tpcb(&home, "instance:vm1");
    let out = home.path().join("res-vm");
    let o = tb(
        &home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            "instance:vm1",
            "-c",
            "2",
            "-T",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "run: {}", text(&o));
    let s = support::summary(&out);
    assert_eq!(s["totals"]["failed"], 0, "{}", s["totals"]);
    assert!(
        s["totals"]["committed"].as_i64().unwrap() > 0,
        "{}",
        s["totals"]
    );
    assert_eq!(
        s["server"][0]["xact_commit_delta"].as_i64().unwrap(),
        support::committed_over_run(&s),
        "client count must equal the guest server's xact_commit delta: {s}"
    );

    // runtime.toml says the server was a VM, and whether its figures are emulated.
    let runtime: toml::Value =
        toml::from_str(&std::fs::read_to_string(out.join("runtime.toml")).unwrap()).unwrap();
    let vm = &runtime["servers"][0]["vm"];
    assert_eq!(vm["accel"].as_str(), Some(state.accel.name()), "{runtime}");
    assert_eq!(
        vm["emulated"].as_bool(),
        Some(state.accel == instance::vm::Accel::Tcg),
        "{runtime}"
    );
    assert_eq!(vm["vcpus"].as_integer(), Some(2));

    // The sampler reads the VM's QEMU process: what the guest costs the host.
    let system = std::fs::read_to_string(out.join("system.csv")).unwrap();
    assert!(
        system
            .lines()
            .any(|l| l.contains(",instance:vm1,cpu_seconds,")),
        "{system}"
    );
    assert!(system
        .lines()
        .any(|l| l.contains(",instance:vm1,rss_bytes,")));
    // ... and the guest's memory through its balloon driver: all of its RAM, no balloon yet.
    let guest_memory: Vec<f64> = system
        .lines()
        .filter(|l| l.contains(",instance:vm1,guest_memory_bytes,"))
        .filter_map(|l| l.rsplit(',').next()?.parse().ok())
        .collect();
    assert!(!guest_memory.is_empty(), "{system}");
    assert!(
        guest_memory.iter().all(|m| *m == (512u64 << 20) as f64),
        "{guest_memory:?}"
    );

    // The server log is on the host.
    let log = std::fs::read_to_string(inst.log_path()).unwrap();
    assert!(
        log.contains("database system is ready to accept connections"),
        "{log}"
    );

    // The balloon takes memory from the guest and gives it back: the guest's own
    // MemAvailable follows.
    let available = || {
        let meminfo = support::psql(&inst, "tidebench", "SELECT pg_read_file('/proc/meminfo')");
        meminfo_kib(&meminfo, "MemAvailable:")
    };
    let before = available();
    let o = tb(&home, &["instance", "balloon", "vm1", "256MiB"]);
    assert!(o.status.success(), "balloon: {}", text(&o));
    let shrunk = available();
    assert!(
        shrunk + 200 * 1024 < before,
        "inflating the balloon by 256MiB takes the guest's memory: {before} -> {shrunk} kB"
    );
    let o = tb(&home, &["instance", "balloon", "vm1", "512MiB"]);
    assert!(o.status.success(), "balloon back: {}", text(&o));
    let back = available();
    assert!(
        back > shrunk + 200 * 1024,
        "deflating gives it back: {shrunk} -> {back} kB"
    );

    let pid = inst.pid().expect("QEMU runs");
    assert!(alive(pid));
    let o = tb(&home, &["instance", "stop", "vm1"]);
    assert!(o.status.success(), "stop: {}", text(&o));
    assert!(!alive(pid), "stop leaves no QEMU process");
    let status = instance::status(&home.home, "vm1").unwrap();
    assert!(!status.running);
    let log = std::fs::read_to_string(inst.log_path()).unwrap();
    assert!(
        log.contains("database system is shut down"),
        "a clean shutdown: {log}"
    );
}
