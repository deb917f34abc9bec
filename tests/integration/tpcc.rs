//! TPC-C (issue 5) against real instances: the loader's rows and value rules, each
//! transaction's effects, the 1% rollback as an expected rollback, `check` passing after a
//! concurrent run and failing on a corrupted district, TPC-C beside tpcb in an elastic run, and
//! an interrupted load that leaves nothing looking complete and needs no `--force` to redo.

use std::time::{Duration, Instant};

use pgwire::{Connection, Protocol};
use tidebench::instance::{Instance, DEFAULT_DBNAME};
use tidebench::workload::tpcc::{self, delivery, new_order, payment, procedures};
use tidebench::workload::tpcc::{Options, Tpcc};
use tidebench::workload::{ClientSlot, Rng, TxnEnd};

use crate::support::{
    self, num, ok, on_driver_loop, output_text as text, prepare_tpcc as prepare, psql,
    run_tidebench as tb, summary,
};

/// A 1-warehouse load on `inst` (named `name`) follows clause 4.3, is not overwritten without
/// `--force`, each transaction has its effects on it, and `check` passes after them.
fn the_load_follows_clause_4_3_and_each_transaction_has_its_effects(
    home: &support::TempHome,
    inst: &Instance,
    name: &str,
) {
    let target = format!("instance:{name}");

    // Cardinalities (clause 4.3.3.1).
    for (table, rows) in [
        ("warehouse", 1),
        ("district", 10),
        ("customer", 30_000),
        ("history", 30_000),
        ("orders", 30_000),
        ("new_order", 9_000),
        ("item", 100_000),
        ("stock", 100_000),
    ] {
        assert_eq!(
            num(inst, &format!("select count(*) from {table}")),
            f64::from(rows),
            "{table}"
        );
    }
    let lines = num(inst, "select count(*) from order_line");
    assert_eq!(lines, num(inst, "select sum(o_ol_cnt) from orders"));
    assert!((150_000.0..=450_000.0).contains(&lines), "{lines}");
    assert_eq!(
        psql(
            inst,
            DEFAULT_DBNAME,
            "select count(*), min(no_o_id), max(no_o_id) from new_order \
             group by no_d_id order by 1 limit 1"
        )
        .trim(),
        "900|2101|3000"
    );
    // C_LAST from the syllables; the first 1000 customers of a district take every name once.
    assert_eq!(
        num(
            inst,
            "select count(*) from customer where c_last !~ \
             '^(BAR|OUGHT|ABLE|PRI|PRES|ESE|ANTI|CALLY|ATION|EING){3}$'"
        ),
        0.0
    );
    assert_eq!(
        num(
            inst,
            "select count(distinct c_last) from customer where c_d_id = 1 and c_id <= 1000"
        ),
        1000.0
    );
    // About 10% ORIGINAL and 10% bad credit (5 sigma is well inside these bounds).
    for sql in [
        "select avg((i_data like '%ORIGINAL%')::int) from item",
        "select avg((s_data like '%ORIGINAL%')::int) from stock",
        "select avg((c_credit = 'BC')::int) from customer",
    ] {
        let share = num(inst, sql);
        assert!((0.09..=0.11).contains(&share), "{sql}: {share}");
    }
    // The stored load C obeys the delta rule with the run's C (clause 2.1.6.1).
    let c_load = num(inst, "select c_last_load from tpcc_meta") as i64;
    assert!(tpcc::random::c_last_delta_ok(
        c_load,
        tpcc::random::C_LAST_RUN
    ));

    // No silent overwrite.
    let again = tb(
        home,
        &[
            "prepare",
            "--workload",
            "tpcc",
            "--warehouses",
            "1",
            "--target",
            &target,
        ],
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(text(&again).contains("--force"), "{}", text(&again));

    transactions_have_their_effects(inst, &Options::default());
    ok(tb(
        home,
        &["check", "--workload", "tpcc", "--target", &target],
    ));
}

/// Each transaction type's effects on a fresh 1-warehouse load, run client-side or, with
/// `options.procedures`, through the functions: the two must not differ.
pub fn transactions_have_their_effects(inst: &Instance, options: &Options) {
    use rand::SeedableRng;

    let w = Tpcc::new(1, options);
    let state = w.client(ClientSlot { index: 0, count: 1 });
    let mut rng = Rng::seed_from_u64(3);
    let params = inst.connect_params(DEFAULT_DBNAME);
    let try_run = |args: &tpcc::Args| {
        on_driver_loop(async {
            let mut conn = Connection::connect(&params).await.expect("connect");
            w.execute(&mut conn, Protocol::Prepared, args).await
        })
    };
    let run = |args: tpcc::Args| try_run(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));

    // New-Order: d_next_o_id + 1, one order with 5-15 lines, one new_order row.
    let tpcc::Args::NewOrder(mut no) = w.draw_args(tpcc::NEW_ORDER, &state, &mut rng) else {
        panic!("not a new-order")
    };
    no.rollback = false;
    let next = |d: i64| {
        num(
            inst,
            &format!("select d_next_o_id from district where d_w_id = 1 and d_id = {d}"),
        )
    };
    let before = next(no.d_id);
    assert_eq!(run(tpcc::Args::NewOrder(no.clone())), TxnEnd::Committed);
    assert_eq!(next(no.d_id), before + 1.0);
    let o = before as i64;
    let n = num(
        inst,
        &format!(
            "select count(*) from order_line where ol_w_id = 1 and ol_d_id = {} and ol_o_id = {o}",
            no.d_id
        ),
    );
    assert!((5.0..=15.0).contains(&n) && n as usize == no.lines.len());
    assert_eq!(
        num(
            inst,
            &format!(
                "select count(*) from orders join new_order on (no_w_id, no_d_id, no_o_id) = \
                 (o_w_id, o_d_id, o_id) where o_w_id = 1 and o_d_id = {} and o_id = {o} \
                 and o_ol_cnt = {}",
                no.d_id,
                no.lines.len()
            )
        ),
        1.0
    );

    // The 1% rollback: an expected rollback that leaves the district as it was.
    no.rollback = true;
    let before = next(no.d_id);
    assert_eq!(
        run(tpcc::Args::NewOrder(no.clone())),
        TxnEnd::ExpectedRollback
    );
    assert_eq!(next(no.d_id), before);
    assert_eq!(new_order::UNUSED_ITEM, 100_001);

    // A customer that is not there: missing data (SQLSTATE 02000, failed "other"), and the
    // district's increment is undone with the rest.
    no.rollback = false;
    no.c_id = 3001;
    let missing = try_run(&tpcc::Args::NewOrder(no.clone()));
    let e = missing.expect_err("a new-order for customer 3001 fails");
    assert_eq!(e.sqlstate(), Some(b"02000"), "{e}");
    assert_eq!(next(no.d_id), before);

    // Payment: warehouse and district YTD grow by the amount, one history row more.
    let pay = payment::Args {
        w_id: 1,
        d_id: 4,
        c_w_id: 1,
        c_d_id: 4,
        customer: tpcc::CustomerKey::Last(tpcc::random::last_name(17)),
        amount_cents: 12_345,
    };
    let ytd = || {
        psql(
            inst,
            DEFAULT_DBNAME,
            "select w_ytd, d_ytd, (select count(*) from history) from warehouse \
             join district on d_w_id = w_id where d_id = 4",
        )
    };
    assert_eq!(ytd().trim(), "300000.00|30000.00|30000");
    assert_eq!(run(tpcc::Args::Payment(pay)), TxnEnd::Committed);
    assert_eq!(ytd().trim(), "300123.45|30123.45|30001");
    // By last name: the middle one in C_FIRST order (clause 2.5.2.2) paid.
    let middle = num(
        inst,
        &format!(
            "select c_id from (select c_id, row_number() over (order by c_first) rn, \
             count(*) over () cnt from customer where c_w_id = 1 and c_d_id = 4 \
             and c_last = '{}') x where rn = (cnt + 1) / 2",
            tpcc::random::last_name(17)
        ),
    );
    assert_eq!(
        psql(
            inst,
            DEFAULT_DBNAME,
            &format!(
                "select c_balance, c_payment_cnt, (select h_c_id from history \
                 where h_amount = 123.45) from customer \
                 where c_w_id = 1 and c_d_id = 4 and c_id = {middle}"
            )
        )
        .trim(),
        format!("-133.45|2|{middle}")
    );

    // Delivery: the oldest new_order of every district goes, with its carrier set.
    let oldest = || {
        psql(inst, DEFAULT_DBNAME, "select string_agg(m::text, ',' order by d) from (select no_d_id d, min(no_o_id) m from new_order group by 1) x")
    };
    assert_eq!(oldest().trim(), ["2101"; 10].join(","));
    let dl = delivery::Args {
        w_id: 1,
        carrier_id: 7,
    };
    assert_eq!(run(tpcc::Args::Delivery(dl)), TxnEnd::Committed);
    assert_eq!(oldest().trim(), ["2102"; 10].join(","));
    assert_eq!(
        num(
            inst,
            "select count(*) from orders where o_id = 2101 and o_carrier_id = 7"
        ),
        10.0
    );
    assert_eq!(
        num(
            inst,
            "select count(*) from order_line where ol_o_id = 2101 and ol_delivery_d is null"
        ),
        0.0
    );

    // Order-Status and Stock-Level run (read-only).
    for txn in [tpcc::ORDER_STATUS, tpcc::STOCK_LEVEL] {
        let args = w.draw_args(txn, &state, &mut rng);
        assert_eq!(run(args), TxnEnd::Committed);
    }
}

