//! Trade-Order (tpce.md §3.2): a customer's executor enters a buy or sell order, market or
//! limit, for a security of one of the customer's accounts. Frame 1 reads the account, its
//! customer and broker; frame 2, when the executor is not the owner, checks
//! ACCOUNT_PERMISSION (no row: an unauthorized executor, rolled back as TPC-E's frame 5 does,
//! an expected rollback); frame 3 resolves the security by symbol or by company name and
//! issue, reads its LAST_TRADE price and estimates the order: buy and sell value over the lots
//! it would close (LIFO or FIFO, [`rules::lots::settle`]'s walk), tax (as Trade-Result will
//! charge it, [`rules::money::settle`]: a taxable account's sell closing long lots at a gain),
//! commission and charge, and for a margin order the account's assets; frame 4 inserts TRADE
//! (t_id from `t_id_seq`, SBMT for a market order, PNDG for a limit or stop order),
//! TRADE_HISTORY and, for limit orders, TRADE_REQUEST; then frame 5 rolls back the 1 % drawn
//! to (`roll_it_back`) or frame 6 commits and the order goes to the market emulator. A sell
//! need not be covered: selling what the account does not hold opens a short at
//! Trade-Result. One server transaction at repeatable read (tpce.md §3.1).
//!
//! Client side, four round trips: BEGIN; one read of frames 1–3 (the frames' reads in one
//! statement, with one row per lot the estimate walks); one insert of frame 4; COMMIT or
//! ROLLBACK. With `procedures`, `tpce_trade_order` of `procedures/trades.sql` runs frames
//! 1–4 and returns a status: 'unauthorized' (nothing inserted; the client rolls back) or the
//! order and its estimate; the client then commits or, for `roll_it_back`, rolls back.
//!
//! [`Outcome::rows`]: the existing lots the estimate walked. [`Outcome::orders`]: the one
//! order a commit submits. A missing account, security, LAST_TRADE, CHARGE or COMMISSION_RATE
//! row is a [`missing`] error.

mod call;
mod draw;

pub use draw::{draw, SecurityKey};

use pgwire::{Connection, Param, Protocol, Statement};

use super::numeric::{cents, money, parse_fixed};
use super::{missing, Order, Outcome};
use crate::workload::tpce::rules::{self, lots::Lot, money::Terms};
use crate::workload::TxnEnd;

