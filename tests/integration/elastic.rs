//! Elastic multi-tenant runs against real instances: shares held per phase by the deck (also
//! when one target is slow), independent client counts per phase, server counts agreeing per
//! database, a target that dies mid-run, re-aggregation and the mix log.

use std::path::PathBuf;

use crate::support::{self, ok, output_text as text, run_tidebench as tb, summary};

fn write(home: &support::TempHome, name: &str, body: &str) -> PathBuf {
    let p = home.path().join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// Four groups, each a database on instance `inst`.
fn four_groups(inst: &str, workloads: [&str; 4]) -> String {
    let mut s =
        String::from("clients = 4\nseed = 11\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n");
    for (name, w) in ["A", "B", "C", "D"].iter().zip(workloads) {
        s.push_str(&format!(
            "[[group]]\nname = \"{name}\"\nworkload = \"{w}\"\nscale = 1\ninstance = \"{inst}\"\n"
        ));
    }
    s
}

fn assert_shares_hold(s: &serde_json::Value) {
    for phase in s["phases"].as_array().unwrap() {
        for g in phase["groups"].as_array().unwrap() {
            let want = g["configured_share"].as_f64().unwrap();
            let got = g["achieved_share"].as_f64().unwrap();
            assert!(
                (want - got).abs() <= 1.0,
                "phase {} group {}: {got} % vs {want} %",
                phase["phase"],
                g["group"]
            );
        }
    }
}

fn assert_server_agrees(s: &serde_json::Value, databases: usize) {
    let server = s["server"].as_array().unwrap();
    assert_eq!(server.len(), databases, "{s}");
    for d in server {
        support::assert_server_agrees(d, 0);
        assert!(d["client_committed"].as_i64().unwrap() > 0);
    }
}

#[test]
fn shared_mode_keeps_shares_per_phase_and_agrees_with_each_database() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "el");
    let cfg = four_groups("el", ["tpcb", "tpcb", "select-only", "select-only"])
        + "[[phase]]\nduration = \"3s\"\nshares = { A = 10, B = 20, C = 30, D = 40 }\n\
           [[phase]]\nduration = \"3s\"\nshares = { A = 40, B = 30, C = 20, D = 10 }\n";
    let cfg = write(&home, "el.toml", &cfg);
    ok(tb(&home, &["prepare", cfg.to_str().unwrap()]));
    let out = home.path().join("res");
    let o = ok(tb(
        &home,
        &[
            "run",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--mix-log",
        ],
    ));
    assert!(text(&o).contains("share %"), "{}", text(&o));
    let s = summary(&out);
    assert_eq!(s["phases"].as_array().unwrap().len(), 2);
    assert_shares_hold(&s);
    assert_server_agrees(&s, 4);
    // Over the window, each phase's share weighted by its transactions is what the deck promised.
    for g in s["groups"].as_array().unwrap() {
        let want = g["configured_share"].as_f64().unwrap();
        let got = g["achieved_share"].as_f64().unwrap();
        assert!(
            (want - got).abs() <= 1.0,
            "group {}: {got} vs {want}",
            g["group"]
        );
    }

    // Every interval row belongs to one phase and lies inside it.
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (start, len): (f64, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        match f[3] {
            "p1" => assert!(start + len <= 3.0 + 1e-6, "{line}"),
            "p2" => assert!(start >= 3.0 - 1e-6, "{line}"),
            other => panic!("unexpected phase {other}: {line}"),
        }
    }

    // Re-aggregation from disk matches the summary's per-group counts.
    let by = ok(tb(
        &home,
        &["report", out.to_str().unwrap(), "--by", "group"],
    ));
    let table = String::from_utf8_lossy(&by.stdout).to_string();
    for g in s["groups"].as_array().unwrap() {
        let name = g["group"].as_str().unwrap();
        let count = g["total"].as_u64().unwrap();
        let row = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{table}"));
        assert_eq!(
            row.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap(),
            count,
            "{table}"
        );
    }

    // The mix log holds every transaction exactly once.
    let mix = ok(tb(&home, &["report", out.to_str().unwrap(), "--mix-log"]));
    let lines = String::from_utf8_lossy(&mix.stdout).lines().count() as u64;
    let total: u64 = s["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["total"].as_u64().unwrap())
        .sum();
    assert_eq!(lines, total + 1, "header + one line per transaction");
}

