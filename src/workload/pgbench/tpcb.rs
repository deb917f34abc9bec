//! pgbench's default built-in script, "tpcb-like" (`<builtin: TPC-B (sort of)>`).
//!
//! Mirrors `builtin_script[]` in PostgreSQL 15's src/bin/pgbench/pgbench.c (also printed by
//! `pgbench --show-script=tpcb-like`): seven statements, one round trip each, with the texts
//! pgbench sends in `-M extended|prepared` (`:var` replaced by `$n` in order of appearance).

use pgwire::{Connection, Param, Protocol};

use super::sql::{self, Statements};
use super::Args;
use crate::workload::TxnEnd;

/// tpcb-like's statements.
pub const STATEMENTS: Statements = sql::statements!("tpcb");

/// Runs one transaction. Any error is returned as is: the driver rolls back.
pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    run_on(conn, protocol, a, &STATEMENTS, true).await
}

/// One transaction of the TPC-B-like script on `s`; without `teller_branch` (simple-update,
/// `pgbench -N`), the tellers' and branches' updates are left out and nothing else.
pub(super) async fn run_on(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
    s: &Statements,
    teller_branch: bool,
) -> Result<TxnEnd, pgwire::Error> {
    let (aid, bid, tid, delta) = (
        Param::Int(a.aid),
        Param::Int(a.bid),
        Param::Int(a.tid),
        Param::Int(a.delta),
    );
    conn.execute(protocol, &s.begin, &[]).await?;
    conn.execute(protocol, &s.update_account, &[delta, aid])
        .await?;
    conn.execute(protocol, &s.select_balance, &[aid]).await?;
    if teller_branch {
        conn.execute(protocol, &s.update_teller, &[delta, tid])
            .await?;
        conn.execute(protocol, &s.update_branch, &[delta, bid])
            .await?;
    }
    conn.execute(protocol, &s.insert_history, &[tid, bid, aid, delta])
        .await?;
    conn.execute(protocol, &s.end, &[]).await?;
    Ok(TxnEnd::Committed)
}
