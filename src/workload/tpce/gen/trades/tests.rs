//! The simulation's rows checked against the rules they follow, re-derived from the rows
//! themselves or from the pure functions (never from figures copied from the output).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::OnceLock;

use super::*;
use crate::workload::tpce::customer::{
    account_broker, account_slot, account_tax_status, customer_taxrates,
};
use crate::workload::tpce::gen::catalog::{
    charge_cents, commission_band, commission_rate, security_exchange, taxrate, trade_type,
};
use crate::workload::tpce::gen::clock::{run_start, Day};
use crate::workload::tpce::gen::ids::{security_company, trade_index};
use crate::workload::tpce::gen::{assert_rows_fit_schema, Table, BATCH_BYTES};
use crate::workload::tpce::names::{broker_name, company_name, symbol};
use crate::workload::tpce::rules::money::{commission_cents, round_div};
use crate::workload::tpce::scale::{tier, trade_id, ABORT_TRADE_EVERY};

/// A unit's rows, table by table, as the batches brought them.
struct Load {
    text: HashMap<Table, String>,
    sizes: Vec<usize>,
}

impl Load {
    fn generate(seed: u64, scale: &Scale, lu: u64) -> Load {
        let mut text: HashMap<Table, String> = HashMap::new();
        let mut sizes = Vec::new();
        for batch in batches(seed, scale, lu) {
            assert_rows_fit_schema(&batch);
            sizes.push(batch.bytes());
            for (table, t) in batch.into_tables() {
                text.entry(table).or_default().push_str(&t);
            }
        }
        Load { text, sizes }
    }

    fn rows(&self, table: Table) -> Vec<Vec<&str>> {
        self.text
            .get(&table)
            .map_or("", |s| s.as_str())
            .lines()
            .map(|l| l.split('\t').collect())
            .collect()
    }
}

