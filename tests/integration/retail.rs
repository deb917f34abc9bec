//! The Greenplum study's analytic workload (issue 30): the retail fact table loads the same
//! bytes whatever the number of COPY streams, every partition holds the generator's rows, the
//! two reports return what the same SQL returns on a plain unpartitioned copy and on 2 segment
//! instances behind a postgres_fdw coordinator, a run records both, and Ctrl-C leaves no report
//! running at the server. A size in bytes gives that much COPY text, the `load` test case
//! copies what it is asked from each stream and reports MB/s, and segments take the cores and
//! memory they are given (or refuse more than the host has).

use std::time::Duration;

use tidebench::workload::retail::{FULL_SCAN, PARTIAL_SCAN};

use crate::support::{self, output_text as text};

fn prepare(home: &support::TempHome, db: &str, jobs: &str) -> std::process::Output {
    prepare_with(home, db, jobs, &[])
}

fn prepare_with(
    home: &support::TempHome,
    db: &str,
    jobs: &str,
    extra: &[&str],
) -> std::process::Output {
    let target = format!("instance:rt/{db}");
    let mut args = vec![
        "prepare", "-w", "retail", "--scale", "2", "--jobs", jobs, "--target", &target,
    ];
    args.extend_from_slice(extra);
    support::run_tidebench(home, &args)
}

/// `run` of retail's reports from 2 streams on the `three` database for `duration`.
fn run_args<'a>(out: &'a std::path::Path, duration: &'a str) -> [&'a str; 13] {
    [
        "run",
        "-w",
        "retail",
        "--target",
        "instance:rt/three",
        "-c",
        "2",
        "-T",
        duration,
        "-P",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]
}

/// An md5 over a query's rows, in a fixed order.
fn digest(inst: &tidebench::instance::Instance, db: &str, query: &str) -> String {
    support::psql(
        inst,
        db,
        &format!("SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM ({query}) t"),
    )
}

