//! The consistency conditions of `tidebench check --workload tpce`: rules of the data model that
//! hold after a load and after any run, whatever mix of Trade-Orders (trades left SBMT, or PNDG
//! with a TRADE_REQUEST), Market-Feeds, Trade-Results (CMPT) and Trade-Cleanups (CNCL) it ran.
//! TPC-E's own consistency requirements were not readable here (tpce.md §10), so these are
//! derived from the tables' meaning (tpce.md §2, §3.2, §5) and the rules the simulated history
//! and Trade-Result share (the loader must produce what a market of Trade-Results would have).
//!
//! Each condition is one set-based query listing offending rows as readable text with a sort
//! key; the count of all of them comes back with the first few, so a broken table of millions
//! of trades neither ships millions of rows nor hides how many broke. All run in one
//! repeatable-read snapshot, so a run still going cannot make two conditions disagree.
//! Uniqueness (one settlement and cash transaction per trade, one request per trade, one
//! history row per status) is the keys' job: condition 12 checks they are in place rather than
//! counting millions of rows, and with condition 3 a completed trade is settled exactly once.
//! Derived values (amounts, fees) are checked on inner joins, so a missing row breaks only the
//! condition about existence.
//!
//! The market exchange emulator's writes are covered with the customers': Trade-Result's
//! (3, 5, 8-11: settlement, broker counters, lots and their history), Market-Feed's (4, 6: a
//! triggered trade is SBMT with its history, its request gone) and Trade-Cleanup's (4, 6: a
//! cancelled trade ends its path in CNCL after every other status, and keeps no request).

use tokio_postgres::Client;

use crate::workload::{CheckOutcome, WorkloadError};

/// Offending rows described per condition; all of them are counted.
const SHOWN: usize = 5;

/// One condition: a query of (description text, sort key bigint) per offending row.
struct Condition {
    name: &'static str,
    sql: &'static str,
}

