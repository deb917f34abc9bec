//! TPC-C with `--procedures` (the PL/pgSQL functions prepare installs) against a real
//! instance: each transaction's effects and the 1% rollback as the client-side SQL has them, a
//! concurrent run that passes `check` with the server's commit count equal to the client's,
//! and a load without the functions refused with the fix that prepare then applies.

use tidebench::instance::{InstanceOptions, DEFAULT_DBNAME};
use tidebench::workload::tpcc::Options;

use crate::support::{
    self, num, ok, output_text as text, prepare_tpcc as prepare, psql, run_tidebench as tb, summary,
};
use crate::tpcc::transactions_have_their_effects;

#[test]
fn tpcc_procedures_match_the_client_side_transactions_and_the_server_count() {
    let home = support::temp_home();
    // Function call counts show the run called the functions rather than sending the SQL.
    let track = InstanceOptions {
        settings: vec![("track_functions".into(), "pl".into())],
        ..InstanceOptions::default()
    };
    let inst = support::start_with(&home, "tp", track);
    prepare(&home, "tp", "1");
    let procedures = Options {
        procedures: true,
        ..Options::default()
    };
    transactions_have_their_effects(&inst, &procedures);

    let out = home.path().join("res");
    let o = ok(tb(
        &home,
        &[
            "run",
            "--workload",
            "tpcc",
            "--procedures",
            "--target",
            "instance:tp",
            "-c",
            "4",
            "-T",
            "8s",
            "-P",
            "0",
            "--seed",
            "9",
            "--max-tries",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    assert!(text(&o).contains("NOTPM: "), "{}", text(&o));
    let s = summary(&out);
    // Every call is one statement in its implicit transaction, and a raise (the 1% rollback)
    // ends it rolled back: the server's commits are exactly the client's.
    support::assert_clean_tpcc_run(&s);
    let calls = psql(
        &inst,
        DEFAULT_DBNAME,
        "select string_agg(funcname || '=' || (calls > 10)::text, ',' order by funcname) \
         from pg_stat_user_functions",
    );
    assert_eq!(
        calls.trim(),
        "tpcc_delivery=true,tpcc_new_order=true,tpcc_order_status=true,tpcc_payment=true,\
         tpcc_stock_level=true"
    );
    ok(tb(
        &home,
        &["check", "--workload", "tpcc", "--target", "instance:tp"],
    ));

    // A load without the functions, as an older tidebench left it: the run names what is
    // missing and the prepare that installs it; that prepare leaves the rows alone.
    psql(
        &inst,
        DEFAULT_DBNAME,
        "drop function tpcc_delivery(int, int)",
    );
    let orders = num(&inst, "select count(*) from orders");
    let run = [
        "run",
        "--workload",
        "tpcc",
        "--procedures",
        "--target",
        "instance:tp",
        "-T",
        "1s",
        "-P",
        "0",
        "--out",
    ];
    let refused = tb(
        &home,
        &[&run[..], &[home.path().join("r2").to_str().unwrap()]].concat(),
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    for needle in [
        "tpcc_delivery(int, int)",
        "tidebench prepare --workload tpcc --warehouses 1",
    ] {
        assert!(text(&refused).contains(needle), "{}", text(&refused));
    }
    let installed = ok(tb(
        &home,
        &[
            "prepare",
            "--workload",
            "tpcc",
            "--warehouses",
            "1",
            "--target",
            "instance:tp",
        ],
    ));
    assert!(
        text(&installed).contains("installed the functions"),
        "{}",
        text(&installed)
    );
    assert_eq!(num(&inst, "select count(*) from orders"), orders);
    // The calls cast their parameters, so the other two protocols (the simple one inlines
    // untyped literals, NULL among them) reach the same functions.
    for protocol in ["simple", "extended"] {
        let dir = home.path().join(protocol);
        let args = [&run[..], &[dir.to_str().unwrap(), "-M", protocol]].concat();
        ok(tb(&home, &args));
        let totals = &summary(&dir)["totals"];
        assert_eq!(totals["failed"], 0, "{protocol}: {totals}");
        assert!(
            totals["committed"].as_u64().unwrap() > 0,
            "{protocol}: {totals}"
        );
    }
}
