//! Every bad input gives one clear message naming the fix, exit code 2, and no panic.

use crate::support::{self, run_tidebench as tb};

/// Runs and checks: exit 2, the message contains `needle`, no panic or backtrace.
fn refuses(home: &support::TempHome, args: &[&str], needle: &str) {
    let o = tb(home, args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?} should exit 2; stderr: {err}"
    );
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

#[test]
fn bad_flags_and_config_exit_2_with_the_fix() {
    let home = support::temp_home();
    refuses(
        &home,
        &["run", "--workload", "tpcz"],
        "invalid value 'tpcz'",
    );
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--clients", "0"],
        "clients must be at least 1",
    );
    // --hypervisor shapes preset tpcv (and the experiments' own instances), not a flag run.
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--hypervisor", "qemu"],
        "add --preset tpcv",
    );
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--scale", "0"],
        "scale must be at least 1",
    );
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--duration", "-5s"],
        "negative",
    );
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--duration", "soon"],
        "not a duration",
    );
    // Huge values: a clear error, never a panic or an allocation of gigabytes.
    for huge in ["1e30", "18446744073709551615"] {
        refuses(
            &home,
            &["run", "--workload", "tpcb", "--duration", huge],
            "longer than a year",
        );
    }
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--deck-size", "4000000000"],
        "cap of 1000000 cards",
    );
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--clients", "1000000"],
        "cap of 10000",
    );
    let think = home.path().join("think.toml");
    std::fs::write(
        &think,
        "mode = \"independent\"\n[[group]]\nname = \"A\"\nworkload = \"tpcb\"\ninstance = \"default\"\n\
         [[phase]]\nduration = \"1s\"\nclients = { A = 1 }\nthink = { A = \"1e30\" }\n",
    )
    .unwrap();
    refuses(
        &home,
        &["run", think.to_str().unwrap()],
        "longer than a year",
    );
    refuses(
        &home,
        &["prepare", "--workload", "tpcb", "--scale", "0"],
        "scale must be at least 1",
    );
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--target", "localhost"],
        "postgresql://",
    );
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--target", "host='oops"],
        "unterminated quoted string",
    );

    let cfg = home.path().join("bad.toml");
    std::fs::write(&cfg, "workload = \"tpcb\"\nclients = 2\nclinets = 4\n").unwrap();
    refuses(&home, &["run", cfg.to_str().unwrap()], "bad.toml:3:");
    refuses(
        &home,
        &["run", "/nonexistent/run.toml"],
        "cannot read config file",
    );
}

#[test]
fn unusable_targets_exit_2_with_the_fix() {
    let home = support::temp_home();
    // Nothing listens on this port.
    let port = support::free_port();
    let dsn = format!("host=127.0.0.1 port={port} dbname=x user=x connect_timeout=2");
    refuses(
        &home,
        &["run", "--workload", "tpcb", "--target", &dsn, "-T", "1"],
        "cannot connect",
    );

    // A root certificate that cannot be read is named before anything connects.
    refuses(
        &home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            &format!(
                "postgresql://x@127.0.0.1:{port}/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.crt"
            ),
            "-T",
            "1",
        ],
        "sslrootcert file /nonexistent/ca.crt",
    );

    let inst = support::start_instance(&home, "empty");
    let _ = inst;
    refuses(
        &home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            "instance:empty",
            "-T",
            "1",
        ],
        "tidebench prepare",
    );
    refuses(
        &home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            "instance:nosuch",
            "-T",
            "1",
        ],
        "nosuch",
    );
}
