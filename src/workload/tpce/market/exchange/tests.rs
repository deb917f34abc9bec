//! The exchange's rules, driven by hand on run-time milliseconds.

use super::*;

const DATA_SEED: u64 = 7;
const SECURITIES: u64 = 50;

fn ids() -> Arc<HashMap<String, u64>> {
    Arc::new(
        (1..=SECURITIES)
            .map(|s| (symbol(DATA_SEED, s), s))
            .collect(),
    )
}

/// An exchange whose cleanup already ran.
fn exchange(seed: u64) -> Exchange {
    Exchange::new(seed, DATA_SEED, MarketMs(0), SECURITIES, ids(), false)
}

fn order(t_id: i64, s_id: u64, tt: &str, bid: i64, pending: bool) -> Order {
    Order {
        t_id,
        symbol: symbol(DATA_SEED, s_id),
        tt_id: tt.into(),
        qty: 100,
        bid_cents: bid,
        pending,
    }
}

/// Takes everything due up to `now`.
fn drain(x: &mut Exchange, now: i64) -> Vec<(i64, Work)> {
    std::iter::from_fn(|| x.take(now)).collect()
}

#[test]
fn delays_average_a_second_and_never_exceed_five() {
    let mut x = exchange(1);
    let n = 20_000;
    let delays: Vec<i64> = (0..n).map(|_| x.delay()).collect();
    let mean = delays.iter().sum::<i64>() as f64 / n as f64;
    assert!((mean - MEAN_DELAY_MS).abs() < 40.0, "mean {mean}");
    assert!(delays.iter().all(|d| (0..=MAX_DELAY_MS).contains(d)));
    // negexp(1 s) exceeds 5 s with probability e^-5: the cap is hit, but rarely.
    let capped = delays.iter().filter(|d| **d == MAX_DELAY_MS).count();
    assert!(capped > 0 && capped < n / 50, "{capped}");
}

#[test]
fn a_market_order_executes_once_after_its_delay_at_the_curve_price() {
    let mut x = exchange(2);
    x.submit(&order(11, 3, "TMB", 2_500, false), 1_000);
    let due = x.next_due();
    assert!((1_000..=1_000 + MAX_DELAY_MS).contains(&due), "{due}");
    assert!(x.take(due - 1).is_none());
    let got = drain(&mut x, due);
    let expected = Execution {
        t_id: 11,
        price_cents: x.price(3, due),
        s_id: 3,
        qty: 100,
    };
    assert_eq!(got, vec![(due, Work::Result(expected))]);
    assert!(drain(&mut x, due + 10_000).is_empty());
}

#[test]
fn a_triggered_limit_buy_executes_at_its_limit_when_the_price_is_above_it() {
    let mut x = exchange(3);
    let now = 0;
    let price = x.price(4, now);
    // Handed back by a Market-Feed: no longer pending.
    x.submit(&order(12, 4, "TLB", price - 300, false), now);
    let got = drain(&mut x, now + MAX_DELAY_MS);
    let Work::Result(e) = &got[0].1 else {
        panic!("{got:?}")
    };
    let curve = x.price(4, got[0].0);
    assert_eq!(e.price_cents, curve.min(price - 300), "curve {curve}");
}

/// The time a pending order's trigger fires: submitted at `now`, it joins the queue when
/// taken at that time or later, and its ticker entry carries the price it fired at.
fn fire_time(x: &mut Exchange, s_id: u64, tt: &str, limit: i64, now: i64) -> Option<i64> {
    x.submit(&order(99, s_id, tt, limit, true), now);
    let armed = x.triggers.peek().map(|Reverse(t)| t.0);
    match armed {
        Some(at) => {
            x.fire_triggers(at - 1);
            assert!(x.queued.is_empty(), "fired early");
            x.fire_triggers(at);
            assert_eq!(x.queued.len(), 1);
            Some(at)
        }
        None if x.queued.len() == 1 => Some(now),
        None => None,
    }
}

#[test]
fn limit_buy_limit_sell_and_stop_loss_fire_when_the_curve_reaches_their_limit() {
    for (tt, trigger) in [
        ("TLB", Trigger::LimitBuy),
        ("TLS", Trigger::LimitSell),
        ("TSL", Trigger::StopLoss),
    ] {
        for s_id in 1..=10 {
            let mut x = exchange(4);
            let now = 5_000;
            let price = x.price(s_id, now);
            // A limit out of the money now: below the price for buys and stops, above for sells.
            let limit = if trigger == Trigger::LimitSell {
                (price + 150).min(3_000)
            } else {
                (price - 150).max(2_000)
            };
            let at = fire_time(&mut x, s_id, tt, limit, now).expect("reachable");
            let fired = x.queued[0].price_cents;
            assert!(
                trigger.in_the_money(fired, limit),
                "{tt} {fired} vs {limit}"
            );
            assert_eq!(fired, x.price(s_id, at));
            if at > now {
                assert!(
                    !trigger.in_the_money(x.price(s_id, at - 1), limit),
                    "{tt} late"
                );
            }
        }
    }
}

#[test]
fn an_order_in_the_money_is_queued_and_an_unreachable_one_counted() {
    let mut x = exchange(5);
    let price = x.price(6, 0);
    assert_eq!(fire_time(&mut x, 6, "TLB", price + 100, 0), Some(0));
    let mut y = exchange(5);
    assert_eq!(fire_time(&mut y, 6, "TLS", 3_001, 0), None);
    assert_eq!(y.counts.unreachable, 1);
}

