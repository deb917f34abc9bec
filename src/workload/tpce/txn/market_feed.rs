//! Market-Feed (tpce.md §3.2, §5): the market emulator's ticker, normally 20 entries (symbol,
//! price, quantity). Per entry LAST_TRADE takes the price, adds the quantity to the volume and
//! the time (`now()`); then the TRADE_REQUEST rows of its symbol that the price puts in the
//! money (limit buy and stop-loss: price ≤ bid; limit sell: price ≥ bid) are triggered: their
//! trades become SBMT (t_dts now, as TPC-E's frame sets it) with a TRADE_HISTORY SBMT row, the
//! requests are deleted and go back to the emulator as orders to execute.
//!
//! One server transaction for the whole batch at repeatable read. DBT-5 commits once per
//! entry (tpce.md §3.2); we keep one tidebench transaction = one server transaction, so the
//! run's commit count matches `pg_stat_database.xact_commit`. A symbol listed twice adds both
//! quantities and ends at its later price; a request in the money at any of its prices fires
//! once.
//!
//! Client side, three round trips: BEGIN; one statement that locks the batch's LAST_TRADE rows
//! in symbol order (so concurrent feeds wait instead of deadlocking), updates them and
//! triggers the requests; COMMIT. With `procedures`, `tpce_market_feed` of
//! `procedures/trades.sql` runs the same two steps.
//!
//! [`Outcome::rows`]: the requests triggered; [`Outcome::orders`]: those orders, by trade id,
//! `pending` false and the request's bid as `bid_cents`. A symbol without a LAST_TRADE row is
//! a [`missing`] error.

use pgwire::{Connection, Param, Protocol, Statement};

use super::numeric::{cents, money};
use super::trade_result::{array, text_array};
use super::{missing, Order, Outcome};
use crate::workload::TxnEnd;

pub const BEGIN: Statement = Statement {
    name: "tpce_mf_begin",
    sql: "BEGIN ISOLATION LEVEL REPEATABLE READ",
};
/// The batch as three arrays in entry order. Returns the number of symbols whose LAST_TRADE
/// row was updated on every row, then one row per triggered request in trade-id order (one
/// row with null request columns when none fired). History rows take `clock_timestamp()`, not
/// `now()`: `now()` is the time of the BEGIN, and a Trade-Order committing between the BEGIN
/// and this statement's snapshot would get its PNDG row after the SBMT row that follows it
/// (consistency condition 4 caught one in a CI run). The other history inserts do the same.
pub const FEED: Statement = Statement {
    name: "tpce_mf_feed",
    sql: "WITH e AS (SELECT * FROM unnest($1::text[], $2::numeric[], $3::int[]) \
                     WITH ORDINALITY AS v(symb, price, qty, n)), \
          agg AS (SELECT symb, sum(qty) AS qty, (array_agg(price ORDER BY n DESC))[1] AS price \
                  FROM e GROUP BY symb), \
          lk AS MATERIALIZED (SELECT lt_s_symb FROM last_trade \
                              WHERE lt_s_symb IN (SELECT symb FROM agg) \
                              ORDER BY lt_s_symb FOR UPDATE), \
          lt AS (UPDATE last_trade SET lt_price = agg.price, lt_vol = lt_vol + agg.qty, \
                   lt_dts = now() \
                 FROM agg JOIN lk ON lk.lt_s_symb = agg.symb \
                 WHERE last_trade.lt_s_symb = agg.symb RETURNING 1), \
          hit AS (SELECT DISTINCT r.tr_t_id FROM trade_request r JOIN e ON e.symb = r.tr_s_symb \
                  WHERE CASE WHEN r.tr_tt_id = 'TLS' THEN e.price >= r.tr_bid_price \
                             ELSE e.price <= r.tr_bid_price END), \
          del AS (DELETE FROM trade_request r USING hit WHERE r.tr_t_id = hit.tr_t_id \
                  RETURNING r.tr_t_id, r.tr_s_symb, r.tr_tt_id, r.tr_qty, r.tr_bid_price), \
          t AS (UPDATE trade SET t_st_id = 'SBMT', t_dts = now() FROM del \
                WHERE trade.t_id = del.tr_t_id RETURNING 1), \
          th AS (INSERT INTO trade_history (th_t_id, th_dts, th_st_id) \
                 SELECT tr_t_id, clock_timestamp(), 'SBMT' FROM del RETURNING 1) \
          SELECT n.updated, d.tr_t_id, d.tr_s_symb, d.tr_tt_id, d.tr_qty, d.tr_bid_price \
          FROM (SELECT count(*) AS updated FROM lt) n LEFT JOIN del d ON true \
          ORDER BY d.tr_t_id",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_mf_commit",
    sql: "COMMIT",
};
/// `procedures`: `tpce_market_feed` returns the triggered requests as [`FEED`] does, the
/// updated count aside (it raises 02000 for a missing symbol instead).
pub const CALL: Statement = Statement {
    name: "tpce_mf_call",
    sql: "SELECT * FROM tpce_market_feed($1::text[], $2::numeric[], $3::int[])",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, FEED, COMMIT, CALL];
