//! The market exchange emulator's state for one (group, set), without I/O or a wall clock
//! (tpce.md §5): time is milliseconds of the run (0 = its start), so every rule is a pure
//! function a unit test can drive.
//!
//! - A market order (or a triggered limit order coming back from a Market-Feed) is executed
//!   after `min(negexp(mean 1 s), 5 s)`: a Trade-Result at the security's curve price then,
//!   except that a limit buy whose limit is below that price, or a limit sell whose limit is
//!   above it, executes at its limit.
//! - A limit or stop order waits: already in the money, it is queued for the next ticker
//!   batch; otherwise a trigger is armed for the time the curve reaches its limit (never, when
//!   the limit lies outside the $20–30 band: it is counted as unreachable and stays pending in
//!   the database for the next run's Trade-Cleanup). A fired trigger joins the queue.
//! - Every committed Trade-Result adds its own ticker entry (at the curve price, not the trade
//!   price, so the feed follows the curve) plus exactly one more: a queued trigger (qty 375)
//!   if any, else a random security (qty 325 or 425). Each 20 entries make one Market-Feed,
//!   whose triggered requests come back as orders.
//! - Data-Maintenance falls due once a minute (the next a minute after the previous was due,
//!   however late it ran), round-robin over its 12 tables; Trade-Cleanup is due at 0 and the
//!   set's customers wait for it.
//!
//! Work that fails is requeued a second later when another try can succeed (a lost session,
//! a conflict), or counted abandoned; nothing leaves without being counted.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use rand::Rng as _;
use rand::SeedableRng;

use crate::metrics::ErrorClass;
use crate::workload::tpce::gen::clock::MarketMs;
use crate::workload::tpce::names::symbol;
use crate::workload::tpce::price::{Curve, Trigger};
use crate::workload::tpce::txn::market_feed::Ticker;
use crate::workload::tpce::txn::Order;
use crate::workload::Rng;

/// Entries per Market-Feed (EGen's `max_feed_len`).
pub const FEED_LEN: usize = 20;
/// The mean and the cap of the delay before a submitted order executes.
pub const MEAN_DELAY_MS: f64 = 1_000.0;
pub const MAX_DELAY_MS: i64 = 5_000;
/// Data-Maintenance's period.
pub const MAINTENANCE_EVERY_MS: i64 = 60_000;
/// Tables Data-Maintenance visits in turn.
pub const MAINTENANCE_TABLES: u8 = 12;
/// How long failed work waits before its next try.
pub const RETRY_AFTER_MS: i64 = 1_000;
/// Ticker quantities (tpce.md §5).
const TRIGGER_QTY: i64 = 375;
const RANDOM_QTY: [i64; 2] = [325, 425];

/// A piece of work the exchange hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    /// Cancel what a previous run left (before the set's customers start).
    Cleanup,
    /// Data-Maintenance of table `0..12` in its round-robin order.
    Maintenance(u8),
    /// Trade-Result: the trade executed at a price.
    Result(Execution),
    /// Market-Feed of a full ticker batch.
    Feed(Vec<Ticker>),
}

/// A trade the market executes: what Trade-Result needs, and what its ticker entry needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    pub t_id: i64,
    pub price_cents: i64,
    pub s_id: u64,
    pub qty: i64,
}

/// An order accepted but not yet executed, as the result heap holds it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Submitted {
    t_id: i64,
    s_id: u64,
    qty: i64,
    /// The limit that caps the price (limit buy / limit sell), if any.
    cap: Option<(bool, i64)>,
    /// The price decided when it first fell due (a retry executes at it again).
    fixed: Option<i64>,
}

/// A limit trigger: a security's price reaching a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Armed {
    s_id: u64,
}

/// Counts of what the exchange did, for the run's results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub issued: u64,
    pub abandoned: u64,
    /// Limit orders whose limit the curve never reaches.
    pub unreachable: u64,
    pub requeued: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cleanup {
    Due,
    Running,
    Done,
}

/// One (group, set)'s market.
#[derive(Debug)]
pub struct Exchange {
    rng: Rng,
    data_seed: u64,
    /// Market time at run time 0 (the curve's clock).
    base: MarketMs,
    securities: u64,
    ids: Arc<HashMap<String, u64>>,
    seq: u64,
    results: BinaryHeap<Reverse<(i64, u64, Submitted)>>,
    triggers: BinaryHeap<Reverse<(i64, u64, Armed)>>,
    queued: VecDeque<Ticker>,
    ticker: Vec<Ticker>,
    feeds: VecDeque<(i64, Vec<Ticker>)>,
    next_maintenance: i64,
    maintenance_table: u8,
    cleanup: Cleanup,
    pub counts: Counts,
}

