//! Managed instances against real PostgreSQL: lifecycle, dsn, conflicting options, cgroups.

use std::process::Command;

use tidebench::instance::{self, CgroupVersion, InstanceError, InstanceOptions};

use crate::support::{self, psql, start_instance, temp_home, test_settings, tidebench};

#[test]
fn lifecycle_start_status_stop_restart_destroy() {
    let home = temp_home();
    let inst = start_instance(&home, "life");
    assert_eq!(psql(&inst, "tidebench", "SELECT 40 + 2"), "42");
    let group =
        "SELECT count(*) FROM pg_roles WHERE rolname = 'tidebench_password' AND NOT rolcanlogin";
    assert_eq!(psql(&inst, "postgres", group), "1");
    assert!(inst.log_path().is_file(), "server.log is kept");

    let status = instance::status(&home.home, "life").unwrap();
    assert!(status.running);
    let pid = status.pid.expect("a running instance has a pid");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());

    // Starting again while running is fine and finds the same instance.
    let (again, outcome) =
        instance::start_reporting(&home.home, "life", &InstanceOptions::default()).unwrap();
    assert_eq!(outcome, instance::StartOutcome::AlreadyRunning);
    assert_eq!(again.port, inst.port);

    assert!(instance::stop(&home.home, "life").unwrap());
    assert!(
        !instance::stop(&home.home, "life").unwrap(),
        "second stop reports 'not running'"
    );
    assert!(!instance::status(&home.home, "life").unwrap().running);
    let err = instance::find_running(&home.home, "life").unwrap_err();
    assert!(matches!(err, InstanceError::NotRunning { .. }), "{err}");

    // Found again by name, with the recorded port and settings.
    let (back, outcome) =
        instance::start_reporting(&home.home, "life", &InstanceOptions::default()).unwrap();
    assert_eq!(outcome, instance::StartOutcome::Started);
    assert_eq!(back.port, inst.port);
    assert_eq!(psql(&back, "postgres", "SHOW fsync"), "off");
    assert_eq!(
        psql(&back, "postgres", "SHOW listen_addresses"),
        "127.0.0.1"
    );
    instance::ensure_database(&back, "other_db").unwrap();
    instance::ensure_database(&back, "other_db").unwrap();
    assert_eq!(
        psql(&back, "other_db", "SELECT current_database()"),
        "other_db"
    );

    instance::destroy(&home.home, "life").unwrap();
    assert!(!back.dir().exists());
    let err = instance::status(&home.home, "life").unwrap_err();
    assert!(matches!(err, InstanceError::NotFound { .. }), "{err}");
}

#[test]
fn dsn_works_with_psql_and_password_group_uses_scram() {
    let home = temp_home();
    let inst = start_instance(&home, "dsn");
    let out = Command::new("psql")
        .arg(inst.dsn("tidebench"))
        .args([
            "-X",
            "-A",
            "-t",
            "-c",
            "SELECT current_database() || ' ' || current_user",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("tidebench {}", inst.superuser)
    );

    // A member of tidebench_password must give its password over TCP.
    psql(
        &inst,
        "postgres",
        "CREATE ROLE pw_user LOGIN PASSWORD 'secret' IN ROLE tidebench_password",
    );
    let over_tcp = |password: &str| {
        Command::new("psql")
            .arg(format!(
                "host=127.0.0.1 port={} user=pw_user dbname=tidebench",
                inst.port
            ))
            .args(["-X", "-w", "-A", "-t", "-c", "SELECT 1"])
            .env("PGPASSWORD", password)
            .output()
            .unwrap()
    };
    assert!(over_tcp("secret").status.success());
    let wrong = over_tcp("wrong");
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("password authentication failed"));

    // The superuser too, with the password of the instance's passfile (0600), which the DSN
    // names: psql over TCP with that DSN logs in.
    let passfile = inst.dir().join("passfile");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&passfile).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the passfile is its owner's only");
    assert!(inst.dsn("tidebench").contains("passfile="));
    let tcp_dsn = inst.dsn("tidebench").replacen(
        &format!("host={}", inst.socket_dir.display()),
        "host=127.0.0.1",
        1,
    );
    let out = Command::new("psql")
        .arg(&tcp_dsn)
        .args(["-X", "-w", "-A", "-t", "-c", "SELECT current_user"])
        .env_remove("PGPASSWORD")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let password = inst.password().expect("a password");
    let ps = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&ps.stdout).contains(&password));
}

