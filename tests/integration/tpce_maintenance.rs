//! tpce's Data-Maintenance and Trade-Cleanup on a real 1-LU load (issue 12): every table's
//! change does what data_maintenance.rs documents, on both back ends; Trade-Cleanup cancels
//! the market orders left submitted, the limit orders left pending and a triggered one, keeps
//! a completed trade, leaves no request or in-flight run trade behind and nothing for a second
//! cleanup; `check` passes after all of it.

use std::collections::BTreeSet;

use pgwire::{Connection, Protocol};
use rand::SeedableRng;
use tidebench::instance::{Instance, DEFAULT_DBNAME};
use tidebench::workload::tpce::inputs::Inputs;
use tidebench::workload::tpce::loader::DATA_SEED;
use tidebench::workload::tpce::scale::Scale;
use tidebench::workload::tpce::txn::data_maintenance::{self as dm, Table};
use tidebench::workload::tpce::txn::{self, Order, Outcome};
use tidebench::workload::{Rng, TxnEnd};

use crate::support::{self, ok, on_driver_loop, psql, run_tidebench as tb};
use crate::tpce::prepare_tpce;

/// Runs one transaction on a fresh session.
fn on<F, Fut>(inst: &Instance, f: F) -> Outcome
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

fn lines(inst: &Instance, sql: &str) -> Vec<String> {
    psql(inst, DEFAULT_DBNAME, sql)
        .lines()
        .map(String::from)
        .collect()
}

/// The rows a change may touch, one text line each in a fixed order.
fn probe(a: &dm::Args) -> String {
    match a.table {
        Table::AccountPermission => format!(
            "SELECT ap_acl FROM account_permission WHERE ap_ca_id = {} ORDER BY ap_tax_id",
            a.ca_id
        ),
        Table::Address => format!(
            "SELECT coalesce(ad_line2, '<null>') FROM address WHERE ad_id IN \
             (SELECT c_ad_id FROM customer WHERE c_id = {} \
              UNION ALL SELECT co_ad_id FROM company WHERE co_id = {})",
            a.c_id, a.co_id
        ),
        Table::Company => format!("SELECT co_sp_rate FROM company WHERE co_id = {}", a.co_id),
        Table::Customer => format!("SELECT c_email_2 FROM customer WHERE c_id = {}", a.c_id),
        Table::CustomerTaxrate => format!(
            "SELECT cx_tx_id || ' ' || xmin FROM customer_taxrate WHERE cx_c_id = {} \
             ORDER BY cx_tx_id",
            a.c_id
        ),
        Table::DailyMarket => format!(
            "SELECT dm_vol FROM daily_market WHERE dm_s_symb = '{}' \
             AND extract(day FROM dm_date) = {} ORDER BY dm_date",
            a.symbol, a.day_of_month
        ),
        Table::Exchange => "SELECT ex_desc FROM exchange ORDER BY ex_id".into(),
        Table::Financial => format!(
            "SELECT to_char(fi_qtr_start_date, 'YYYY-MM DD') FROM financial \
             WHERE fi_co_id = {} ORDER BY fi_year, fi_qtr",
            a.co_id
        ),
        Table::NewsItem => format!(
            "SELECT ni_dts::date - date '2000-01-01' FROM news_item \
             JOIN news_xref ON nx_ni_id = ni_id WHERE nx_co_id = {} ORDER BY ni_id",
            a.co_id
        ),
        Table::Security => format!(
            "SELECT s_exch_date - date '2000-01-01' FROM security WHERE s_symb = '{}'",
            a.symbol
        ),
        Table::Taxrate => format!(
            "SELECT tx_name || '|' || tx_rate FROM taxrate WHERE tx_id = '{}'",
            a.tx_id
        ),
        Table::WatchItem => format!(
            "SELECT wi_s_symb FROM watch_item JOIN watch_list ON wl_id = wi_wl_id \
             WHERE wl_c_id = {} ORDER BY wi_s_symb",
            a.c_id
        ),
    }
}

/// A day count moved a day later when even, back when odd (the module's parity toggle).
fn day_toggled(before: &str) -> String {
    let d: i64 = before.parse().expect("a day count");
    (d + if d.rem_euclid(2) == 0 { 1 } else { -1 }).to_string()
}

