//! `tpce`'s consistency check on a small hand-made data set: every condition passes on data that
//! follows the shared trade rules (trades in every state, lots long and short, a short covered
//! by a buy), and each break of one rule fails exactly the condition about it, with an example.
//! Fees and amounts are computed here in integer cents from `catalog`, independently of the
//! check's SQL, so the two must agree.

use tidebench::instance::Instance;
use tidebench::target::ResolvedTarget;
use tidebench::workload::tpce::check::check;
use tidebench::workload::tpce::gen::catalog::{
    charge_cents, commission_band, commission_rate, trade_type, COMMISSION_BANDS, EXCHANGES,
    STATUS_TYPES, TRADE_TYPES,
};
use tidebench::workload::tpce::gen::fixed_text;
use tidebench::workload::CheckOutcome;

use crate::support::{block_on, psql, start_instance, temp_home};

const SCHEMA: &str = include_str!("../../src/workload/tpce/schema.sql");

/// (account, customer, broker, tax status).
const ACCOUNTS: [(u64, u64, u64, u8); 4] =
    [(11, 1, 1, 1), (12, 1, 2, 0), (21, 2, 1, 2), (31, 3, 2, 1)];
/// (customer, tier).
const CUSTOMERS: [(u64, u8); 3] = [(1, 1), (2, 2), (3, 3)];
/// (symbol, exchange index).
const SECURITIES: [(&str, usize); 3] = [("AAA", 0), ("BBB", 1), ("CCC", 2)];

/// One trade of the fixture; `path` is its TRADE_HISTORY in order, the last its status.
struct Trade {
    id: u64,
    tt: &'static str,
    account: u64,
    symbol: &'static str,
    qty: i64,
    bid: i64,
    cash: bool,
    path: &'static [&'static str],
    /// Trade price in cents, for completed trades.
    price: Option<i64>,
    tax: i64,
}

/// A trade of `order` = (symbol, quantity, bid in cents), not yet completed.
const fn trade(
    id: u64,
    tt: &'static str,
    account: u64,
    order: (&'static str, i64, i64),
    cash: bool,
    path: &'static [&'static str],
) -> Trade {
    let (symbol, qty, bid) = order;
    Trade {
        id,
        tt,
        account,
        symbol,
        qty,
        bid,
        cash,
        path,
        price: None,
        tax: 0,
    }
}

impl Trade {
    /// The trade, completed at `price` with `tax` (cents).
    const fn done(mut self, price: i64, tax: i64) -> Trade {
        self.price = Some(price);
        self.tax = tax;
        self
    }
}

/// Trades 1–4 and 10–12 complete: 1 opens lot 1 (200 AAA), 3 sells half of it at a gain (taxed,
/// withheld), 2 opens lot 2, 4 sells short (lot 4, −100 CCC), 10 covers it and opens lot 10
/// with the rest, 11 opens lot 11 and 12 sells half of it. The others are left in each
/// non-final state and cancelled from each.
fn trades() -> Vec<Trade> {
    const MARKET: &[&str] = &["SBMT", "CMPT"];
    const LIMIT: &[&str] = &["PNDG", "SBMT", "CMPT"];
    const TRIGGERED_CANCELLED: &[&str] = &["PNDG", "SBMT", "CNCL"];
    vec![
        trade(1, "TMB", 11, ("AAA", 200, 2500), true, MARKET).done(2500, 0),
        trade(2, "TLB", 21, ("BBB", 100, 2300), false, LIMIT).done(2250, 0),
        trade(3, "TMS", 11, ("AAA", 100, 2700), true, MARKET).done(2700, 4400),
        trade(4, "TMS", 12, ("CCC", 100, 2600), true, MARKET).done(2600, 0),
        trade(5, "TMB", 21, ("BBB", 100, 2400), true, &["SBMT"]),
        trade(6, "TLS", 11, ("AAA", 100, 2900), true, &["PNDG"]),
        trade(7, "TSL", 21, ("BBB", 100, 2100), true, &["PNDG", "SBMT"]),
        trade(8, "TLB", 31, ("AAA", 400, 2050), true, &["PNDG", "CNCL"]),
        trade(9, "TMB", 31, ("BBB", 800, 2500), true, &["SBMT", "CNCL"]),
        trade(10, "TMB", 12, ("CCC", 300, 2400), true, MARKET).done(2400, 0),
        trade(11, "TLB", 31, ("AAA", 800, 2600), false, LIMIT).done(2550, 0),
        trade(12, "TLS", 31, ("AAA", 400, 2900), true, LIMIT).done(2900, 30800),
        trade(13, "TLS", 21, ("BBB", 100, 2800), true, TRIGGERED_CANCELLED),
    ]
}