impl Exchange {
    /// A market over `securities` securities of data generated with `data_seed`, whose run
    /// starts at market time `base`; `ids` maps symbols to security ids; `seed` drives the
    /// delays and random ticker picks; `cleanup` says whether Trade-Cleanup must run first.
    pub fn new(
        seed: u64,
        data_seed: u64,
        base: MarketMs,
        securities: u64,
        ids: Arc<HashMap<String, u64>>,
        cleanup: bool,
    ) -> Exchange {
        Exchange {
            rng: Rng::seed_from_u64(seed),
            data_seed,
            base,
            securities: securities.max(1),
            ids,
            seq: 0,
            results: BinaryHeap::new(),
            triggers: BinaryHeap::new(),
            queued: VecDeque::new(),
            ticker: Vec::with_capacity(FEED_LEN),
            feeds: VecDeque::new(),
            next_maintenance: MAINTENANCE_EVERY_MS,
            maintenance_table: 0,
            cleanup: if cleanup { Cleanup::Due } else { Cleanup::Done },
            counts: Counts::default(),
        }
    }

    /// Leaves Data-Maintenance to another driver: a shard of a run that is not its first
    /// (issue 26) runs the market but not the once-per-database work.
    pub fn without_maintenance(mut self) -> Exchange {
        self.next_maintenance = i64::MAX;
        self
    }

    /// The curve price of security `s_id` at run time `t`.
    pub fn price(&self, s_id: u64, t: i64) -> i64 {
        Curve::for_security(self.data_seed, s_id).price_at(self.base.0 + t)
    }

    /// True until Trade-Cleanup has ended.
    pub fn starting(&self) -> bool {
        self.cleanup != Cleanup::Done
    }

    /// A committed Trade-Order's order, or a triggered request a Market-Feed handed back, at
    /// run time `now`.
    pub fn submit(&mut self, order: &Order, now: i64) {
        let Some(&s_id) = self.ids.get(&order.symbol) else {
            self.counts.abandoned += 1;
            return;
        };
        let trigger = match order.tt_id.as_str() {
            "TLB" => Some(Trigger::LimitBuy),
            "TLS" => Some(Trigger::LimitSell),
            "TSL" => Some(Trigger::StopLoss),
            _ => None,
        };
        let cap = match trigger {
            Some(Trigger::LimitBuy) => Some((false, order.bid_cents)),
            Some(Trigger::LimitSell) => Some((true, order.bid_cents)),
            _ => None,
        };
        if !order.pending {
            let at = now + self.delay();
            self.seq += 1;
            let s = Submitted {
                t_id: order.t_id,
                s_id,
                qty: order.qty,
                cap,
                fixed: None,
            };
            self.results.push(Reverse((at, self.seq, s)));
            return;
        }
        let Some(trigger) = trigger else {
            // A pending market order cannot happen (Trade-Order submits those): run it.
            self.submit(
                &Order {
                    pending: false,
                    ..order.clone()
                },
                now,
            );
            return;
        };
        let curve = Curve::for_security(self.data_seed, s_id);
        match curve.trigger_time(trigger, self.base.0 + now, order.bid_cents) {
            Some(t) if t <= self.base.0 + now => self.queued.push_back(Ticker {
                symbol: order.symbol.clone(),
                price_cents: curve.price_at(t),
                qty: TRIGGER_QTY,
            }),
            Some(t) => {
                self.seq += 1;
                self.triggers
                    .push(Reverse((t - self.base.0, self.seq, Armed { s_id })));
            }
            None => self.counts.unreachable += 1,
        }
    }

    /// `min(negexp(mean 1 s), 5 s)` in whole milliseconds.
    pub fn delay(&mut self) -> i64 {
        let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
        ((-u.ln() * MEAN_DELAY_MS) as i64).min(MAX_DELAY_MS)
    }

    /// A Trade-Result committed at `now` for `e`: its ticker entry plus one more; a full batch
    /// becomes a Market-Feed due at once.
    pub fn traded(&mut self, e: &Execution, now: i64) {
        let own = Ticker {
            symbol: symbol(self.data_seed, e.s_id),
            price_cents: self.price(e.s_id, now),
            qty: e.qty,
        };
        self.fire_triggers(now);
        let other = match self.queued.pop_front() {
            Some(t) => t,
            None => {
                let s_id = self.rng.gen_range(1..=self.securities);
                Ticker {
                    symbol: symbol(self.data_seed, s_id),
                    price_cents: self.price(s_id, now),
                    qty: RANDOM_QTY[self.rng.gen_range(0..2)],
                }
            }
        };
        for t in [own, other] {
            self.ticker.push(t);
            if self.ticker.len() >= FEED_LEN {
                let batch = std::mem::replace(&mut self.ticker, Vec::with_capacity(FEED_LEN));
                self.feeds.push_back((now, batch));
            }
        }
    }

    /// Moves triggers whose time has come to the queue, at the price they fired at.
    fn fire_triggers(&mut self, now: i64) {
        while let Some(Reverse((at, _, armed))) = self.triggers.peek().copied() {
            if at > now {
                break;
            }
            self.triggers.pop();
            self.queued.push_back(Ticker {
                symbol: symbol(self.data_seed, armed.s_id),
                price_cents: self.price(armed.s_id, at),
                qty: TRIGGER_QTY,
            });
        }
    }

