//! Holding lots of one (account, security): how a completed trade closes and opens them, by
//! the rules the simulation shares with Trade-Result (tpce.md §3.2 Trade-Result frame 2):
//! a sell closes long lots, a buy covers short lots, newest first for a LIFO trade and oldest
//! first otherwise, and what is left opens a new lot (short for a sell) whose id is the
//! trade's. All lots of a pair are on one side, since a trade only opens a lot after closing
//! every lot of the other side.
//!
//! Trades complete in (completion time, t_id) order, so a new lot always sorts after the
//! existing ones by (h_dts, h_t_id): the queue stays in that order by appending, LIFO takes
//! from its back and FIFO from its front, as `ORDER BY h_dts, h_t_id` would.

use std::collections::VecDeque;

use crate::workload::tpce::gen::clock::MarketMs;

/// One HOLDING row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lot {
    /// H_T_ID: the trade that opened it.
    pub t_id: u64,
    pub dts: MarketMs,
    /// H_PRICE in cents.
    pub price: i64,
    /// H_QTY, negative for a short lot.
    pub qty: i64,
}

/// A completed trade as it meets the lots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    pub t_id: u64,
    pub dts: MarketMs,
    pub price: i64,
    pub qty: i64,
    pub sell: bool,
    pub lifo: bool,
}

/// Applies `fill` to `lots`, calling `touched(lot id, before, after)` for every lot it changes
/// or opens, in order (a HOLDING_HISTORY row each). Returns the sell's gain in cents over the
/// long lots it closed, Σ (price − h_price) × closed qty; 0 for a buy.
pub fn apply(lots: &mut VecDeque<Lot>, fill: &Fill, mut touched: impl FnMut(u64, i64, i64)) -> i64 {
    let mut needed = fill.qty;
    let mut gain = 0;
    while needed > 0 {
        let lot = if fill.lifo {
            lots.back_mut()
        } else {
            lots.front_mut()
        };
        let Some(lot) = lot else { break };
        // A sell closes long lots, a buy short ones; lots of the trade's own side stay.
        if (fill.sell && lot.qty <= 0) || (!fill.sell && lot.qty >= 0) {
            break;
        }
        let take = lot.qty.abs().min(needed);
        let before = lot.qty;
        let after = if fill.sell {
            before - take
        } else {
            before + take
        };
        touched(lot.t_id, before, after);
        if fill.sell {
            gain += (fill.price - lot.price) * take;
        }
        needed -= take;
        if after == 0 {
            if fill.lifo {
                lots.pop_back();
            } else {
                lots.pop_front();
            }
        } else {
            lot.qty = after;
        }
    }
    if needed > 0 {
        let qty = if fill.sell { -needed } else { needed };
        touched(fill.t_id, 0, qty);
        lots.push_back(Lot {
            t_id: fill.t_id,
            dts: fill.dts,
            price: fill.price,
            qty,
        });
    }
    gain
}

/// HS_QTY: the sum of the lots' quantities.
pub fn total(lots: &VecDeque<Lot>) -> i64 {
    lots.iter().map(|l| l.qty).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(t_id: u64, qty: i64, price: i64, sell: bool, lifo: bool) -> Fill {
        Fill {
            t_id,
            dts: MarketMs(t_id as i64 * 10),
            price,
            qty,
            sell,
            lifo,
        }
    }

    fn run(lots: &mut VecDeque<Lot>, f: Fill) -> (i64, Vec<(u64, i64, i64)>) {
        let mut rows = Vec::new();
        let gain = apply(lots, &f, |lot, before, after| {
            rows.push((lot, before, after))
        });
        (gain, rows)
    }

    fn open_longs() -> VecDeque<Lot> {
        let mut lots = VecDeque::new();
        run(&mut lots, fill(1, 100, 2_000, false, false));
        run(&mut lots, fill(2, 200, 2_100, false, false));
        run(&mut lots, fill(3, 400, 2_200, false, false));
        lots
    }

    #[test]
    fn buys_open_long_lots_in_time_order() {
        let lots = open_longs();
        let ids: Vec<u64> = lots.iter().map(|l| l.t_id).collect();
        assert_eq!(ids, [1, 2, 3]);
        assert_eq!(total(&lots), 700);
        assert_eq!(lots[1].price, 2_100);
        assert_eq!(lots[1].dts, MarketMs(20));
    }

    #[test]
    fn fifo_sells_close_oldest_first_and_count_the_gain() {
        let mut lots = open_longs();
        let (gain, rows) = run(&mut lots, fill(4, 200, 2_500, true, false));
        assert_eq!(rows, [(1, 100, 0), (2, 200, 100)]);
        assert_eq!(gain, 100 * 500 + 100 * 400);
        assert_eq!(total(&lots), 500);
        assert_eq!(lots.front().map(|l| (l.t_id, l.qty)), Some((2, 100)));
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
