//! tpce (issue 11) against real instances: the load's sizes per load unit, byte-identical
//! tables whatever `--jobs` is, `check` after load, and bad knobs refused before anything is
//! written.

use tidebench::instance::Instance;
use tidebench::workload::tpce::customer::permission_count;
use tidebench::workload::tpce::loader::DATA_SEED;
use tidebench::workload::tpce::scale::{accounts, watch_items, Scale};

use crate::support::{self, ok, output_text as text, psql, run_tidebench as tb};

/// Loads `customers` with `trade_days` into `target` over `jobs` sessions.
pub fn prepare_tpce(home: &support::TempHome, target: &str, customers: u32, days: u32, jobs: u32) {
    ok(tb(
        home,
        &[
            "prepare",
            "--workload",
            "tpce",
            "--customers",
            &customers.to_string(),
            "--trade-days",
            &days.to_string(),
            "--jobs",
            &jobs.to_string(),
            "--target",
            target,
        ],
    ));
}

fn count(inst: &Instance, db: &str, sql: &str) -> u64 {
    psql(inst, db, sql)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// A digest of every row of `table`, independent of physical order.
fn digest(inst: &Instance, db: &str, table: &str) -> String {
    psql(
        inst,
        db,
        &format!(
            "SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) \
             FROM (SELECT t::text AS x FROM {table} t) s"
        ),
    )
    .trim()
    .to_string()
}

const TABLES: [&str; 33] = [
    "account_permission",
    "customer",
    "customer_account",
    "customer_taxrate",
    "holding",
    "holding_history",
    "holding_summary",
    "watch_item",
    "watch_list",
    "broker",
    "cash_transaction",
    "charge",
    "commission_rate",
    "settlement",
    "trade",
    "trade_history",
    "trade_request",
    "trade_type",
    "company",
    "company_competitor",
    "daily_market",
    "exchange",
    "financial",
    "industry",
    "last_trade",
    "news_item",
    "news_xref",
    "sector",
    "security",
    "address",
    "status_type",
    "taxrate",
    "zip_code",
];

#[test]
fn tpce_load_has_the_per_lu_sizes_and_is_identical_over_any_jobs() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "te");
    psql(&inst, "postgres", "CREATE DATABASE second");
    prepare_tpce(&home, "instance:te", 1_000, 1, 1);
    prepare_tpce(&home, "instance:te/second", 1_000, 1, 4);
    let db = tidebench::instance::DEFAULT_DBNAME;

    let scale = Scale::new(1_000, 1, 500).unwrap();
    let (mut accts, mut perms, mut items) = (0, 0, 0);
    for c in 1..=1_000 {
        let n = accounts(DATA_SEED, c);
        accts += n;
        items += watch_items(DATA_SEED, c);
        let first = (c - 1) * 10 + 1;
        perms += (first..first + n)
            .map(|ca| permission_count(DATA_SEED, ca))
            .sum::<u64>();
    }
    for (table, want) in [
        ("customer", 1_000),
        ("watch_list", 1_000),
        ("customer_taxrate", 2_000),
        ("customer_account", accts),
        ("account_permission", perms),
        ("watch_item", items),
        ("broker", 10),
        ("company", 500),
        ("company_competitor", 1_500),
        ("security", 685),
        ("last_trade", 685),
        ("daily_market", 685 * 1_305),
        ("financial", 10_000),
        ("news_item", 1_000),
        ("news_xref", 1_000),
        ("address", 4 + 1_000 + 500),
        ("trade", scale.initial_trades()),
        ("settlement", scale.initial_trades()),
        ("trade_request", 0),
        ("charge", 15),
        ("commission_rate", 240),
        ("exchange", 4),
        ("industry", 102),
        ("sector", 12),
        ("status_type", 5),
        ("taxrate", 320),
        ("trade_type", 5),
        ("zip_code", 14_741),
    ] {
        assert_eq!(
            count(&inst, db, &format!("SELECT count(*) FROM {table}")),
            want,
            "{table}"
        );
    }
    // The simulated history: every trade completed, with its path and its cash rows.
    let market = "(SELECT tt_is_mrkt FROM trade_type WHERE tt_id = t_tt_id)";
    assert_eq!(
        count(&inst, db, "SELECT count(*) FROM trade_history"),
        count(
            &inst,
            db,
            &format!("SELECT sum(CASE WHEN {market} THEN 2 ELSE 3 END) FROM trade")
        )
    );
    assert_eq!(
        count(&inst, db, "SELECT count(*) FROM cash_transaction"),
        count(&inst, db, "SELECT count(*) FROM trade WHERE t_is_cash")
    );
    assert_eq!(
        count(
            &inst,
            db,
            "SELECT count(*) FROM trade WHERE t_st_id <> 'CMPT'"
        ),
        0
    );
    // One trade id in 101 skipped; the run's first id is one past the last.
    assert_eq!(
        count(&inst, db, "SELECT count(*) FROM trade WHERE t_id % 101 = 0"),
        0
    );
    assert_eq!(
        count(&inst, db, "SELECT max(t_id) + 1 FROM trade"),
        scale.first_run_trade_id()
    );
    assert_eq!(
        count(&inst, db, "SELECT nextval('t_id_seq')"),
        scale.first_run_trade_id()
    );
    assert_eq!(
        psql(
            &inst,
            db,
            "SELECT customers, trade_days, scale_factor FROM tpce_meta"
        )
        .trim(),
        "1000|1|500"
    );

    for table in TABLES {
        assert_eq!(
            digest(&inst, db, table),
            digest(&inst, "second", table),
            "{table} differs between --jobs 1 and --jobs 4"
        );
    }
    // Nothing of the staging schema is left.
    assert_eq!(
        count(
            &inst,
            db,
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'tidebench_staging'"
        ),
        0
    );
    let o = ok(tb(
        &home,
        &["check", "--workload", "tpce", "--target", "instance:te"],
    ));
    assert!(!text(&o).contains("FAIL"), "{}", text(&o));
}

#[test]
fn tpce_bad_knobs_are_refused_before_anything_is_written() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "tb");
    let db = tidebench::instance::DEFAULT_DBNAME;
    let refused = |args: &[&str], says: &str| {
        let o = tb(&home, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    };
    let prep = ["prepare", "--workload", "tpce", "--target", "instance:tb"];
    refused(
        &[&prep[..], &["--customers", "1500"]].concat(),
        "--customers 1500 is not a multiple of 1000",
    );
    refused(
        &[&prep[..], &["--customers", "1000", "--trade-days", "0"]].concat(),
        "trade-days",
    );
    assert_eq!(
        psql(&inst, db, "SELECT count(*) FROM pg_tables WHERE schemaname <> 'pg_catalog' AND schemaname <> 'information_schema'").trim(),
        "0"
    );
    // A TPC-C database is not a tpce load.
    support::prepare_tpcc(&home, "tb", "1");
    refused(
        &[
            "run",
            "--workload",
            "tpce",
            "--target",
            "instance:tb",
            "-T",
            "1s",
        ],
        "no complete tpce load",
    );
    assert_eq!(
        count(
            &inst,
            db,
            "SELECT count(*) FROM pg_tables WHERE tablename = 'trade'"
        ),
        0
    );
}
