//! pgbench's built-in "select-only" script (`pgbench -S`, `<builtin: select only>`).
//!
//! Mirrors `builtin_script[]` in PostgreSQL 15's src/bin/pgbench/pgbench.c (also printed by
//! `pgbench --show-script=select-only`): one primary-key lookup, no BEGIN/END, so each
//! transaction is the statement's own implicit transaction.

use pgwire::{Connection, Param, Protocol, Statement};

use super::{sql, Args};
use crate::workload::TxnEnd;

pub const SELECT_BALANCE: Statement = Statement {
    name: "pgb_so_select_balance",
    sql: sql::SELECT_BALANCE,
};

/// Runs one transaction. Any error is returned as is.
pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    conn.execute(protocol, &SELECT_BALANCE, &[Param::Int(a.aid)])
        .await?;
    Ok(TxnEnd::Committed)
}
