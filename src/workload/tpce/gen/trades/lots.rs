//! The open lots of one (account, security) pair in the simulated market, and how a completed
//! trade changes them by the rule it shares with Trade-Result ([`rules::lots`]).
//!
//! Trades complete in (completion time, t_id) order, so a new lot always sorts after the
//! existing ones by (h_dts, h_t_id): the queue stays in that order by appending, a LIFO trade
//! walks it from the back and a FIFO one from the front, as `ORDER BY h_dts, h_t_id` would.
//! A pair's lots are all on one side, so the lots a trade closes or shrinks are the ones at the
//! end it walks from, in its order.

use std::collections::VecDeque;

use crate::workload::tpce::gen::clock::MarketMs;
use crate::workload::tpce::rules::{self, lots::Lot, lots::Settled};

/// One HOLDING row: a lot and when it opened (H_DTS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holding {
    pub lot: Lot,
    pub dts: MarketMs,
}

/// A completed trade as it meets the lots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    pub t_id: i64,
    pub dts: MarketMs,
    pub price: i64,
    pub qty: i64,
    pub sell: bool,
    pub lifo: bool,
}

/// Applies `fill` to the pair's `lots` and returns what it did: the lots touched, in order (a
/// HOLDING_HISTORY row each), and the sell's gain over the long lots it closed.
pub fn apply(lots: &mut VecDeque<Holding>, fill: &Fill) -> Settled {
    let (mut oldest_first, mut newest_first) = (lots.iter(), lots.iter().rev());
    let order: &mut dyn Iterator<Item = &Holding> = if fill.lifo {
        &mut newest_first
    } else {
        &mut oldest_first
    };
    let settled = rules::lots::settle(
        order.map(|h| &h.lot),
        fill.sell,
        fill.qty,
        fill.price,
        fill.t_id,
    );
    for change in &settled.changes {
        if change.before == 0 {
            lots.push_back(Holding {
                lot: Lot {
                    id: change.id,
                    qty: change.after,
                    price_cents: fill.price,
                },
                dts: fill.dts,
            });
            continue;
        }
        let end = if fill.lifo {
            lots.back_mut()
        } else {
            lots.front_mut()
        };
        let Some(held) = end else { break };
        debug_assert_eq!(
            held.lot.id, change.id,
            "lots are closed from the walked end"
        );
        if change.after != 0 {
            held.lot.qty = change.after;
        } else if fill.lifo {
            lots.pop_back();
        } else {
            lots.pop_front();
        }
    }
    settled
}

/// HS_QTY: the sum of the lots' quantities.
pub fn total(lots: &VecDeque<Holding>) -> i64 {
    lots.iter().map(|h| h.lot.qty).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(t_id: i64, qty: i64, price: i64, sell: bool, lifo: bool) -> Fill {
        Fill {
            t_id,
            dts: MarketMs(t_id * 10),
            price,
            qty,
            sell,
            lifo,
        }
    }

    fn run(lots: &mut VecDeque<Holding>, f: Fill) -> (i64, Vec<(i64, i64, i64)>) {
        let settled = apply(lots, &f);
        let rows = settled.changes.iter();
        let rows = rows.map(|c| (c.id, c.before, c.after)).collect();
        (settled.gain_cents, rows)
    }

    fn open_longs() -> VecDeque<Holding> {
        let mut lots = VecDeque::new();
        run(&mut lots, fill(1, 100, 2_000, false, false));
        run(&mut lots, fill(2, 200, 2_100, false, false));
        run(&mut lots, fill(3, 400, 2_200, false, false));
        lots
    }

    #[test]
    fn buys_open_long_lots_in_time_order() {
        let lots = open_longs();
        let ids: Vec<i64> = lots.iter().map(|h| h.lot.id).collect();
        assert_eq!(ids, [1, 2, 3]);
        assert_eq!(total(&lots), 700);
        assert_eq!(lots[1].lot.price_cents, 2_100);
        assert_eq!(lots[1].dts, MarketMs(20));
    }

    #[test]
    fn fifo_sells_close_oldest_first_and_count_the_gain() {
        let mut lots = open_longs();
        let (gain, rows) = run(&mut lots, fill(4, 200, 2_500, true, false));
        assert_eq!(rows, [(1, 100, 0), (2, 200, 100)]);
        assert_eq!(gain, 100 * 500 + 100 * 400);
        assert_eq!(total(&lots), 500);
        assert_eq!(lots.front().map(|h| (h.lot.id, h.lot.qty)), Some((2, 100)));
    }

    #[test]
    fn lifo_sells_close_newest_first() {
        let mut lots = open_longs();
        let (gain, rows) = run(&mut lots, fill(4, 200, 2_000, true, true));
        assert_eq!(rows, [(3, 400, 200)]);
        assert_eq!(gain, -200 * 200);
        let (_, rows) = run(&mut lots, fill(5, 400, 2_000, true, true));
        assert_eq!(rows, [(3, 200, 0), (2, 200, 0)]);
        assert_eq!(total(&lots), 100);
    }

    #[test]
    fn a_sell_beyond_the_longs_opens_a_short_and_a_buy_covers_it() {
        let mut lots = open_longs();
        let (gain, rows) = run(&mut lots, fill(4, 800, 2_200, true, false));
        assert_eq!(rows, [(1, 100, 0), (2, 200, 0), (3, 400, 0), (4, 0, -100)]);
        assert_eq!(gain, 100 * 200 + 200 * 100);
        assert_eq!(total(&lots), -100);
        // Another sell only adds a short lot.
        let (gain, rows) = run(&mut lots, fill(5, 200, 2_900, true, true));
        assert_eq!((gain, rows), (0, vec![(5, 0, -200)]));
        // A FIFO buy covers the oldest short first; the rest opens a long lot.
        let (gain, rows) = run(&mut lots, fill(6, 400, 2_000, false, false));
        assert_eq!(gain, 0);
        assert_eq!(rows, [(4, -100, 0), (5, -200, 0), (6, 0, 100)]);
        assert_eq!(lots.len(), 1);
        assert_eq!(total(&lots), 100);
        // A LIFO buy smaller than the newest short shrinks it.
        let mut lots = VecDeque::new();
        run(&mut lots, fill(7, 800, 2_000, true, false));
        let (_, rows) = run(&mut lots, fill(8, 100, 2_000, false, true));
        assert_eq!(rows, [(7, -800, -700)]);
    }
}
