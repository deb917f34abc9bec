//! TPC-H part 2 (issue 51) at SF 0.01 against a real instance: `--qphh`, the power test with
//! the refresh functions (RF1 first, RF2 last) then the throughput test with two query streams
//! and a refresh stream, QphH@Size from the two, the database after each refresh pair (the delete set's orders gone, the
//! insert set's there with all their lines, as many orders as loaded), and after four pairs
//! the 22 qualification answers equal DuckDB's on the generated files refreshed the same way
//! (the same update sets, from the library, applied in DuckDB). One load serves it all, so
//! the test stays one instance and one SF 0.01 load.

use tidebench::workload::tpch::answers::{compare, parse_answer};
use tidebench::workload::tpch::refresh::UpdateSets;
use tidebench::workload::tpch::rows::ScaleFactor;

use crate::support::{self, num, ok, output_text as text, run_tidebench as tb, summary};
use crate::tpch::{duck_set, duckdb_answers, duckdb_available, write_csv};

const SEED: &str = "5";

/// `tidebench run --workload tpch` with `args`, parallel workers off (their transactions
/// count on this server: without them its count is the run's, exactly), into `out`.
fn run(home: &support::TempHome, out: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "run",
        "--workload",
        "tpch",
        "--seed",
        SEED,
        "--session-set",
        "max_parallel_workers_per_gather=0",
        "-P",
        "0",
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let said = text(&ok(tb(home, &all)));
    if args.contains(&"--qphh") {
        // The throughput test's console summary has the three metrics.
        assert!(said.contains("QphH@Size"), "{said}");
        return checked(&out.join("throughput"));
    }
    checked(out)
}

/// The summary in `out`, with no unit failed and the server's count the run's.
fn checked(out: &std::path::Path) -> serde_json::Value {
    let s = summary(out);
    assert_eq!(s["totals"]["failed"], 0, "{}", s["totals"]);
    for server in s["server"].as_array().unwrap() {
        support::assert_server_agrees(server, 0);
    }
    s
}

/// The figure labelled `label` of a summary.
fn figure<'a>(s: &'a serde_json::Value, label: &str) -> &'a serde_json::Value {
    s["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["label"] == label)
        .unwrap_or_else(|| panic!("no {label} in {}", s["figures"]))
}

/// After pairs 1..=`pairs`: every delete set's orders and lines gone, every insert set's
/// orders there with the lines the generator made, as many orders as loaded.
fn check_pairs(inst: &tidebench::instance::Instance, sets: &UpdateSets, pairs: u32, loaded: f64) {
    let seed: u64 = SEED.parse().unwrap();
    let mut lines_in = 0usize;
    for pair in 1..=pairs {
        let list = |keys: Vec<i64>| {
            keys.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let gone = list(sets.delete_keys(pair).unwrap());
        let orders = sets.new_sales(pair, seed).unwrap();
        lines_in += orders.iter().map(|o| o.lines.len()).sum::<usize>();
        let new = list(orders.iter().map(|o| o.key).collect());
        let count = |sql: String| num(inst, &sql);
        assert_eq!(
            count(format!(
                "select count(*) from orders where o_orderkey in ({gone})"
            )),
            0.0
        );
        assert_eq!(
            count(format!(
                "select count(*) from lineitem where l_orderkey in ({gone})"
            )),
            0.0
        );
        assert_eq!(
            count(format!(
                "select count(*) from orders where o_orderkey in ({new})"
            )),
            orders.len() as f64
        );
        let lines: usize = orders.iter().map(|o| o.lines.len()).sum();
        assert_eq!(
            count(format!(
                "select count(*) from lineitem where l_orderkey in ({new})"
            )),
            lines as f64,
            "pair {pair}"
        );
    }
    assert_eq!(num(inst, "select count(*) from orders"), loaded);
    assert!(lines_in > 0);
    // Every line has its order and every order a line: the keys stay consistent.
    assert_eq!(
        num(
            inst,
            "select count(*) from lineitem where not exists \
             (select 1 from orders where o_orderkey = l_orderkey)"
        ),
        0.0
    );
    assert_eq!(
        num(
            inst,
            "select count(*) from orders where not exists \
             (select 1 from lineitem where l_orderkey = o_orderkey)"
        ),
        0.0
    );
    assert_eq!(
        num(inst, "select inserted from tpch_refresh"),
        f64::from(pairs)
    );
    assert_eq!(
        num(inst, "select deleted from tpch_refresh"),
        f64::from(pairs)
    );
}

#[test]
fn tpch_refresh_pairs_keep_the_database_valid_and_the_throughput_test_counts_every_stream() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "tr");
    let target = ["--target", "instance:tr"];
    // With the indexes, Q17 and Q20's correlated subqueries take milliseconds, not seconds:
    // five runs' streams stay short (the answers do not depend on them).
    ok(tb(
        &home,
        &[
            "prepare",
            "--workload",
            "tpch",
            "--sf",
            "0.01",
            "--indexes",
            "--jobs",
            "2",
            "--target",
            "instance:tr",
        ],
    ));
    let loaded = num(&inst, "select count(*) from orders");
    let sets = UpdateSets::new(ScaleFactor::new(0.01).unwrap());

    // QphH@Size in one command: the power test with the refresh functions (22 queries and
    // pair 1, Power@Size over 24 intervals) into qphh/power, then the throughput test (2
    // query streams and the refresh stream's pairs 2 and 3) into qphh/throughput.
    let qphh = home.path().join("qphh");
    let mut args = vec!["-c", "3", "--qphh"];
    args.extend_from_slice(&target);
    let s = run(&home, &qphh, &args);
    let power = qphh.join("power");
    let ps = checked(&power);
    assert_eq!(ps["totals"]["committed"], 24, "{}", ps["totals"]);
    let p = figure(&ps, "Power@Size");
    assert_eq!(p["valid"], true, "{p}");
    assert!(p["note"].as_str().unwrap().contains("RF1, RF2"), "{p}");
    let thr = qphh.join("throughput");
    assert_eq!(s["totals"]["committed"], 2 * 22 + 4, "{}", s["totals"]);
    // The throughput test carries the power test's figure as it was measured.
    assert_eq!(figure(&s, "Power@Size")["value"], p["value"]);
    let t = figure(&s, "Throughput@Size");
    assert_eq!(t["valid"], true, "{t}");
    assert!(t["value"].as_f64().unwrap() > 0.0, "{t}");
    let q = figure(&s, "QphH@Size");
    assert_eq!(q["valid"], true, "{q}");
    let expected = (p["value"].as_f64().unwrap() * t["value"].as_f64().unwrap()).sqrt();
    assert!(
        (q["value"].as_f64().unwrap() - expected).abs() <= 0.05,
        "{q} vs {expected}"
    );
    // Bad input before anything runs: a Power@Size given beside --qphh, or no client for a
    // query stream; exit 2 with the fix, no results dir.
    let refused = home.path().join("refused");
    for (bad, fix) in [
        (
            &["-c", "3", "--power-at-size", "5"][..],
            "drop --power-at-size",
        ),
        (&["-c", "1"][..], "at least 2"),
    ] {
        let mut all = vec!["run", "--workload", "tpch", "--qphh", "--out"];
        all.push(refused.to_str().unwrap());
        all.extend_from_slice(bad);
        all.extend_from_slice(&target);
        let o = tb(&home, &all);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(fix), "{}", text(&o));
        assert!(!refused.exists());
    }
    let units = s["unit_times"].as_array().unwrap();
    let of = |stream: &str| units.iter().filter(|u| u["stream"] == stream).count();
    assert_eq!((of("stream 1"), of("stream 2"), of("refresh")), (22, 22, 4));
    check_pairs(&inst, &sets, 3, loaded);
    // The report draws the bars per unit; compare sets the two runs unit by unit.
    let page = std::fs::read_to_string(thr.join("report.html")).unwrap();
    assert!(page.contains("Time per unit and stream"), "no unit chart");
    assert!(page.contains("<th>refresh s</th>"), "no refresh column");
    let cmp = ok(tb(
        &home,
        &["compare", power.to_str().unwrap(), thr.to_str().unwrap()],
    ));
    let cmp = text(&cmp);
    assert!(cmp.contains("per unit (mean s)"), "{cmp}");
    assert!(
        cmp.lines()
            .any(|l| l.starts_with("Q14 ") && l.trim_end().ends_with('x')),
        "{cmp}"
    );
    answers_agree_with_duckdb_refreshed_alike(&home, &inst, &sets, loaded);
}

