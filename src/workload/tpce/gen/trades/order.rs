//! One loaded trade as the order that made it: who placed it, on what, of which type and
//! size, when it was submitted, when it fired and completed, and at what price. All of it is a
//! pure function of (seed, scale, trade number), so the simulation, Trade-Lookup's and
//! Trade-Update's input draws and the tests compute the same order without the database; only
//! the trade's tax (and so its settlement amount) depends on the holdings the simulation keeps.
//!
//! Rules (tpce.md §2.5 "Load-time trade mix", §5 "Price curve", §6 "Initial trades"): nominal
//! tpsE = customers / SF, so loaded trade `i` is submitted at i × SF / customers seconds; a
//! customer of the unit and one of its accounts uniform, a security the account trades
//! uniform; market buy 30 %, market sell 30 %, limit buy 20 %, limit sell 10 %, stop-loss
//! 10 %; qty 100/200/400/800; 16 % of buys on margin; 35 % LIFO; limit prices $20.00–30.00.
//! A market order completes after the market's delay (negative exponential, mean 1 s, at most
//! 5 s); a limit or stop order first waits for the price curve to reach its limit.

use crate::workload::tpce::customer::{account_securities, first_account_id, permitted};
use crate::workload::tpce::gen::catalog::{TradeType, TRADE_TYPES};
use crate::workload::tpce::gen::clock::{run_start, MarketMs};
use crate::workload::tpce::price::{Curve, Trigger, HIGH_CENTS, LOW_CENTS};
use crate::workload::tpce::rng::{Entity, Tag};
use crate::workload::tpce::scale::{self, Scale, CUSTOMERS_PER_LU};

/// Fields of the trade stream (keyed by the loaded trade number).
const F_CUSTOMER: u32 = 0;
const F_ACCOUNT: u32 = 1;
const F_SECURITY: u32 = 2;
const F_TYPE: u32 = 3;
const F_QTY: u32 = 4;
const F_MARGIN: u32 = 5;
const F_LIFO: u32 = 6;
const F_EXECUTOR: u32 = 7;
const F_LIMIT: u32 = 8;
const F_DELAY: u32 = 9;

pub const QUANTITIES: [i64; 4] = [100, 200, 400, 800];
const MARGIN_PCT: u32 = 16;
const LIFO_PCT: u32 = 35;
const MEAN_DELAY_MS: f64 = 1_000.0;
const MAX_DELAY_MS: i64 = 5_000;

/// Indexes into [`TRADE_TYPES`] (a test checks them against the ids).
pub(super) const TMB_AT: usize = 0;
pub(super) const TMS_AT: usize = 1;
pub(super) const TSL_AT: usize = 2;
pub(super) const TLS_AT: usize = 3;
pub(super) const TLB_AT: usize = 4;

/// Where the draw finds an account's facts: computed on the spot ([`Direct`]) or from the
/// simulation's per-unit cache. Both must answer as [`crate::workload::tpce::customer`] does.
pub trait Book {
    /// The number of accounts of customer `c_id`.
    fn accounts(&mut self, c_id: u64) -> u64;
    /// The securities account `ca_id` trades ([`account_securities`]).
    fn securities(&mut self, ca_id: u64) -> &[u64];
    /// The customers permitted to trade account `ca_id` ([`permitted`]).
    fn permitted(&mut self, ca_id: u64) -> &[u64];
    /// The price curve of the account's `slot`-th security.
    fn curve(&mut self, ca_id: u64, slot: usize) -> Curve;
}

/// A loaded trade: the order and its execution, everything but the holdings' effects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedTrade {
    /// The loaded trade number (from 0); [`scale::trade_id`] of it is `t_id`.
    pub index: u64,
    pub t_id: u64,
    /// The account's owner.
    pub c_id: u64,
    pub ca_id: u64,
    /// The security index; its symbol is [`crate::workload::tpce::names::symbol`].
    pub s_id: u64,
    /// The position of `s_id` among the account's securities.
    pub slot: usize,
    /// Index into [`TRADE_TYPES`].
    pub tt: usize,
    pub qty: i64,
    pub is_cash: bool,
    pub lifo: bool,
    /// The customer who placed the order (owner or a permitted person).
    pub executor: u64,
    /// t_bid_price in cents: the limit of a limit or stop order, else the price at submission.
    pub bid: i64,
    pub submitted: MarketMs,
    /// When a limit or stop order fired (and was submitted to the market); `None` for a
    /// market order.
    pub triggered: Option<MarketMs>,
    pub completed: MarketMs,
    /// t_trade_price in cents.
    pub price: i64,
}

