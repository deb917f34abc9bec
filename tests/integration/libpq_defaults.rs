//! Connection settings resolved as libpq resolves them (issue 28, item 3), checked against
//! psql on the same inputs: a password from the password file (PGPASSFILE) for a role that
//! must give one, the file ignored when others may read it, a service from the service file
//! (PGSERVICEFILE, `service=`), an unknown service, and the PG* variables.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::{self, output_text as text};

/// psql of the instance's installation, with `env`, asked who and where it is.
fn psql_whoami(bin: &Path, conninfo: &str, env: &[(&str, String)]) -> Output {
    Command::new(bin.join("psql"))
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env_remove("PGPASSWORD")
        .args([
            "-X",
            "-A",
            "-t",
            "-w",
            "-c",
            "SELECT current_user, inet_server_port()",
            conninfo,
        ])
        .output()
        .expect("psql runs")
}

/// A one-second select-only run on `target` with `env`.
fn run(home: &support::TempHome, target: &str, env: &[(&str, String)]) -> Output {
    support::tidebench(home)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env_remove("PGPASSWORD")
        .args([
            "run", "-S", "-T", "1s", "-P", "0", "--sample", "0", "--target", target,
        ])
        .output()
        .expect("tidebench runs")
}

#[test]
fn passfile_service_file_and_pg_variables_resolve_as_in_libpq() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "lp");
    support::prepare_tpcb(&home, "instance:lp");
    // bob must log in over TCP with a password (the instance's password group).
    support::psql(
        &inst,
        "tidebench",
        "CREATE ROLE bob LOGIN PASSWORD 'sekret' IN ROLE tidebench_password; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO bob",
    );
    let port = inst.port.to_string();
    let bin = inst.bin_dir().to_path_buf();
    let passfile = home.path().join("pgpass");
    std::fs::write(&passfile, format!("127.0.0.1:{port}:*:bob:sekret\n")).unwrap();
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut env = vec![("PGPASSFILE", passfile.display().to_string())];
    let dsn = format!("host=127.0.0.1 port={port} user=bob dbname=tidebench");

    // The password comes from the file, for tidebench as for psql.
    let o = run(&home, &dsn, &env);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let who = psql_whoami(&bin, &dsn, &env);
    assert_eq!(
        String::from_utf8_lossy(&who.stdout).trim(),
        format!("bob|{port}")
    );

    // Readable by others: ignored with a warning by both, so the login fails.
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = run(&home, &dsn, &env);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("chmod 0600"), "{}", text(&o));
    let who = psql_whoami(&bin, &dsn, &env);
    assert!(!who.status.success());
    assert!(String::from_utf8_lossy(&who.stderr).contains("group or world access"));
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();

    // A service gives the rest; the connection string still wins where it speaks.
    let services = home.path().join("services.conf");
    std::fs::write(
        &services,
        format!("[bench]\nhost=127.0.0.1\nport={port}\nuser=bob\ndbname=tidebench\n"),
    )
    .unwrap();
    env.push(("PGSERVICEFILE", services.display().to_string()));
    let o = run(&home, "service=bench", &env);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let who = psql_whoami(&bin, "service=bench", &env);
    assert_eq!(
        String::from_utf8_lossy(&who.stdout).trim(),
        format!("bob|{port}")
    );
    let o = run(&home, "service=bench dbname=nosuchdb", &env);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("nosuchdb"),
        "the string's dbname wins: {}",
        text(&o)
    );

    let o = run(&home, "service=nope", &env);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("definition of service \"nope\" not found"),
        "{}",
        text(&o)
    );

    // PGSERVICE, and the PG* variables alone.
    let mut by_env = env.clone();
    by_env.push(("PGSERVICE", "bench".into()));
    let o = run(&home, "application_name=tenant-a", &by_env);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let vars = vec![
        ("PGPASSFILE", passfile.display().to_string()),
        ("PGHOST", "127.0.0.1".to_string()),
        ("PGPORT", port.clone()),
        ("PGUSER", "bob".to_string()),
        ("PGDATABASE", "tidebench".to_string()),
    ];
    let o = run(&home, "application_name=tenant-a", &vars);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let who = psql_whoami(&bin, "application_name=tenant-a", &vars);
    assert_eq!(
        String::from_utf8_lossy(&who.stdout).trim(),
        format!("bob|{port}")
    );
}

/// A standby of a managed instance (pg_basebackup -R, started with pg_ctl as the instance's
/// user), stopped when dropped.
struct Standby {
    pg_ctl: std::path::PathBuf,
    data: std::path::PathBuf,
    user: String,
}