/// After four pairs (the test above's three and one more power test's), the qualification
/// answers agree with DuckDB's on the generated files with the same four pairs applied.
fn answers_agree_with_duckdb_refreshed_alike(
    home: &support::TempHome,
    inst: &tidebench::instance::Instance,
    sets: &UpdateSets,
    loaded: f64,
) {
    let test =
        "tpch_refresh_pairs_keep_the_database_valid_and_the_throughput_test_counts_every_stream";
    let refreshed = home.path().join("fourth");
    run(
        home,
        &refreshed,
        &["-c", "1", "--refresh", "--target", "instance:tr"],
    );
    check_pairs(inst, sets, 4, loaded);
    if let Err(why) = duckdb_available() {
        support::skip(test, "DuckDB", &why);
        return;
    }

    // The qualification queries on the refreshed data, and DuckDB's on the same changes.
    let out = home.path().join("res");
    run(
        home,
        &out,
        &["-c", "1", "--qualification", "--target", "instance:tr"],
    );
    let seed: u64 = SEED.parse().unwrap();
    let mut changes = Vec::new();
    for pair in 1..=4 {
        let orders = sets.new_sales(pair, seed).unwrap();
        let values: Vec<&str> = orders.iter().map(|o| o.order.as_str()).collect();
        changes.push(format!("INSERT INTO orders VALUES {}", values.join(",")));
        let lines: Vec<&str> = orders
            .iter()
            .flat_map(|o| o.lines.iter().map(String::as_str))
            .collect();
        changes.push(format!("INSERT INTO lineitem VALUES {}", lines.join(",")));
        let gone: Vec<String> = sets
            .delete_keys(pair)
            .unwrap()
            .iter()
            .map(i64::to_string)
            .collect();
        changes.push(format!(
            "DELETE FROM lineitem WHERE l_orderkey IN ({})",
            gone.join(",")
        ));
        changes.push(format!(
            "DELETE FROM orders WHERE o_orderkey IN ({})",
            gone.join(",")
        ));
    }
    let csv = home.path().join("csv");
    write_csv(&csv);
    let duck = home.path().join("duck");
    duckdb_answers(&csv, &out.join("tpch/queries"), &duck, &changes);
    let mut differ = Vec::new();
    for q in 1..=22u8 {
        let file = format!("stream0_q{q}.txt");
        let read = |dir: &std::path::Path| std::fs::read_to_string(dir.join(&file)).unwrap();
        let expected = duck_set(&read(&duck));
        let actual = parse_answer(&read(&out.join("tpch/answers")));
        if let Err(m) = compare(q, &expected, &actual.rows) {
            differ.push(format!("Q{q}: {m}"));
        }
    }
    assert!(
        differ.is_empty(),
        "PostgreSQL and DuckDB differ after 4 pairs: {differ:#?}"
    );
}