const CONDITIONS: [Condition; 12] = [
    Condition {
        name: "1: HOLDING_SUMMARY.hs_qty = sum of the HOLDING lots per account and symbol, \
               and a summary row exactly when lots exist",
        sql: "SELECT format('account %s symbol %s: hs_qty %s, lots sum to %s', \
                            coalesce(s.hs_ca_id, h.ca), coalesce(s.hs_s_symb, h.sy), \
                            coalesce(s.hs_qty::text, 'none (no row)'), \
                            coalesce(h.qty::text, 'nothing (no lots)')), \
                     coalesce(s.hs_ca_id, h.ca) \
              FROM holding_summary s \
              FULL JOIN (SELECT h_ca_id AS ca, h_s_symb AS sy, sum(h_qty) AS qty \
                         FROM holding GROUP BY 1, 2) h \
                ON h.ca = s.hs_ca_id AND h.sy = s.hs_s_symb \
              WHERE s.hs_qty IS DISTINCT FROM h.qty OR s.hs_qty = 0",
    },
    Condition {
        name: "2: the HOLDING lots of one account and symbol are all long or all short, none zero",
        sql: "SELECT format('account %s symbol %s: %s long, %s short and %s zero lots', \
                            h_ca_id, h_s_symb, pos, neg, zero), h_ca_id \
              FROM (SELECT h_ca_id, h_s_symb, count(*) FILTER (WHERE h_qty > 0) AS pos, \
                           count(*) FILTER (WHERE h_qty < 0) AS neg, \
                           count(*) FILTER (WHERE h_qty = 0) AS zero \
                    FROM holding GROUP BY 1, 2) x \
              WHERE (pos > 0 AND neg > 0) OR zero > 0",
    },
    Condition {
        name: "3: a completed (CMPT) trade has a SETTLEMENT, and a CASH_TRANSACTION exactly \
               when it is a cash trade; other trades have neither",
        sql: "SELECT format('trade %s (%s): %s, %s', id, \
                            CASE WHEN st IS NULL THEN 'no trade row' \
                                 WHEN cash THEN st || ', cash' ELSE st || ', margin' END, \
                            CASE WHEN has_se THEN 'a settlement' ELSE 'no settlement' END, \
                            CASE WHEN has_ct THEN 'a cash transaction' \
                                 ELSE 'no cash transaction' END), id \
              FROM (SELECT coalesce(t.t_id, s.se_t_id, c.ct_t_id) AS id, t.t_st_id AS st, \
                           t.t_is_cash AS cash, s.se_t_id IS NOT NULL AS has_se, \
                           c.ct_t_id IS NOT NULL AS has_ct \
                    FROM trade t \
                    FULL JOIN settlement s ON s.se_t_id = t.t_id \
                    FULL JOIN cash_transaction c ON c.ct_t_id = coalesce(t.t_id, s.se_t_id)) x \
              WHERE st IS NULL OR (st = 'CMPT') <> has_se OR (st = 'CMPT' AND cash) <> has_ct",
    },
    Condition {
        name: "4: TRADE_HISTORY follows the trade's status path in time order, one row per \
               status: market orders SBMT[, CMPT], limit and stop orders PNDG[, SBMT[, CMPT]], \
               either may end in CNCL (after all others); the trade's status is the path's last",
        sql: "SELECT format('trade %s (%s, status %s): history [%s] in %s rows%s', id, \
                            coalesce(t_tt_id, 'no trade row'), coalesce(t_st_id, '-'), \
                            concat_ws(' ', CASE WHEN mask & 1 <> 0 THEN 'PNDG' END, \
                                      CASE WHEN mask & 2 <> 0 THEN 'SBMT' END, \
                                      CASE WHEN mask & 4 <> 0 THEN 'CMPT' END, \
                                      CASE WHEN mask & 8 <> 0 THEN 'CNCL' END, \
                                      CASE WHEN mask & 16 <> 0 THEN 'other' END), \
                            coalesce(n, 0), \
                            CASE WHEN misordered THEN ', out of time order' ELSE '' END), id \
              FROM (SELECT coalesce(t.t_id, h.th_t_id) AS id, t.t_tt_id, t.t_st_id, \
                           tt.tt_is_mrkt, h.n, h.mask, \
                           coalesce(h.pndg > h.sbmt OR h.sbmt > h.cmpt OR h.pndg > h.cmpt \
                                    OR h.cncl < greatest(h.pndg, h.sbmt, h.cmpt), \
                                    false) AS misordered \
                    FROM trade t \
                    LEFT JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
                    FULL JOIN (SELECT th_t_id, count(*) AS n, \
                                      bit_or(CASE th_st_id WHEN 'PNDG' THEN 1 WHEN 'SBMT' THEN 2 \
                                             WHEN 'CMPT' THEN 4 WHEN 'CNCL' THEN 8 \
                                             ELSE 16 END) AS mask, \
                                      min(th_dts) FILTER (WHERE th_st_id = 'PNDG') AS pndg, \
                                      min(th_dts) FILTER (WHERE th_st_id = 'SBMT') AS sbmt, \
                                      min(th_dts) FILTER (WHERE th_st_id = 'CMPT') AS cmpt, \
                                      min(th_dts) FILTER (WHERE th_st_id = 'CNCL') AS cncl \
                               FROM trade_history GROUP BY th_t_id) h ON h.th_t_id = t.t_id) x \
              WHERE misordered \
                 OR NOT coalesce((tt_is_mrkt, t_st_id, mask) IN ( \
                        (true, 'SBMT', 2), (true, 'CMPT', 6), (true, 'CNCL', 10), \
                        (false, 'PNDG', 1), (false, 'SBMT', 3), (false, 'CMPT', 7), \
                        (false, 'CNCL', 9), (false, 'CNCL', 11)), false) \
                 OR n <> (mask & 1) + (mask >> 1 & 1) + (mask >> 2 & 1) + (mask >> 3 & 1) \
                         + (mask >> 4 & 1)",
    },
    Condition {
        name: "5: BROKER.b_num_trades and b_comm_total = count and commission sum of the \
               completed trades of the broker's accounts",
        sql: "SELECT format('broker %s: b_num_trades %s, b_comm_total %s; its accounts \
                            completed %s trades with commission %s', \
                            coalesce(b.b_id, x.ca_b_id), \
                            coalesce(b.b_num_trades::text, 'none (no broker row)'), \
                            coalesce(b.b_comm_total::text, '-'), \
                            coalesce(x.n, 0), coalesce(x.comm, 0)), \
                     coalesce(b.b_id, x.ca_b_id) \
              FROM broker b \
              FULL JOIN (SELECT ca_b_id, count(*) AS n, sum(t_comm) AS comm \
                         FROM trade JOIN customer_account ON ca_id = t_ca_id \
                         WHERE t_st_id = 'CMPT' GROUP BY ca_b_id) x ON x.ca_b_id = b.b_id \
              WHERE b.b_num_trades IS DISTINCT FROM coalesce(x.n, 0) \
                 OR b.b_comm_total IS DISTINCT FROM coalesce(x.comm, 0)",
    },
    Condition {
        name: "6: a pending (PNDG) trade has a TRADE_REQUEST of the same type, symbol, \
               quantity, bid and broker, and every request belongs to a pending trade (none is \
               left for a submitted, completed or cancelled one)",
        sql: "SELECT format('trade %s: %s', coalesce(t.t_id, r.tr_t_id), \
                CASE WHEN r.tr_t_id IS NULL THEN 'pending without a trade request' \
                     WHEN t.t_id IS NULL THEN 'a trade request, but the trade is ' || \
                          coalesce((SELECT t_st_id FROM trade WHERE t_id = r.tr_t_id), \
                                   'missing') \
                     ELSE format('trade %s %s x %s at %s broker %s, request %s %s x %s at %s \
                                  broker %s', t.t_tt_id, t.t_s_symb, t.t_qty, t.t_bid_price, \
                                 t.ca_b_id, r.tr_tt_id, r.tr_s_symb, r.tr_qty, \
                                 r.tr_bid_price, r.tr_b_id) END), \
                     coalesce(t.t_id, r.tr_t_id) \
              FROM (SELECT t_id, t_tt_id, t_s_symb, t_qty, t_bid_price, ca_b_id \
                    FROM trade LEFT JOIN customer_account ON ca_id = t_ca_id \
                    WHERE t_st_id = 'PNDG') t \
              FULL JOIN trade_request r ON r.tr_t_id = t.t_id \
              WHERE t.t_id IS NULL OR r.tr_t_id IS NULL \
                 OR (t.t_tt_id, t.t_s_symb, t.t_qty, t.t_bid_price, t.ca_b_id) \
                    IS DISTINCT FROM (r.tr_tt_id, r.tr_s_symb, r.tr_qty, r.tr_bid_price, \
                                      r.tr_b_id)",
    },
    Condition {
        name: "7: every trade's account exists, and every account's customer and broker",
        sql: "SELECT format('trade %s: account %s does not exist', t_id, t_ca_id), t_id \
              FROM trade WHERE NOT EXISTS (SELECT FROM customer_account WHERE ca_id = t_ca_id) \
              UNION ALL \
              SELECT format('account %s: customer %s does not exist', ca_id, ca_c_id), ca_id \
              FROM customer_account WHERE NOT EXISTS (SELECT FROM customer WHERE c_id = ca_c_id) \
              UNION ALL \
              SELECT format('account %s: broker %s does not exist', ca_id, ca_b_id), ca_id \
              FROM customer_account WHERE NOT EXISTS (SELECT FROM broker WHERE b_id = ca_b_id)",
    },
    Condition {
        name: "8: HOLDING_HISTORY rows belong to completed trades, and a completed trade's \
               rows change its lots by its quantity (+ for a buy, - for a sell) and touch only \
               lots of its account and symbol",
        sql: "SELECT format('trade %s (%s): its holding history %s', id, what, reason), id \
              FROM (SELECT coalesce(t.t_id, h.hh_t_id) AS id, \
                      CASE WHEN t.t_id IS NULL THEN 'no trade row' \
                           ELSE t.t_st_id || ' ' || t.t_tt_id || ' ' || t.t_qty END AS what, \
                      CASE WHEN t.t_id IS NULL \
                             OR CASE WHEN t.t_st_id = 'CMPT' \
                                     THEN h.delta IS DISTINCT FROM t.want \
                                     ELSE h.delta IS NOT NULL END \
                             THEN format('changes lots by %s, expected %s', \
                                         coalesce(h.delta::text, 'nothing'), \
                                         CASE WHEN t.t_st_id = 'CMPT' THEN t.want::text \
                                              ELSE 'no rows' END) \
                           WHEN (h.ca_lo, h.ca_hi, h.sy_lo, h.sy_hi) \
                                <> (t.t_ca_id, t.t_ca_id, t.t_s_symb, t.t_s_symb) \
                             THEN format('touches lots of accounts %s..%s in %s..%s, not only \
                                          its account %s in %s', h.ca_lo, h.ca_hi, h.sy_lo, \
                                         h.sy_hi, t.t_ca_id, t.t_s_symb) \
                      END AS reason \
                    FROM (SELECT t_id, t_st_id, t_tt_id, t_qty, t_ca_id, t_s_symb, \
                                 CASE WHEN tt_is_sell THEN -t_qty WHEN NOT tt_is_sell THEN t_qty \
                                 END AS want \
                          FROM trade LEFT JOIN trade_type ON tt_id = t_tt_id) t \
                    FULL JOIN (SELECT hh.hh_t_id, \
                                      sum(hh.hh_after_qty - hh.hh_before_qty) AS delta, \
                                      min(o.t_ca_id) AS ca_lo, max(o.t_ca_id) AS ca_hi, \
                                      min(o.t_s_symb) AS sy_lo, max(o.t_s_symb) AS sy_hi \
                               FROM holding_history hh LEFT JOIN trade o ON o.t_id = hh.hh_h_t_id \
                               GROUP BY hh.hh_t_id) h ON h.hh_t_id = t.t_id) y \
              WHERE reason IS NOT NULL",
    },
    Condition {
        name: "9: a lot was opened by a completed trade of its account and symbol at that \
               trade's price, and its HOLDING_HISTORY adds up to its quantity (to 0 once it is \
               closed and gone from HOLDING)",
        sql: "SELECT format('lot %s: %s', lot, reason), lot \
              FROM (SELECT coalesce(h.h_t_id, x.hh_h_t_id) AS lot, \
                      CASE WHEN o.t_id IS NULL THEN 'no trade of that id opened it' \
                           WHEN o.t_st_id <> 'CMPT' \
                             THEN format('opened by trade %s, which is %s, not completed', \
                                         o.t_id, o.t_st_id) \
                           WHEN h.h_t_id IS NOT NULL \
                                AND (o.t_ca_id, o.t_s_symb) <> (h.h_ca_id, h.h_s_symb) \
                             THEN format('held by account %s in %s, opened by a trade of \
                                          account %s in %s', h.h_ca_id, h.h_s_symb, \
                                         o.t_ca_id, o.t_s_symb) \
                           WHEN h.h_t_id IS NOT NULL AND h.h_price <> o.t_trade_price \
                             THEN format('held at %s, opened by a trade at %s', h.h_price, \
                                         o.t_trade_price) \
                           WHEN coalesce(x.delta, 0) <> coalesce(h.h_qty, 0) \
                             THEN format('its history adds up to %s, it holds %s', \
                                         coalesce(x.delta, 0), \
                                         coalesce(h.h_qty::text, 'nothing (closed)')) \
                      END AS reason \
                    FROM holding h \
                    FULL JOIN (SELECT hh_h_t_id, sum(hh_after_qty - hh_before_qty) AS delta \
                               FROM holding_history GROUP BY hh_h_t_id) x \
                      ON x.hh_h_t_id = h.h_t_id \
                    LEFT JOIN trade o ON o.t_id = coalesce(h.h_t_id, x.hh_h_t_id)) y \
              WHERE reason IS NOT NULL",
    },
    Condition {
        name: "10: a completed trade's SETTLEMENT amount is ±qty × price - charge - commission \
               (- tax when withheld), its cash type matches t_is_cash, it is due 2 days after \
               completion, and its CASH_TRANSACTION has that amount at the completion time",
        sql: "SELECT format('trade %s (%s %s x %s, %s, tax status %s): se_amt %s (expected %s), \
                            %s, due %s, completed %s, cash transaction %s at %s', \
                            t_id, t_tt_id, t_qty, t_trade_price, \
                            CASE WHEN t_is_cash THEN 'cash' ELSE 'margin' END, ca_tax_st, \
                            se_amt, want, se_cash_type, se_cash_due_date, t_dts, \
                            coalesce(ct_amt::text, 'none'), coalesce(ct_dts::text, '-')), t_id \
              FROM (SELECT t.t_id, t.t_tt_id, t.t_qty, t.t_trade_price, t.t_is_cash, t.t_dts, \
                           a.ca_tax_st, s.se_amt, s.se_cash_type, s.se_cash_due_date, \
                           c.ct_t_id, c.ct_amt, c.ct_dts, \
                           CASE WHEN tt.tt_is_sell THEN 1 ELSE -1 END * t.t_qty * t.t_trade_price \
                             - t.t_chrg - t.t_comm \
                             - CASE WHEN a.ca_tax_st = 1 THEN t.t_tax ELSE 0 END AS want \
                    FROM trade t \
                    JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
                    JOIN customer_account a ON a.ca_id = t.t_ca_id \
                    JOIN settlement s ON s.se_t_id = t.t_id \
                    LEFT JOIN cash_transaction c ON c.ct_t_id = t.t_id \
                    WHERE t.t_st_id = 'CMPT') x \
              WHERE se_amt IS DISTINCT FROM want \
                 OR NOT CASE WHEN t_is_cash THEN se_cash_type IN ('Cash Account', 'Cash') \
                             ELSE se_cash_type IN ('Margin', 'Margin Account') END \
                 OR se_cash_due_date IS DISTINCT FROM t_dts::date + 2 \
                 OR (ct_t_id IS NOT NULL \
                     AND (ct_amt IS DISTINCT FROM se_amt OR ct_dts IS DISTINCT FROM t_dts))",
    },
    Condition {
        name: "11: a completed trade's charge is CHARGE's for its type and tier, its commission \
               round(rate / 100 × qty × price, 2) at COMMISSION_RATE's rate, and its tax is \
               not negative and 0 for buys and non-taxable accounts",
        sql: "SELECT format('trade %s (%s %s x %s on %s, tier %s, tax status %s): charge %s \
                            (expected %s), commission %s (expected %s), tax %s', \
                            t_id, t_tt_id, t_qty, t_trade_price, s_ex_id, c_tier, ca_tax_st, \
                            t_chrg, coalesce(ch_chrg::text, 'none'), t_comm, \
                            coalesce(want_comm::text, 'none'), t_tax), t_id \
              FROM (SELECT t.t_id, t.t_tt_id, t.t_qty, t.t_trade_price, t.t_chrg, t.t_comm, \
                           t.t_tax, tt.tt_is_sell, se.s_ex_id, cu.c_tier, a.ca_tax_st, \
                           ch.ch_chrg, \
                           round(cr.cr_rate / 100 * t.t_qty * t.t_trade_price, 2) AS want_comm \
                    FROM trade t \
                    JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
                    JOIN customer_account a ON a.ca_id = t.t_ca_id \
                    JOIN customer cu ON cu.c_id = a.ca_c_id \
                    JOIN security se ON se.s_symb = t.t_s_symb \
                    LEFT JOIN charge ch ON ch.ch_tt_id = t.t_tt_id AND ch.ch_c_tier = cu.c_tier \
                    LEFT JOIN commission_rate cr \
                      ON cr.cr_c_tier = cu.c_tier AND cr.cr_tt_id = t.t_tt_id \
                     AND cr.cr_ex_id = se.s_ex_id \
                     AND t.t_qty BETWEEN cr.cr_from_qty AND cr.cr_to_qty \
                    WHERE t.t_st_id = 'CMPT') x \
              WHERE t_chrg IS DISTINCT FROM ch_chrg OR t_comm IS DISTINCT FROM want_comm \
                 OR t_tax < 0 OR (t_tax <> 0 AND (NOT tt_is_sell OR ca_tax_st = 0))",
    },
    Condition {
        name: "12: the unique keys are in place that keep one SETTLEMENT, at most one \
               CASH_TRANSACTION and at most one TRADE_REQUEST per trade, and one TRADE_HISTORY \
               row per trade and status",
        sql: "SELECT format('%s has no unique key within (%s)', v.t, \
                            array_to_string(v.cols, ', ')), v.k \
              FROM (VALUES (1, 'settlement', ARRAY['se_t_id']), \
                           (2, 'cash_transaction', ARRAY['ct_t_id']), \
                           (3, 'trade_request', ARRAY['tr_t_id']), \
                           (4, 'trade_history', ARRAY['th_t_id', 'th_st_id'])) AS v(k, t, cols) \
              WHERE NOT EXISTS ( \
                SELECT FROM pg_index i \
                WHERE i.indrelid = to_regclass(v.t) AND i.indisunique AND i.indisvalid \
                  AND i.indpred IS NULL AND i.indexprs IS NULL \
                  AND (SELECT array_agg(a.attname::text) FROM pg_attribute a \
                       WHERE a.attrelid = i.indrelid \
                         AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1])) \
                      <@ v.cols)",
    },
];