/// Lots: (lot = opening trade, account, symbol, price, quantity now).
const LOTS: [(u64, u64, &str, i64, i64); 4] = [
    (1, 11, "AAA", 2500, 100),
    (2, 21, "BBB", 2250, 100),
    (10, 12, "CCC", 2400, 200),
    (11, 31, "AAA", 2550, 400),
];
/// HOLDING_HISTORY: (lot, trade, before, after).
const HOLDING_HISTORY: [(u64, u64, i64, i64); 8] = [
    (1, 1, 0, 200),
    (1, 3, 200, 100),
    (2, 2, 0, 100),
    (4, 4, 0, -100),
    (4, 10, -100, 0),
    (10, 10, 0, 200),
    (11, 11, 0, 800),
    (11, 12, 800, 400),
];

fn tt_index(tt: &str) -> usize {
    TRADE_TYPES.iter().position(|t| t.id == tt).unwrap()
}

fn account(ca: u64) -> (u64, u64, u64, u8) {
    *ACCOUNTS.iter().find(|a| a.0 == ca).unwrap()
}

fn tier(ca: u64) -> u8 {
    let c = account(ca).1;
    CUSTOMERS.iter().find(|x| x.0 == c).unwrap().1
}

/// The charge and commission of a completed trade, in cents.
fn fees(t: &Trade) -> (i64, i64) {
    let tt = tt_index(t.tt);
    let ex = SECURITIES.iter().find(|s| s.0 == t.symbol).unwrap().1;
    let rate = commission_rate(tier(t.account), tt, ex, commission_band(t.qty));
    // rate is in hundredths of a percent: cents × rate / 10,000, rounded half up (positive).
    let comm = (rate * t.qty * t.price.unwrap() + 5_000) / 10_000;
    (charge_cents(tt, tier(t.account)), comm)
}

/// When trade `id` reaches step `k` of its path: trades 10 minutes apart, steps 30 s apart.
fn at(id: u64, k: usize) -> String {
    format!(
        "timestamp '2005-01-03 09:00' + interval '{} seconds'",
        id * 600 + k as u64 * 30
    )
}

