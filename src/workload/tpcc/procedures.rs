//! `--procedures`: the five TPC-C transactions as calls of the PL/pgSQL functions of
//! `procedures.sql`, which `prepare` installs beside the tables (the issue's "server-side
//! PL/pgSQL functions ... for users who want the stored-procedure variant").
//!
//! The random input is the same as the client-side transactions' (drawn by their `draw`), and
//! each function runs the same statements in the same lock order. Each call is one statement in
//! its implicit transaction, so one TPC-C transaction is one server transaction and one round
//! trip, and a raise inside a function rolls the whole transaction back on the server.
//!
//! Outcomes: SQLSTATE [`UNUSED_ITEM_SQLSTATE`] from New-Order is the 1% rollback of clause
//! 2.4.2.3, an expected rollback when the client asked for it; every other error (02000 for a
//! missing row, as the client-side code's `missing`) goes to the driver as it came.

use pgwire::{Connection, Param, Protocol, Statement};

use super::new_order::array;
use super::{delivery, new_order, order_status, stock_level, Args, CustomerKey};
use crate::workload::TxnEnd;

/// What `tpcc_new_order` raises for an item no row has (documented in `procedures.sql`).
pub const UNUSED_ITEM_SQLSTATE: &[u8; 5] = b"TC001";

/// The functions `prepare` installs, as `to_regprocedure` reads them: a load lacking any of
/// them cannot run with `--procedures`.
pub const FUNCTIONS: [&str; 5] = [
    "tpcc_new_order(int, int, int, int[], int[], int[])",
    "tpcc_payment(int, int, int, int, int, text, numeric)",
    "tpcc_order_status(int, int, int, text)",
    "tpcc_delivery(int, int)",
    "tpcc_stock_level(int, int, int)",
];

/// A function the transactions share (Payment's and Order-Status's customer by last name).
pub const SHARED_FUNCTIONS: [&str; 1] = ["tpcc_customer_by_last(int, int, text)"];

/// Their definitions, `CREATE OR REPLACE FUNCTION` each.
pub const SQL: &str = include_str!("procedures.sql");

/// Parameters are cast so that every protocol (the simple one inlines untyped literals)
/// resolves the same function.
pub const CALL_NEW_ORDER: Statement = Statement {
    name: "tpcc_call_new_order",
    sql: "SELECT tpcc_new_order($1::int, $2::int, $3::int, $4::int[], $5::int[], $6::int[])",
};
/// The customer by id ($5) or, with $5 null, by last name ($6).
pub const CALL_PAYMENT: Statement = Statement {
    name: "tpcc_call_payment",
    sql: "SELECT tpcc_payment($1::int, $2::int, $3::int, $4::int, $5::int, $6::text, \
          $7::numeric)",
};
pub const CALL_ORDER_STATUS: Statement = Statement {
    name: "tpcc_call_order_status",
    sql: "SELECT tpcc_order_status($1::int, $2::int, $3::int, $4::text)",
};
pub const CALL_DELIVERY: Statement = Statement {
    name: "tpcc_call_delivery",
    sql: "SELECT tpcc_delivery($1::int, $2::int)",
};
pub const CALL_STOCK_LEVEL: Statement = Statement {
    name: "tpcc_call_stock_level",
    sql: "SELECT tpcc_stock_level($1::int, $2::int, $3::int)",
};

