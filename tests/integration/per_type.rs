//! The terminal's per-type table after a run over several targets (issue 55): each type ran on
//! two databases, so its latency comes from the histograms merged over both, as
//! `report --by type` merges them; the table shows figures, never `-` (as it once did in
//! `make demo`'s own run), and they are the report's.

use crate::support::{self, output_text as text, run_tidebench as tb};

/// Group A runs tpcb and B select-only on databases of their own, and the one phase mixes both
/// types on both, as the demo preset's last phase does.
const RUN_FILE: &str = r#"mode = "shared"
clients = 2
progress = "0"
poll = "0"
sample = "0"

[[group]]
name = "A"
workload = "tpcb"
scale = 1
target = "instance:pt/a"

[[group]]
name = "B"
workload = "select-only"
scale = 1
target = "instance:pt/b"

[[phase]]
duration = "2s"
shares = { A = 50, B = 50 }
mix = { tpcb = 50, select-only = 50 }
"#;

/// The rows of a table whose header starts with `head`: first column → the other columns.
fn rows(out: &str, head: &str) -> Vec<Vec<String>> {
    out.lines()
        .skip_while(|l| !l.trim_start().starts_with(head))
        .skip(1)
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        // Until the next table's header (the groups'), whose second column is no number.
        .take_while(|cols| cols.len() >= 7 && cols[1].parse::<f64>().is_ok())
        .collect()
}

#[test]
fn the_per_type_table_of_a_multi_target_run_has_merged_percentiles() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "pt");
    let file = support::script_file(&home, "two.toml", RUN_FILE);
    support::ok(tb(&home, &["prepare", &file]));
    let out = home.path().join("res");
    let run = support::ok(tb(&home, &["run", &file, "--out", out.to_str().unwrap()]));
    let console = text(&run);
    // type, mix %, transactions, tps, failed, mean ms, p95 ms
    let table = rows(&console, "type ");
    assert_eq!(table.len(), 2, "{console}");
    let by = support::ok(tb(
        &home,
        &["report", out.to_str().unwrap(), "--by", "type"],
    ));
    let by = text(&by);
    // txn_type, count, committed, failed, share_%, tps, mean_ms, p95_ms, p99_ms
    let merged = rows(&by, "txn_type");
    for row in &table {
        let mean: f64 = row[5].parse().unwrap_or_else(|_| panic!("{console}"));
        let p95: f64 = row[6].parse().unwrap_or_else(|_| panic!("{console}"));
        assert!(mean > 0.0 && p95 >= mean * 0.5, "{row:?}");
        let same = merged
            .iter()
            .find(|m| m[0] == row[0])
            .unwrap_or_else(|| panic!("{} in {by}", row[0]));
        assert_eq!((&row[5], &row[6]), (&same[6], &same[7]), "{console}\n{by}");
    }
    // Both types ran on both databases: their latencies were merged, not taken from one.
    let s = support::summary(&out);
    let per_target = s["by_target_and_type"].as_array().unwrap();
    for t in ["tpcb", "select-only"] {
        let targets = per_target.iter().filter(|r| r["txn_type"] == t).count();
        assert_eq!(targets, 2, "{t}: {per_target:?}");
    }
}