fn fixture_sql() -> String {
    let mut s = String::new();
    let mut add = |sql: String| {
        s.push_str(&sql);
        s.push_str(";\n");
    };
    for t in TRADE_TYPES {
        add(format!(
            "INSERT INTO trade_type VALUES ('{}', '{}', {}, {})",
            t.id, t.name, t.is_sell, t.is_market
        ));
    }
    for (id, name) in STATUS_TYPES {
        add(format!("INSERT INTO status_type VALUES ('{id}', '{name}')"));
    }
    for tier in 1..=3u8 {
        for (tt, t) in TRADE_TYPES.iter().enumerate() {
            add(format!(
                "INSERT INTO charge VALUES ('{}', {tier}, {})",
                t.id,
                fixed_text(charge_cents(tt, tier), 2)
            ));
            for (ex, e) in EXCHANGES.iter().enumerate() {
                for (band, (from, to)) in COMMISSION_BANDS.iter().enumerate() {
                    add(format!(
                        "INSERT INTO commission_rate VALUES ({tier}, '{}', '{}', {from}, {to}, {})",
                        t.id,
                        e.id,
                        fixed_text(commission_rate(tier, tt, ex, band), 2)
                    ));
                }
            }
        }
    }
    for (symbol, ex) in SECURITIES {
        add(format!(
            "INSERT INTO security VALUES ('{symbol}', 'COMMON', 'ACTV', '{symbol} Works COMMON', \
             '{}', 1, 1000000, '2000-01-03', '2000-01-03', 10, 30, '2004-06-01', 20, \
             '2004-02-01', 0.5, 2)",
            EXCHANGES[ex].id
        ));
    }
    for (c, tier) in CUSTOMERS {
        add(format!(
            "INSERT INTO customer (c_id, c_tax_id, c_st_id, c_l_name, c_f_name, c_tier, c_dob, \
             c_ad_id) VALUES ({c}, 'TX-{c}', 'ACTV', 'Last{c}', 'First{c}', {tier}, \
             '1970-01-01', {c})"
        ));
    }
    for (ca, c, b, tax) in ACCOUNTS {
        add(format!(
            "INSERT INTO customer_account VALUES ({ca}, {b}, {c}, 'Account {ca}', {tax}, 1000.00)"
        ));
    }
    let all = trades();
    let mut brokers = [(0i64, 0i64); 2];
    for t in &all {
        let last = t.path[t.path.len() - 1];
        let completed = last == "CMPT";
        let (chrg, comm) = if completed { fees(t) } else { (0, 0) };
        add(format!(
            "INSERT INTO trade VALUES ({id}, {dts}, '{last}', '{tt}', {cash}, '{symbol}', {qty}, \
             {bid}, {ca}, 'Exec {ca}', {price}, {chrg}, {comm}, {tax}, false)",
            id = t.id,
            dts = at(t.id, t.path.len() - 1),
            tt = t.tt,
            cash = t.cash,
            symbol = t.symbol,
            qty = t.qty,
            bid = fixed_text(t.bid, 2),
            ca = t.account,
            price = t.price.map_or("NULL".into(), |p| fixed_text(p, 2)),
            chrg = fixed_text(chrg, 2),
            comm = fixed_text(comm, 2),
            tax = fixed_text(t.tax, 2),
        ));
        for (k, st) in t.path.iter().enumerate() {
            add(format!(
                "INSERT INTO trade_history VALUES ({}, {}, '{st}')",
                t.id,
                at(t.id, k)
            ));
        }
        if last == "PNDG" {
            add(format!(
                "INSERT INTO trade_request VALUES ({}, '{}', '{}', {}, {}, {})",
                t.id,
                t.tt,
                t.symbol,
                t.qty,
                fixed_text(t.bid, 2),
                account(t.account).2
            ));
        }
        if completed {
            let sell = trade_type(t.tt).unwrap().is_sell;
            let value = t.qty * t.price.unwrap();
            let withheld = if account(t.account).3 == 1 { t.tax } else { 0 };
            let amount = if sell { value } else { -value } - chrg - comm - withheld;
            let cash_type = if t.cash { "Cash Account" } else { "Margin" };
            add(format!(
                "INSERT INTO settlement VALUES ({}, '{cash_type}', ({})::date + 2, {})",
                t.id,
                at(t.id, t.path.len() - 1),
                fixed_text(amount, 2)
            ));
            if t.cash {
                add(format!(
                    "INSERT INTO cash_transaction VALUES ({}, {}, {}, '{} {} shares of {}')",
                    t.id,
                    at(t.id, t.path.len() - 1),
                    fixed_text(amount, 2),
                    trade_type(t.tt).unwrap().name,
                    t.qty,
                    t.symbol
                ));
            }
            let b = &mut brokers[account(t.account).2 as usize - 1];
            b.0 += 1;
            b.1 += comm;
        }
    }
    for (k, (n, comm)) in brokers.iter().enumerate() {
        add(format!(
            "INSERT INTO broker VALUES ({}, 'ACTV', 'Broker {}', {n}, {})",
            k + 1,
            k + 1,
            fixed_text(*comm, 2)
        ));
    }
    let mut summary: Vec<(u64, &str, i64)> = Vec::new();
    for (lot, ca, symbol, price, qty) in LOTS {
        add(format!(
            "INSERT INTO holding VALUES ({lot}, {ca}, '{symbol}', {}, {}, {qty})",
            at(lot, 2),
            fixed_text(price, 2)
        ));
        match summary.iter_mut().find(|s| s.0 == ca && s.1 == symbol) {
            Some(s) => s.2 += qty,
            None => summary.push((ca, symbol, qty)),
        }
    }
    for (ca, symbol, qty) in summary {
        add(format!(
            "INSERT INTO holding_summary VALUES ({ca}, '{symbol}', {qty})"
        ));
    }
    for (lot, t, before, after) in HOLDING_HISTORY {
        add(format!(
            "INSERT INTO holding_history VALUES ({lot}, {t}, {before}, {after})"
        ));
    }
    s
}

