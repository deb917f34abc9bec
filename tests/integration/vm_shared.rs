//! Several instances in one real VM (issue 40: `--vm PATH` with `--hypervisor qemu`), under
//! whatever accelerator the host gives (TCG here): two instances boot in one guest, each with
//! its own server, data dir and password behind its own forward; a third of another size is
//! refused; a destroyed instance made again under its name gets a fresh server, not the old
//! data; the last destroy leaves no QEMU and no VM dir.

use crate::support::{self, output_text as text, run_tidebench as tb};
use crate::vm::{alive, skip_without_qemu};
use tidebench::instance::{self, Instance};

const VM: &str = "h1/vm1";

fn start(home: &support::TempHome, name: &str, extra: &[&str]) {
    let mut args = vec![
        "instance",
        "start",
        name,
        "--hypervisor",
        "qemu",
        "--vm",
        VM,
    ];
    args.extend_from_slice(extra);
    let o = tb(home, &args);
    assert!(o.status.success(), "start {name}: {}", text(&o));
}

fn find(home: &support::TempHome, name: &str) -> Instance {
    instance::find(&home.home, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// What the guest's kernel says of one boot, asked through an instance's own server.
fn boot_id(inst: &Instance) -> String {
    support::psql(
        inst,
        "postgres",
        "SELECT pg_read_file('/proc/sys/kernel/random/boot_id')",
    )
}

/// The PGDATA dirs of instances on the VM's data disk, as the guest lists them.
fn pgdata_dirs(inst: &Instance) -> Vec<String> {
    let listed = support::psql(
        inst,
        "postgres",
        "SELECT string_agg(d, ',' ORDER BY d) FROM pg_ls_dir('/data') d WHERE d LIKE 'i-%'",
    );
    listed.split(',').map(String::from).collect()
}

#[test]
fn two_instances_share_one_guest_and_a_remade_one_starts_fresh() {
    if skip_without_qemu("two_instances_share_one_guest_and_a_remade_one_starts_fresh") {
        return;
    }
    let home = support::temp_home();
    start(&home, "sa", &["--cpus", "1", "--memory", "512MiB"]);
    // No size given: b joins the VM at its size (a reboot adds its server).
    start(&home, "sb", &[]);
    let (a, b) = (find(&home, "sa"), find(&home, "sb"));
    let (ga, gb) = (a.guest().unwrap(), b.guest().unwrap());
    assert_eq!(gb.record, ga.record, "one VM, one size");
    let qemu = ga.qemu_pid().expect("the VM runs");
    assert_eq!(gb.qemu_pid(), Some(qemu), "one QEMU for both");
    assert_ne!(a.port, b.port);
    // Two servers in one kernel, each with its own data dir, reached on its own port.
    assert_eq!(boot_id(&a), boot_id(&b), "one guest");
    let dir_a = support::psql(&a, "postgres", "SHOW data_directory");
    let dir_b = support::psql(&b, "postgres", "SHOW data_directory");
    assert!(
        dir_a.starts_with("/data/i-sa-") && dir_b.starts_with("/data/i-sb-"),
        "{dir_a} {dir_b}"
    );
    assert_eq!(
        support::psql(&b, "postgres", "SELECT host(inet_server_addr())"),
        "10.0.2.15"
    );
    // The VM's log holds both servers' lines, each named; each instance's log is that file.
    let log = std::fs::read_to_string(a.log_path()).unwrap();
    assert!(log.contains("[sa] ") && log.contains("[sb] "), "{log}");

    // Another size for the same VM is refused, and nothing of it is left.
    let o = tb(
        &home,
        &[
            "instance",
            "start",
            "sc",
            "--hypervisor",
            "qemu",
            "--vm",
            VM,
            "--memory",
            "1GiB",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("One VM has one size"), "{}", text(&o));
    assert!(instance::find(&home.home, "sc").is_err());

    // Destroy ends the VM; the same name made again gets its own new server, and the next
    // boot removes the old one's data.
    let o = tb(&home, &["instance", "destroy", "sa"]);
    assert!(o.status.success(), "destroy: {}", text(&o));
    assert!(!alive(qemu), "destroy stops the shared VM");
    start(&home, "sa", &[]);
    let (a, b) = (find(&home, "sa"), find(&home, "sb"));
    assert_eq!(boot_id(&a), boot_id(&b), "both in the rebooted guest");
    let dirs = pgdata_dirs(&b);
    assert_eq!(dirs.len(), 2, "the old sa's data is gone: {dirs:?}");
    assert!(
        !dirs.iter().any(|d| dir_a.ends_with(d.as_str())),
        "{dirs:?} {dir_a}"
    );

    let qemu = a.guest().unwrap().qemu_pid().expect("the VM runs");
    for name in ["sa", "sb"] {
        let o = tb(&home, &["instance", "destroy", name]);
        assert!(o.status.success(), "destroy {name}: {}", text(&o));
    }
    assert!(!alive(qemu), "no QEMU is left");
    assert!(
        !home.path().join("vms").exists(),
        "the VM's dir goes with its last instance"
    );
}
