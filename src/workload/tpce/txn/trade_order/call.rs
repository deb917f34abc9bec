//! Trade-Order's `procedures` back end: frames 1–4 as one call of `tpce_trade_order`
//! (`procedures/trades.sql`), whose returned row becomes what the client-side frames produce.

use pgwire::{Connection, Param, Protocol};

use super::{request_params, Args, Entered, Estimate, CALL};
use crate::workload::tpce::txn::missing;
use crate::workload::tpce::txn::numeric::{cents, money};

/// Frames 1–4 as `tpce_trade_order`; `None` when it reports an unauthorized executor.
pub(super) async fn call(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<Option<Entered>, pgwire::Error> {
    let bad = |what: &str| missing(format!("trade-order on account {}: {what}", a.ca_id));
    let limit = a.limit_cents.map(money);
    let limit = limit.as_deref().map_or(Param::Null, Param::Text);
    let (params, n) = request_params(a, Some(limit));
    let r = conn.execute(protocol, &CALL, &params[..n]).await?;
    if r.get_str(0, 0) == Some("unauthorized") {
        return Ok(None);
    }
    let money_at = |col: usize| r.get_str(0, col).and_then(cents);
    let value = |col: usize| money_at(col).ok_or_else(|| bad("the function returned no estimate"));
    Ok(Some(Entered {
        t_id: r
            .get_i64(0, 1)
            .ok_or_else(|| bad("the function returned no trade"))?,
        symbol: r.get_str(0, 2).unwrap_or_default().to_string(),
        bid_cents: value(3)?,
        pending: r.get_str(0, 0) == Some("PNDG"),
        estimate: Estimate {
            lots: r.get_i64(0, 4).unwrap_or(0) as u64,
            buy_value_cents: value(5)?,
            sell_value_cents: value(6)?,
            tax_cents: value(7)?,
            commission_cents: value(8)?,
            charge_cents: value(9)?,
            assets_cents: money_at(10),
        },
    }))
}
