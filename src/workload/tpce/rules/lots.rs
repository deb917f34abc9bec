//! What a trade does to the lots of its (account, security) pair (tpce.md §3.2 Trade-Result
//! frame 2): the rule the loader's simulated market and Trade-Result share, and the walk
//! Trade-Order's frame 3 makes to estimate a trade's value.
//!
//! A sell closes long lots (positive quantity) and a buy covers short lots (negative), in the
//! order the caller gives them: newest first for a LIFO trade (h_dts desc, h_t_id desc),
//! oldest first otherwise. What the closing lots cannot absorb opens a new lot, short for a
//! sell and long for a buy, whose id is the trade's. Every lot touched, the new one included,
//! is one HOLDING_HISTORY row with its quantity before and after.
//!
//! All lots of a pair are on one side, since a trade only opens a lot once it has closed every
//! lot of the other side; lots of the trade's own side are passed over all the same.

/// An open lot (a HOLDING row): quantity positive for a long lot, negative for a short one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lot {
    pub id: i64,
    pub qty: i64,
    pub price_cents: i64,
}

/// One lot touched: `after` 0 closes (deletes) it; `before` 0 is the new lot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LotChange {
    pub id: i64,
    pub before: i64,
    pub after: i64,
}

/// The effect of one trade on its pair's lots, and the values that follow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Settled {
    /// The existing lots closed or shrunk, in closing order, then the new lot if any.
    pub changes: Vec<LotChange>,
    /// The new lot's quantity (negative when short), 0 when the closing lots took it all.
    pub new_lot: i64,
    /// What the shares closed against cost when bought: the lots' prices for a sell, the
    /// trade price for a buy covering shorts (TPC-E's frame values).
    pub buy_value_cents: i64,
    /// What they fetched when sold: the trade price for a sell, the lots' prices for a buy.
    pub sell_value_cents: i64,
    /// Σ (trade price − lot price) × closed quantity over the long lots a sell closes; 0 for a
    /// buy. The tax rule taxes it when positive.
    pub gain_cents: i64,
}

impl Settled {
    /// The existing lots closed or shrunk (the new lot aside).
    pub fn lots_closed(&self) -> usize {
        self.changes.len() - usize::from(self.new_lot != 0)
    }
}

/// Applies a trade of `qty` shares at `price_cents` to `lots` (in closing order; lots of the
/// wrong sign are passed over). `t_id` names the new lot, if one opens.
pub fn settle<'a>(
    lots: impl IntoIterator<Item = &'a Lot>,
    is_sell: bool,
    qty: i64,
    price_cents: i64,
    t_id: i64,
) -> Settled {
    let mut out = Settled::default();
    let mut needed = qty;
    for lot in lots {
        if needed == 0 {
            break;
        }
        let closes = if is_sell { lot.qty > 0 } else { lot.qty < 0 };
        if !closes {
            continue;
        }
        let closed = lot.qty.abs().min(needed);
        let after = if is_sell {
            lot.qty - closed
        } else {
            lot.qty + closed
        };
        out.changes.push(LotChange {
            id: lot.id,
            before: lot.qty,
            after,
        });
        if is_sell {
            out.buy_value_cents += closed * lot.price_cents;
            out.sell_value_cents += closed * price_cents;
            out.gain_cents += closed * (price_cents - lot.price_cents);
        } else {
            out.sell_value_cents += closed * lot.price_cents;
            out.buy_value_cents += closed * price_cents;
        }
        needed -= closed;
    }
    if needed > 0 {
        out.new_lot = if is_sell { -needed } else { needed };
        out.changes.push(LotChange {
            id: t_id,
            before: 0,
            after: out.new_lot,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lot(id: i64, qty: i64, price_cents: i64) -> Lot {
        Lot {
            id,
            qty,
            price_cents,
        }
    }

    #[test]
    fn a_sell_closes_lots_in_the_order_given_and_shrinks_the_last() {
        let lots = [lot(3, 100, 2_000), lot(1, 200, 2_500), lot(2, 400, 2_200)];
        let s = settle(&lots, true, 250, 2_400, 9);
        assert_eq!(
            s.changes,
            [
                LotChange {
                    id: 3,
                    before: 100,
                    after: 0
                },
                LotChange {
                    id: 1,
                    before: 200,
                    after: 50
                },
            ]
        );
        assert_eq!(s.new_lot, 0);
        assert_eq!(s.lots_closed(), 2);
        assert_eq!(s.buy_value_cents, 100 * 2_000 + 150 * 2_500);
        assert_eq!(s.sell_value_cents, 250 * 2_400);
        assert_eq!(s.gain_cents, 100 * 400 + 150 * (-100));
        // Quantities balance: what left the lots is what was sold.
        let moved: i64 = s.changes.iter().map(|c| c.before - c.after).sum();
        assert_eq!(moved, 250);
    }

    #[test]
    fn a_sell_beyond_the_long_lots_opens_a_short_lot() {
        let s = settle(&[lot(1, 100, 2_000)], true, 400, 2_100, 9);
        assert_eq!(s.new_lot, -300);
        assert_eq!(
            s.changes[1],
            LotChange {
                id: 9,
                before: 0,
                after: -300
            }
        );
        assert_eq!(s.gain_cents, 100 * 100);
        assert_eq!(s.lots_closed(), 1);
        // Nothing held: the whole sell is a short.
        let s = settle(&[], true, 200, 2_100, 9);
        assert_eq!((s.new_lot, s.changes.len(), s.gain_cents), (-200, 1, 0));
    }

    #[test]
    fn a_buy_covers_shorts_first_and_is_never_taxed_as_a_gain() {
        let lots = [lot(4, -100, 2_800), lot(5, -100, 2_600)];
        let s = settle(&lots, false, 300, 2_500, 9);
        assert_eq!(s.changes.len(), 3);
        assert_eq!((s.changes[0].after, s.changes[1].after), (0, 0));
        assert_eq!(s.new_lot, 100);
        assert_eq!(s.sell_value_cents, 100 * 2_800 + 100 * 2_600);
        assert_eq!(s.buy_value_cents, 200 * 2_500);
        assert_eq!(s.gain_cents, 0);
        let s = settle(&lots, false, 50, 2_500, 9);
        assert_eq!(
            s.changes,
            [LotChange {
                id: 4,
                before: -100,
                after: -50
            }]
        );
        assert_eq!(s.new_lot, 0);
    }

    #[test]
    fn lots_of_the_wrong_sign_are_passed_over() {
        // A buy with only long lots opens a lot; a sell with only shorts deepens the short.
        let s = settle(&[lot(1, 100, 2_000)], false, 100, 2_000, 9);
        assert_eq!((s.new_lot, s.lots_closed()), (100, 0));
        let s = settle(&[lot(1, -100, 2_000)], true, 100, 2_000, 9);
        assert_eq!((s.new_lot, s.lots_closed()), (-100, 0));
    }
}
