//! Delivery (TPC-C clause 2.7): deliver the oldest undelivered order of each of the home
//! warehouse's 10 districts, all in one transaction as DBT-2 and HammerDB run it (the spec's
//! deferred execution, clause 2.7.2, is not emulated: the client waits for the result).
//!
//! One statement, one round trip. A district with no undelivered order is skipped (clause
//! 2.7.4.2); so is one whose oldest order a concurrent Delivery of the same warehouse took
//! first (read committed finds the row gone after waiting for it).

use pgwire::{Connection, Param, Protocol, Statement};

use crate::workload::TxnEnd;

/// Clause 2.7.4.2, per district: the NEW-ORDER row with the lowest NO_O_ID deleted; the
/// order's O_CARRIER_ID set; every line's OL_DELIVERY_D set to now; the customer's C_BALANCE
/// increased by the sum of OL_AMOUNT and C_DELIVERY_CNT by one. Returns the delivered
/// (district, order) pairs.
pub const DELIVER: Statement = Statement {
    name: "tpcc_dl_deliver",
    sql: "WITH n AS (DELETE FROM new_order x \
                     USING (SELECT d, (SELECT min(no_o_id) FROM new_order \
                                       WHERE no_w_id = $1 AND no_d_id = d) AS o_id \
                            FROM generate_series(1, 10) AS d) f \
                     WHERE x.no_w_id = $1 AND x.no_d_id = f.d AND x.no_o_id = f.o_id \
                     RETURNING x.no_d_id AS d_id, x.no_o_id AS o_id), \
          o AS (UPDATE orders r SET o_carrier_id = $2 FROM n \
                WHERE r.o_w_id = $1 AND r.o_d_id = n.d_id AND r.o_id = n.o_id \
                RETURNING r.o_d_id AS d_id, r.o_c_id AS c_id), \
          l AS (UPDATE order_line ol SET ol_delivery_d = now() FROM n \
                WHERE ol.ol_w_id = $1 AND ol.ol_d_id = n.d_id AND ol.ol_o_id = n.o_id \
                RETURNING ol.ol_d_id AS d_id, ol.ol_amount), \
          t AS (SELECT o.d_id, o.c_id, sum(l.ol_amount) AS amount \
                FROM o JOIN l ON l.d_id = o.d_id GROUP BY o.d_id, o.c_id), \
          c AS (UPDATE customer cu SET c_balance = cu.c_balance + t.amount, \
                  c_delivery_cnt = cu.c_delivery_cnt + 1 \
                FROM t WHERE cu.c_w_id = $1 AND cu.c_d_id = t.d_id AND cu.c_id = t.c_id \
                RETURNING cu.c_d_id) \
          SELECT n.d_id, n.o_id FROM n ORDER BY n.d_id",
};

#[derive(Debug, Clone)]
pub struct Args {
    pub w_id: i64,
    /// O_CARRIER_ID, uniform 1-10 (clause 2.7.1.2).
    pub carrier_id: i64,
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    conn.execute(
        protocol,
        &DELIVER,
        &[Param::Int(a.w_id), Param::Int(a.carrier_id)],
    )
    .await?;
    Ok(TxnEnd::Committed)
}