impl LoadedTrade {
    pub fn trade_type(&self) -> &'static TradeType {
        &TRADE_TYPES[self.tt]
    }

    pub fn is_sell(&self) -> bool {
        self.trade_type().is_sell
    }
}

/// When loaded trade `index` is submitted: trades arrive at customers / SF per second over the
/// whole database, so ids are in time order (integer milliseconds, rounded down).
pub fn submitted_at(scale: &Scale, index: u64) -> MarketMs {
    let ms = u128::from(index) * u128::from(scale.scale_factor()) * 1_000
        / u128::from(scale.customers());
    MarketMs(ms as i64)
}

/// The trade type (index into [`TRADE_TYPES`]) of a percent draw, by the load mix.
fn load_mix(percent: u32) -> usize {
    match percent {
        ..=30 => TMB_AT,
        31..=60 => TMS_AT,
        61..=80 => TLB_AT,
        81..=90 => TLS_AT,
        _ => TSL_AT,
    }
}

/// The trigger of a limit or stop type; `None` for a market order.
fn trigger_of(tt: usize) -> Option<Trigger> {
    match tt {
        TLB_AT => Some(Trigger::LimitBuy),
        TLS_AT => Some(Trigger::LimitSell),
        TSL_AT => Some(Trigger::StopLoss),
        _ => None,
    }
}

/// The market's execution delay: negative exponential with mean 1 s, at most 5 s (tpce.md §5).
fn delay_ms(e: &Entity) -> i64 {
    let wait = -(1.0 - e.unit(F_DELAY)).ln() * MEAN_DELAY_MS;
    (wait.round() as i64).min(MAX_DELAY_MS)
}

/// Loaded trade `index` of the database of `scale`, with account facts from `book`.
pub fn draw(seed: u64, scale: &Scale, index: u64, book: &mut impl Book) -> LoadedTrade {
    let lu = index % scale.load_units();
    let e = Entity::new(seed, Tag::Trade, index);
    let c_id =
        lu * CUSTOMERS_PER_LU + 1 + e.range(F_CUSTOMER, 0, CUSTOMERS_PER_LU as i64 - 1) as u64;
    let accounts = book.accounts(c_id);
    let ca_id = first_account_id(c_id) + e.range(F_ACCOUNT, 0, accounts as i64 - 1) as u64;
    let held = book.securities(ca_id);
    let slot = e.range(F_SECURITY, 0, held.len() as i64 - 1) as usize;
    let s_id = held[slot];
    let people = book.permitted(ca_id);
    let executor = people[e.range(F_EXECUTOR, 0, people.len() as i64 - 1) as usize];
    let tt = load_mix(e.percent(F_TYPE));
    let sell = TRADE_TYPES[tt].is_sell;
    let qty = QUANTITIES[e.range(F_QTY, 0, QUANTITIES.len() as i64 - 1) as usize];
    let is_cash = sell || !e.chance(F_MARGIN, MARGIN_PCT);
    let lifo = e.chance(F_LIFO, LIFO_PCT);
    let curve = book.curve(ca_id, slot);
    let submitted = submitted_at(scale, index);
    // Every order fires within one period of its submission, so before the run starts; the
    // delay is cut there too, so no loaded trade completes inside the run's market time.
    let latest = run_start(scale.trade_days()).0 - 1;
    let complete_after = |start: i64| (start + delay_ms(&e)).min(latest).max(start);
    let (bid, triggered, completed, price) = match trigger_of(tt) {
        None => {
            let done = complete_after(submitted.0);
            (
                curve.price_at(submitted.0),
                None,
                done,
                curve.price_at(done),
            )
        }
        Some(trigger) => {
            let limit = e.range(F_LIMIT, LOW_CENTS, HIGH_CENTS);
            let fired = curve
                .trigger_time(trigger, submitted.0, limit)
                .unwrap_or(submitted.0);
            let done = complete_after(fired);
            let at = curve.price_at(done);
            // The price may move on while the order waits for execution; a limit still holds.
            let price = match trigger {
                Trigger::LimitBuy => at.min(limit),
                Trigger::LimitSell => at.max(limit),
                Trigger::StopLoss => at,
            };
            (limit, Some(MarketMs(fired)), done, price)
        }
    };
    LoadedTrade {
        index,
        t_id: scale::trade_id(index),
        c_id,
        ca_id,
        s_id,
        slot,
        tt,
        qty,
        is_cash,
        lifo,
        executor,
        bid,
        submitted,
        triggered,
        completed: MarketMs(completed),
        price,
    }
}