fn cents(s: &str) -> i64 {
    let (neg, digits) = s.strip_prefix('-').map_or((false, s), |d| (true, d));
    let (whole, frac) = digits.split_once('.').unwrap();
    let v = whole.parse::<i64>().unwrap() * 100 + frac.parse::<i64>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

fn int(s: &str) -> i64 {
    s.parse().unwrap()
}

const SEED: u64 = 7;

/// One load unit for one trade day at half TPC-E's rate (SF 1,000): 28,800 trades.
fn full() -> (&'static Scale, &'static Load) {
    static SCALE: OnceLock<Scale> = OnceLock::new();
    static LOAD: OnceLock<Load> = OnceLock::new();
    let scale = SCALE.get_or_init(|| Scale::new(1_000, 1, 1_000).unwrap());
    (scale, LOAD.get_or_init(|| Load::generate(SEED, scale, 0)))
}

/// Two load units at a quarter of the rate: 14,400 trades each.
fn two_units() -> Scale {
    Scale::new(2_000, 1, 2_000).unwrap()
}

#[test]
fn trades_are_shared_round_robin() {
    for (customers, sf) in [(3_000, 6_999), (2_000, 2_000), (5_000, 7)] {
        let scale = Scale::new(customers, 1, sf).unwrap();
        let lus = scale.load_units();
        let n = scale.initial_trades();
        let total: u64 = (0..lus).map(|lu| trades_in_unit(&scale, lu)).sum();
        assert_eq!(total, n);
        for lu in 0..lus {
            if n <= 100_000 {
                let brute = (0..n).filter(|i| i % lus == lu).count() as u64;
                assert_eq!(trades_in_unit(&scale, lu), brute);
            }
            let last = trade_index(trades_in_unit(&scale, lu) - 1, lu, lus);
            assert!(last < n && last + lus >= n, "unit {lu}");
        }
        assert_eq!(trades_in_unit(&scale, lus), 0);
    }
    assert_eq!(batches(1, &two_units(), 2).count(), 0);
}

#[test]
fn one_trade_and_settlement_per_loaded_id() {
    let (scale, load) = full();
    let trades = load.rows(Table::Trade);
    assert_eq!(trades.len() as u64, trades_in_unit(scale, 0));
    let ids: HashSet<u64> = trades.iter().map(|r| int(r[0]) as u64).collect();
    assert_eq!(ids.len(), trades.len());
    assert!(ids.iter().all(|id| id % ABORT_TRADE_EVERY != 0));
    let want: HashSet<u64> = (0..scale.initial_trades()).map(trade_id).collect();
    assert_eq!(ids, want);
    let settled: HashSet<u64> = load
        .rows(Table::Settlement)
        .iter()
        .map(|r| int(r[0]) as u64)
        .collect();
    assert_eq!(settled, ids);
    assert_eq!(load.rows(Table::Settlement).len(), trades.len());
    assert!(trades.iter().all(|r| r[2] == "CMPT"));
    assert!(load.rows(Table::TradeRequest).is_empty());
}

#[test]
fn history_and_cash_counts_follow_the_mix() {
    let (_, load) = full();
    let trades = load.rows(Table::Trade);
    let market = trades
        .iter()
        .filter(|r| trade_type(r[3]).unwrap().is_market)
        .count();
    let cash = trades.iter().filter(|r| r[4] == "t").count();
    let history = load.rows(Table::TradeHistory).len();
    let cash_rows = load.rows(Table::CashTransaction).len();
    assert_eq!(history, 2 * market + 3 * (trades.len() - market));
    assert_eq!(cash_rows, cash);
    // tpce.md §2.5: about 2.4 history rows and 0.92 cash transactions per trade.
    let t = trades.len() as f64;
    assert!((history as f64 / t - 2.4).abs() < 0.03, "{history}");
    assert!((cash_rows as f64 / t - 0.92).abs() < 0.015, "{cash_rows}");
    // Every trade touches a lot; about 1.3 lots per trade (tpce.md §2.1 gives ~1.34 at 300
    // days, when more lots are open to close).
    let hh = load.rows(Table::HoldingHistory).len() as f64 / t;
    assert!((1.0..1.6).contains(&hh), "{hh}");
}

#[test]
fn trades_are_the_orders_drawn_without_the_database() {
    let (scale, load) = full();
    for r in load.rows(Table::Trade) {
        let t = loaded_trade(SEED, scale, int(r[0]) as u64).unwrap();
        assert_eq!(r[1], t.completed.text());
        assert_eq!(r[3], t.trade_type().id);
        assert_eq!(r[4] == "t", t.is_cash);
        assert_eq!(r[5], symbol(SEED, t.s_id));
        assert_eq!(int(r[6]), t.qty);
        assert_eq!(cents(r[7]), t.bid);
        assert_eq!(int(r[8]) as u64, t.ca_id);
        let exec = crate::workload::tpce::customer::Customer::generate(SEED, t.executor);
        assert_eq!(r[9], format!("{} {}", exec.first_name, exec.last_name));
        assert_eq!(cents(r[10]), t.price);
        assert_eq!(r[14] == "t", t.lifo);
        match r[3] {
            "TLB" => assert!(t.price <= t.bid),
            "TLS" => assert!(t.price >= t.bid),
            _ => {}
        }
    }
}

#[test]
fn trades_complete_in_time_order_and_history_is_ordered() {
    let (scale, load) = full();
    let trades = load.rows(Table::Trade);
    // Completion order: (t_dts, t_id) never goes back.
    for w in trades.windows(2) {
        assert!((w[0][1], int(w[0][0])) < (w[1][1], int(w[1][0])), "{w:?}");
    }
    let end = run_start(scale.trade_days()).text();
    assert!(trades.iter().all(|r| r[1] < end.as_str()));
    let done: HashMap<&str, &str> = trades.iter().map(|r| (r[0], r[1])).collect();
    let mut history: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for r in load.rows(Table::TradeHistory) {
        history.entry(r[0]).or_default().push((r[2], r[1]));
    }
    for r in &trades {
        let steps = &history[r[0]];
        let statuses: Vec<&str> = steps.iter().map(|s| s.0).collect();
        if trade_type(r[3]).unwrap().is_market {
            assert_eq!(statuses, ["SBMT", "CMPT"]);
        } else {
            assert_eq!(statuses, ["PNDG", "SBMT", "CMPT"]);
        }
        assert!(steps.windows(2).all(|w| w[0].1 <= w[1].1), "{steps:?}");
        assert_eq!(steps.last().unwrap().1, done[r[0]]);
    }
}

/// Σ TX_RATE of customer `c_id`'s two rates.
fn tax_rate(c_id: u64) -> i64 {
    customer_taxrates(SEED, c_id)
        .iter()
        .map(|&i| taxrate(SEED, i).2)
        .sum()
}

#[test]
fn money_follows_the_trade_result_rules() {
    let (scale, load) = full();
    let trades = load.rows(Table::Trade);
    let by_id: HashMap<&str, &Vec<&str>> = trades.iter().map(|r| (r[0], r)).collect();
    // The gain of each sell, from the long lots its HOLDING_HISTORY rows closed, at the
    // prices of the trades that opened them.
    let mut gains: HashMap<&str, i64> = HashMap::new();
    for h in load.rows(Table::HoldingHistory) {
        let (lot, trade, before, after) = (h[0], h[1], int(h[2]), int(h[3]));
        let t = by_id[trade];
        if lot != trade && before > 0 && after < before {
            let opened_at = cents(by_id[lot][10]);
            *gains.entry(trade).or_default() += (cents(t[10]) - opened_at) * (before - after);
        }
    }
    let settlements: HashMap<&str, Vec<&str>> = load
        .rows(Table::Settlement)
        .into_iter()
        .map(|r| (r[0], r))
        .collect();
    let cash: HashMap<&str, Vec<&str>> = load
        .rows(Table::CashTransaction)
        .into_iter()
        .map(|r| (r[0], r))
        .collect();
    let mut taxed = 0;
    for r in &trades {
        let t = loaded_trade(SEED, scale, int(r[0]) as u64).unwrap();
        let c_tier = tier(SEED, t.c_id) as u8;
        let status = account_tax_status(SEED, t.ca_id);
        let (qty, price) = (t.qty, t.price);
        assert_eq!(cents(r[11]), charge_cents(t.tt, c_tier));
        let ex = security_exchange(SEED, t.s_id);
        let rate = commission_rate(c_tier, t.tt, ex, commission_band(qty));
        assert_eq!(cents(r[12]), commission_cents(rate, qty, price));
        let gain = gains.get(r[0]).copied().unwrap_or(0);
        let tax = if status != 0 && t.is_sell() && gain > 0 {
            round_div(i128::from(gain) * i128::from(tax_rate(t.c_id)), 100_000)
        } else {
            0
        };
        assert_eq!(cents(r[13]), tax, "{r:?}");
        taxed += usize::from(tax > 0);
        let value = if t.is_sell() {
            qty * price
        } else {
            -qty * price
        };
        let withheld = if status == 1 { tax } else { 0 };
        let amount = value - cents(r[11]) - cents(r[12]) - withheld;
        let se = &settlements[r[0]];
        assert_eq!(cents(se[3]), amount);
        assert_eq!(se[1], if t.is_cash { "Cash Account" } else { "Margin" });
        let (y, m, d) = (&r[1][0..4], &r[1][5..7], &r[1][8..10]);
        let trade_day = Day::from_ymd(int(y), int(m), int(d));
        assert_eq!(se[2], trade_day.plus(2).text());
        if t.is_cash {
            let ct = &cash[r[0]];
            assert_eq!((ct[1], cents(ct[2])), (r[1], amount));
            let (co, issue) = security_company(t.s_id);
            let name = format!("{} {issue}", company_name(SEED, co));
            let tt_name = t.trade_type().name;
            assert_eq!(ct[3], format!("{tt_name} {qty} shares of {name}"));
        } else {
            assert!(!cash.contains_key(r[0]));
        }
    }
    assert!(taxed > 100, "{taxed} taxed sells");
}

#[test]
fn holdings_summaries_and_lot_histories_agree() {
    let (_, load) = full();
    let trades: HashMap<&str, Vec<&str>> = load
        .rows(Table::Trade)
        .into_iter()
        .map(|r| (r[0], r))
        .collect();
    let holdings = load.rows(Table::Holding);
    let mut sums: BTreeMap<(&str, &str), (i64, i64, i64)> = BTreeMap::new();
    let mut open: HashMap<&str, i64> = HashMap::new();
    for h in &holdings {
        let qty = int(h[5]);
        assert_ne!(qty, 0);
        let e = sums.entry((h[1], h[2])).or_default();
        e.0 += qty;
        // All lots of a pair are on one side.
        e.1 += i64::from(qty > 0);
        e.2 += i64::from(qty < 0);
        open.insert(h[0], qty);
        // A lot is the trade that opened it.
        let t = &trades[h[0]];
        assert_eq!((t[8], t[5], t[1], t[10]), (h[1], h[2], h[3], h[4]));
    }
    assert!(sums.values().all(|s| s.1 == 0 || s.2 == 0), "mixed sides");
    let summaries: BTreeMap<(&str, &str), i64> = load
        .rows(Table::HoldingSummary)
        .iter()
        .map(|r| ((r[0], r[1]), int(r[2])))
        .collect();
    assert_eq!(summaries.len(), load.rows(Table::HoldingSummary).len());
    let want: BTreeMap<(&str, &str), i64> = sums.iter().map(|(k, v)| (*k, v.0)).collect();
    assert_eq!(summaries, want);
    assert!(summaries.values().all(|&q| q != 0));
    // Each lot's history starts at 0 with its own trade, chains before to after, and ends at
    // the lot's current quantity (0 once closed, and a closed lot is never touched again).
    let mut last: HashMap<&str, i64> = HashMap::new();
    let mut touched: HashSet<&str> = HashSet::new();
    for h in load.rows(Table::HoldingHistory) {
        let (lot, trade, before, after) = (h[0], h[1], int(h[2]), int(h[3]));
        touched.insert(trade);
        match last.get(lot) {
            None => assert_eq!((lot, before), (trade, 0), "{h:?}"),
            Some(&prev) => {
                assert_ne!(prev, 0, "closed lot {lot} touched again");
                assert_eq!(before, prev, "{h:?}");
            }
        }
        assert_eq!(trades[lot][8], trades[trade][8], "same account");
        assert_eq!(trades[lot][5], trades[trade][5], "same symbol");
        last.insert(lot, after);
    }
    assert_eq!(touched.len(), trades.len(), "every trade touches a lot");
    for (lot, qty) in &last {
        assert_eq!(*qty, open.get(lot).copied().unwrap_or(0), "lot {lot}");
    }
    assert_eq!(open.len(), holdings.len());
}

#[test]
fn broker_totals_are_their_accounts_completed_trades() {
    let (_, load) = full();
    let mut want: BTreeMap<u64, (i64, i64)> = BTreeMap::new();
    for r in load.rows(Table::Trade) {
        let b = account_broker(SEED, int(r[8]) as u64);
        let e = want.entry(b).or_default();
        e.0 += 1;
        e.1 += cents(r[12]);
    }
    let brokers = load.rows(Table::Broker);
    assert_eq!(brokers.len(), 10);
    for r in brokers {
        let b_id = int(r[0]) as u64;
        assert_eq!((r[1], r[2]), ("ACTV", broker_name(SEED, b_id).as_str()));
        assert_eq!((int(r[3]), cents(r[4])), want[&b_id]);
    }
}

#[test]
fn batches_stay_near_their_size() {
    let (_, load) = full();
    assert!(load.sizes.len() > 1, "{:?}", load.sizes);
    // A batch is cut at the first trade or account after the limit.
    assert!(load.sizes.iter().all(|&b| b < BATCH_BYTES + 64 * 1024));
}

#[test]
fn units_are_deterministic_and_disjoint() {
    let scale = two_units();
    let a = Load::generate(3, &scale, 0);
    let b = Load::generate(3, &scale, 0);
    for table in Table::ALL {
        assert_eq!(a.rows(table), b.rows(table), "{}", table.name());
    }
    let other = Load::generate(4, &scale, 0);
    assert_ne!(a.rows(Table::Trade), other.rows(Table::Trade));
    let second = Load::generate(3, &scale, 1);
    let ids = |l: &Load| -> HashSet<u64> {
        l.rows(Table::Trade)
            .iter()
            .map(|r| int(r[0]) as u64)
            .collect()
    };
    let (ids0, ids1) = (ids(&a), ids(&second));
    assert!(ids0.is_disjoint(&ids1));
    assert_eq!(ids0.len() as u64, trades_in_unit(&scale, 0));
    let want1: HashSet<u64> = (0..trades_in_unit(&scale, 1))
        .map(|k| trade_id(trade_index(k, 1, 2)))
        .collect();
    assert_eq!(ids1, want1);
    // Each unit trades only through its own accounts and brokers.
    for r in second.rows(Table::Trade) {
        assert_eq!(account_slot(int(r[8]) as u64).0 / 1_001, 1);
    }
    for r in second.rows(Table::Broker) {
        assert!((11..=20).contains(&int(r[0])));
    }
}
