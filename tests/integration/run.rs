//! `tidebench run` end to end against real instances: the client's count agrees with the
//! server's, results files parse and carry their schema version, Ctrl-C leaves a valid,
//! incomplete results dir, and passwords never reach a file.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{self, output_text as text, run_tidebench as tb};

fn read_json(path: &Path) -> serde_json::Value {
    let raw = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&raw).expect("summary.json is JSON")
}

#[test]
fn committed_count_equals_server_xact_commit_delta() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "agree");
    support::prepare_tpcb(&home, "instance:agree");
    let out = home.path().join("res-agree");
    let o = tb(
        &home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            "instance:agree",
            "-c",
            "2",
            "-T",
            "3",
            "-P",
            "1",
            "--interval",
            "1s",
            "--seed",
            "42",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "run failed: {}", text(&o));
    assert!(
        text(&o).contains("progress:"),
        "progress lines shown: {}",
        text(&o)
    );

    let s = read_json(&out.join("summary.json"));
    assert_eq!(s["schema_version"], 1);
    assert_eq!(s["complete"], true);
    let committed = s["totals"]["committed"].as_i64().unwrap();
    assert!(committed > 50, "a 3 s run commits something: {committed}");
    assert_eq!(s["totals"]["failed"], 0);
    let server = &s["server"][0];
    assert_eq!(
        server["xact_commit_delta"].as_i64().unwrap(),
        support::committed_over_run(&s),
        "client count must equal the server's xact_commit delta: {s}"
    );
    let lat = &s["totals"]["latency_ms"];
    assert!(lat["p50"].as_f64().unwrap() <= lat["p99"].as_f64().unwrap());

    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(
        header.contains("interval_start_s") && header.contains("tps"),
        "{header}"
    );
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() >= 3, "one row per 1 s interval: {csv}");

    let runtime: toml::Value =
        toml::from_str(&std::fs::read_to_string(out.join("runtime.toml")).unwrap())
            .expect("runtime.toml is TOML");
    assert_eq!(runtime["schema_version"].as_integer(), Some(1));
    assert_eq!(runtime["plan"]["seed"].as_integer(), Some(42));
    assert!(std::fs::metadata(out.join("latency.hlog")).unwrap().len() > 0);
    assert!(!home.path().join("res-agree.partial").exists());
}

#[test]
fn runs_on_data_loaded_by_pgbench() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "pgbi");
    let dsn = inst.dsn("tidebench");
    let o = std::process::Command::new(support::pgbench_path(&inst))
        .args(["-i", "-q", "-s", "1", &dsn])
        .output()
        .unwrap();
    assert!(o.status.success(), "pgbench -i: {}", text(&o));
    let out = home.path().join("res-pgbi");
    let o = tb(
        &home,
        &[
            "run",
            "-S",
            "--target",
            &dsn,
            "-c",
            "2",
            "-T",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "run failed: {}", text(&o));
    let s = read_json(&out.join("summary.json"));
    let committed = s["totals"]["committed"].as_i64().unwrap();
    assert!(committed > 100);
    assert_eq!(
        s["server"][0]["xact_commit_delta"].as_i64().unwrap(),
        support::committed_over_run(&s)
    );
    drop(inst);
}

#[test]
fn sigint_stops_quickly_and_leaves_incomplete_valid_results() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "intr");
    support::prepare_tpcb(&home, "instance:intr");
    let out = home.path().join("res-intr");
    let mut child = support::spawn_tidebench(
        &home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            "instance:intr",
            "-c",
            "2",
            "-T",
            "60",
            "--interval",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    // Ctrl-C once the run's own clock has recorded 3 intervals, however slow its setup was.
    support::wait_run_clock(&mut child, &out, 3.0);
    let (o, took) = support::interrupt(child);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    // Stopped long before the 60 s end: a hang guard, not a speed claim.
    assert!(took < Duration::from_secs(30), "stopped in {took:?}");
    let s = read_json(&out.join("summary.json"));
    assert_eq!(s["complete"], false);
    assert!(s["totals"]["committed"].as_i64().unwrap() > 0);
    assert!(s["duration_s"].as_f64().unwrap() < 30.0);
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    assert!(csv.lines().count() >= 3, "{csv}");
    toml::from_str::<toml::Value>(&std::fs::read_to_string(out.join("runtime.toml")).unwrap())
        .unwrap();
}