pub const BEGIN: Statement = Statement {
    name: "tpce_to_begin",
    sql: "BEGIN ISOLATION LEVEL REPEATABLE READ",
};
/// Frames 1–3 read. $1 account, $2–$4 executor first name, last name and tax id, $5 symbol or
/// $6 company name and $7 issue, $8 trade type, $9 quantity, $10 LIFO, $11 cash (not margin).
/// One row per lot the estimate walks, in walking order, or one row with null lot columns;
/// none when the account (or trade type) is missing.
pub const READ: Statement = Statement {
    name: "tpce_to_read",
    sql: "SELECT ca.ca_b_id, ca.ca_tax_st, c.c_tier, \
                 (c.c_f_name = $2::text AND c.c_l_name = $3::text AND c.c_tax_id = $4::text) \
                 OR EXISTS (SELECT 1 FROM account_permission \
                            WHERE ap_ca_id = ca.ca_id AND ap_f_name = $2::text \
                              AND ap_l_name = $3::text AND ap_tax_id = $4::text), \
                 b.b_name, s.s_symb, lt.lt_price, tt.tt_is_sell, tt.tt_is_mrkt, \
                 ch.ch_chrg, cr.cr_rate, \
                 (SELECT coalesce(sum(tx.tx_rate), 0) FROM customer_taxrate cx \
                    JOIN taxrate tx ON tx.tx_id = cx.cx_tx_id WHERE cx.cx_c_id = c.c_id), \
                 CASE WHEN NOT $11::boolean THEN ca.ca_bal + \
                   (SELECT coalesce(sum(h.hs_qty * x.lt_price), 0) FROM holding_summary h \
                      JOIN last_trade x ON x.lt_s_symb = h.hs_s_symb WHERE h.hs_ca_id = ca.ca_id) \
                 END, \
                 l.h_qty, l.h_price \
          FROM customer_account ca \
          JOIN customer c ON c.c_id = ca.ca_c_id \
          JOIN broker b ON b.b_id = ca.ca_b_id \
          JOIN trade_type tt ON tt.tt_id = $8::text \
          LEFT JOIN LATERAL ( \
               SELECT s_symb, s_ex_id FROM security WHERE s_symb = $5::text \
               UNION ALL \
               SELECT y.s_symb, y.s_ex_id FROM company co JOIN security y ON y.s_co_id = co.co_id \
               WHERE co.co_name = $6::text AND y.s_issue = $7::text) s ON true \
          LEFT JOIN last_trade lt ON lt.lt_s_symb = s.s_symb \
          LEFT JOIN charge ch ON ch.ch_tt_id = $8::text AND ch.ch_c_tier = c.c_tier \
          LEFT JOIN commission_rate cr ON cr.cr_c_tier = c.c_tier AND cr.cr_tt_id = $8::text \
               AND cr.cr_ex_id = s.s_ex_id AND $9::int BETWEEN cr.cr_from_qty AND cr.cr_to_qty \
          LEFT JOIN LATERAL ( \
               SELECT x.h_qty, x.h_price, x.k FROM ( \
                 SELECT h_qty, h_price, row_number() OVER w AS k, \
                        coalesce(sum(abs(h_qty)) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING \
                                                       AND 1 PRECEDING), 0) AS ahead \
                 FROM holding \
                 WHERE h_ca_id = ca.ca_id AND h_s_symb = s.s_symb \
                   AND CASE WHEN tt.tt_is_sell THEN h_qty > 0 ELSE h_qty < 0 END \
                 WINDOW w AS (ORDER BY CASE WHEN $10::boolean THEN h_dts END DESC, \
                                       CASE WHEN $10::boolean THEN h_t_id END DESC, \
                                       h_dts, h_t_id) \
               ) x WHERE x.ahead < $9::int) l ON true \
          WHERE ca.ca_id = $1::bigint \
          ORDER BY l.k",
};
/// Frame 4: TRADE, TRADE_REQUEST when the status ($1) is PNDG, TRADE_HISTORY. Returns T_ID.
pub const INSERT: Statement = Statement {
    name: "tpce_to_insert",
    sql: "WITH t AS (INSERT INTO trade (t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, \
                       t_qty, t_bid_price, t_ca_id, t_exec_name, t_trade_price, t_chrg, t_comm, \
                       t_tax, t_lifo) \
                     VALUES (nextval('t_id_seq'), now(), $1::text, $2::text, $3::boolean, \
                       $4::text, $5::int, $6::numeric, $7::bigint, $8::text, NULL, $9::numeric, \
                       $10::numeric, 0, $11::boolean) \
                     RETURNING t_id), \
          r AS (INSERT INTO trade_request (tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, \
                                           tr_b_id) \
                SELECT t_id, $2::text, $4::text, $5::int, $6::numeric, $12::bigint FROM t \
                WHERE $1::text = 'PNDG' RETURNING 1), \
          h AS (INSERT INTO trade_history (th_t_id, th_dts, th_st_id) \
                SELECT t_id, clock_timestamp(), $1::text FROM t RETURNING 1) \
          SELECT t_id FROM t",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_to_commit",
    sql: "COMMIT",
};
pub const ROLLBACK: Statement = Statement {
    name: "tpce_to_rollback",
    sql: "ROLLBACK",
};
/// `procedures`: frames 1–4 in `tpce_trade_order`, parameters as [`READ`]'s but $10 the
/// limit price, $11 LIFO, $12 cash. Returns one row: status, t_id, symbol, bid, lots walked,
/// buy value, sell value, tax, commission, charge, assets.
pub const CALL: Statement = Statement {
    name: "tpce_to_call",
    sql: "SELECT * FROM tpce_trade_order($1::bigint, $2::text, $3::text, $4::text, $5::text, \
          $6::text, $7::text, $8::text, $9::int, $10::numeric, $11::boolean, $12::boolean)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, READ, INSERT, COMMIT, ROLLBACK, CALL];
/// The function [`CALL`] needs, as `to_regprocedure` reads it.
pub const FUNCTION: &str = "tpce_trade_order(bigint, text, text, text, text, text, text, text, \
                            integer, numeric, boolean, boolean)";

/// The customer emulator's order (tpce.md §3.2, Trade-Order inputs).
#[derive(Debug, Clone)]
pub struct Args {
    pub ca_id: i64,
    pub exec_f_name: String,
    pub exec_l_name: String,
    pub exec_tax_id: String,
    pub security: SecurityKey,
    /// TMB, TMS, TLB, TLS or TSL.
    pub tt_id: &'static str,
    pub is_lifo: bool,
    /// Bought on margin (t_is_cash false); only buys are.
    pub is_margin: bool,
    pub qty: i64,
    /// The limit (or stop) price of a limit order; `None` for a market order, which takes
    /// the LAST_TRADE price.
    pub limit_cents: Option<i64>,
    /// Frame 5: enter the order, then roll it back.
    pub roll_it_back: bool,
}

/// Frame 3's estimate, which TPC-E returns to the customer; commission and charge are also
/// what TRADE keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// The existing lots the estimate walked.
    pub lots: u64,
    pub buy_value_cents: i64,
    pub sell_value_cents: i64,
    pub tax_cents: i64,
    pub commission_cents: i64,
    pub charge_cents: i64,
    /// A margin order's account assets: balance + Σ hs_qty × LAST_TRADE price.
    pub assets_cents: Option<i64>,
}