#[test]
fn every_trade_adds_two_entries_and_twenty_make_a_feed_with_queued_triggers_first() {
    let mut x = exchange(6);
    let price = x.price(9, 0);
    // Two triggers already in the money wait for the next entries.
    x.submit(&order(1, 9, "TLB", price + 50, true), 0);
    x.submit(&order(2, 9, "TSL", price + 50, true), 0);
    let e = Execution {
        t_id: 5,
        price_cents: 2_500,
        s_id: 1,
        qty: 200,
    };
    for k in 0..9 {
        x.traded(&e, k);
        assert!(x.feeds.is_empty(), "after {} trades", k + 1);
    }
    x.traded(&e, 9);
    let feeds = drain(&mut x, 9);
    assert_eq!(feeds.len(), 1, "{feeds:?}");
    let Work::Feed(batch) = &feeds[0].1 else {
        panic!()
    };
    assert_eq!(batch.len(), FEED_LEN);
    let nine = symbol(DATA_SEED, 9);
    // Entries alternate: the trade's own, then a queued trigger (375) or a random one.
    assert_eq!(
        (batch[1].symbol.as_str(), batch[1].qty),
        (nine.as_str(), 375)
    );
    assert_eq!(
        (batch[3].symbol.as_str(), batch[3].qty),
        (nine.as_str(), 375)
    );
    assert!(batch.iter().step_by(2).all(|t| t.qty == 200));
    assert!(batch[5..]
        .iter()
        .step_by(2)
        .all(|t| [325, 425].contains(&t.qty)));
    assert_eq!(batch[0].price_cents, x.price(1, 0));
}

#[test]
fn each_exchange_delivers_only_its_own_trades() {
    let mut a = exchange(7);
    let mut b = exchange(8);
    for t in 0..50 {
        a.submit(&order(1_000 + t, 2, "TMS", 0, false), 0);
        b.submit(&order(2_000 + t, 2, "TMS", 0, false), 0);
    }
    let ids = |x: &mut Exchange| -> Vec<i64> {
        drain(x, 10_000)
            .into_iter()
            .filter_map(|(_, w)| match w {
                Work::Result(e) => Some(e.t_id),
                _ => None,
            })
            .collect()
    };
    let (ia, ib) = (ids(&mut a), ids(&mut b));
    assert_eq!(ia.len(), 50);
    assert_eq!(ib.len(), 50);
    assert!(ia.iter().all(|t| (1_000..1_050).contains(t)));
    assert!(ib.iter().all(|t| (2_000..2_050).contains(t)));
}

#[test]
fn cleanup_comes_first_and_alone_then_maintenance_once_a_minute_round_robin() {
    let mut x = Exchange::new(9, DATA_SEED, MarketMs(0), SECURITIES, ids(), true);
    assert!(x.starting());
    x.submit(&order(1, 2, "TMB", 0, false), 0);
    assert_eq!(x.take(10_000), Some((0, Work::Cleanup)));
    assert!(x.take(10_000).is_none(), "nothing while cleanup runs");
    x.done(&Work::Cleanup);
    assert!(!x.starting());
    let mut tables = Vec::new();
    for (due, w) in drain(&mut x, 13 * MAINTENANCE_EVERY_MS) {
        if let Work::Maintenance(t) = w {
            assert_eq!(due, (tables.len() as i64 + 1) * MAINTENANCE_EVERY_MS);
            tables.push(t);
        }
    }
    assert_eq!(tables, (0..12).chain([0]).collect::<Vec<u8>>());
}

#[test]
fn a_shard_other_than_the_first_trades_but_never_cleans_up_or_maintains() {
    let mut x =
        Exchange::new(9, DATA_SEED, MarketMs(0), SECURITIES, ids(), false).without_maintenance();
    assert!(!x.starting());
    x.submit(&order(1, 2, "TMB", 0, false), 0);
    let work = drain(&mut x, 13 * MAINTENANCE_EVERY_MS);
    assert!(
        work.iter().any(|(_, w)| matches!(w, Work::Result(_))),
        "{work:?}"
    );
    assert!(
        !work
            .iter()
            .any(|(_, w)| matches!(w, Work::Maintenance(_) | Work::Cleanup)),
        "{work:?}"
    );
}

#[test]
fn failed_work_is_requeued_or_counted_never_dropped() {
    let mut x = exchange(10);
    x.submit(&order(1, 2, "TMB", 0, false), 0);
    let (due, work) = x.take(MAX_DELAY_MS).unwrap();
    let Work::Result(first) = work.clone() else {
        panic!()
    };
    x.failed(work, due, ErrorClass::Connection, due + 10);
    assert_eq!(x.overdue(due + 10).0, 0);
    assert_eq!(x.waiting(due + 10), 1);
    let (again_at, again) = x.take(due + 10 + RETRY_AFTER_MS).unwrap();
    assert_eq!(again_at, due + 10 + RETRY_AFTER_MS);
    // Retried at the price it first executed at.
    assert_eq!(again, Work::Result(first));
    x.failed(again, again_at, ErrorClass::Other, again_at);
    assert_eq!(x.counts.abandoned, 1);
    assert_eq!(x.counts.requeued, 1);
    assert_eq!(x.waiting(again_at) + x.overdue(again_at).0, 0);
}

#[test]
fn overdue_work_and_its_lag_are_visible() {
    let mut x = exchange(11);
    for t in 0..5 {
        x.submit(&order(t, 2, "TMB", 0, false), 0);
    }
    let last = x.results.iter().map(|Reverse(r)| r.0).max().unwrap();
    let first = x.next_due();
    let (n, lag) = x.overdue(last + 2_000);
    assert_eq!(n, 5);
    assert_eq!(lag, last + 2_000 - first);
    assert_eq!(x.waiting(last + 2_000), 0);
}

#[test]
fn maintenance_visits_every_table_data_maintenance_knows() {
    use crate::workload::tpce::txn::data_maintenance::Table;
    assert_eq!(usize::from(MAINTENANCE_TABLES), Table::ALL.len());
}
