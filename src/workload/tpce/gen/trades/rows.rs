//! The COPY rows of the trade history, one function per table, in `schema.sql`'s column
//! order. Text that varies per trade is written through one reused buffer.

use std::fmt::Write as _;

use crate::workload::tpce::gen::catalog::{ACTV, CMPT, PNDG, SBMT};
use crate::workload::tpce::gen::{Batch, Table};

use crate::workload::tpce::rules::money::Money;

use super::lots::Holding;
use super::order::LoadedTrade;

/// SETTLEMENT.se_cash_type of a cash and a margin trade.
pub const CASH_ACCOUNT: &str = "Cash Account";
pub const MARGIN: &str = "Margin";
/// Settlement is due this many days after the trade's date.
pub const SETTLE_DAYS: i64 = 2;

/// The trade's TRADE, TRADE_HISTORY, SETTLEMENT and (for a cash trade) CASH_TRANSACTION rows.
pub fn completed_trade(
    batch: &mut Batch,
    t: &LoadedTrade,
    money: &Money,
    names: (&str, &str, &str),
    scratch: &mut String,
) {
    let (symbol, security_name, executor) = names;
    let tt = t.trade_type();
    batch
        .row(Table::Trade)
        .int(t.t_id as i64)
        .ts(t.completed)
        .text(CMPT)
        .text(tt.id)
        .bool(t.is_cash)
        .text(symbol)
        .int(t.qty)
        .cents(t.bid)
        .int(t.ca_id as i64)
        .text(executor)
        .cents(t.price)
        .cents(money.charge)
        .cents(money.commission)
        .cents(money.tax)
        .bool(t.lifo)
        .end();
    let history = |batch: &mut Batch, at, status| {
        batch
            .row(Table::TradeHistory)
            .int(t.t_id as i64)
            .ts(at)
            .text(status)
            .end();
    };
    match t.triggered {
        None => history(batch, t.submitted, SBMT),
        Some(fired) => {
            history(batch, t.submitted, PNDG);
            history(batch, fired, SBMT);
        }
    }
    history(batch, t.completed, CMPT);
    batch
        .row(Table::Settlement)
        .int(t.t_id as i64)
        .text(if t.is_cash { CASH_ACCOUNT } else { MARGIN })
        .date(t.completed.date().plus(SETTLE_DAYS))
        .cents(money.settlement)
        .end();
    if t.is_cash {
        scratch.clear();
        let _ = write!(scratch, "{} {} shares of {security_name}", tt.name, t.qty);
        batch
            .row(Table::CashTransaction)
            .int(t.t_id as i64)
            .ts(t.completed)
            .cents(money.settlement)
            .text(scratch)
            .end();
    }
}

pub fn holding_history(batch: &mut Batch, lot: i64, t_id: u64, before: i64, after: i64) {
    batch
        .row(Table::HoldingHistory)
        .int(lot)
        .int(t_id as i64)
        .int(before)
        .int(after)
        .end();
}

pub fn holding(batch: &mut Batch, ca_id: u64, symbol: &str, held: &Holding) {
    batch
        .row(Table::Holding)
        .int(held.lot.id)
        .int(ca_id as i64)
        .text(symbol)
        .ts(held.dts)
        .cents(held.lot.price_cents)
        .int(held.lot.qty)
        .end();
}

pub fn holding_summary(batch: &mut Batch, ca_id: u64, symbol: &str, qty: i64) {
    batch
        .row(Table::HoldingSummary)
        .int(ca_id as i64)
        .text(symbol)
        .int(qty)
        .end();
}

pub fn broker(batch: &mut Batch, b_id: u64, name: &str, trades: u64, commission: i64) {
    batch
        .row(Table::Broker)
        .int(b_id as i64)
        .text(ACTV)
        .text(name)
        .int(trades as i64)
        .cents(commission)
        .end();
}