/// What frames 1–4 produced, from either back end.
struct Entered {
    t_id: i64,
    symbol: String,
    bid_cents: i64,
    /// A limit or stop order (PNDG, waiting in TRADE_REQUEST).
    pending: bool,
    estimate: Estimate,
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    Ok(run_with_estimate(conn, protocol, args, procedures).await?.0)
}

/// [`run`], also returning frame 3's estimate (`None` when the executor was refused).
pub async fn run_with_estimate(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<(Outcome, Option<Estimate>), pgwire::Error> {
    conn.execute(protocol, &BEGIN, &[]).await?;
    let entered = if procedures {
        call::call(conn, protocol, args).await?
    } else {
        enter(conn, protocol, args).await?
    };
    let Some(entered) = entered else {
        conn.execute(protocol, &ROLLBACK, &[]).await?;
        return Ok((rolled_back(0), None));
    };
    let lots = entered.estimate.lots;
    if args.roll_it_back {
        conn.execute(protocol, &ROLLBACK, &[]).await?;
        return Ok((rolled_back(lots), Some(entered.estimate)));
    }
    conn.execute(protocol, &COMMIT, &[]).await?;
    let order = Order {
        t_id: entered.t_id,
        symbol: entered.symbol,
        tt_id: args.tt_id.to_string(),
        qty: args.qty,
        bid_cents: entered.bid_cents,
        pending: entered.pending,
    };
    let outcome = Outcome {
        end: TxnEnd::Committed,
        rows: lots,
        orders: vec![order],
    };
    Ok((outcome, Some(entered.estimate)))
}

fn rolled_back(rows: u64) -> Outcome {
    Outcome {
        end: TxnEnd::ExpectedRollback,
        rows,
        orders: Vec::new(),
    }
}

fn bool_text(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// The security key as the ($5 symbol, $6 company name, $7 issue) parameters.
fn security_params(key: &SecurityKey) -> [Param<'_>; 3] {
    match key {
        SecurityKey::Symbol(s) => [Param::Text(s), Param::Null, Param::Null],
        SecurityKey::Company { name, issue } => {
            [Param::Null, Param::Text(name), Param::Text(issue)]
        }
    }
}

/// Frames 1–4's input as statement parameters, the same for both back ends: the account,
/// the executor, the security, the trade type and quantity, then (the one-call back end
/// only) the `limit` price, then LIFO and cash. The array and how much of it to send: on the
/// stack, as the hot path allocates nothing per transaction.
fn request_params<'a>(a: &'a Args, limit: Option<Param<'a>>) -> ([Param<'a>; 12], usize) {
    let [symbol, co_name, issue] = security_params(&a.security);
    let head = [
        Param::Int(a.ca_id),
        Param::Text(&a.exec_f_name),
        Param::Text(&a.exec_l_name),
        Param::Text(&a.exec_tax_id),
        symbol,
        co_name,
        issue,
        Param::Text(a.tt_id),
        Param::Int(a.qty),
    ];
    let tail = [
        Param::Text(bool_text(a.is_lifo)),
        Param::Text(bool_text(!a.is_margin)),
    ];
    let mut out = [Param::Null; 12];
    out[..head.len()].copy_from_slice(&head);
    let mut n = head.len();
    for p in limit.into_iter().chain(tail) {
        out[n] = p;
        n += 1;
    }
    (out, n)
}