impl Standby {
    fn start(inst: &tidebench::instance::Instance, root: &Path, port: u16) -> Standby {
        let data = root.join("standby");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
        let user = inst.superuser.clone();
        let as_owner = |program: &str| {
            let mut c = Command::new("runuser");
            c.args(["-u", &user, "--"])
                .arg(inst.bin_dir().join(program));
            c
        };
        if unsafe { libc::geteuid() } == 0 {
            let ok = Command::new("chown")
                .arg(&user)
                .arg(&data)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let o = as_owner("pg_basebackup")
            .args(["-R", "-c", "fast", "-X", "stream", "-D"])
            .arg(&data)
            .arg("-h")
            .arg(&inst.socket_dir)
            .args(["-p", &inst.port.to_string(), "-U", &user])
            .output()
            .unwrap();
        assert!(o.status.success(), "pg_basebackup: {}", text(&o));
        let o = as_owner("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(data.join("log"))
            .args(["-o", &format!("-p {port}"), "-w", "start"])
            .output()
            .unwrap();
        assert!(o.status.success(), "pg_ctl start: {}", text(&o));
        Standby {
            pg_ctl: inst.bin_dir().join("pg_ctl"),
            data,
            user,
        }
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", &self.user, "--"])
            .arg(&self.pg_ctl)
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

#[test]
fn several_hosts_reach_the_first_that_answers_and_fits() {
    if unsafe { libc::geteuid() } != 0 {
        support::skip(
            "several_hosts_reach_the_first_that_answers_and_fits",
            "root",
            "the standby is started as the instance's user",
        );
        return;
    }
    let home = support::temp_home();
    let inst = support::start_instance(&home, "primary");
    support::prepare_tpcb(&home, "instance:primary");
    let sock = inst.socket_dir.display().to_string();
    let dead = support::free_port();
    let runtime_address = |dir: &Path| -> String {
        let text = std::fs::read_to_string(dir.join("runtime.toml")).unwrap();
        let at = text.find("address = ").expect("the server's address");
        text[at..].lines().next().unwrap().to_string()
    };

    // A dead host first: the live one is reached.
    let out = home.path().join("dead-first");
    let dsn = format!(
        "host={sock},{sock} port={dead},{} user={} dbname=tidebench",
        inst.port, inst.superuser
    );
    let o = support::tidebench(&home)
        .args([
            "run", "-S", "-T", "1s", "-P", "0", "--target", &dsn, "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(runtime_address(&out).contains(&format!(":{}", inst.port)));
    assert!(text(&o).contains("chosen"), "{}", text(&o));

    // read-write skips a standby listed first.
    let standby_port = support::free_port();
    let _standby = Standby::start(&inst, home.path(), standby_port);
    let out = home.path().join("read-write");
    let dsn = format!(
        "host={sock},{sock} port={standby_port},{} user={} dbname=tidebench \
         target_session_attrs=read-write",
        inst.port, inst.superuser
    );
    let o = support::tidebench(&home)
        .args([
            "run", "-w", "tpcb", "-T", "1s", "-P", "0", "--target", &dsn, "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        runtime_address(&out).contains(&format!(":{}\"", inst.port)),
        "{}",
        runtime_address(&out)
    );

    // Only standbys and a demand for a primary: refused, naming what each host was.
    let dsn = format!(
        "host={sock} port={standby_port} user={} dbname=tidebench target_session_attrs=primary",
        inst.superuser
    );
    let o = support::tidebench(&home)
        .args(["run", "-S", "-T", "1s", "-P", "0", "--target", &dsn])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("a standby"), "{}", text(&o));

    // Each host looks its own password up: the file knows only the live port.
    support::psql(
        &inst,
        "tidebench",
        "CREATE ROLE carol LOGIN PASSWORD 'c4rol' IN ROLE tidebench_password; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO carol",
    );
    let passfile = home.path().join("hosts.pgpass");
    std::fs::write(
        &passfile,
        format!("127.0.0.1:{}:*:carol:c4rol\n", inst.port),
    )
    .unwrap();
    std::fs::set_permissions(&passfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    let dsn = format!(
        "host=127.0.0.1,127.0.0.1 port={dead},{} user=carol dbname=tidebench",
        inst.port
    );
    let o = support::tidebench(&home)
        .env("PGPASSFILE", &passfile)
        .env_remove("PGPASSWORD")
        .args(["run", "-S", "-T", "1s", "-P", "0", "--target", &dsn])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// The `application_name`s a run's sessions show in `pg_stat_activity`, polled while `args`
/// runs, and the run's output.
fn names_during_run(
    home: &support::TempHome,
    inst: &tidebench::instance::Instance,
    args: &[&str],
) -> (String, String) {
    let mut child = support::spawn_tidebench(home, args);
    let mut seen = String::new();
    // Until the run ends: its sessions live through its window, however late it starts.
    while child.try_wait().expect("the run").is_none() {
        seen = support::psql(
            inst,
            "postgres",
            "SELECT coalesce(string_agg(DISTINCT application_name, ','), '') FROM \
             pg_stat_activity WHERE datname = 'tidebench' AND backend_type = 'client backend' \
             AND application_name <> 'tidebench-control'",
        );
        if !seen.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("the run ends");
    assert!(out.status.success(), "{}", text(&out));
    (seen, text(&out))
}

#[test]
fn sessions_are_named_by_group_and_set_unless_the_string_names_them() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "names");
    support::prepare_tpcb(&home, "instance:names");
    let run = ["run", "-S", "-c", "2", "-T", "4s", "-P", "0", "--target"];
    let mut args = run.to_vec();
    args.push("instance:names");
    let (seen, said) = names_during_run(&home, &inst, &args);
    assert_eq!(seen.matches('/').count(), 2, "tidebench/GROUP/SET: {seen}");
    assert!(seen.starts_with("tidebench/"), "{seen}");
    assert!(said.contains("agrees"), "{said}");
    // A name of the string's own: sent as given, and the server check still waits for the
    // run's sessions to end before reading its counters.
    let dsn = format!("{} application_name=tenant-a", inst.dsn("tidebench"));
    let mut args = run.to_vec();
    args.push(&dsn);
    let (seen, said) = names_during_run(&home, &inst, &args);
    assert_eq!(seen, "tenant-a");
    assert!(said.contains("agrees"), "{said}");
}