#[test]
fn retail_loads_alike_over_any_streams_and_its_reports_match_a_plain_table() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "rt");
    let o = support::ok(prepare(&home, "one", "1"));
    assert!(
        text(&o).contains("rows/s") && text(&o).contains("MB/s"),
        "{}",
        text(&o)
    );
    support::ok(prepare(&home, "three", "3"));
    // Loaded twice over another number of streams: the same rows.
    let all = "SELECT * FROM order_lineitems";
    assert_eq!(digest(&inst, "one", all), digest(&inst, "three", all));
    let rows = support::psql(&inst, "one", "SELECT count(*) FROM order_lineitems");
    assert_eq!(rows.trim(), "200000");
    let partitions = support::psql(
        &inst,
        "one",
        "SELECT count(*) FROM pg_inherits WHERE inhparent = 'order_lineitems'::regclass",
    );
    assert_eq!(partitions.trim(), "101", "48 months and 53 weeks");
    // Again without --force: refused, with the fix.
    let o = prepare(&home, "one", "1");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--force"), "{}", text(&o));
    // check: every partition holds the generator's rows.
    let o = support::ok(support::run_tidebench(
        &home,
        &["check", "-w", "retail", "--target", "instance:rt/one"],
    ));
    assert!(text(&o).contains("PASS"), "{}", text(&o));

    // The reports on the partitioned table equal the same SQL on a plain copy of it.
    support::psql(
        &inst,
        "one",
        "CREATE SCHEMA flat; CREATE TABLE flat.order_lineitems AS SELECT * FROM order_lineitems",
    );
    for query in [FULL_SCAN, PARTIAL_SCAN] {
        let partitioned = digest(&inst, "one", query);
        let flat = digest(
            &inst,
            "one",
            &query.replace("FROM order_lineitems", "FROM flat.order_lineitems"),
        );
        assert_eq!(partitioned, flat, "{query}");
        assert!(!partitioned.trim().is_empty());
    }
    // Over 2 segment instances behind a coordinator: the same reports, the same rows.
    let o = support::ok(prepare_with(&home, "mpp", "2", &["--segments", "2"]));
    assert!(text(&o).contains("over 2 segments"), "{}", text(&o));
    // Each segment is an emulated VM with half the host, where control groups can be made.
    let seg = tidebench::instance::find(&home.home, "rt-seg1").unwrap();
    let (cpus, memory) = seg.limits();
    if support::cgroups_writable() {
        let cores = std::thread::available_parallelism().unwrap().get() as f64;
        assert_eq!(cpus, Some((cores / 2.0 * 100.0).floor() / 100.0));
        assert!(memory.is_some_and(|m| m > 0));
    } else {
        assert_eq!((cpus, memory), (None, None));
    }
    for query in [FULL_SCAN, PARTIAL_SCAN] {
        assert_eq!(
            digest(&inst, "mpp", query),
            digest(&inst, "one", query),
            "{query}"
        );
    }
    // Each customer's rows sit on the segment whose bounds hold it: a lookup the coordinator
    // prunes to one segment finds them all.
    let per_customer = "SELECT customer_id, count(*) FROM order_lineitems \
                        WHERE customer_id IN (1, 2500, 2501, 2502, 4999, 5000) GROUP BY 1";
    assert_eq!(
        digest(&inst, "mpp", per_customer),
        digest(&inst, "one", per_customer)
    );
    let plan = support::psql(&inst, "mpp", &format!("EXPLAIN {PARTIAL_SCAN}"));
    assert!(plan.contains("Async Foreign Scan"), "{plan}");
    let o = support::ok(support::run_tidebench(
        &home,
        &["check", "-w", "retail", "--target", "instance:rt/mpp"],
    ));
    assert!(text(&o).contains("each of 2 segments"), "{}", text(&o));
    // More segments than the host can give: refused with the fix.
    let o = prepare_with(&home, "many", "1", &["--segments", "99"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("at most"), "{}", text(&o));

    // The Greenplum study's Figure 3 as a sweep: each point prepares the data over its segment count.
    let sweep = home.path().join("sweep");
    support::ok(support::run_tidebench(
        &home,
        &[
            "sweep",
            "-w",
            "retail",
            "--scale",
            "1",
            "--vary",
            "segments=1,2",
            "-T",
            "1s",
            "-P",
            "0",
            "--sample",
            "0",
            "--target",
            "instance:rt/sweep",
            "--out",
            sweep.to_str().unwrap(),
        ],
    ));
    let e = support::experiment(&sweep);
    assert_eq!(e["complete"], true, "{e}");
    let spread = support::psql(&inst, "sweep", "SELECT segments FROM retail_meta");
    assert_eq!(spread.trim(), "2", "the last point's data");

    let avg = support::psql(&inst, "one", PARTIAL_SCAN);
    assert!(avg.trim().parse::<f64>().unwrap() > 0.0, "{avg}");

    // A run draws both reports on the dss role and records each one's response time.
    let out = home.path().join("res");
    support::ok(support::run_tidebench(&home, &run_args(&out, "3s")));
    let s = support::summary(&out);
    for t in ["full_scan", "partial_scan"] {
        let row = s["mix"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["txn_type"] == t)
            .unwrap_or_else(|| panic!("{t}: {}", s["mix"]));
        assert!(row["completed"].as_u64().unwrap() > 0, "{row}");
    }
    assert_eq!(s["by_role"][0]["role"], "dss", "{}", s["by_role"]);
    support::assert_server_agrees(&s["server"][0], 0);

    // Ctrl-C during the reports cancels them at the server.
    let out = home.path().join("res-int");
    let mut child = support::spawn_tidebench(&home, &run_args(&out, "60s"));
    let reports = || {
        support::psql(
            &inst,
            "postgres",
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' \
             AND query LIKE '%order_lineitems%' AND pid <> pg_backend_pid()",
        )
        .trim()
        .to_string()
    };
    // Ctrl-C once the server says a report runs.
    support::wait_until(&mut child, "a report running at the server", || {
        reports() != "0"
    });
    let (o, took) = support::interrupt(child);
    // Long before the 60 s end: a hang guard, not a speed claim.
    assert!(took < Duration::from_secs(30), "{took:?}: {}", text(&o));
    assert_eq!(reports(), "0", "a report still runs after Ctrl-C");
}