/// Runs every condition in one read-only repeatable-read snapshot; an outcome per condition,
/// in order.
pub async fn check(client: &Client) -> Result<Vec<CheckOutcome>, WorkloadError> {
    let db = |what: &str, e: tokio_postgres::Error| WorkloadError::query(what)(e);
    // Every condition reads whole tables; the planner still picks nested loops over millions
    // of trades at times (index probes per trade, measured 2× slower than hash or merge joins
    // on a million trades), so they are off for this transaction only.
    client
        .batch_execute(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL enable_nestloop = off",
        )
        .await
        .map_err(|e| db("starting the check transaction", e))?;
    let mut out = Vec::with_capacity(CONDITIONS.len());
    for c in &CONDITIONS {
        let rows = client.query(&listing(c.sql), &[]).await.map_err(|e| {
            db(
                &format!("checking condition {} (is this a tpce load?)", c.name),
                e,
            )
        })?;
        let read = |e| db(&format!("reading the rows of condition {}", c.name), e);
        let offending = match rows.first() {
            Some(r) => r.try_get::<_, i64>(1).map_err(read)? as u64,
            None => 0,
        };
        let examples = rows
            .iter()
            .map(|r| r.try_get::<_, String>(0).map_err(read))
            .collect::<Result<_, _>>()?;
        out.push(CheckOutcome {
            name: c.name.to_string(),
            offending,
            examples,
        });
    }
    client
        .batch_execute("COMMIT")
        .await
        .map_err(|e| db("ending the check transaction", e))?;
    Ok(out)
}

/// The first [`SHOWN`] offending rows of a condition's query by its sort key, each with the
/// count of all of them (a window count is computed before the limit).
fn listing(condition: &str) -> String {
    format!(
        "SELECT d, count(*) OVER () FROM ({condition}) AS offending(d, k) \
         ORDER BY k, d LIMIT {SHOWN}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_numbered_in_order() {
        for (k, c) in CONDITIONS.iter().enumerate() {
            assert!(c.name.starts_with(&format!("{}: ", k + 1)), "{}", c.name);
        }
        let sql = listing("SELECT 'x', 1");
        assert!(sql.contains("LIMIT 5"), "{sql}");
    }
}