/// `GET /metrics` from the run's Prometheus endpoint, or None while it is not up.
fn scrape(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    reply.starts_with("HTTP/1.1 200").then_some(reply)
}

#[test]
fn no_password_reaches_results_or_terminal() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "secret");
    support::prepare_tpcb(&home, "instance:secret");
    support::psql(
        &inst,
        "tidebench",
        "CREATE ROLE alice LOGIN SUPERUSER PASSWORD 'Sup3rSecretPw' IN ROLE tidebench_password",
    );
    let dsn = format!(
        "postgresql://alice:Sup3rSecretPw@127.0.0.1:{}/tidebench",
        inst.port
    );
    let out = home.path().join("res-secret");
    let port = support::free_port();
    let prometheus = format!("127.0.0.1:{port}");
    let child = support::tidebench(&home)
        .args([
            "run",
            "-S",
            "--target",
            &dsn,
            "-c",
            "1",
            "-T",
            "4",
            "--prometheus",
            &prometheus,
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start tidebench run");
    // While it runs, what another user sees: `ps` (its argv, /proc/PID/cmdline) and the
    // Prometheus scrape. The argv is scrubbed right after parsing, before any connection.
    let cmdline_path = format!("/proc/{}/cmdline", child.id());
    let deadline = Instant::now() + Duration::from_secs(20);
    let (mut cmdlines, mut scrapes) = (0, 0);
    while Instant::now() < deadline && (cmdlines < 3 || scrapes < 1) {
        std::thread::sleep(Duration::from_millis(300));
        if let Ok(bytes) = std::fs::read(&cmdline_path) {
            if bytes.is_empty() {
                break; // exited, a zombie until waited for
            }
            let shown = String::from_utf8_lossy(&bytes).replace('\0', " ");
            assert!(!shown.contains("Sup3rSecretPw"), "ps shows: {shown}");
            assert!(shown.contains("alice:"), "argv kept the rest: {shown}");
            cmdlines += 1;
        }
        if let Some(metrics) = scrape(port) {
            assert!(!metrics.contains("Sup3rSecretPw"), "scrape: {metrics}");
            scrapes += 1;
        }
    }
    let o = child.wait_with_output().expect("wait for tidebench run");
    assert!(
        cmdlines >= 1 && scrapes >= 1,
        "saw {cmdlines} cmdlines, {scrapes} scrapes"
    );
    assert!(o.status.success(), "run with password failed: {}", text(&o));
    assert!(!text(&o).contains("Sup3rSecretPw"));
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let found = bytes.windows(13).any(|w| w == b"Sup3rSecretPw");
        assert!(!found, "password found in {}", path.display());
    }
    // A wrong password is a setup error with the server's reason.
    let bad = format!("postgresql://alice:wrong@127.0.0.1:{}/tidebench", inst.port);
    let o = tb(&home, &["run", "-S", "--target", &bad, "-T", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("password authentication failed"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("wrong@"), "{}", text(&o));
    // A keyword in the wrong case is refused by its name, the password not echoed.
    let upper = format!(
        "host=127.0.0.1 port={} user=alice PASSWORD=Sup3rSecretPw dbname=tidebench",
        inst.port
    );
    let o = tb(&home, &["run", "-S", "--target", &upper, "-T", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("PASSWORD"), "{}", text(&o));
    assert!(!text(&o).contains("Sup3rSecretPw"), "{}", text(&o));
}