/// Asserts that `after` is `before` changed as data_maintenance.rs's table says, and that
/// `rows` counts the rows changed.
fn assert_changed_as_documented(a: &dm::Args, before: &[String], after: &[String], rows: u64) {
    let what = format!("{a:?}: {before:?} -> {after:?}");
    assert!(!before.is_empty(), "nothing to change: {what}");
    let each = |f: &dyn Fn(&str) -> String| {
        assert_eq!(after.len(), before.len(), "{what}");
        for (b, x) in before.iter().zip(after) {
            assert_eq!(*x, f(b), "{what}");
        }
        assert_eq!(rows, before.len() as u64, "{what}");
    };
    match a.table {
        Table::AccountPermission => each(&|acl| {
            let flipped = if acl.starts_with('1') { "0" } else { "1" };
            format!("{flipped}{}", &acl[1..])
        }),
        Table::Address => each(&|line2| {
            if line2 == "Rear entrance" {
                "<null>"
            } else {
                "Rear entrance"
            }
            .to_string()
        }),
        Table::Company => each(&|r| if r == "AAA" { "AA" } else { "AAA" }.to_string()),
        Table::Customer => each(&|mail| {
            let (local, domain) = mail.split_once('@').expect("an e-mail");
            let moved = if domain == "wharfmail.com" {
                "reedpost.net"
            } else {
                "wharfmail.com"
            };
            format!("{local}@{moved}")
        }),
        Table::CustomerTaxrate => {
            assert_eq!((rows, after.len()), (2, 2), "{what}");
            for (b, x) in before.iter().zip(after) {
                let (b_id, b_xmin) = b.split_once(' ').unwrap();
                let (x_id, x_xmin) = x.split_once(' ').unwrap();
                assert_eq!(b_id, x_id, "the tax rates stay: {what}");
                assert_ne!(b_xmin, x_xmin, "rewritten: {what}");
            }
        }
        Table::DailyMarket => {
            each(&|vol| (vol.parse::<i64>().unwrap() + i64::from(a.vol_incr)).to_string())
        }
        Table::Exchange => {
            assert_eq!(rows, 4, "{what}");
            for (b, x) in before.iter().zip(after) {
                let text = |d: &str| d.split(" (updated ").next().unwrap_or("").to_string();
                assert_eq!(text(x), text(b), "{what}");
                assert!(x.contains(" (updated 2") && x.ends_with(')'), "{what}");
            }
        }
        Table::Financial => {
            assert_eq!(rows, 20, "{what}");
            each(&|d| {
                let (month, day) = d.split_once(' ').unwrap();
                format!("{month} {}", if day == "01" { "02" } else { "01" })
            });
        }
        Table::NewsItem => {
            assert_eq!(rows, 2, "{what}");
            each(&day_toggled);
        }
        Table::Security => each(&day_toggled),
        Table::Taxrate => each(&|r| {
            let (name, rate) = r.split_once('|').unwrap();
            let name = if name.contains("income tax") {
                name.replace("income tax", "Income Tax")
            } else {
                name.replace("Income Tax", "income tax")
            };
            format!("{name}|{rate}")
        }),
        Table::WatchItem => {
            assert_eq!(rows, 1, "{what}");
            let b: BTreeSet<&String> = before.iter().collect();
            let x: BTreeSet<&String> = after.iter().collect();
            assert_eq!(x.len(), b.len(), "the list keeps its length: {what}");
            assert_eq!(b.difference(&x).count(), 1, "{what}");
            assert_eq!(x.difference(&b).count(), 1, "{what}");
        }
    }
}

/// One Data-Maintenance per table, in round-robin order, on one back end.
fn every_table_changes_as_documented(inst: &Instance, inputs: &Inputs, procedures: bool) {
    let mut rng = Rng::seed_from_u64(if procedures { 21 } else { 20 });
    let protocol = if procedures {
        Protocol::Simple
    } else {
        Protocol::Prepared
    };
    let mut table = Table::ALL[0];
    for _ in Table::ALL {
        let args = dm::draw(inputs, &mut rng, table);
        let before = lines(inst, &probe(&args));
        let a = args.clone();
        let done = on(inst, |mut c| async move {
            dm::run(&mut c, protocol, &a, procedures).await
        });
        assert_eq!(done.end, TxnEnd::Committed);
        let after = lines(inst, &probe(&args));
        assert_changed_as_documented(&args, &before, &after, done.rows);
        table = table.next();
    }
}

/// Enters one order, which must commit.
fn enter(inst: &Instance, args: txn::trade_order::Args) -> Order {
    let o = on(inst, |mut c| async move {
        txn::trade_order::run(&mut c, Protocol::Prepared, &args, false).await
    });
    assert_eq!(o.end, TxnEnd::Committed, "{o:?}");
    o.orders[0].clone()
}