    /// When the next piece of work falls due (`i64::MAX`: nothing is scheduled).
    pub fn next_due(&self) -> i64 {
        if self.cleanup == Cleanup::Due {
            return 0;
        }
        let result = self.results.peek().map_or(i64::MAX, |Reverse(r)| r.0);
        let feed = self.feeds.front().map_or(i64::MAX, |f| f.0);
        result.min(feed).min(self.next_maintenance)
    }

    /// Takes the most overdue piece of work due at `now`. Cleanup comes first and alone: while
    /// it runs nothing else is handed out.
    pub fn take(&mut self, now: i64) -> Option<(i64, Work)> {
        match self.cleanup {
            Cleanup::Due => {
                self.cleanup = Cleanup::Running;
                self.counts.issued += 1;
                return Some((0, Work::Cleanup));
            }
            Cleanup::Running => return None,
            Cleanup::Done => {}
        }
        self.fire_triggers(now);
        let due = self.next_due();
        if due > now {
            return None;
        }
        self.counts.issued += 1;
        if self.feeds.front().is_some_and(|f| f.0 == due) {
            let (at, batch) = self.feeds.pop_front()?;
            return Some((at, Work::Feed(batch)));
        }
        if self.results.peek().is_some_and(|Reverse(r)| r.0 == due) {
            let Reverse((at, _, s)) = self.results.pop()?;
            let curve = self.price(s.s_id, at);
            let price_cents = match (s.fixed, s.cap) {
                (Some(p), _) => p,
                (None, Some((false, limit))) if limit < curve => limit,
                (None, Some((true, limit))) if limit > curve => limit,
                _ => curve,
            };
            let e = Execution {
                t_id: s.t_id,
                price_cents,
                s_id: s.s_id,
                qty: s.qty,
            };
            return Some((at, Work::Result(e)));
        }
        let table = self.maintenance_table;
        self.maintenance_table = (table + 1) % MAINTENANCE_TABLES;
        self.next_maintenance += MAINTENANCE_EVERY_MS;
        Some((due, Work::Maintenance(table)))
    }

    /// `work` committed.
    pub fn done(&mut self, work: &Work) {
        if *work == Work::Cleanup {
            self.cleanup = Cleanup::Done;
        }
    }

    /// `work`, due at `due`, failed at `now` with `class`: requeued a second later when
    /// another try can succeed, else abandoned. Cleanup and Data-Maintenance are not retried
    /// (a failed cleanup must not hold the set's customers; the next maintenance comes within
    /// a minute).
    pub fn failed(&mut self, work: Work, due: i64, class: ErrorClass, now: i64) {
        let again =
            class.is_retryable() || matches!(class, ErrorClass::Connection | ErrorClass::Timeout);
        let at = now.max(due) + RETRY_AFTER_MS;
        match work {
            Work::Result(e) if again => {
                self.seq += 1;
                let s = Submitted {
                    t_id: e.t_id,
                    s_id: e.s_id,
                    qty: e.qty,
                    cap: None,
                    fixed: Some(e.price_cents),
                };
                self.results.push(Reverse((at, self.seq, s)));
                self.counts.requeued += 1;
            }
            Work::Feed(batch) if again => {
                self.feeds.push_back((at, batch));
                self.counts.requeued += 1;
            }
            Work::Cleanup => {
                self.cleanup = Cleanup::Done;
                self.counts.abandoned += 1;
            }
            _ => self.counts.abandoned += 1,
        }
    }

    /// Work due at `now` not yet taken, and how late the oldest is (ms).
    pub fn overdue(&self, now: i64) -> (u64, i64) {
        let mut n = 0;
        let mut oldest = i64::MAX;
        if self.cleanup == Cleanup::Due {
            n += 1;
            oldest = 0;
        }
        for Reverse((at, _, _)) in self.results.iter().filter(|r| r.0 .0 <= now) {
            n += 1;
            oldest = oldest.min(*at);
        }
        for (at, _) in self.feeds.iter().filter(|f| f.0 <= now) {
            n += 1;
            oldest = oldest.min(*at);
        }
        if self.next_maintenance <= now {
            n += 1;
            oldest = oldest.min(self.next_maintenance);
        }
        (n, if n == 0 { 0 } else { now - oldest })
    }

    /// Work waiting for its time: scheduled results, batches not yet due, armed triggers and
    /// fired ones queued for the next ticker batch.
    pub fn waiting(&self, now: i64) -> u64 {
        let later = |at: i64| at > now;
        (self.results.iter().filter(|r| later(r.0 .0)).count()
            + self.feeds.iter().filter(|f| later(f.0)).count()
            + self.triggers.len()
            + self.queued.len()) as u64
    }
}

#[cfg(test)]
mod tests;