/// Account facts computed on the spot, for one draw at a time.
#[derive(Debug)]
pub struct Direct {
    seed: u64,
    securities: u64,
    /// The last account whose securities were computed, and those securities.
    held_by: u64,
    held: Vec<u64>,
    people: Vec<u64>,
}

impl Direct {
    pub fn new(seed: u64, scale: &Scale) -> Direct {
        Direct {
            seed,
            securities: scale.securities(),
            held_by: 0,
            held: Vec::new(),
            people: Vec::new(),
        }
    }
}

impl Book for Direct {
    fn accounts(&mut self, c_id: u64) -> u64 {
        scale::accounts(self.seed, c_id)
    }

    fn securities(&mut self, ca_id: u64) -> &[u64] {
        if self.held_by != ca_id {
            self.held = account_securities(self.seed, ca_id, self.securities);
            self.held_by = ca_id;
        }
        &self.held
    }

    fn permitted(&mut self, ca_id: u64) -> &[u64] {
        self.people = permitted(self.seed, ca_id);
        &self.people
    }

    fn curve(&mut self, ca_id: u64, slot: usize) -> Curve {
        let s_id = self.securities(ca_id)[slot];
        Curve::for_security(self.seed, s_id)
    }
}

/// The loaded trade whose id is `t_id`, computed without the database (for Trade-Lookup and
/// Trade-Update inputs and checks); `None` for a skipped or never loaded id. Costs one
/// account's securities and permissions: microseconds.
pub fn loaded_trade(seed: u64, scale: &Scale, t_id: u64) -> Option<LoadedTrade> {
    let index = scale::trade_index(t_id).filter(|&i| i < scale.initial_trades())?;
    Some(draw(seed, scale, index, &mut Direct::new(seed, scale)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpce::gen::clock::initial_trades_end;

    #[test]
    fn type_indexes_match_the_catalog() {
        use crate::workload::tpce::gen::catalog::{TLB, TLS, TMB, TMS, TSL};
        for (at, id) in [
            (TMB_AT, TMB),
            (TMS_AT, TMS),
            (TSL_AT, TSL),
            (TLS_AT, TLS),
            (TLB_AT, TLB),
        ] {
            assert_eq!(TRADE_TYPES[at].id, id);
        }
        assert_eq!(trigger_of(TMB_AT), None);
        assert_eq!(trigger_of(TSL_AT), Some(Trigger::StopLoss));
    }

    #[test]
    fn orders_follow_the_load_mix() {
        let scale = Scale::new(2_000, 1, 500).unwrap();
        let mut book = Direct::new(3, &scale);
        let n = 20_000;
        let mut types = [0u32; 5];
        let (mut buys, mut margin, mut lifo, mut delays) = (0u32, 0u32, 0u32, 0i64);
        for index in 0..n {
            let t = draw(3, &scale, index, &mut book);
            types[t.tt] += 1;
            assert_eq!(t.index % 2, (t.c_id - 1) / 1_000, "unit of the trade");
            assert!(account_securities(3, t.ca_id, scale.securities()).contains(&t.s_id));
            assert!(permitted(3, t.ca_id).contains(&t.executor));
            assert!(QUANTITIES.contains(&t.qty));
            if !t.is_sell() {
                buys += 1;
                margin += u32::from(!t.is_cash);
            }
            assert!(t.is_cash || !t.is_sell(), "sells are cash");
            lifo += u32::from(t.lifo);
            let start = t.triggered.unwrap_or(t.submitted);
            assert!(t.submitted <= start && start <= t.completed);
            assert!(t.completed.0 - start.0 <= MAX_DELAY_MS);
            delays += t.completed.0 - start.0;
        }
        let pct = |c: u32, of: u32| f64::from(c) * 100.0 / f64::from(of);
        let n32 = n as u32;
        for (at, want) in [
            (TMB_AT, 30.0),
            (TMS_AT, 30.0),
            (TLB_AT, 20.0),
            (TLS_AT, 10.0),
            (TSL_AT, 10.0),
        ] {
            assert!((pct(types[at], n32) - want).abs() < 1.5, "{types:?}");
        }
        assert!((pct(margin, buys) - 16.0).abs() < 1.5, "{margin} of {buys}");
        assert!((pct(lifo, n32) - 35.0).abs() < 1.5, "{lifo}");
        // The 5 s cap trims the exponential's mean of 1 s by under 1 %.
        let mean = delays as f64 / n as f64;
        assert!((900.0..1_100.0).contains(&mean), "{mean}");
    }

    #[test]
    fn prices_follow_the_curve_and_respect_limits() {
        let scale = Scale::new(1_000, 1, 500).unwrap();
        let mut book = Direct::new(8, &scale);
        for index in 0..5_000 {
            let t = draw(8, &scale, index, &mut book);
            let curve = Curve::for_security(8, t.s_id);
            match t.triggered {
                None => {
                    assert_eq!(t.bid, curve.price_at(t.submitted.0));
                    assert_eq!(t.price, curve.price_at(t.completed.0));
                }
                Some(fired) => {
                    let trigger = trigger_of(t.tt).unwrap();
                    assert!(trigger.in_the_money(curve.price_at(fired.0), t.bid));
                    assert!(fired.0 - t.submitted.0 < crate::workload::tpce::price::PERIOD_MS);
                    assert!((LOW_CENTS..=HIGH_CENTS).contains(&t.bid));
                    match trigger {
                        Trigger::LimitBuy => assert!(t.price <= t.bid),
                        Trigger::LimitSell => assert!(t.price >= t.bid),
                        Trigger::StopLoss => assert_eq!(t.price, curve.price_at(t.completed.0)),
                    }
                }
            }
        }
    }

    #[test]
    fn submissions_span_the_trade_days_and_completions_end_before_the_run() {
        let scale = Scale::new(3_000, 2, 500).unwrap();
        let n = scale.initial_trades();
        assert_eq!(submitted_at(&scale, 0), MarketMs(0));
        // Three units at 2 trades/s each: 6 trades a second.
        assert_eq!(submitted_at(&scale, 6), MarketMs(1_000));
        assert!(submitted_at(&scale, n - 1) < initial_trades_end(2));
        assert!(submitted_at(&scale, n) >= initial_trades_end(2));
        let mut book = Direct::new(1, &scale);
        for index in n - 3_000..n {
            let t = draw(1, &scale, index, &mut book);
            assert!(t.completed < run_start(2), "{t:?}");
        }
    }

    #[test]
    fn loaded_trades_are_found_by_id() {
        let scale = Scale::new(1_000, 1, 500).unwrap();
        let t = loaded_trade(4, &scale, 102).unwrap();
        assert_eq!((t.index, t.t_id), (100, 102));
        assert_eq!(t, draw(4, &scale, 100, &mut Direct::new(4, &scale)));
        assert_eq!(loaded_trade(4, &scale, 101), None);
        assert_eq!(loaded_trade(4, &scale, 0), None);
        assert_eq!(loaded_trade(4, &scale, scale.first_run_trade_id()), None);
        assert!(loaded_trade(4, &scale, scale.first_run_trade_id() - 1).is_some());
    }
}