/// Breaks of one rule each: (the condition that must fail, the SQL, text its first example
/// must contain).
const BREAKS: [(usize, &str, &str); 22] = [
    (
        1,
        "UPDATE holding_summary SET hs_qty = 150 WHERE hs_ca_id = 11",
        "hs_qty 150, lots sum to 100",
    ),
    (
        1,
        "DELETE FROM holding_summary WHERE hs_ca_id = 21",
        "account 21 symbol BBB: hs_qty none",
    ),
    // Trade 10 bought 300 CCC but left the short lot open instead of covering it: every sum
    // still adds up.
    (
        2,
        "INSERT INTO holding VALUES (4, 12, 'CCC', '2005-01-03 09:40', 26, -100); \
         UPDATE holding SET h_qty = 300 WHERE h_t_id = 10; \
         DELETE FROM holding_history WHERE hh_h_t_id = 4 AND hh_t_id = 10; \
         UPDATE holding_history SET hh_after_qty = 300 WHERE hh_h_t_id = 10",
        "account 12 symbol CCC: 1 long, 1 short",
    ),
    (
        3,
        "DELETE FROM settlement WHERE se_t_id = 2",
        "trade 2 (CMPT, margin): no settlement",
    ),
    (
        3,
        "INSERT INTO cash_transaction VALUES (5, '2005-01-03 10:00', 1, 'x')",
        "trade 5 (SBMT, cash): no settlement, a cash transaction",
    ),
    (
        4,
        "DELETE FROM trade_history WHERE th_t_id = 2 AND th_st_id = 'SBMT'",
        "trade 2 (TLB, status CMPT): history [PNDG CMPT]",
    ),
    (
        4,
        "UPDATE trade_history SET th_dts = th_dts - interval '1 hour' \
         WHERE th_t_id = 1 AND th_st_id = 'CMPT'",
        "out of time order",
    ),
    (
        4,
        "UPDATE trade_history SET th_dts = th_dts - interval '1 hour' \
         WHERE th_t_id = 8 AND th_st_id = 'CNCL'",
        "trade 8 (TLB, status CNCL): history [PNDG CNCL] in 2 rows, out of time order",
    ),
    (
        5,
        "UPDATE broker SET b_num_trades = b_num_trades + 1 WHERE b_id = 1",
        "broker 1: b_num_trades 4",
    ),
    (
        6,
        "DELETE FROM trade_request",
        "trade 6: pending without a trade request",
    ),
    (
        6,
        "UPDATE trade_request SET tr_qty = 200",
        "request TLS AAA x 200",
    ),
    (
        7,
        "DELETE FROM customer WHERE c_id = 2",
        "account 21: customer 2 does not exist",
    ),
    (
        7,
        "UPDATE trade SET t_ca_id = 99 WHERE t_id = 5",
        "trade 5: account 99 does not exist",
    ),
    (
        8,
        "INSERT INTO holding_history VALUES (1, 999, 100, 100)",
        "trade 999 (no trade row)",
    ),
    // Trade 3 also "touches" lot 11 of another account, by 0 shares: every sum still adds up.
    (
        8,
        "INSERT INTO holding_history VALUES (11, 3, 400, 400)",
        "trade 3 (CMPT TMS 100): its holding history touches lots of accounts 11..31 in \
         AAA..AAA, not only its account 11 in AAA",
    ),
    (
        9,
        "UPDATE holding SET h_s_symb = 'DDD' WHERE h_t_id = 2; \
         UPDATE holding_summary SET hs_s_symb = 'DDD' WHERE hs_ca_id = 21",
        "lot 2: held by account 21 in DDD, opened by a trade of account 21 in BBB",
    ),
    (
        9,
        "DELETE FROM holding WHERE h_t_id = 2; \
         DELETE FROM holding_summary WHERE hs_ca_id = 21",
        "lot 2: its history adds up to 100, it holds nothing (closed)",
    ),
    (
        9,
        "UPDATE holding SET h_price = 26 WHERE h_t_id = 2",
        "lot 2: held at 26.00, opened by a trade at 22.50",
    ),
    (
        10,
        "UPDATE settlement SET se_amt = se_amt + 1 WHERE se_t_id = 1",
        "trade 1 (TMB 200 x 25.00, cash",
    ),
    // A charge one dollar too high, with the settlement amount that follows from it.
    (
        11,
        "UPDATE trade SET t_chrg = t_chrg + 1 WHERE t_id = 2; \
         UPDATE settlement SET se_amt = se_amt - 1 WHERE se_t_id = 2",
        "trade 2 (TLB 100 x 22.50 on NASDAQ, tier 2",
    ),
    // Tax on a buy, of an account whose tax is not withheld (so the amount is unchanged).
    (11, "UPDATE trade SET t_tax = 1 WHERE t_id = 2", "tax 1.00"),
    (
        12,
        "ALTER TABLE settlement DROP CONSTRAINT settlement_pkey",
        "settlement has no unique key within (se_t_id)",
    ),
];