/// Another local OS user reaches neither the socket (0700) nor a TCP login (a password it
/// cannot read): the managed instance admits only its owner.
#[test]
fn another_local_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        support::skip(
            "another_local_user_is_refused",
            "root",
            "it acts as another OS user",
        );
        return;
    }
    let home = temp_home();
    let inst = start_instance(&home, "closed");
    let as_nobody = |conninfo: String| {
        Command::new("runuser")
            .args(["-u", "nobody", "--"])
            .arg(inst.bin_dir().join("psql"))
            .arg(conninfo)
            .args(["-X", "-w", "-A", "-t", "-c", "SELECT 1"])
            .env_remove("PGPASSWORD")
            .env_remove("PGPASSFILE")
            .current_dir("/")
            .output()
            .unwrap()
    };
    let su = &inst.superuser;
    let by_tcp = as_nobody(format!(
        "host=127.0.0.1 port={} user={su} dbname=tidebench",
        inst.port
    ));
    assert!(!by_tcp.status.success());
    let said = String::from_utf8_lossy(&by_tcp.stderr);
    assert!(said.contains("password"), "{said}");
    // Even naming the instance's passfile: nobody may not read it.
    let by_passfile = as_nobody(inst.dsn("tidebench").replacen(
        &format!("host={}", inst.socket_dir.display()),
        "host=127.0.0.1",
        1,
    ));
    assert!(!by_passfile.status.success());
    let by_socket = as_nobody(format!(
        "host={} port={} user={su} dbname=tidebench",
        inst.socket_dir.display(),
        inst.port
    ));
    assert!(!by_socket.status.success());
    let said = String::from_utf8_lossy(&by_socket.stderr);
    assert!(said.contains("Permission denied"), "{said}");
}

#[test]
fn conflicting_options_name_the_difference_and_the_fix() {
    let home = temp_home();
    let inst = start_instance(&home, "conf");
    let other_port = InstanceOptions {
        port: Some(inst.port.wrapping_add(1).max(1)),
        ..Default::default()
    };
    let err = instance::start(&home.home, "conf", &other_port)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("--port {}", inst.port)), "{err}");
    assert!(err.contains("tidebench instance destroy conf"), "{err}");

    let mut settings = test_settings();
    settings.push(("work_mem".into(), "8MB".into()));
    let other_settings = InstanceOptions {
        settings,
        ..Default::default()
    };
    let err = instance::start(&home.home, "conf", &other_settings)
        .unwrap_err()
        .to_string();
    assert!(err.contains("work_mem=8MB"), "{err}");

    // The same values are fine.
    let same = InstanceOptions {
        port: Some(inst.port),
        settings: test_settings(),
        ..Default::default()
    };
    instance::start(&home.home, "conf", &same).unwrap();
}

#[test]
fn bad_setting_fails_with_log_tail_and_leaves_nothing_behind() {
    let home = temp_home();
    let opts = InstanceOptions {
        settings: vec![("shared_buffers".into(), "lots".into())],
        ..Default::default()
    };
    let err = instance::start(&home.home, "bad", &opts).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, InstanceError::StartFailed { .. }), "{text}");
    assert!(
        text.contains("shared_buffers"),
        "the log tail names the setting: {text}"
    );
    assert!(!home.path().join("instances/bad").exists());
}

