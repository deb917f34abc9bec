//! Trade-Result (tpce.md §3.2): the market emulator reports a submitted trade executed at a
//! price, and the brokerage completes it: lots closed, shrunk or opened (HOLDING,
//! HOLDING_HISTORY, HOLDING_SUMMARY), tax on a profitable sell, commission, the trade marked
//! CMPT with its history row, the broker's counters, SETTLEMENT, and for a cash trade the
//! account's balance and a CASH_TRANSACTION row. One server transaction at serializable
//! (tpce.md §3.1). Completion time is `now()`, the transaction's start.
//!
//! The rules (shared with the loader's trade simulation, which must agree exactly):
//!
//! - lots ([`rules::lots`]): a sell closes long lots, a buy covers short lots, newest first
//!   when the trade is LIFO (h_dts desc, h_t_id desc), oldest first otherwise; the rest opens
//!   a lot whose id is the trade's, at the trade price and completion time. One
//!   HOLDING_HISTORY row per lot touched. HOLDING_SUMMARY is kept only for held pairs: its row
//!   goes when the quantity reaches 0, and hs_qty stays Σ h_qty;
//! - money ([`rules::money`]): charge = CHARGE for (type, tier); commission = round(cr_rate /
//!   100 × qty × price, 2) with cr_rate for (tier, type, the security's exchange, the band
//!   holding qty); tax, for accounts with ca_tax_st ≠ 0, = round(gain × Σ tx_rate, 2) when
//!   the long lots a sell closes gained; se_amt = ±qty × price − charge − commission, minus
//!   the tax when ca_tax_st = 1; due two days after completion; 'Cash Account' or 'Margin'.
//!
//! Client side, four round trips: BEGIN; one read (frames 1–4: the trade, its type, account,
//! customer tier, security, charge, commission rate, tax rates, holding summary and the lots
//! the trade closes, in closing order) locking the trade and the account, so Trade-Results of
//! one account queue instead of failing late; one write of every change (frames 2–6 as
//! data-modifying CTEs over arrays); COMMIT. With `procedures`, `tpce_trade_result` of
//! `procedures/trades.sql` makes the same changes in a loop over the lots.
//!
//! [`Outcome::rows`]: the holding lots the trade touched (= HOLDING_HISTORY rows written, the
//! new lot included). A trade id that is not SBMT (missing, pending or already completed) is a
//! [`missing`] error.

use std::fmt::Write as _;

use pgwire::{Connection, Param, Protocol, Statement};

use super::numeric::{cents, money, parse_fixed};
use super::{missing, Outcome};
use crate::workload::tpce::rules::{self, lots::Lot, money::Terms};