/// The names of [`FUNCTIONS`] and [`SHARED_FUNCTIONS`] that the session's search path does
/// not find.
pub async fn missing_functions(
    client: &tokio_postgres::Client,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let all: Vec<&str> = FUNCTIONS.iter().chain(&SHARED_FUNCTIONS).copied().collect();
    Ok(client
        .query(
            "SELECT f FROM unnest($1::text[]) AS f WHERE to_regprocedure(f) IS NULL",
            &[&all],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    match args {
        Args::NewOrder(a) => call_new_order(conn, protocol, a).await,
        Args::Payment(a) => {
            let amount = format!("{}.{:02}", a.amount_cents / 100, a.amount_cents % 100);
            let (id, last) = customer(&a.customer);
            let params = [
                Param::Int(a.w_id),
                Param::Int(a.d_id),
                Param::Int(a.c_w_id),
                Param::Int(a.c_d_id),
                id,
                last,
                Param::Text(&amount),
            ];
            conn.execute(protocol, &CALL_PAYMENT, &params).await?;
            Ok(TxnEnd::Committed)
        }
        Args::OrderStatus(order_status::Args {
            w_id,
            d_id,
            customer: key,
        }) => {
            let (id, last) = customer(key);
            let params = [Param::Int(*w_id), Param::Int(*d_id), id, last];
            conn.execute(protocol, &CALL_ORDER_STATUS, &params).await?;
            Ok(TxnEnd::Committed)
        }
        Args::Delivery(delivery::Args { w_id, carrier_id }) => {
            let params = [Param::Int(*w_id), Param::Int(*carrier_id)];
            conn.execute(protocol, &CALL_DELIVERY, &params).await?;
            Ok(TxnEnd::Committed)
        }
        Args::StockLevel(stock_level::Args {
            w_id,
            d_id,
            threshold,
        }) => {
            let params = [Param::Int(*w_id), Param::Int(*d_id), Param::Int(*threshold)];
            conn.execute(protocol, &CALL_STOCK_LEVEL, &params).await?;
            Ok(TxnEnd::Committed)
        }
    }
}

/// The (C_ID, C_LAST) pair of parameters, the unused one null.
fn customer(key: &CustomerKey) -> (Param<'_>, Param<'_>) {
    match key {
        CustomerKey::Id(id) => (Param::Int(*id), Param::Null),
        CustomerKey::Last(name) => (Param::Null, Param::Text(name)),
    }
}

async fn call_new_order(
    conn: &mut Connection,
    protocol: Protocol,
    a: &new_order::Args,
) -> Result<TxnEnd, pgwire::Error> {
    let n = a.lines.len();
    let ids = array((0..n).map(|i| a.item_id(i)));
    let supply = array(a.lines.iter().map(|l| l.supply_w_id));
    let qty = array(a.lines.iter().map(|l| l.quantity));
    let params = [
        Param::Int(a.w_id),
        Param::Int(a.d_id),
        Param::Int(a.c_id),
        Param::Text(&ids),
        Param::Text(&supply),
        Param::Text(&qty),
    ];
    match conn.execute(protocol, &CALL_NEW_ORDER, &params).await {
        Ok(_) => Ok(TxnEnd::Committed),
        // The server has rolled the order back already (the raise ended the implicit
        // transaction). Not asked for, a missing item is missing data: a failure.
        Err(e) if a.rollback && e.sqlstate() == Some(UNUSED_ITEM_SQLSTATE) => {
            Ok(TxnEnd::ExpectedRollback)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sql_defines_every_function_and_the_rollback_sqlstate() {
        for f in FUNCTIONS.iter().chain(&SHARED_FUNCTIONS) {
            let (name, _) = f.split_once('(').unwrap();
            assert!(
                SQL.contains(&format!("CREATE OR REPLACE FUNCTION {name}(")),
                "{name}"
            );
        }
        let code = std::str::from_utf8(UNUSED_ITEM_SQLSTATE).unwrap();
        assert!(SQL.contains(&format!("ERRCODE = '{code}'")));
    }

    #[test]
    fn each_call_names_its_function() {
        for (call, f) in [
            CALL_NEW_ORDER,
            CALL_PAYMENT,
            CALL_ORDER_STATUS,
            CALL_DELIVERY,
            CALL_STOCK_LEVEL,
        ]
        .iter()
        .zip(FUNCTIONS)
        {
            let (name, _) = f.split_once('(').unwrap();
            assert!(
                call.sql.starts_with(&format!("SELECT {name}(")),
                "{}",
                call.sql
            );
            let params = f.matches(',').count() + 1;
            assert!(call.sql.contains(&format!("${params}::")), "{}", call.sql);
        }
    }
}
