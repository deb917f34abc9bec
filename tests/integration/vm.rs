//! Managed instances that are real QEMU guests (issue 40), under whatever accelerator the
//! host gives (TCG here): created through the real CLI, loaded, run, counted by the server,
//! seen to be the guest's own kernel and network, powered off by a run's event and destroyed, and
//! a creation cut short leaves no QEMU behind.

use std::os::unix::fs::PermissionsExt;

use crate::support::{self, output_text as text, run_tidebench as tb};
use tidebench::instance;

mod events;

/// Why a VM cannot run here at all, or None. Only a missing QEMU is a reason: anything else
/// (no KVM, a slow boot) must fail the test, not skip it.
fn no_qemu() -> Option<String> {
    for program in ["qemu-system-x86_64", "qemu-img"] {
        let ran = std::process::Command::new(program)
            .arg("--version")
            .output();
        if !ran.is_ok_and(|o| o.status.success()) {
            return Some(format!(
                "{program} is not installed (Debian: qemu-system-x86 and qemu-utils)"
            ));
        }
    }
    None
}

/// Without QEMU a VM test cannot run: it says so on stderr (the runner shows it) and is skipped.
pub(crate) fn skip_without_qemu(test: &str) -> bool {
    let Some(why) = no_qemu() else {
        return false;
    };
    crate::support::skip(test, "QEMU", &why);
    true
}

