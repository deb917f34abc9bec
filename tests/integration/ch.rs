//! CH-benCHmark (issue 52) against a real instance at 1 warehouse: the load holds CH's three
//! tables and two columns beside TPC-C's; the 22 queries, run by `tidebench run --workload
//! ch -c 1`, answer what DuckDB answers on the same rows exported as CSV at the end of the
//! load, and every one returns rows whose values are not NULL (the load's rows are drawn
//! from a fixed seed, so this holds at every load); then a `tpcc` group and a `ch` group
//! share the database in one run, both make progress, the server agrees with both, and
//! TPC-C's `check` passes.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use tidebench::instance::{Instance, DEFAULT_DBNAME};

use crate::support::{self, num, ok, output_text as text, psql, run_tidebench as tb, summary};
use crate::tpch::duckdb_available;

/// Every table of the load, TPC-C's and CH's.
const TABLES: [&str; 12] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
    "region",
    "nation",
    "supplier",
];

#[test]
fn ch_answers_agree_with_duckdb_and_run_beside_tpcc() {
    let home = support::temp_home();
    // The preset's groups share the default instance's database: one load for every check.
    let inst = support::start_instance(&home, "default");
    let target = "instance:default";
    sized_preset(&home);
    ok(tb(&home, &["prepare", "--preset", "ch", "--jobs", "2"]));
    load_shape(&inst);

    let csv = home.path().join("csv");
    export_csv(&inst, &csv);
    let out = home.path().join("res");
    // DuckDB loads the exported rows while tidebench runs the queries, answers once they are
    // written (closing its stdin says so), and goes on while the mixed run changes the
    // database's rows.
    let duck = home.path().join("duck");
    let mut referee = match duckdb_available() {
        Err(why) => {
            support::skip("ch (DuckDB's answers)", "DuckDB", &why);
            None
        }
        Ok(()) => Some(duckdb_answers(
            &inst,
            &csv,
            &out.join("ch/queries"),
            &out.join("ch/answers"),
            &duck,
        )),
    };
    ok(tb(
        &home,
        &[
            "run",
            "--workload",
            "ch",
            "-c",
            "1",
            "--target",
            target,
            "--session-set",
            "max_parallel_workers_per_gather=0",
            "-P",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let s = summary(&out);
    assert_eq!(s["totals"]["committed"], 22, "{}", s["totals"]);
    for server in s["server"].as_array().unwrap() {
        support::assert_server_agrees(server, 0);
    }
    // Rows with values for every query (see the book).
    for q in 1..=22u8 {
        let answer =
            std::fs::read_to_string(out.join(format!("ch/answers/stream0_q{q}.txt"))).unwrap();
        let first = answer.lines().nth(1).unwrap_or("");
        assert!(
            !first.is_empty() && first.split('|').all(|v| !v.is_empty()),
            "Q{q} has no row with values:\n{answer}"
        );
    }

    if let Some(child) = referee.as_mut() {
        drop(child.stdin.take());
    }
    mixed_run(&home, &inst, target);
    fresh_on_a_standby(&home);
    if let Some(child) = referee {
        let o = child.wait_with_output().expect("wait for python3");
        assert!(o.status.success(), "DuckDB: {}", text(&o));
        // One line per query whose rows differ; every query must have been compared.
        let differ = String::from_utf8_lossy(&o.stdout);
        assert!(
            differ.trim().is_empty(),
            "PostgreSQL and DuckDB differ:\n{differ}"
        );
        for q in 1..=22u8 {
            assert!(duck.join(format!("stream0_q{q}.txt")).exists(), "Q{q}");
        }
    }
}

/// `--warehouses` sizes preset ch's groups, in `presets --show` and `prepare` alike, and a
/// preset without that knob still refuses it.
fn sized_preset(home: &support::TempHome) {
    let shown = text(&ok(tb(
        home,
        &["presets", "--show", "ch", "--warehouses", "3"],
    )));
    assert_eq!(shown.matches("scale = 3").count(), 2, "{shown}");
    let dry = text(&ok(tb(
        home,
        &[
            "prepare",
            "--preset",
            "ch",
            "--warehouses",
            "3",
            "--dry-run",
        ],
    )));
    assert!(dry.contains("would load ch at scale 3"), "{dry}");
    let refused = tb(home, &["prepare", "--preset", "demo", "--warehouses", "3"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
}

/// The load holds CH's three tables and two columns beside TPC-C's, with the balances
/// Delivery would have left.
fn load_shape(inst: &Instance) {
    for (table, rows) in [("region", 5.0), ("nation", 62.0), ("supplier", 10_000.0)] {
        assert_eq!(num(inst, &format!("select count(*) from {table}")), rows);
    }
    // CH's columns are its joins' expressions; the loaded lines are counted into the stock.
    for sql in [
        "select count(*) from stock where s_su_suppkey <> mod(s_w_id * s_i_id, 10000)",
        "select count(*) from customer where c_n_nationkey <> ascii(substr(c_state, 1, 1))",
        "select count(*) from orders where o_id < 2101 and o_entry_d >= \
           (select min(ol_delivery_d) from order_line)",
        // A balance owes the customer's delivered lines less the loaded payment (TPC-C's
        // condition 3.3.2.10).
        "select count(*) from customer left join \
           (select o_w_id, o_d_id, o_c_id, sum(ol_amount) as owed from orders join order_line \
              on ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id \
            where ol_delivery_d is not null group by 1, 2, 3) d \
           on o_w_id = c_w_id and o_d_id = c_d_id and o_c_id = c_id \
         where c_balance <> coalesce(owed, 0) - 10",
    ] {
        assert_eq!(num(inst, sql), 0.0, "{sql}");
    }
    assert_eq!(
        num(inst, "select sum(s_order_cnt) from stock"),
        num(inst, "select count(*) from order_line")
    );
}

/// Preset ch: a `ch` group and a `tpcc` group on the one database, their clients from the
/// preset's knobs: both commit, the server counts every commit of both, the summary sets the
/// OLTP group beside the streams against it alone, and TPC-C's consistency conditions hold
/// after.
fn mixed_run(home: &support::TempHome, inst: &Instance, target: &str) {
    let out = home.path().join("mixed");
    let o = ok(tb(
        home,
        &[
            "run",
            "--preset",
            "ch",
            "--warehouses",
            "1",
            "--oltp-clients",
            "1",
            "--ch-streams",
            "1",
            "--phase-duration",
            "4s",
            "--seed",
            "3",
            "-P",
            "0",
            "--poll",
            "0",
            "--session-set",
            "max_parallel_workers_per_gather=0",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let s = summary(&out);
    let committed = |prefix: &str| -> u64 {
        s["by_target_and_type"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["txn_type"].as_str().unwrap().starts_with(prefix))
            .map(|r| r["committed"].as_u64().unwrap())
            .sum()
    };
    assert!(committed("CH") > 0, "{}", s["by_target_and_type"]);
    assert!(committed("new_order") > 0, "{}", s["by_target_and_type"]);
    // The OLTP group alone, then beside the streams: its phases side by side.
    let phases = s["phases"].as_array().unwrap();
    let group = |phase: &str, g: &str| {
        phases
            .iter()
            .filter(|p| p["phase"] == phase)
            .flat_map(|p| p["groups"].as_array().unwrap())
            .find(|x| x["group"] == g)
            .cloned()
            .unwrap_or_default()
    };
    let count = |v: &serde_json::Value, key: &str| v[key].as_u64().unwrap_or(0);
    let (alone, beside) = (group("alone", "O"), group("beside", "O"));
    assert!(
        count(&alone, "clients") == 1 && count(&alone, "committed") > 0,
        "{phases:?}"
    );
    assert!(
        count(&beside, "clients") == 1 && count(&beside, "committed") > 0,
        "{phases:?}"
    );
    let streams = group("beside", "A");
    assert_eq!(count(&group("alone", "A"), "committed"), 0, "{phases:?}");
    assert!(count(&streams, "committed") > 0, "{phases:?}");
    cost_line(&s, &alone, &beside, &streams, &text(&o));
    // The streams read the server O writes to: freshness is n/a, and says why.
    let why = s["freshness"]["not_applicable"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("no group reads a hot standby"),
        "{}",
        s["freshness"]
    );
    assert!(text(&o).contains("freshness: n/a"), "{}", text(&o));
    for server in s["server"].as_array().unwrap() {
        support::assert_server_agrees(server, 0);
    }
    assert!(num(inst, "select count(*) from orders") > 30_000.0);
    ok(tb(
        home,
        &["check", "--workload", "tpcc", "--target", target],
    ));
    let report = ok(tb(home, &["report", out.to_str().unwrap()]));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap_or_default();
    assert!(
        html.contains("NOTPM ratio") && html.contains("new_order p95"),
        "{}",
        text(&report)
    );
}

/// The streams on a hot standby of the OLTP group's instance: the run measures how long after
/// a commit on the primary a query on the standby can see it, per phase, in the summary, on
/// the console and in the report; the server agrees with both groups' commits on both.
fn fresh_on_a_standby(home: &support::TempHome) {
    // With hot_standby_feedback the streams' snapshots hold back the primary's cleanup, so
    // replay never waits on them (without it, replay may wait up to
    // max_standby_streaming_delay, 30 s, and a phase of 3 s could end with no sample seen).
    ok(tb(
        home,
        &[
            "instance",
            "start",
            "st",
            "--standby-of",
            "default",
            "--set",
            "hot_standby_feedback=on",
        ],
    ));
    let file = home.path().join("standby.toml");
    std::fs::write(
        &file,
        "mode = \"independent\"\n\
         [[group]]\nname = \"O\"\nworkload = \"tpcc\"\ntarget = \"instance:default\"\n\
         [[group]]\nname = \"A\"\nworkload = \"ch\"\ntarget = \"instance:st\"\n\
         repeat_streams = true\n\
         [[phase]]\nname = \"read\"\nduration = \"3s\"\nclients = { O = 1, A = 1 }\n",
    )
    .unwrap();
    let out = home.path().join("fresh");
    let o = ok(tb(
        home,
        &[
            "run",
            file.to_str().unwrap(),
            "-P",
            "0",
            "--poll",
            "0",
            "--session-set",
            "max_parallel_workers_per_gather=0",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let s = summary(&out);
    let f = &s["freshness"]["phases"][0];
    assert_eq!(
        (
            f["standby"].as_str(),
            f["primary"].as_str(),
            f["phase"].as_str()
        ),
        (Some("st"), Some("default"), Some("read")),
        "{}",
        s["freshness"]
    );
    assert_eq!(f["readers"], serde_json::json!(["A"]));
    assert!(f["samples"].as_u64().unwrap_or(0) > 0, "{f}");
    let ms = |k: &str| f[k].as_f64().unwrap_or(-1.0);
    assert!(
        0.0 <= ms("p50_ms") && ms("p50_ms") <= ms("p95_ms") && ms("p95_ms") <= ms("max_ms"),
        "{f}"
    );
    assert!(
        text(&o).contains("freshness of st (standby of default, read by A) in phase read"),
        "{}",
        text(&o)
    );
    for server in s["server"].as_array().unwrap() {
        support::assert_server_agrees(server, 0);
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap_or_default();
    assert!(html.contains("freshness p50 (ms)"), "no freshness table");
}

/// What the streams cost the OLTP group, as the summary states it: the phases' own NOTPM of
/// group O, New-Order's p95 on both sides, their ratios, and the streams' clients and
/// commits; the console prints the same line.
fn cost_line(
    s: &serde_json::Value,
    alone: &serde_json::Value,
    beside: &serde_json::Value,
    streams: &serde_json::Value,
    console: &str,
) {
    let pairs = s["interference"].as_array().expect("an interference pair");
    assert_eq!(pairs.len(), 1, "{pairs:?}");
    let p = &pairs[0];
    assert_eq!(
        (p["group"].as_str(), p["label"].as_str()),
        (Some("O"), Some("NOTPM"))
    );
    assert_eq!(p["txn_type"], "new_order");
    assert_eq!(
        (p["alone"]["phase"].as_str(), p["beside"]["phase"].as_str()),
        (Some("alone"), Some("beside"))
    );
    assert_eq!(p["alone"]["headline"], alone["headline"], "{p}");
    assert_eq!(p["beside"]["headline"], beside["headline"], "{p}");
    let notpm = |v: &serde_json::Value| v["headline"].as_f64().unwrap();
    let ratio = p["ratio"].as_f64().unwrap();
    assert!(
        (ratio - notpm(&p["beside"]) / notpm(&p["alone"])).abs() < 0.001,
        "{p}"
    );
    let p95 = |v: &serde_json::Value| v["p95_ms"].as_f64().unwrap();
    assert!(p95(&p["alone"]) > 0.0 && p95(&p["beside"]) > 0.0, "{p}");
    let p95_ratio = p["p95_ratio"].as_f64().unwrap();
    assert!(
        (p95_ratio - p95(&p["beside"]) / p95(&p["alone"])).abs() < 0.001,
        "{p}"
    );
    let n = &p["neighbours"][0];
    assert_eq!(
        (n["group"].as_str(), n["clients"].as_u64()),
        (Some("A"), Some(1)),
        "{p}"
    );
    assert_eq!(n["committed"], streams["committed"], "{p}");
    assert!(
        console.contains(&format!(
            "cost O (1 client): NOTPM {:.1} → {:.1}",
            notpm(&p["alone"]),
            notpm(&p["beside"])
        )),
        "{console}"
    );
}

/// Each table as a CSV file with a header, as PostgreSQL has it.
fn export_csv(inst: &Instance, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for t in TABLES {
        let rows = psql(
            inst,
            DEFAULT_DBNAME,
            &format!("copy {t} to stdout with (format csv, header)"),
        );
        std::fs::write(dir.join(format!("{t}.csv")), rows).unwrap();
    }
}

/// DuckDB makes each table with PostgreSQL's column types and loads its CSV file; once its
/// stdin is closed (the queries have run), it runs each query file of `queries` (the texts
/// tidebench ran, stream 0), writing `stream0_q<N>.txt` into `out` (a header line, then
/// rows, values separated by `|`), and sets each against tidebench's answer of the same name
/// in `answers`, printing one line per query whose rows differ. Rows are compared as sorted
/// lists of values as both engines agree on them: numbers to 1/1000 (PostgreSQL prints
/// averages to 16 places, DuckDB as a float), anything else trimmed; where a query's `order
/// by` leaves ties, the engines may order them differently, and the collations of `order by`
/// on text differ. It runs on while the caller goes on (and compares in Python: a debug
/// build takes seconds over Q16's 100,000 rows).
fn duckdb_answers(
    inst: &Instance,
    csv: &Path,
    queries: &Path,
    answers: &Path,
    out: &Path,
) -> Child {
    std::fs::create_dir_all(out).unwrap();
    let columns = psql(
        inst,
        DEFAULT_DBNAME,
        "select table_name, column_name, case when data_type = 'numeric' \
           then format('decimal(%s,%s)', numeric_precision, numeric_scale) \
           when data_type like 'timestamp%' then 'timestamp' \
           when data_type in ('integer', 'date') then data_type else 'varchar' end \
         from information_schema.columns where table_schema = 'public' \
         order by table_name, ordinal_position",
    );
    let script = r#"
import duckdb, math, os, sys
csv, queries, answers, out, columns = sys.argv[1:6]
def canonical(v):
    t = v.strip()
    if "_" not in t:
        try:
            x = float(t)
            if math.isfinite(x):
                return f"{x:.3f}"
        except ValueError:
            pass
    return t
def rows(lines):
    return sorted([canonical(v) for v in l.split("|")] for l in lines if l)
# No progress bar: past 2 s a query draws one on stdout, where a difference would be.
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
tables = {}
for line in columns.splitlines():
    if line.strip():
        t, c, kind = line.split("|")
        tables.setdefault(t, []).append(f"{c} {kind}")
for t, cols in tables.items():
    path = os.path.join(csv, t + ".csv")
    if os.path.exists(path):
        con.execute(f"create table {t} ({', '.join(cols)})")
        con.execute(f"copy {t} from '{path}' (header, delimiter ',', quote '\"')")
sys.stdin.read()
def value(v):
    return "" if v is None else str(v)
for q in range(1, 23):
    name = f"stream0_q{q}"
    text = open(os.path.join(queries, name + ".sql")).read()
    body = "\n".join(l for l in text.splitlines() if not l.startswith("--")).strip().rstrip(";")
    cur = con.execute(body)
    columns = [d[0] for d in cur.description]
    theirs = ["|".join(value(v) for v in r) for r in cur.fetchall()]
    with open(os.path.join(out, name + ".txt"), "w") as f:
        f.write("|".join(columns) + "\n")
        for line in theirs:
            f.write(line + "\n")
    ours = open(os.path.join(answers, name + ".txt")).read().splitlines()[1:]
    a, b = rows(ours), rows(theirs)
    if len(a) != len(b):
        print(f"Q{q}: {len(a)} rows where DuckDB has {len(b)}")
    else:
        for x, y in zip(a, b):
            if x != y:
                print(f"Q{q}: row {x} where DuckDB has {y}")
                break
"#;
    Command::new("python3")
        .args(["-c", script])
        .arg(csv)
        .arg(queries)
        .arg(answers)
        .arg(out)
        .arg(columns)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3")
}

/// Preset `ch-interference` at its smallest (1 warehouse, 1 OLTP client, 1 stream, phases of
/// 3 s): the OLTP group alone then beside a stream, with the stream on its database and then
/// on a database of a second instance; the run ends with the curve's table on the console
/// and its two charts in report.html, with every point of both placements.
#[test]
fn ch_interference_curve_of_both_placements() {
    let home = support::temp_home();
    // Both instances with the tests' settings; the preset's [[instance]] takes ch-split as made.
    let _inst = support::start_instance(&home, "default");
    let _split = support::start_instance(&home, "ch-split");
    let knobs = ["--preset", "ch-interference", "--ch-streams", "1"];
    ok(tb(
        &home,
        &[&["prepare"][..], &knobs, &["--parallel-targets", "2"]].concat(),
    ));
    let out = home.path().join("curve");
    let o = ok(tb(
        &home,
        &[
            &["run"][..],
            &knobs,
            &[
                "--oltp-clients",
                "1",
                "--phase-duration",
                "3s",
                "-P",
                "0",
                "--poll",
                "0",
                "--session-set",
                "max_parallel_workers_per_gather=0",
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
    ));
    let console = text(&o);
    let s = summary(&out);
    let pairs = s["interference"].as_array().expect("interference pairs");
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    let table = console
        .split("interference curve of O")
        .nth(1)
        .unwrap_or_else(|| panic!("no curve table:\n{console}"));
    for (p, placement) in pairs.iter().zip(["same", "split"]) {
        let n = &p["neighbours"][0];
        assert_eq!(n["group"], placement, "{p}");
        // Queries per hour over the phase's seconds (one query of a busy machine's stream
        // may outlast a phase of 3 s: 0 is a point too).
        let phase = s["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|ph| ph["phase"] == p["beside"]["phase"])
            .unwrap();
        let per_hour =
            n["committed"].as_f64().unwrap() * 3600.0 / phase["duration_s"].as_f64().unwrap();
        assert!(
            (n["per_hour"].as_f64().unwrap() - per_hour).abs() < 0.1,
            "{p} {phase}"
        );
        assert_eq!(p["alone"]["phase"], format!("alone-{placement}"), "{p}");
        // Every point is a row: the alone phase at 0 streams, the beside phase at 1.
        for (side, clients) in [("alone", 0), ("beside", 1)] {
            let row = format!(
                "{placement} {} {clients}",
                p[side]["phase"].as_str().unwrap()
            );
            let squeezed: Vec<String> = table
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect();
            assert!(
                squeezed.iter().any(|l| l.starts_with(&row)),
                "no row '{row}' in:\n{table}"
            );
        }
    }
    // The run draws report.html at its end.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap_or_default();
    // Each chart is an SVG whose points are the lines' circles: one per row of the table.
    for chart in [
        "NOTPM of O against the neighbours",
        "new_order p90 (ms) of O",
    ] {
        let svg = html
            .split(chart)
            .nth(1)
            .and_then(|rest| rest.split("</svg>").next())
            .unwrap_or_else(|| panic!("no chart '{chart}'"));
        assert_eq!(svg.matches("<circle").count(), 4, "{chart}:\n{svg}");
        for line in ["beside same", "beside split"] {
            assert!(svg.contains(line), "no line '{line}' in '{chart}'");
        }
    }
}