fn status_path(inst: &Instance, t_id: i64) -> String {
    psql(
        inst,
        DEFAULT_DBNAME,
        &format!(
            "SELECT t_st_id || ': ' || (SELECT string_agg(th_st_id, ' ' ORDER BY th_dts) \
             FROM trade_history WHERE th_t_id = t_id) FROM trade WHERE t_id = {t_id}"
        ),
    )
    .trim()
    .to_string()
}

fn count(inst: &Instance, sql: &str) -> u64 {
    support::num(inst, sql) as u64
}

/// Orders in every state a run can leave them, then Trade-Cleanup twice.
fn cleanup_cancels_what_is_in_flight(inst: &Instance, inputs: &Inputs) {
    let mut rng = Rng::seed_from_u64(30);
    let mut draw = |market: bool| loop {
        let a = txn::trade_order::draw(inputs, &mut rng);
        if !a.roll_it_back && a.limit_cents.is_none() == market {
            return a;
        }
    };
    let submitted: Vec<Order> = (0..3).map(|_| enter(inst, draw(true))).collect();
    // Out of the money at the feed's $25.00: a limit sell waits for $30, the others for $20.
    let pending: Vec<Order> = (0..2)
        .map(|_| {
            let mut a = draw(false);
            a.limit_cents = Some(if a.tt_id == "TLS" { 3_000 } else { 2_000 });
            enter(inst, a)
        })
        .collect();
    let mut a = draw(false);
    a.tt_id = "TLB";
    a.limit_cents = Some(3_000);
    let triggered = enter(inst, a);
    assert!(submitted.iter().all(|o| !o.pending) && pending.iter().all(|o| o.pending));

    let feed = txn::market_feed::Args {
        entries: vec![txn::market_feed::Ticker {
            symbol: triggered.symbol.clone(),
            price_cents: 2_500,
            qty: 100,
        }],
    };
    let fed = on(inst, |mut c| async move {
        txn::market_feed::run(&mut c, Protocol::Prepared, &feed, false).await
    });
    let fired: Vec<i64> = fed.orders.iter().map(|o| o.t_id).collect();
    assert_eq!(fired, [triggered.t_id]);
    let completed = submitted[0].t_id;
    let result = txn::trade_result::Args {
        t_id: completed,
        price_cents: 2_500,
    };
    on(inst, |mut c| async move {
        txn::trade_result::run(&mut c, Protocol::Prepared, &result, false).await
    });

    let scale = *inputs.scale();
    let args = txn::trade_cleanup::Args::for_scale(&scale);
    let first: i64 = psql(inst, DEFAULT_DBNAME, "SELECT first_trade_id FROM tpce_meta")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        args.first_run_trade_id, first,
        "tpce_meta agrees with the scale"
    );
    let a = args.clone();
    let cleaned = on(inst, |mut c| async move {
        txn::trade_cleanup::run(&mut c, Protocol::Prepared, &a).await
    });
    // Two market orders still submitted, two limit orders pending, one triggered.
    assert_eq!(cleaned.rows, 5);
    assert_eq!(count(inst, "SELECT count(*) FROM trade_request"), 0);
    let in_flight =
        format!("SELECT count(*) FROM trade WHERE t_id >= {first} AND t_st_id IN ('SBMT', 'PNDG')");
    assert_eq!(count(inst, &in_flight), 0);
    for o in &submitted[1..] {
        assert_eq!(status_path(inst, o.t_id), "CNCL: SBMT CNCL");
    }
    for o in &pending {
        assert_eq!(status_path(inst, o.t_id), "CNCL: PNDG CNCL");
    }
    assert_eq!(status_path(inst, triggered.t_id), "CNCL: PNDG SBMT CNCL");
    assert_eq!(status_path(inst, completed), "CMPT: SBMT CMPT");

    let again = on(inst, |mut c| async move {
        txn::trade_cleanup::run(&mut c, Protocol::Simple, &args).await
    });
    assert_eq!(again.rows, 0, "a second cleanup finds nothing");
}

#[test]
fn tpce_data_maintenance_and_trade_cleanup_change_what_they_say_and_keep_check_passing() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "mt");
    prepare_tpce(&home, "instance:mt", 1_000, 1, 2);
    let inputs = Inputs::new(DATA_SEED, Scale::new(1_000, 1, 500).unwrap());
    for procedures in [false, true] {
        every_table_changes_as_documented(&inst, &inputs, procedures);
    }
    cleanup_cancels_what_is_in_flight(&inst, &inputs);
    ok(tb(
        &home,
        &["check", "--workload", "tpce", "--target", "instance:mt"],
    ));
}
