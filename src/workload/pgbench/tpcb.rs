//! pgbench's default built-in script, "tpcb-like" (`<builtin: TPC-B (sort of)>`).
//!
//! Mirrors `builtin_script[]` in PostgreSQL 15's src/bin/pgbench/pgbench.c (also printed by
//! `pgbench --show-script=tpcb-like`): seven statements, one round trip each, with the texts
//! pgbench sends in `-M extended|prepared` (`:var` replaced by `$n` in order of appearance).

use pgwire::{Connection, Param, Protocol, Statement};

use super::{sql, Args};
use crate::workload::TxnEnd;

pub const BEGIN: Statement = Statement {
    name: "pgb_tpcb_begin",
    sql: sql::BEGIN,
};
pub const UPDATE_ACCOUNT: Statement = Statement {
    name: "pgb_tpcb_update_account",
    sql: sql::UPDATE_ACCOUNT,
};
pub const SELECT_BALANCE: Statement = Statement {
    name: "pgb_tpcb_select_balance",
    sql: sql::SELECT_BALANCE,
};
pub const UPDATE_TELLER: Statement = Statement {
    name: "pgb_tpcb_update_teller",
    sql: sql::UPDATE_TELLER,
};
pub const UPDATE_BRANCH: Statement = Statement {
    name: "pgb_tpcb_update_branch",
    sql: sql::UPDATE_BRANCH,
};
pub const INSERT_HISTORY: Statement = Statement {
    name: "pgb_tpcb_insert_history",
    sql: sql::INSERT_HISTORY,
};
pub const END: Statement = Statement {
    name: "pgb_tpcb_end",
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
    conn.execute(protocol, &UPDATE_TELLER, &[delta, tid])
        .await?;
    conn.execute(protocol, &UPDATE_BRANCH, &[delta, bid])
        .await?;
    conn.execute(protocol, &INSERT_HISTORY, &[tid, bid, aid, delta])
        .await?;
    conn.execute(protocol, &END, &[]).await?;
    Ok(TxnEnd::Committed)
}