#[test]
fn tpcc_check_passes_after_a_concurrent_run_and_fails_on_a_corrupted_district() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "tk");
    prepare(&home, "tk", "2");
    let out = home.path().join("res");
    let o = ok(tb(
        &home,
        &[
            "run",
            "--workload",
            "tpcc",
            "--target",
            "instance:tk",
            "-c",
            "4",
            "-T",
            "6s",
            "-P",
            "0",
            // The TPC-V polling block, twice: it carries the live NOTPM.
            "--poll",
            "3s",
            "--seed",
            "5",
            // Deadlocks and serialization failures are retried, as a TPC-C run would.
            "--max-tries",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    assert!(text(&o).contains("NOTPM: "), "{}", text(&o));
    assert!(
        text(&o).contains("  isolation: read committed\n"),
        "{}",
        text(&o)
    );
    let printed = text(&o);
    let lines: Vec<&str> = printed.lines().collect();
    assert!(
        lines.windows(2).any(|w| w[0].starts_with("NOTPM: ")
            && w[0].contains("  total TPM: ")
            && w[1].contains("Aggregate Txn Rate")),
        "the polling block shows NOTPM: {printed}"
    );
    let s = summary(&out);
    assert!(s["tpm"]["new_order"].as_f64().unwrap() > 0.0, "{s}");
    // Per type: p90 against the spec's limit and the share against its minimum. At this tiny
    // scale nothing comes near 5 s; each share stays near its deck's (10/23 or 1/23), though a
    // 6 s window cuts decks short, so a minimum can be missed by a hair and is not asserted.
    assert_eq!(s["isolation"], "read committed", "{s}");
    let rules = s["type_rules"].as_array().unwrap();
    let names: Vec<&str> = rules
        .iter()
        .map(|r| r["txn_type"].as_str().unwrap())
        .collect();
    assert_eq!(names, tpcc::TXN_TYPES, "{s}");
    let mut shares = 0.0;
    for (r, deck) in rules.iter().zip([10.0, 10.0, 1.0, 1.0, 1.0]) {
        assert!(r["p90_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["exceeded"], false, "{r}");
        let share = r["share_pct"].as_f64().unwrap();
        assert!((share - deck * 100.0 / 23.0).abs() < 3.0, "{r}");
        shares += share;
    }
    assert!((shares - 100.0).abs() < 0.05, "{shares}");
    assert_eq!(rules[0]["p90_limit_ms"], 5000.0);
    assert_eq!(rules[4]["p90_limit_ms"], 20000.0);
    assert_eq!(rules[1]["min_share_pct"], 43.0);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for want in [
        "Response-time limits and mix",
        "NOTPM / total TPM",
        "read committed",
        "&le; 20 s",
    ] {
        assert!(page.contains(want), "report.html lacks {want}");
    }
    // The counts agree exactly. (They once did not: Stock-Level's joined plan ran parallel
    // workers, and each worker counts as a commit.)
    support::assert_clean_tpcc_run(&s);

    // Through a managed pgbouncer in transaction mode too (issue 57): every type commits and
    // none fails; the check below then reads what both runs left on the server.
    let _ = crate::pooler::through_a_managed_pooler(&home, &inst, "tpcc");
    let check = ["check", "--workload", "tpcc", "--target", "instance:tk"];
    ok(tb(&home, &check));
    psql(
        &inst,
        DEFAULT_DBNAME,
        "update district set d_next_o_id = d_next_o_id + 5 where d_w_id = 2 and d_id = 3",
    );
    let bad = tb(&home, &check);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    assert!(text(&bad).contains("FAIL  2:"), "{}", text(&bad));
    assert!(text(&bad).contains("w_id=2 d_id=3"), "{}", text(&bad));
}

#[test]
fn tpcc_runs_as_one_group_beside_tpcb_in_a_two_phase_shared_run() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "te");
    let cfg = "clients = 4\nseed = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
        [[group]]\nname = \"C\"\nworkload = \"tpcc\"\nscale = 1\ninstance = \"te\"\n\
        [[group]]\nname = \"B\"\nworkload = \"tpcb\"\nscale = 1\ninstance = \"te\"\n\
        [[phase]]\nduration = \"2s\"\nshares = { C = 30, B = 70 }\n\
        [[phase]]\nduration = \"2s\"\nshares = { C = 70, B = 30 }\n";
    let cfg_path = home.path().join("mixed.toml");
    std::fs::write(&cfg_path, cfg).unwrap();
    let cfg_path = cfg_path.to_str().unwrap();
    ok(tb(&home, &["prepare", cfg_path]));
    let out = home.path().join("res");
    ok(tb(
        &home,
        &["run", cfg_path, "--out", out.to_str().unwrap()],
    ));
    let s = summary(&out);
    for g in s["groups"].as_array().unwrap() {
        let want = g["configured_share"].as_f64().unwrap();
        let got = g["achieved_share"].as_f64().unwrap();
        assert!((want - got).abs() <= 1.0, "{g}");
    }
    for d in s["server"].as_array().unwrap() {
        support::assert_server_agrees(d, 0);
    }
    assert!(s["tpm"]["new_order"].as_f64().unwrap() > 0.0);
    assert!(s["tpm"]["tpcb"].as_f64().unwrap() > 0.0);
    // The mix is TPC-C's own: the tpcb group's transactions are not part of it.
    let rules = s["type_rules"].as_array().unwrap();
    assert_eq!(rules.len(), tpcc::TXN_TYPES.len(), "{s}");
    let shares: f64 = rules.iter().map(|r| r["share_pct"].as_f64().unwrap()).sum();
    assert!((shares - 100.0).abs() < 0.05, "{shares}");
    ok(tb(
        &home,
        &["check", "--workload", "tpcc", "--target", "instance:te/c_1"],
    ));
}

/// An interrupted load, then the plain prepare that replaces it: that load is a fresh one, and
/// serves the checks of clause 4.3 and each transaction's effects (issue 49's sixth pass: one
/// load where two tests made one each).
#[test]
fn tpcc_interrupted_load_needs_no_force_and_the_new_load_follows_clause_4_3() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "ti");
    let child = support::tidebench(&home)
        .args(["prepare", "--workload", "tpcc", "--warehouses", "2"])
        .args(["--jobs", "2", "--target", "instance:ti"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The staging tables' files grow as COPY writes, before any COPY commits.
    let staged = "select coalesce(sum(pg_relation_size(c.oid)), 0) from pg_class c \
                  join pg_namespace n on n.oid = c.relnamespace \
                  where n.nspname = 'tidebench_staging' and c.relkind = 'r'";
    let waiting = Instant::now();
    while num(&inst, staged) < 1e6 {
        assert!(
            waiting.elapsed() < Duration::from_secs(60),
            "the load wrote no staging rows in 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));

    let public_tables = "select count(*) from pg_tables where schemaname = 'public'";
    assert_eq!(num(&inst, public_tables), 0.0);
    let staging = "select count(*) from pg_namespace where nspname = 'tidebench_staging'";
    assert_eq!(
        num(&inst, staging),
        1.0,
        "the interrupted load's staging schema"
    );
    let run = tb(
        &home,
        &[
            "run",
            "--workload",
            "tpcc",
            "--target",
            "instance:ti",
            "-T",
            "1s",
        ],
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(
        text(&run).contains("tidebench prepare --workload tpcc"),
        "{}",
        text(&run)
    );

    // The leftover staging schema is ours: a plain prepare replaces it, no --force needed.
    prepare(&home, "ti", "1");
    assert_eq!(num(&inst, public_tables), 10.0);
    assert_eq!(num(&inst, "select warehouses from tpcc_meta"), 1.0);
    assert_eq!(num(&inst, staging), 0.0);
    assert_eq!(
        num(
            &inst,
            "select count(*) from pg_proc where proname like 'tpcc\\_%' \
             and pronamespace = 'public'::regnamespace"
        ),
        (procedures::FUNCTIONS.len() + procedures::SHARED_FUNCTIONS.len()) as f64
    );
    the_load_follows_clause_4_3_and_each_transaction_has_its_effects(&home, &inst, "ti");
}