/// The function [`CALL`] needs, as `to_regprocedure` reads it.
pub const FUNCTION: &str = "tpce_market_feed(text[], numeric[], integer[])";

/// One ticker entry: a trade of `qty` shares of `symbol` at `price_cents` on the market.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticker {
    pub symbol: String,
    pub price_cents: i64,
    pub qty: i64,
}

#[derive(Debug, Clone)]
pub struct Args {
    pub entries: Vec<Ticker>,
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let symbols = text_array(args.entries.iter().map(|e| e.symbol.as_str()));
    let prices = array(args.entries.iter().map(|e| money(e.price_cents)));
    let qtys = array(args.entries.iter().map(|e| e.qty));
    let params = [
        Param::Text(&symbols),
        Param::Text(&prices),
        Param::Text(&qtys),
    ];
    conn.execute(protocol, &BEGIN, &[]).await?;
    let orders = {
        let (statement, first) = if procedures { (&CALL, 0) } else { (&FEED, 1) };
        let r = conn.execute(protocol, statement, &params).await?;
        if !procedures {
            let mut distinct: Vec<&str> = args.entries.iter().map(|e| e.symbol.as_str()).collect();
            distinct.sort_unstable();
            distinct.dedup();
            let updated = r.get_i64(0, 0).unwrap_or(0);
            if updated < distinct.len() as i64 {
                return Err(missing(format!(
                    "market-feed: {} of the symbols {symbols} have no LAST_TRADE row",
                    distinct.len() as i64 - updated
                )));
            }
        }
        let mut orders = Vec::with_capacity(r.rows());
        for row in 0..r.rows() {
            let Some(t_id) = r.get_i64(row, first) else {
                continue;
            };
            orders.push(Order {
                t_id,
                symbol: r.get_str(row, first + 1).unwrap_or_default().to_string(),
                tt_id: r.get_str(row, first + 2).unwrap_or_default().to_string(),
                qty: r.get_i64(row, first + 3).unwrap_or(0),
                bid_cents: r.get_str(row, first + 4).and_then(cents).unwrap_or(0),
                pending: false,
            });
        }
        orders
    };
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome {
        end: TxnEnd::Committed,
        rows: orders.len() as u64,
        orders,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{trade_order, trade_result};
    use super::*;

    #[test]
    fn statement_names_are_unique_and_prefixed() {
        let all = [
            BEGIN,
            FEED,
            COMMIT,
            CALL,
            trade_order::BEGIN,
            trade_order::READ,
            trade_order::INSERT,
            trade_order::COMMIT,
            trade_order::ROLLBACK,
            trade_order::CALL,
            trade_result::BEGIN,
            trade_result::READ,
            trade_result::WRITE,
            trade_result::COMMIT,
            trade_result::CALL,
        ];
        let mut names: Vec<&str> = all.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert!(names.iter().all(|n| n.starts_with("tpce_")));
    }

    #[test]
    fn every_function_is_defined_in_trades_sql() {
        let sql = include_str!("../procedures/trades.sql");
        for f in [FUNCTION, trade_order::FUNCTION, trade_result::FUNCTION] {
            let name = f.split('(').next().unwrap_or_default();
            let create = format!("CREATE OR REPLACE FUNCTION {name}(");
            assert!(sql.contains(&create), "{create}");
        }
    }
}