#[test]
fn cgroup_v1_limits_hold_the_postmaster() {
    let home = temp_home();
    let opts = InstanceOptions {
        cpus: Some(0.5),
        memory: Some(512 << 20),
        settings: test_settings(),
        ..Default::default()
    };
    let inst = match instance::start(&home.home, "vm", &opts) {
        Ok(inst) => inst,
        Err(InstanceError::Cgroup(msg)) => {
            support::skip("the cgroup test", "control groups", &msg.to_string());
            return;
        }
        Err(e) => panic!("start with --cpus/--memory failed: {e}"),
    };
    let cg = inst
        .cgroup_paths()
        .expect("an instance with limits has a cgroup")
        .clone();
    let pid = inst.pid().expect("running");
    let membership = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    match cg.version {
        CgroupVersion::V1 => {
            let line = |controller: &str| {
                membership
                    .lines()
                    .find(|l| {
                        l.split(':')
                            .nth(1)
                            .is_some_and(|c| c.split(',').any(|x| x == controller))
                    })
                    .unwrap_or_else(|| panic!("no {controller} line in {membership}"))
                    .to_string()
            };
            assert!(line("cpu").ends_with(":/tidebench/vm"), "{membership}");
            assert!(line("memory").ends_with(":/tidebench/vm"), "{membership}");
            assert!(line("cpuacct").ends_with(":/tidebench/vm"), "{membership}");
            let read =
                |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap().trim().to_string();
            assert_eq!(read(cg.cpu.join("cpu.cfs_period_us")), "100000");
            assert_eq!(read(cg.cpu.join("cpu.cfs_quota_us")), "50000");
            assert_eq!(
                read(cg.memory.join("memory.limit_in_bytes")),
                (512u64 << 20).to_string()
            );
            assert!(read(cg.memory.join("cgroup.procs"))
                .lines()
                .any(|l| l == pid.to_string()));
        }
        CgroupVersion::V2 => {
            assert!(membership.contains("/tidebench/vm"), "{membership}");
            let max = std::fs::read_to_string(cg.cpu.join("cpu.max")).unwrap();
            assert_eq!(max.trim(), "50000 100000");
        }
    }
    // Backends are forked from the postmaster, so they are in the VM too.
    let backend: u32 = psql(&inst, "postgres", "SELECT pg_backend_pid()")
        .parse()
        .unwrap();
    assert!(backend > 0);
    // shared_buffers was capped at a quarter of --memory unless set; the test settings set it.
    assert_eq!(psql(&inst, "postgres", "SHOW shared_buffers"), "128MB");

    instance::destroy(&home.home, "vm").unwrap();
    for dir in cg.dirs() {
        assert!(!dir.exists(), "{} removed on destroy", dir.display());
    }
}

#[test]
fn cli_start_status_dsn_stop_destroy() {
    let home = temp_home();
    let run = |args: &[&str]| {
        let out = tidebench(&home)
            .arg("instance")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, _, stderr) = run(&[
        "start",
        "cli",
        "--set",
        "shared_buffers=128MB",
        "--set",
        "fsync=off",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(home.path().join("instances/cli/instance.toml").is_file());
    let (code, stdout, _) = run(&["start", "cli"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("already running"), "{stdout}");

    let (_, stdout, _) = run(&["status"]);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("cli "))
        .unwrap_or_default();
    assert!(row.contains("running"), "{stdout}");

    let (code, dsn, stderr) = run(&["dsn", "cli", "--db", "postgres"]);
    assert_eq!(code, Some(0), "{stderr}");
    for (tool, args) in [
        ("psql", vec!["-X", "-A", "-t", "-c", "SELECT 7"]),
        ("pgbench", vec![]),
    ] {
        let mut cmd = Command::new(tool);
        if tool == "pgbench" {
            // Initialise a tiny pgbench database, then one select-only transaction.
            let init = Command::new("pgbench")
                .args(["-i", "-q", "-s", "1"])
                .arg(dsn.trim())
                .output()
                .unwrap();
            assert!(
                init.status.success(),
                "{}",
                String::from_utf8_lossy(&init.stderr)
            );
            cmd.args(["-S", "-t", "1"]);
        }
        let out = cmd.arg(dsn.trim()).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let (code, _, stderr) = run(&["start", "cli", "--port", "1"]);
    assert_eq!(code, Some(2), "conflict is a usage error");
    assert!(stderr.contains("instance destroy cli"), "{stderr}");

    assert_eq!(run(&["stop", "cli"]).0, Some(0));
    let (_, stdout, _) = run(&["status", "cli"]);
    assert!(stdout.contains("stopped"), "{stdout}");
    assert_eq!(run(&["destroy", "cli"]).0, Some(0));
    let (code, _, stderr) = run(&["dsn", "cli"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("tidebench instance start cli"), "{stderr}");
}

#[test]
fn cpus_out_of_range_is_refused_before_anything_is_made() {
    let home = temp_home();
    let opts = InstanceOptions {
        cpus: Some(-1.0),
        ..Default::default()
    };
    let err = start_with_err(&home, "neg", opts);
    assert!(err.contains("--cpus"), "{err}");
    assert!(!home.path().join("instances").exists());
}

fn start_with_err(home: &crate::support::TempHome, name: &str, opts: InstanceOptions) -> String {
    match instance::start(&home.home, name, &opts) {
        Ok(_) => panic!("expected '{name}' to be refused"),
        Err(e) => e.to_string(),
    }
}