/// A copy of the fixture with `breakage` applied, checked.
fn check_copy(inst: &Instance, name: &str, breakage: &str) -> Vec<CheckOutcome> {
    psql(
        inst,
        "postgres",
        &format!("CREATE DATABASE {name} TEMPLATE fixture"),
    );
    if !breakage.is_empty() {
        psql(inst, name, breakage);
    }
    let target = ResolvedTarget {
        label: format!("instance:{}/{name}", inst.name),
        params: inst.connect_params(name),
        notes: Vec::new(),
        choice: Default::default(),
        follow: Vec::new(),
    };
    block_on(async {
        let client = target.connect_tokio().await.unwrap();
        check(&client).await.unwrap()
    })
}

#[test]
fn tpce_check_passes_on_consistent_data_and_names_each_broken_rule() {
    let home = temp_home();
    let inst = start_instance(&home, "tk");
    psql(&inst, "postgres", "CREATE DATABASE fixture");
    psql(&inst, "fixture", SCHEMA);
    psql(&inst, "fixture", &fixture_sql());

    let clean = check_copy(&inst, "clean", "");
    assert_eq!(clean.len(), 12);
    for c in &clean {
        assert!(c.passed(), "{}: {:?}", c.name, c.examples);
    }

    for (k, (condition, breakage, example)) in BREAKS.iter().enumerate() {
        let outcomes = check_copy(&inst, &format!("broken_{k}"), breakage);
        for (n, c) in outcomes.iter().enumerate() {
            if n + 1 == *condition {
                assert!(!c.passed(), "break {k} ({breakage}) passed {}", c.name);
                assert!(!c.examples.is_empty() && c.examples.len() as u64 <= c.offending);
                assert!(
                    c.examples[0].contains(example),
                    "break {k}: {:?} lacks {example:?}",
                    c.examples
                );
            } else {
                assert!(
                    c.passed(),
                    "break {k} ({breakage}) also failed {}: {:?}",
                    c.name,
                    c.examples
                );
            }
        }
    }
}
