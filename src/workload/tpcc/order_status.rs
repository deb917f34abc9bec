//! Order-Status (TPC-C clause 2.6): a customer's balance and their last order with its lines.
//! Read-only: one statement, one round trip.

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::{draw_customer, missing, Client, CustomerKey, DISTRICTS};
use crate::workload::{Rng, TxnEnd};

/// Clause 2.6.2.2: the customer's C_BALANCE, C_FIRST, C_MIDDLE, C_LAST; their order with the
/// largest O_ID (O_ENTRY_D, O_CARRIER_ID) and its lines (OL_I_ID, OL_SUPPLY_W_ID,
/// OL_QUANTITY, OL_AMOUNT, OL_DELIVERY_D).
macro_rules! order_status_sql {
    ($key:expr) => {
        concat!(
            "WITH c AS (SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer \
                        WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = ",
            $key,
            "), o AS (SELECT o_id, o_entry_d, o_carrier_id FROM orders \
                      WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = (SELECT c_id FROM c) \
                      ORDER BY o_id DESC LIMIT 1) \
             SELECT c.c_id, c.c_balance, c.c_first, c.c_middle, c.c_last, \
                    o.o_id, o.o_entry_d, o.o_carrier_id, \
                    l.ol_i_id, l.ol_supply_w_id, l.ol_quantity, l.ol_amount, l.ol_delivery_d \
             FROM c LEFT JOIN o ON true \
             LEFT JOIN order_line l ON l.ol_w_id = $1 AND l.ol_d_id = $2 AND l.ol_o_id = o.o_id"
        )
    };
}

pub const BY_ID: Statement = Statement {
    name: "tpcc_os_by_id",
    sql: order_status_sql!("$3::int"),
};
/// By last name: position n/2 rounded up in C_FIRST order (clause 2.6.2.2).
pub const BY_LAST: Statement = Statement {
    name: "tpcc_os_by_last",
    sql: order_status_sql!(customer_by_last!("$1", "$2", "$3")),
};

#[derive(Debug, Clone)]
pub struct Args {
    pub w_id: i64,
    pub d_id: i64,
    pub customer: CustomerKey,
}

/// Clause 2.6.1: home warehouse, district uniform, 60% by last name.
pub fn draw(client: &Client, rng: &mut Rng) -> Args {
    Args {
        w_id: client.w_id,
        d_id: rng.gen_range(1..=DISTRICTS),
        customer: draw_customer(rng),
    }
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    let (stmt, key) = match &a.customer {
        CustomerKey::Id(id) => (&BY_ID, Param::Int(*id)),
        CustomerKey::Last(name) => (&BY_LAST, Param::Text(name)),
    };
    let r = conn
        .execute(
            protocol,
            stmt,
            &[Param::Int(a.w_id), Param::Int(a.d_id), key],
        )
        .await?;
    if r.rows() == 0 {
        return Err(missing(format!(
            "order-status: no customer {:?} in district {}/{}",
            a.customer, a.w_id, a.d_id
        )));
    }
    Ok(TxnEnd::Committed)
}