pub const BEGIN: Statement = Statement {
    name: "tpce_tr_begin",
    sql: "BEGIN ISOLATION LEVEL SERIALIZABLE",
};
/// Frames 1–4 read: one row per lot the trade closes (in closing order, only as many as its
/// quantity needs), or one row with null lot columns when it closes none. Locks the trade and
/// the account.
pub const READ: Statement = Statement {
    name: "tpce_tr_read",
    sql: "SELECT t.t_ca_id, t.t_tt_id, t.t_s_symb, t.t_qty, t.t_is_cash, \
                 tt.tt_name, tt.tt_is_sell, ca.ca_b_id, ca.ca_tax_st, s.s_name, \
                 ch.ch_chrg, cr.cr_rate, \
                 (SELECT coalesce(sum(tx.tx_rate), 0) FROM customer_taxrate cx \
                    JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id WHERE cx.cx_c_id = ca.ca_c_id), \
                 coalesce(hs.hs_qty, 0), l.h_t_id, l.h_qty, l.h_price \
          FROM trade t \
          JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
          JOIN customer_account ca ON ca.ca_id = t.t_ca_id \
          JOIN customer c ON c.c_id = ca.ca_c_id \
          JOIN security s ON s.s_symb = t.t_s_symb \
          LEFT JOIN charge ch ON ch.ch_tt_id = t.t_tt_id AND ch.ch_c_tier = c.c_tier \
          LEFT JOIN commission_rate cr ON cr.cr_c_tier = c.c_tier AND cr.cr_tt_id = t.t_tt_id \
               AND cr.cr_ex_id = s.s_ex_id AND t.t_qty BETWEEN cr.cr_from_qty AND cr.cr_to_qty \
          LEFT JOIN holding_summary hs ON hs.hs_ca_id = t.t_ca_id AND hs.hs_s_symb = t.t_s_symb \
          LEFT JOIN LATERAL ( \
               SELECT x.h_t_id, x.h_qty, x.h_price, x.k FROM ( \
                 SELECT h_t_id, h_qty, h_price, row_number() OVER w AS k, \
                        coalesce(sum(abs(h_qty)) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING \
                                                       AND 1 PRECEDING), 0) AS ahead \
                 FROM holding \
                 WHERE h_ca_id = t.t_ca_id AND h_s_symb = t.t_s_symb \
                   AND CASE WHEN tt.tt_is_sell THEN h_qty > 0 ELSE h_qty < 0 END \
                 WINDOW w AS (ORDER BY CASE WHEN t.t_lifo THEN h_dts END DESC, \
                                       CASE WHEN t.t_lifo THEN h_t_id END DESC, h_dts, h_t_id) \
               ) x WHERE x.ahead < t.t_qty) l ON true \
          WHERE t.t_id = $1 AND t.t_st_id = 'SBMT' \
          ORDER BY l.k \
          FOR UPDATE OF t, ca",
};
/// Frames 2, 3, 5 and 6 write: lots updated ($5/$6), deleted ($7) and opened ($11), their
/// history ($8–$10), the summary ($12, 0 deletes it), the trade, its CMPT history, the
/// broker, the settlement and, for a cash trade ($18), balance and cash transaction.
pub const WRITE: Statement = Statement {
    name: "tpce_tr_write",
    sql: "WITH upd AS (UPDATE holding h SET h_qty = v.qty \
                       FROM unnest($5::bigint[], $6::int[]) AS v(id, qty) \
                       WHERE h.h_t_id = v.id RETURNING 1), \
          del AS (DELETE FROM holding WHERE h_t_id = ANY($7::bigint[]) RETURNING 1), \
          lot AS (INSERT INTO holding (h_t_id, h_ca_id, h_s_symb, h_dts, h_price, h_qty) \
                  SELECT $1::bigint, $2::bigint, $3::text, now(), $4::numeric, $11::int \
                  WHERE $11::int <> 0 RETURNING 1), \
          hh AS (INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty) \
                 SELECT v.id, $1::bigint, v.b, v.a \
                 FROM unnest($8::bigint[], $9::int[], $10::int[]) AS v(id, b, a) RETURNING 1), \
          hs_gone AS (DELETE FROM holding_summary \
                      WHERE hs_ca_id = $2::bigint AND hs_s_symb = $3::text AND $12::int = 0 \
                      RETURNING 1), \
          hs AS (INSERT INTO holding_summary (hs_ca_id, hs_s_symb, hs_qty) \
                 SELECT $2::bigint, $3::text, $12::int WHERE $12::int <> 0 \
                 ON CONFLICT (hs_ca_id, hs_s_symb) DO UPDATE SET hs_qty = excluded.hs_qty \
                 RETURNING 1), \
          t AS (UPDATE trade SET t_st_id = 'CMPT', t_dts = now(), t_trade_price = $4::numeric, \
                  t_chrg = $13::numeric, t_comm = $14::numeric, t_tax = $15::numeric \
                WHERE t_id = $1::bigint RETURNING 1), \
          th AS (INSERT INTO trade_history (th_t_id, th_dts, th_st_id) \
                 VALUES ($1::bigint, clock_timestamp(), 'CMPT') RETURNING 1), \
          b AS (UPDATE broker SET b_num_trades = b_num_trades + 1, \
                  b_comm_total = b_comm_total + $14::numeric \
                WHERE b_id = $16::bigint RETURNING 1), \
          se AS (INSERT INTO settlement (se_t_id, se_cash_type, se_cash_due_date, se_amt) \
                 VALUES ($1::bigint, \
                         CASE WHEN $18::boolean THEN 'Cash Account' ELSE 'Margin' END, \
                         current_date + 2, $17::numeric) RETURNING 1), \
          ca AS (UPDATE customer_account SET ca_bal = ca_bal + $17::numeric \
                 WHERE ca_id = $2::bigint AND $18::boolean RETURNING 1), \
          ct AS (INSERT INTO cash_transaction (ct_t_id, ct_dts, ct_amt, ct_name) \
                 SELECT $1::bigint, now(), $17::numeric, $19::text WHERE $18::boolean \
                 RETURNING 1) \
          SELECT (SELECT count(*) FROM hh)",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_tr_commit",
    sql: "COMMIT",
};
/// `procedures`: the whole transaction in `tpce_trade_result`, which returns the lots touched.
pub const CALL: Statement = Statement {
    name: "tpce_tr_call",
    sql: "SELECT tpce_trade_result($1::bigint, $2::numeric)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, READ, WRITE, COMMIT, CALL];
/// The function [`CALL`] needs, as `to_regprocedure` reads it.
pub const FUNCTION: &str = "tpce_trade_result(bigint, numeric)";

/// The emulator's report: trade `t_id` executed at `price_cents`.
#[derive(Debug, Clone)]
pub struct Args {
    pub t_id: i64,
    pub price_cents: i64,
}

/// What the read returned about the trade.
struct Trade {
    ca_id: i64,
    symbol: String,
    qty: i64,
    is_cash: bool,
    type_name: String,
    is_sell: bool,
    broker: i64,
    security_name: String,
    terms: Terms,
    held: i64,
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    conn.execute(protocol, &BEGIN, &[]).await?;
    let price = money(args.price_cents);
    let touched = if procedures {
        let r = conn
            .execute(
                protocol,
                &CALL,
                &[Param::Int(args.t_id), Param::Text(&price)],
            )
            .await?;
        r.get_i64(0, 0)
            .ok_or_else(|| missing(format!("trade-result {}: no count returned", args.t_id)))?
    } else {
        complete(conn, protocol, args, &price).await?
    };
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(touched as u64))
}