/// The QEMU process `pid` still exists (a zombie waiting for its reaper does not count).
pub(crate) fn alive(pid: u32) -> bool {
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
fn a_vm_instance_runs_tpcb_in_its_own_guest_balloons_and_a_run_powers_it_off() {
    if skip_without_qemu(
        "a_vm_instance_runs_tpcb_in_its_own_guest_balloons_and_a_run_powers_it_off",
    ) {
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
        // TLS with the instance's own CA: every connection below, the run's included, is
        // verify-full against the guest's certificate.
        "--ssl",
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
    // psql, the referee, connects with `instance dsn`'s verify-full string, over TLS.
    let dsn = String::from_utf8(tb(&home, &["instance", "dsn", "vm1"]).stdout).unwrap();
    assert!(dsn.contains("sslmode=verify-full"), "{dsn}");
    let bin = instance::find(&home.home, "vm1")
        .unwrap()
        .bin_dir()
        .to_path_buf();
    let tls = std::process::Command::new(bin.join("psql"))
        .args([dsn.trim(), "-XAtc"])
        .arg("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&tls.stdout).trim(),
        "t|TLSv1.3",
        "psql verifies the guest's certificate: {}",
        String::from_utf8_lossy(&tls.stderr)
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
            // Long enough for two of the guest's once-a-second records (its rates are between
            // two) even when a busy host starves the emulated guest for seconds at a time.
            "-T",
            "6",
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

    // Inside the guest, through its stats port, beside its QEMU on the host (guests.csv,
    // summary.json's `guests`).
    let g = &s["guests"][0];
    assert_eq!(g["instance"], "vm1", "{}", s["guests"]);
    let mean = |g: &serde_json::Value, c: &str| {
        g["means"][c]
            .as_f64()
            .unwrap_or_else(|| panic!("{c} in {g}"))
    };
    let total = mean(g, "mem_total_bytes");
    assert!(
        total > (400u64 << 20) as f64 && total <= (512u64 << 20) as f64,
        "the guest's MemTotal is near its --memory 512MiB: {total}"
    );
    assert!(
        mean(g, "cpu_busy_pct") > 0.0,
        "the guest was busy during the run: {g}"
    );
    assert!(
        mean(g, "qemu_cpu_cores") > 0.0,
        "QEMU cost the host CPU: {g}"
    );
    assert!(mean(g, "qemu_rss_bytes") > 0.0, "{g}");
    assert_eq!(mean(g, "balloon_bytes"), 0.0, "no balloon yet: {g}");
    assert!(
        mean(g, "net_rx_bytes_per_s") > 0.0,
        "the clients' traffic reached eth0: {g}"
    );
    let guests_csv = std::fs::read_to_string(out.join("guests.csv")).unwrap();
    let rows: Vec<&str> = guests_csv.lines().skip(1).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.split(',').nth(1) == Some("vm1")));
    let busy: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.split(',').nth(2)?.parse().ok())
        .collect();
    assert!(busy.iter().any(|b| *b > 0.0), "{guests_csv}");
    let shown = text(&o);
    assert!(
        shown.contains("VM vm1: guest CPU"),
        "one end-of-run line per VM: {shown}"
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains("QEMU CPU (cores)"),
        "the report shows guest and host"
    );

    // Hygiene: QEMU listens on the host's loopback only; its sockets and the image cache
    // are private.
    let qemu = inst.pid().expect("QEMU runs");
    let listening = listening_addrs(qemu);
    assert!(
        !listening.is_empty(),
        "the forward to the guest's server listens"
    );
    assert!(
        listening.iter().all(|a| a.starts_with("0100007F:")),
        "QEMU listens on 127.0.0.1 only: {listening:?}"
    );
    for dir in [
        inst.dir().join("vm"),
        instance::vm::image::cache_dir(home.path()),
    ] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }

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
    // The sampler sees the balloon's size, and the guest its memory gone.
    let out2 = home.path().join("res-vm-balloon");
    let o = tb(
        &home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            "instance:vm1",
            "-c",
            "1",
            "-T",
            "2",
            "--out",
            out2.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "run with the balloon: {}", text(&o));
    let s2 = support::summary(&out2);
    let g2 = &s2["guests"][0];
    let balloon = mean(g2, "balloon_bytes");
    assert!(
        (balloon - (256u64 << 20) as f64).abs() < (8u64 << 20) as f64,
        "the balloon holds 256MiB: {g2}"
    );
    assert!(
        mean(g2, "mem_available_bytes") + f64::from(150u32 << 20) < mean(g, "mem_available_bytes"),
        "the guest's MemAvailable follows the balloon: {g2} against {g}"
    );
    let o = tb(&home, &["instance", "balloon", "vm1", "512MiB"]);
    assert!(o.status.success(), "balloon back: {}", text(&o));
    let back = available();
    assert!(
        back > shrunk + 200 * 1024,
        "deflating gives it back: {shrunk} -> {back} kB"
    );

    events::events_on_the_guest(&home);

    // The guest's last run powers it off (a guest so ended needs a new boot).
    let pid = inst.pid().expect("QEMU runs");
    assert!(alive(pid));
    events::power_off_on_the_guest(&home, pid);

    // Ctrl-C while a new VM instance boots: no QEMU outlives it, nothing half-made stays.
    // (TCG forced: one QEMU, not a KVM try that may fail on its own first.)
    let mut start = support::spawn_tidebench(
        &home,
        &[
            "instance",
            "start",
            "vm2",
            "--hypervisor",
            "qemu",
            "--accel",
            "tcg",
            "--memory",
            "256MiB",
        ],
    );
    let vm2 = home.path().join("instances").join("vm2");
    let pidfile = vm2.join("vm").join("qemu.pid");
    let qemu2 = wait_for_qemu(&mut start, &pidfile);
    unsafe { libc::kill(start.id() as libc::pid_t, libc::SIGINT) };
    let o = start.wait_with_output().unwrap();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("interrupted while it booted"),
        "{}",
        text(&o)
    );
    assert!(!alive(qemu2), "Ctrl-C during start leaves no QEMU process");
    assert!(!vm2.exists(), "a creation cut short leaves nothing behind");

    // A tidebench killed outright leaves its QEMU running; the next command finds it by its
    // pidfile: `destroy` ends it.
    let mut start = support::spawn_tidebench(
        &home,
        &[
            "instance",
            "start",
            "vm3",
            "--hypervisor",
            "qemu",
            "--accel",
            "tcg",
            "--memory",
            "256MiB",
        ],
    );
    let vm3 = home.path().join("instances").join("vm3");
    let qemu3 = wait_for_qemu(&mut start, &vm3.join("vm").join("qemu.pid"));
    start.kill().unwrap();
    let _ = start.wait();
    assert!(alive(qemu3), "QEMU outlives a killed tidebench");
    let o = tb(&home, &["instance", "destroy", "vm3"]);
    assert!(o.status.success(), "destroy: {}", text(&o));
    assert!(
        !alive(qemu3),
        "destroy ends the QEMU a killed tidebench left"
    );
    assert!(!vm3.exists());
}

/// The pid in a new instance's QEMU pidfile, once there (`start` is still booting it).
fn wait_for_qemu(start: &mut std::process::Child, pidfile: &std::path::Path) -> u32 {
    let waited = std::time::Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(pidfile)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            return pid;
        }
        assert!(
            start.try_wait().unwrap().is_none(),
            "instance start ended before QEMU started"
        );
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(300),
            "no QEMU pidfile at {}",
            pidfile.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The local addresses (hex, as /proc/net/tcp writes them) of the TCP sockets `pid` listens on.
fn listening_addrs(pid: u32) -> Vec<String> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // Field 3 is the state (0A: listening), field 9 the inode.
            if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                out.push(f[1].to_string());
            }
        }
    }
    out
}