/// `run` of `cases` on `db` of instance `rl` from 2 streams (the Greenplum study's word for clients) for
/// 3 s, plus `extra`.
fn run_cases(
    home: &support::TempHome,
    out: &std::path::Path,
    db: &str,
    extra: &[&str],
) -> std::process::Output {
    let target = format!("instance:rl/{db}");
    let mut args = vec![
        "run",
        "-w",
        "retail",
        "--target",
        &target,
        "--streams",
        "2",
        "-T",
        "3s",
        "-P",
        "0",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    support::run_tidebench(home, &args)
}

#[test]
fn retail_sizes_in_bytes_loads_as_a_test_case_and_gives_segments_their_share() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "rl");
    let prepare = |db: &str, extra: &[&str]| {
        let target = format!("instance:rl/{db}");
        let mut args = vec!["prepare", "-w", "retail", "--target", &target];
        args.extend_from_slice(extra);
        support::run_tidebench(&home, &args)
    };
    // --size: about that much COPY text, every partition still the generator's.
    let o = support::ok(prepare("sized", &["--size", "3MB"]));
    let loaded_mb: f64 = text(&o)
        .split("line items, ")
        .nth(1)
        .and_then(|r| r.split(" MB").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", text(&o)));
    let asked = 3.0 * 1048576.0 / 1e6;
    assert!(
        (loaded_mb / asked - 1.0).abs() < 0.02,
        "{loaded_mb} MB for 3MB"
    );
    let o = support::ok(support::run_tidebench(
        &home,
        &["check", "-w", "retail", "--target", "instance:rl/sized"],
    ));
    assert!(text(&o).contains("PASS"), "{}", text(&o));
    let facts = "SELECT count(*), sum(item_amount) FROM order_lineitems";
    let before = support::psql(&inst, "sized", facts);
    // A run asking for another size is refused with the fix; so are a bad size and case.
    for (args, says) in [
        (vec!["--size", "4MB"], "--force"),
        (vec!["--size", "lots"], "not a size"),
        (vec!["--cases", "vacuum"], "cases"),
    ] {
        let o = run_cases(&home, &home.path().join("refused"), "sized", &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    let o = support::run_tidebench(&home, &["prepare", "-w", "retail", "--scale", "2GB"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--size 2GB"), "{}", text(&o));

    // The load test case from 2 streams: each execution copies --load-size of COPY text
    // into its client's own table, one transaction at the server, and the run says MB/s.
    let out = home.path().join("load");
    let o = support::ok(run_cases(
        &home,
        &out,
        "sized",
        &["--cases", "load", "--load-size", "512kB"],
    ));
    assert!(text(&o).contains("MB/s per stream"), "{}", text(&o));
    let s = support::summary(&out);
    let v = &s["volumes"][0];
    assert_eq!(v["txn_type"], "load", "{s}");
    let executions = v["executions"].as_u64().unwrap();
    assert!(executions >= 2, "{v}");
    let per_execution = v["bytes"].as_f64().unwrap() / executions as f64;
    assert!((per_execution / 524288.0 - 1.0).abs() < 0.001, "{v}");
    // Each client's table holds its last load: about a 512 kB share of the rows copied.
    let rows_each = v["rows"].as_f64().unwrap() / executions as f64;
    for client in 0..2 {
        let sql = format!("SELECT count(*) FROM retail_load_{client}");
        let held: f64 = support::psql(&inst, "sized", &sql).trim().parse().unwrap();
        assert!(
            (held / rows_each - 1.0).abs() < 0.01,
            "client {client}: {held}, {v}"
        );
    }
    support::assert_server_agrees(&s["server"][0], 0);
    assert_eq!(
        support::psql(&inst, "sized", facts),
        before,
        "the fact table is untouched"
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("MB/s per stream") && report.contains("rows returned"));

    // A long operation shows on the progress line while it runs, with its elapsed time.
    let sleep = home.path().join("long.sql");
    std::fs::write(&sleep, "SELECT pg_sleep(2.6);\n").unwrap();
    let o = support::ok(support::run_tidebench(
        &home,
        &[
            "run",
            "-f",
            sleep.to_str().unwrap(),
            "--target",
            "instance:rl/sized",
            "-c",
            "1",
            "-T",
            "3s",
            "-P",
            "1",
            "--out",
            home.path().join("long").to_str().unwrap(),
        ],
    ));
    assert!(text(&o).contains(", running: long "), "{}", text(&o));

    // Segments with the cores and memory given, where control groups can be made; more than
    // the host has is refused with what each may have.
    let cores = std::thread::available_parallelism()
        .unwrap()
        .get()
        .to_string();
    let segments = |share: &[&str]| {
        let mut args = vec!["--size", "1MB", "--segments", "2"];
        args.extend_from_slice(share);
        prepare("mpp", &args)
    };
    let o = segments(&["--segment-cpus", &cores]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = segments(&["--segment-cpus", "0.5", "--segment-memory", "512MB"]);
    if support::cgroups_writable() {
        support::ok(o);
        let seg = tidebench::instance::find(&home.home, "rl-seg2").unwrap();
        assert_eq!(seg.limits(), (Some(0.5), Some(512 << 20)));
        let o = support::ok(support::run_tidebench(
            &home,
            &["check", "-w", "retail", "--target", "instance:rl/mpp"],
        ));
        assert!(text(&o).contains("each of 2 segments"), "{}", text(&o));
    } else {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("root"), "{}", text(&o));
    }
}
