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
    let o = run(&home, "service=bench user=postgres", &env);
    assert_eq!(
        o.status.code(),
        Some(0),
        "postgres is trusted: {}",
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
