//! Payment (TPC-C clause 2.5): a customer pays an amount; the warehouse's and district's
//! year-to-date totals grow by it, the customer's balance shrinks, a history row records it.
//!
//! One statement, one round trip, in its own implicit transaction: the CTEs chain
//! warehouse → district → customer → history, and each update reads the previous one's rows,
//! so the row locks are always taken in that order (no deadlock cycle with New-Order, which
//! locks a district then stock rows, or Delivery, which locks customers last).

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::{draw_customer, missing, Client, CustomerKey, Tpcc, DISTRICTS};
use crate::workload::{Rng, TxnEnd};

/// The statement with `$key` as the customer id expression. Clause 2.5.2.2: W_YTD and D_YTD
/// grow by H_AMOUNT; C_BALANCE -= H_AMOUNT, C_YTD_PAYMENT += H_AMOUNT, C_PAYMENT_CNT += 1;
/// for bad credit ("BC") C_ID, C_D_ID, C_W_ID, D_ID, W_ID and H_AMOUNT are put in front of
/// C_DATA, which keeps its first 500 characters; H_DATA = W_NAME, 4 spaces, D_NAME.
macro_rules! payment_sql {
    ($key:expr) => {
        concat!(
            "WITH w AS (UPDATE warehouse SET w_ytd = w_ytd + $5 WHERE w_id = $1 \
                        RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip), \
             d AS (UPDATE district SET d_ytd = d_ytd + $5 FROM w WHERE d_w_id = $1 AND d_id = $2 \
                   RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip, w.w_name), \
             c AS (UPDATE customer SET c_balance = c_balance - $5, \
                     c_ytd_payment = c_ytd_payment + $5, c_payment_cnt = c_payment_cnt + 1, \
                     c_data = CASE WHEN c_credit = 'BC' THEN left(c_id || ' ' || c_d_id || ' ' \
                       || c_w_id || ' ' || $2 || ' ' || $1 || ' ' || $5 || '|' || c_data, 500) \
                       ELSE c_data END \
                   FROM d WHERE c_w_id = $3 AND c_d_id = $4 AND c_id = ",
            $key,
            " RETURNING c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, \
                       c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, \
                       c_balance, left(c_data, 200) AS c_data, d.d_name, d.w_name), \
             h AS (INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, \
                                        h_amount, h_data) \
                   SELECT c.c_id, $4, $3, $2, $1, now(), $5, c.w_name || '    ' || c.d_name FROM c) \
             SELECT c_id, c_balance, c_credit FROM c"
        )
    };
}

pub const BY_ID: Statement = Statement {
    name: "tpcc_pay_by_id",
    sql: payment_sql!("$6::int"),
};
/// Clause 2.5.2.2: by last name, the customers sorted by C_FIRST and the one at position
/// n/2 rounded up taken.
pub const BY_LAST: Statement = Statement {
    name: "tpcc_pay_by_last",
    sql: payment_sql!(customer_by_last!("$3", "$4", "$6")),
};

#[derive(Debug, Clone)]
pub struct Args {
    pub w_id: i64,
    pub d_id: i64,
    pub c_w_id: i64,
    pub c_d_id: i64,
    pub customer: CustomerKey,
    /// H_AMOUNT in cents: 1.00 to 5,000.00.
    pub amount_cents: i64,
}

/// Clause 2.5.1: district uniform; 85% the home warehouse's customer, 15% a remote one;
/// 60% selected by last name.
pub fn draw(w: &Tpcc, client: &Client, rng: &mut Rng) -> Args {
    let d_id = rng.gen_range(1..=DISTRICTS);
    let (c_w_id, c_d_id) = if rng.gen_range(1..=100) <= 85 || w.warehouses == 1 {
        (client.w_id, d_id)
    } else {
        (
            w.remote_warehouse(client.w_id, rng),
            rng.gen_range(1..=DISTRICTS),
        )
    };
    Args {
        w_id: client.w_id,
        d_id,
        c_w_id,
        c_d_id,
        customer: draw_customer(rng),
        amount_cents: rng.gen_range(100..=500_000),
    }
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    let amount = format!("{}.{:02}", a.amount_cents / 100, a.amount_cents % 100);
    let (stmt, key) = match &a.customer {
        CustomerKey::Id(id) => (&BY_ID, Param::Int(*id)),
        CustomerKey::Last(name) => (&BY_LAST, Param::Text(name)),
    };
    let params = [
        Param::Int(a.w_id),
        Param::Int(a.d_id),
        Param::Int(a.c_w_id),
        Param::Int(a.c_d_id),
        Param::Text(&amount),
        key,
    ];
    let r = conn.execute(protocol, stmt, &params).await?;
    if r.rows() == 0 {
        return Err(missing(format!(
            "payment: no customer {:?} in district {}/{}",
            a.customer, a.c_w_id, a.c_d_id
        )));
    }
    Ok(TxnEnd::Committed)
}