#[test]
fn a_slow_target_slows_everyone_instead_of_bending_the_shares() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "slow");
    let cfg = four_groups("slow", ["tpcb", "tpcb", "tpcb", "tpcb"])
        + "[[phase]]\nduration = \"4s\"\nshares = { A = 10, B = 20, C = 30, D = 40 }\n\
           [[phase]]\nduration = \"4s\"\nshares = { A = 10, B = 20, C = 30, D = 40 }\n";
    let cfg = write(&home, "slow.toml", &cfg);
    ok(tb(&home, &["prepare", cfg.to_str().unwrap()]));
    let out = home.path().join("res");
    let mut child = support::tidebench(&home)
        .args(["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // During phase 2, hold group D's branches table for 2.5 s: its transactions wait. The
    // lock is taken when the run's own clock has recorded 5 s (1 s into phase 2), however slow
    // its setup was beside another test.
    support::wait_run_clock(&mut child, &out, 5.0);
    support::psql(&inst, "d_1", "BEGIN; LOCK TABLE pgbench_branches IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(2.5); COMMIT;");
    let o = ok(child.wait_with_output().unwrap());
    let s = summary(&out);
    assert_shares_hold(&s);
    let tps = |i: usize| s["phases"][i]["tps"].as_f64().unwrap();
    assert!(
        tps(1) < 0.8 * tps(0),
        "throughput drops in the slow phase: {} vs {}; {}",
        tps(1),
        tps(0),
        text(&o)
    );
    // The locking psql session adds its own 2 transactions (startup, the lock) to d_1.
    for d in s["server"].as_array().unwrap() {
        let extra = if d["dbname"] == "d_1" { 2 } else { 0 };
        support::assert_server_agrees(d, extra);
    }
}

#[test]
fn independent_mode_sets_client_counts_per_phase() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "ind");
    let cfg = "mode = \"independent\"\nseed = 5\nprogress = \"0\"\ninterval = \"1s\"\n\
        [[group]]\nname = \"DB_1\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"ind\"\n\
        [[group]]\nname = \"DB_2\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"ind\"\n\
        [[phase]]\nname = \"high1\"\nduration = \"3s\"\nclients = { DB_1 = 3, DB_2 = 1 }\n\
        [[phase]]\nname = \"high2\"\nduration = \"3s\"\nclients = { DB_1 = 1, DB_2 = 3 }\n";
    let cfg = write(&home, "ind.toml", cfg);
    ok(tb(&home, &["prepare", cfg.to_str().unwrap()]));
    let out = home.path().join("res");
    ok(tb(
        &home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    ));
    let s = summary(&out);
    let phases = s["phases"].as_array().unwrap();
    assert_eq!(phases[0]["start_s"].as_f64(), Some(0.0));
    assert_eq!(phases[1]["start_s"].as_f64(), Some(3.0));
    let clients = |p: usize, g: usize| phases[p]["groups"][g]["clients"].as_u64().unwrap();
    assert_eq!(
        (clients(0, 0), clients(0, 1), clients(1, 0), clients(1, 1)),
        (3, 1, 1, 3)
    );
    let count = |p: usize, g: usize| phases[p]["groups"][g]["total"].as_u64().unwrap();
    assert!(
        count(0, 0) > count(0, 1) && count(1, 1) > count(1, 0),
        "{s}"
    );
    assert_server_agrees(&s, 2);
}

#[test]
fn a_target_that_dies_fails_its_share_and_the_run_ends_on_time() {
    let home = support::temp_home();
    let _a = support::start_instance(&home, "live");
    let _b = support::start_instance(&home, "dies");
    let cfg = "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
        [[group]]\nname = \"A\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"live\"\n\
        [[group]]\nname = \"B\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"dies\"\n\
        [[phase]]\nduration = \"3s\"\nshares = { A = 50, B = 50 }\n\
        [[phase]]\nduration = \"3s\"\nshares = { A = 50, B = 50 }\n";
    let cfg = write(&home, "dies.toml", cfg);
    ok(tb(&home, &["prepare", cfg.to_str().unwrap()]));
    let out = home.path().join("res");
    let mut child = support::tidebench(&home)
        .args(["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Stop B's server 1 s into the measured window by the run's own clock (its recorded
    // intervals), however slow the setup was beside other tests: well before phase 2 at 3 s.
    support::wait_run_clock(&mut child, &out, 1.0);
    tidebench::instance::stop(&home.home, "dies").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let s = summary(&out);
    // On time as the run measures it: the window is the two phases, with no overrun.
    assert_eq!(s["duration_s"].as_f64(), Some(6.0), "{s}");
    assert!(s.get("overrun_s").is_none(), "{s}");
    let p2 = &s["phases"][1]["groups"];
    assert!(
        p2[0]["committed"].as_u64().unwrap() > 100,
        "the live group kept running: {s}"
    );
    assert!(
        p2[1]["failed_by_class"]["connection"].as_u64().unwrap() > 0,
        "{s}"
    );
    assert_eq!(p2[1]["committed"].as_u64(), Some(0), "{s}");
    // Its clients saw it go down mid-run and never come back.
    let down = s["down_windows"].as_array().expect("down windows");
    assert_eq!(down.len(), 1, "{down:?}");
    assert!(down[0]["target"].as_str().unwrap().contains("dies"));
    let from = down[0]["from_s"].as_f64().unwrap();
    assert!((1.0..6.0).contains(&from), "{down:?}");
    assert!(down[0]["to_s"].is_null(), "{down:?}");
    // intervals.csv breaks the failures down by class, over time.
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "failed_connection")
        .unwrap();
    let connection: u64 = csv
        .lines()
        .skip(1)
        .map(|l| {
            l.rsplit(',')
                .nth(header.len() - 1 - col)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(
        connection,
        s["totals"]["failed_by_class"]["connection"]
            .as_u64()
            .unwrap(),
        "{csv}"
    );
}

#[test]
fn config_errors_name_file_and_line_with_exit_2() {
    let home = support::temp_home();
    let cfg = write(&home, "bad.toml", "[[group]]\nname = \"A\"\nworkload = \"tpcb\"\ninstance = \"x\"\n[[phase]]\nduration = \"5s\"\nshares = { A = 60 }\n");
    let o = tb(&home, &["run", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("bad.toml:7:") && text(&o).contains("sum to 60"),
        "{}",
        text(&o)
    );
    let o = tb(&home, &["run", "--preset", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("tpcv-elastic"), "{}", text(&o));
    let o = ok(tb(&home, &["presets"]));
    assert!(text(&o).contains("consolidation-2db") && text(&o).contains("demo"));
}
