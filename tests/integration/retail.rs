//! The Greenplum study's analytic workload (issue 30, first part): the retail fact table loads
//! the same bytes whatever the number of COPY streams, every partition holds the generator's
//! rows, the two reports return what the same SQL returns on a plain unpartitioned copy and on
//! 2 segment instances behind a postgres_fdw coordinator, a run records both, and Ctrl-C
//! leaves no report running at the server.

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

    // Seed 002's Figure 3 as a sweep: each point prepares the data over its segment count.
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
    let child = support::spawn_tidebench(&home, &run_args(&out, "60s"));
    assert!(support::wait_for(
        &support::partial(&out).join("run-start.json"),
        Duration::from_secs(30)
    ));
    std::thread::sleep(Duration::from_secs(1));
    let (o, took) = support::interrupt(child);
    assert!(took < Duration::from_secs(5), "{took:?}: {}", text(&o));
    let running = support::psql(
        &inst,
        "postgres",
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' \
         AND query LIKE '%order_lineitems%' AND pid <> pg_backend_pid()",
    );
    assert_eq!(running.trim(), "0", "a report still runs after Ctrl-C");
}