/// The client-side frames 1–4; `None` when frame 2 refused the executor.
async fn enter(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<Option<Entered>, pgwire::Error> {
    let bad = |what: &str| missing(format!("trade-order on account {}: {what}", a.ca_id));
    let (params, n) = request_params(a, None);
    let read = conn.execute(protocol, &READ, &params[..n]).await?;
    if read.rows() == 0 {
        return Err(bad("no such account (or trade type)"));
    }
    if read.get_str(0, 3) != Some("t") {
        return Ok(None);
    }
    let r = &read;
    let fixed = |col: usize, scale: u32| r.get_str(0, col).and_then(|v| parse_fixed(v, scale));
    let symbol = r
        .get_str(0, 5)
        .ok_or_else(|| bad(&format!("no security {:?}", a.security)))?
        .to_string();
    let market_price = fixed(6, 2).ok_or_else(|| bad(&format!("no LAST_TRADE of {symbol}")))?;
    let is_sell = r.get_str(0, 7) == Some("t");
    let is_market = r.get_str(0, 8) == Some("t");
    let terms = Terms {
        charge: fixed(9, 2).ok_or_else(|| bad("no CHARGE row for its type and tier"))?,
        commission_rate: fixed(10, 2).ok_or_else(|| bad("no COMMISSION_RATE row for the order"))?,
        tax_status: r.get_i64(0, 1).unwrap_or(0),
        tax_rate: fixed(11, 5).unwrap_or(0),
    };
    let assets = fixed(12, 2);
    let broker = r.get_i64(0, 0).ok_or_else(|| bad("no broker"))?;
    let lots: Vec<Lot> = (0..r.rows())
        .filter_map(|row| {
            Some(Lot {
                id: 0,
                qty: r.get_i64(row, 13)?,
                price_cents: r.get_str(row, 14).and_then(cents)?,
            })
        })
        .collect();

    let requested = match a.limit_cents {
        Some(limit) if !is_market => limit,
        _ => market_price,
    };
    let walk = rules::lots::settle(&lots, is_sell, a.qty, requested, 0);
    let paid = rules::money::settle(is_sell, a.qty, requested, &terms, walk.gain_cents);
    let estimate = Estimate {
        lots: walk.lots_closed() as u64,
        buy_value_cents: walk.buy_value_cents,
        sell_value_cents: walk.sell_value_cents,
        tax_cents: paid.tax,
        commission_cents: paid.commission,
        charge_cents: paid.charge,
        assets_cents: if a.is_margin { assets } else { None },
    };
    let status = if is_market { "SBMT" } else { "PNDG" };
    let (bid, comm, chrg) = (
        money(requested),
        money(estimate.commission_cents),
        money(estimate.charge_cents),
    );
    let exec_name = format!("{} {}", a.exec_f_name, a.exec_l_name);
    let inserted = conn
        .execute(
            protocol,
            &INSERT,
            &[
                Param::Text(status),
                Param::Text(a.tt_id),
                Param::Text(bool_text(!a.is_margin)),
                Param::Text(&symbol),
                Param::Int(a.qty),
                Param::Text(&bid),
                Param::Int(a.ca_id),
                Param::Text(&exec_name),
                Param::Text(&chrg),
                Param::Text(&comm),
                Param::Text(bool_text(a.is_lifo)),
                Param::Int(broker),
            ],
        )
        .await?;
    let t_id = inserted
        .get_i64(0, 0)
        .ok_or_else(|| bad("the TRADE insert returned no id"))?;
    Ok(Some(Entered {
        t_id,
        symbol,
        bid_cents: requested,
        pending: !is_market,
        estimate,
    }))
}
