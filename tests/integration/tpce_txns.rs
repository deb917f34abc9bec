//! tpce's transactions on a real 1-LU load (issue 11): every customer type on both back ends
//! returns the documented rows for known inputs; a Trade-Order → Market-Feed → Trade-Result
//! cycle completes orders on both; `check` passes after that and after a 4-client run, and
//! fails (exit 1, naming the condition) on a corrupted holding summary.

use pgwire::{Connection, Protocol};
use rand::SeedableRng;
use tidebench::instance::{Instance, DEFAULT_DBNAME};
use tidebench::workload::tpce::gen::clock::Day;
use tidebench::workload::tpce::loader::DATA_SEED;
use tidebench::workload::tpce::names::{symbol, tax_id};
use tidebench::workload::tpce::scale::{accounts, watch_items, Scale};
use tidebench::workload::tpce::txn::customer_position::CustomerKey;
use tidebench::workload::tpce::txn::market_watch::List;
use tidebench::workload::tpce::txn::{self, Outcome};
use tidebench::workload::tpce::{Args, Tpce};
use tidebench::workload::{Rng, TxnEnd};

use crate::support::{self, ok, on_driver_loop, output_text as text, psql, run_tidebench as tb};
use crate::tpce::prepare_tpce;

fn count(inst: &Instance, sql: &str) -> u64 {
    psql(inst, DEFAULT_DBNAME, sql)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Runs one customer transaction on a fresh session.
fn run(inst: &Instance, w: &Tpce, args: &Args) -> Outcome {
    let params = inst.connect_params(DEFAULT_DBNAME);
    on_driver_loop(async {
        let mut conn = Connection::connect(&params).await.expect("connect");
        w.execute(&mut conn, Protocol::Prepared, args).await
    })
    .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Runs a market-side transaction (Trade-Result, Market-Feed) with explicit inputs.
fn market<F, Fut>(inst: &Instance, f: F) -> Outcome
where
    F: FnOnce(Connection) -> Fut,
    Fut: std::future::Future<Output = Result<Outcome, pgwire::Error>>,
{
    let params = inst.connect_params(DEFAULT_DBNAME);
    on_driver_loop(async {
        let conn = Connection::connect(&params).await.expect("connect");
        f(conn).await
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The reads' rows for known inputs, as each module documents them.
fn reads_return_their_rows(inst: &Instance, w: &Tpce) {
    let trades_of_1 = count(inst, "SELECT count(*) FROM trade WHERE t_ca_id = 1");
    let ts = run(
        inst,
        w,
        &Args::TradeStatus(txn::trade_status::Args { ca_id: 1 }),
    );
    assert_eq!(ts.rows, trades_of_1.min(50));

    let cp = txn::customer_position::Args {
        customer: CustomerKey::Id(1),
        history_account: None,
    };
    assert_eq!(
        run(inst, w, &Args::CustomerPosition(cp)).rows,
        accounts(DATA_SEED, 1)
    );
    let cp = txn::customer_position::Args {
        customer: CustomerKey::TaxId(tax_id(DATA_SEED, 1)),
        history_account: Some(0),
    };
    assert!(run(inst, w, &Args::CustomerPosition(cp)).rows > accounts(DATA_SEED, 1));

    let sd = txn::security_detail::Args {
        symbol: symbol(DATA_SEED, 1),
        start_day: Day::daily_market(100),
        days: 10,
        lob: true,
    };
    // 10 daily rows, 20 financial quarters, 2 news items.
    assert_eq!(run(inst, w, &Args::SecurityDetail(sd)).rows, 32);

    let mw = txn::market_watch::Args {
        list: List::WatchList(1),
        start_day: Day::daily_market(300),
    };
    assert_eq!(
        run(inst, w, &Args::MarketWatch(mw)).rows,
        watch_items(DATA_SEED, 1)
    );

    let brokers: Vec<String> = psql(inst, DEFAULT_DBNAME, "SELECT b_name FROM broker")
        .lines()
        .map(String::from)
        .collect();
    let pending = count(
        inst,
        "SELECT count(DISTINCT tr_b_id) FROM trade_request JOIN security ON s_symb = tr_s_symb \
         JOIN company ON co_id = s_co_id JOIN industry ON in_id = co_in_id \
         JOIN sector ON sc_id = in_sc_id WHERE sc_name = 'Energy'",
    );
    let bv = txn::broker_volume::Args {
        brokers,
        sector: "Energy".into(),
    };
    assert_eq!(run(inst, w, &Args::BrokerVolume(bv)).rows, pending);

    let ids: Vec<i64> = (1..=20).collect();
    let tl = txn::trade_lookup::Args::Trades(ids.clone());
    assert_eq!(run(inst, w, &Args::TradeLookup(tl)).rows, 20);
    let before = psql(
        inst,
        DEFAULT_DBNAME,
        "SELECT t_exec_name FROM trade WHERE t_id = 1",
    );
    let tu = txn::trade_update::Args::Trades(ids);
    assert_eq!(run(inst, w, &Args::TradeUpdate(tu)).rows, 20);
    let after = psql(
        inst,
        DEFAULT_DBNAME,
        "SELECT t_exec_name FROM trade WHERE t_id = 1",
    );
    assert_ne!(before, after, "Trade-Update changed no executor name");
}

/// A market order and a limit buy from Trade-Order, the limit triggered by Market-Feed, both
/// completed by Trade-Result.
fn orders_complete(inst: &Instance, w: &Tpce, procedures: bool) {
    let mut rng = Rng::seed_from_u64(if procedures { 11 } else { 7 });
    let mut draw = |want: &dyn Fn(&txn::trade_order::Args) -> bool| loop {
        let a = txn::trade_order::draw(w.inputs(), &mut rng);
        if !a.roll_it_back && want(&a) {
            return a;
        }
    };
    let market_order = draw(&|a| a.limit_cents.is_none());
    let mut limit_buy = draw(&|a| a.tt_id == "TLB");
    // In the money at any price of the $20–30 curve.
    limit_buy.limit_cents = Some(3_000);

    let mut submitted = Vec::new();
    for args in [market_order, limit_buy] {
        let o = run(inst, w, &Args::TradeOrder(args));
        assert_eq!(o.end, TxnEnd::Committed);
        assert_eq!(o.orders.len(), 1);
        submitted.push(o.orders[0].clone());
    }
    let (m, l) = (&submitted[0], &submitted[1]);
    assert!(!m.pending && l.pending);
    let status = |t: i64| {
        psql(
            inst,
            DEFAULT_DBNAME,
            &format!("SELECT t_st_id FROM trade WHERE t_id = {t}"),
        )
        .trim()
        .to_string()
    };
    assert_eq!(
        (status(m.t_id).as_str(), status(l.t_id).as_str()),
        ("SBMT", "PNDG")
    );

    let feed = txn::market_feed::Args {
        entries: vec![txn::market_feed::Ticker {
            symbol: l.symbol.clone(),
            price_cents: 2_500,
            qty: 100,
        }],
    };
    let fed = market(inst, |mut c| async move {
        txn::market_feed::run(&mut c, Protocol::Prepared, &feed, procedures).await
    });
    assert!(fed.orders.iter().any(|o| o.t_id == l.t_id), "{fed:?}");
    assert_eq!(status(l.t_id), "SBMT");
    for t_id in [m.t_id, l.t_id] {
        let args = txn::trade_result::Args {
            t_id,
            price_cents: 2_500,
        };
        let done = market(inst, |mut c| async move {
            txn::trade_result::run(&mut c, Protocol::Prepared, &args, procedures).await
        });
        assert!(done.rows >= 1, "Trade-Result touched no lot");
        assert_eq!(status(t_id), "CMPT");
    }
}

#[test]
fn tpce_transactions_return_their_rows_on_both_back_ends_and_keep_check_passing() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "tx");
    prepare_tpce(&home, "instance:tx", 1_000, 1, 2);
    let scale = Scale::new(1_000, 1, 500).unwrap();
    for procedures in [false, true] {
        let w = Tpce::new(DATA_SEED, scale, procedures);
        reads_return_their_rows(&inst, &w);
        orders_complete(&inst, &w, procedures);
    }
    ok(tb(
        &home,
        &["check", "--workload", "tpce", "--target", "instance:tx"],
    ));

    // A 4-client run: one tidebench transaction is one server transaction, and the data stays
    // consistent.
    let out = home.path().join("res");
    let o = ok(tb(
        &home,
        &[
            "run",
            "--workload",
            "tpce",
            "--target",
            "instance:tx",
            "-c",
            "4",
            "-T",
            "5s",
            "-P",
            "0",
            "--max-tries",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let printed = text(&o);
    assert!(printed.contains("(agrees with"), "{printed}");
    // The market ran beside the customers and reports what it left.
    assert!(printed.contains("tpsE: "), "{printed}");
    assert!(printed.contains("market tpce/1: "), "{printed}");
    assert!(printed.contains("not verified"), "{printed}");
    let s = support::summary(&out);
    assert!(s["totals"]["committed"].as_u64().unwrap_or(0) > 0, "{s}");
    // Through a managed pgbouncer in transaction mode too (issue 57), the market's sessions
    // included: every type commits and none fails; the check below reads what both left.
    if let Some(said) = crate::pooler::through_a_managed_pooler(&home, &inst, "tpce") {
        assert!(said.contains("tpsE: "), "{said}");
    }
    ok(tb(
        &home,
        &["check", "--workload", "tpce", "--target", "instance:tx"],
    ));

    // A corrupted holding summary fails condition 1, with an example.
    psql(
        &inst,
        DEFAULT_DBNAME,
        "UPDATE holding_summary SET hs_qty = hs_qty + 1 \
         WHERE (hs_ca_id, hs_s_symb) = (SELECT hs_ca_id, hs_s_symb FROM holding_summary LIMIT 1)",
    );
    let o = tb(
        &home,
        &["check", "--workload", "tpce", "--target", "instance:tx"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("FAIL  1: HOLDING_SUMMARY"),
        "{}",
        text(&o)
    );
}
