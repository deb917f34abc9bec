//! pgbench's built-in "simple-update" script (`pgbench -N`, `<builtin: simple update>`).
//!
//! Mirrors `builtin_script[]` in PostgreSQL 15's src/bin/pgbench/pgbench.c (also printed by
//! `pgbench --show-script=simple-update`): tpcb-like without the tellers and branches updates,
//! five statements, one round trip each. pgbench still draws `bid` and `tid` (they go into the
//! history row), so the same four values are drawn here.

use pgwire::{Connection, Param, Protocol, Statement};

use super::{sql, Args};
use crate::workload::TxnEnd;

pub const BEGIN: Statement = Statement {
    name: "pgb_su_begin",
    sql: sql::BEGIN,
};
pub const UPDATE_ACCOUNT: Statement = Statement {
    name: "pgb_su_update_account",
    sql: sql::UPDATE_ACCOUNT,
};
pub const SELECT_BALANCE: Statement = Statement {
    name: "pgb_su_select_balance",
    sql: sql::SELECT_BALANCE,
};
pub const INSERT_HISTORY: Statement = Statement {
    name: "pgb_su_insert_history",
    sql: sql::INSERT_HISTORY,
};
pub const END: Statement = Statement {
    name: "pgb_su_end",
    sql: sql::END,
};

/// Runs one transaction. Any error is returned as is: the driver rolls back.
pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    let (aid, bid, tid, delta) = (
        Param::Int(a.aid),
        Param::Int(a.bid),
        Param::Int(a.tid),
        Param::Int(a.delta),
    );
    conn.execute(protocol, &BEGIN, &[]).await?;
    conn.execute(protocol, &UPDATE_ACCOUNT, &[delta, aid])
        .await?;
    conn.execute(protocol, &SELECT_BALANCE, &[aid]).await?;
    conn.execute(protocol, &INSERT_HISTORY, &[tid, bid, aid, delta])
        .await?;
    conn.execute(protocol, &END, &[]).await?;
    Ok(TxnEnd::Committed)
}