/// The client-side frames: read, compute the changes, write them. Returns the lots touched.
async fn complete(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    price: &str,
) -> Result<i64, pgwire::Error> {
    let bad = |what: &str| missing(format!("trade-result {}: {what}", args.t_id));
    let (trade, lots) = {
        let r = conn
            .execute(protocol, &READ, &[Param::Int(args.t_id)])
            .await?;
        if r.rows() == 0 {
            return Err(bad("no submitted (SBMT) trade of that id"));
        }
        let text = |col: usize| r.get_str(0, col).unwrap_or_default().to_string();
        let fixed = |col: usize, scale: u32| r.get_str(0, col).and_then(|v| parse_fixed(v, scale));
        let trade = Trade {
            ca_id: r.get_i64(0, 0).ok_or_else(|| bad("no account"))?,
            symbol: text(2),
            qty: r.get_i64(0, 3).ok_or_else(|| bad("no quantity"))?,
            is_cash: r.get_str(0, 4) == Some("t"),
            type_name: text(5),
            is_sell: r.get_str(0, 6) == Some("t"),
            broker: r.get_i64(0, 7).ok_or_else(|| bad("no broker"))?,
            security_name: text(9),
            terms: Terms {
                charge: fixed(10, 2).ok_or_else(|| bad("no CHARGE row for its type and tier"))?,
                commission_rate: fixed(11, 2)
                    .ok_or_else(|| bad("no COMMISSION_RATE row for its tier, type and exchange"))?,
                tax_status: r.get_i64(0, 8).unwrap_or(0),
                tax_rate: fixed(12, 5).unwrap_or(0),
            },
            held: r.get_i64(0, 13).unwrap_or(0),
        };
        let mut lots = Vec::with_capacity(r.rows());
        for row in 0..r.rows() {
            if let (Some(id), Some(qty), Some(p)) = (
                r.get_i64(row, 14),
                r.get_i64(row, 15),
                r.get_str(row, 16).and_then(cents),
            ) {
                lots.push(Lot {
                    id,
                    qty,
                    price_cents: p,
                });
            }
        }
        (trade, lots)
    };

    let settled = rules::lots::settle(&lots, trade.is_sell, trade.qty, args.price_cents, args.t_id);
    let signed_qty = if trade.is_sell { -trade.qty } else { trade.qty };
    let paid = rules::money::settle(
        trade.is_sell,
        trade.qty,
        args.price_cents,
        &trade.terms,
        settled.gain_cents,
    );
    let shrunk = settled
        .changes
        .iter()
        .filter(|c| c.before != 0 && c.after != 0);
    let closed = settled.changes.iter().filter(|c| c.after == 0);
    let upd_ids = array(shrunk.clone().map(|c| c.id));
    let upd_qty = array(shrunk.map(|c| c.after));
    let del_ids = array(closed.map(|c| c.id));
    let hh_ids = array(settled.changes.iter().map(|c| c.id));
    let hh_before = array(settled.changes.iter().map(|c| c.before));
    let hh_after = array(settled.changes.iter().map(|c| c.after));
    let (charge, comm, tax, amount) = (
        money(paid.charge),
        money(paid.commission),
        money(paid.tax),
        money(paid.settlement),
    );
    let ct_name = format!(
        "{} {} shares of {}",
        trade.type_name, trade.qty, trade.security_name
    );
    let is_cash = if trade.is_cash { "true" } else { "false" };
    let r = conn
        .execute(
            protocol,
            &WRITE,
            &[
                Param::Int(args.t_id),
                Param::Int(trade.ca_id),
                Param::Text(&trade.symbol),
                Param::Text(price),
                Param::Text(&upd_ids),
                Param::Text(&upd_qty),
                Param::Text(&del_ids),
                Param::Text(&hh_ids),
                Param::Text(&hh_before),
                Param::Text(&hh_after),
                Param::Int(settled.new_lot),
                Param::Int(trade.held + signed_qty),
                Param::Text(&charge),
                Param::Text(&comm),
                Param::Text(&tax),
                Param::Int(trade.broker),
                Param::Text(&amount),
                Param::Text(is_cash),
                Param::Text(&ct_name),
            ],
        )
        .await?;
    Ok(r.get_i64(0, 0).unwrap_or(0))
}

/// Values as a PostgreSQL array literal, written as they display, e.g. `{1,-2,3}`.
pub(super) fn array<T: std::fmt::Display>(values: impl Iterator<Item = T>) -> String {
    let mut s = String::from("{");
    for (i, v) in values.enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{v}");
    }
    s.push('}');
    s
}

/// Texts as a PostgreSQL array literal, each quoted, e.g. `{"AB","C-D"}`.
pub(super) fn text_array<'a>(values: impl Iterator<Item = &'a str>) -> String {
    array(values.map(|v| {
        let escaped = v.replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{escaped}\"")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_postgres_literals() {
        assert_eq!(array([1, -2, 3].into_iter()), "{1,-2,3}");
        assert_eq!(array(std::iter::empty::<i64>()), "{}");
        assert_eq!(
            array([money(2_500), money(-5)].into_iter()),
            "{25.00,-0.05}"
        );
        assert_eq!(text_array(["AB", "C-D"].into_iter()), r#"{"AB","C-D"}"#);
        assert_eq!(text_array([r#"a"b\"#].into_iter()), r#"{"a\"b\\"}"#);
    }
}
