//! Per-group workload options against real instances: `--isolation` reaches every session,
//! and TPC-C's `--think spec` holds each client to the spec's keying and think times.

use crate::support::{self, ok, output_text as text, run_tidebench as tb, summary};

/// TPC-B's branch update conflicts between concurrent clients at scale 1. Under read
/// committed the second writer waits and goes on; under repeatable read it fails with a
/// serialization error. Seeing those errors proves the sessions ran at the level asked for.
#[test]
fn isolation_flag_sets_the_level_of_every_session() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "iso");
    ok(tb(
        &home,
        &["prepare", "--workload", "tpcb", "--target", "instance:iso"],
    ));
    let run = |level: &str| {
        let out = home.path().join(format!("res-{level}"));
        let o = tb(
            &home,
            &[
                "run",
                "--workload",
                "tpcb",
                "--target",
                "instance:iso",
                "-c",
                "4",
                "-T",
                "3",
                "--sample",
                "0",
                "--isolation",
                level,
                "--out",
                out.to_str().unwrap(),
            ],
        );
        (o, summary(&out))
    };
    let (o, rc) = run("read-committed");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rc["totals"]["failed"], 0, "read committed never fails tpcb");
    let (o, rr) = run("repeatable-read");
    assert!(
        text(&o).contains("--max-tries 10 to retry them"),
        "a stricter level without retries gets a note: {}",
        text(&o)
    );
    let serialization = rr["totals"]["failed_by_class"]["serialization"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        serialization > 0,
        "repeatable read makes concurrent branch updates fail: {}\n{rr}",
        text(&o)
    );
    assert_eq!(
        rr["server"][0]["xact_commit_delta"].as_i64().unwrap(),
        support::committed_over_run(&rr),
        "setting the level at startup adds no transaction"
    );
}

/// With the spec's keying times (at least 2 s before any transaction, 18 s before a
/// New-Order) a 4 s run can finish at most one transaction per client; without them the same
/// clients finish hundreds.
#[test]
fn think_spec_paces_tpcc_clients_at_terminal_speed() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "think");
    support::prepare_tpcc(&home, "think", "1");
    let out = home.path().join("res-think");
    let o = ok(tb(
        &home,
        &[
            "run",
            "--workload",
            "tpcc",
            "--target",
            "instance:think",
            "-c",
            "3",
            "-T",
            "4",
            "--sample",
            "0",
            "--think",
            "spec",
            "--clients-per-warehouse",
            "10",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    assert!(
        text(&o).contains("with 10 terminals"),
        "3 spec-paced clients on 1 warehouse get a note: {}",
        text(&o)
    );
    let s = summary(&out);
    let done = s["totals"]["committed"].as_u64().unwrap()
        + s["totals"]["expected_rollback"].as_u64().unwrap_or(0);
    assert!(
        done <= 3,
        "at most one transaction per client: {done}\n{}",
        text(&o)
    );
    assert_eq!(s["totals"]["failed"], 0, "{s}");
    // Keying and think pauses end at the run's end instead of holding it open (up to 18 s).
    let elapsed = s["elapsed_s"].as_f64().unwrap();
    assert!(elapsed < 10.0, "a 4 s run ended after {elapsed} s");
}
