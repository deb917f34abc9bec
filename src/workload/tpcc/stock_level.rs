//! Stock-Level (TPC-C clause 2.8): how many distinct items of the district's last 20 orders
//! have a stock below a threshold. Read-only, one statement.

use pgwire::{Connection, Param, Protocol, Statement};

use crate::workload::TxnEnd;

/// Clause 2.8.2.2: D_NEXT_O_ID of the home district; the items of order lines with
/// D_NEXT_O_ID − 20 ≤ OL_O_ID < D_NEXT_O_ID; the distinct ones whose S_QUANTITY in the home
/// warehouse is below the threshold.
pub const COUNT_LOW: Statement = Statement {
    name: "tpcc_sl_count_low",
    sql: "SELECT count(DISTINCT s.s_i_id) FROM district d \
          JOIN order_line ol ON ol.ol_w_id = d.d_w_id AND ol.ol_d_id = d.d_id \
               AND ol.ol_o_id >= d.d_next_o_id - 20 AND ol.ol_o_id < d.d_next_o_id \
          JOIN stock s ON s.s_w_id = d.d_w_id AND s.s_i_id = ol.ol_i_id \
          WHERE d.d_w_id = $1 AND d.d_id = $2 AND s.s_quantity < $3",
};

#[derive(Debug, Clone)]
pub struct Args {
    pub w_id: i64,
    /// The client's home district (clause 2.8.1.1: fixed per terminal).
    pub d_id: i64,
    /// Uniform 10-20 (clause 2.8.1.2).
    pub threshold: i64,
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    conn.execute(
        protocol,
        &COUNT_LOW,
        &[
            Param::Int(a.w_id),
            Param::Int(a.d_id),
            Param::Int(a.threshold),
        ],
    )
    .await?;
    Ok(TxnEnd::Committed)
}
