//! pgbench's built-in "simple-update" script (`pgbench -N`, `<builtin: simple update>`).
//!
//! Mirrors `builtin_script[]` in PostgreSQL 15's src/bin/pgbench/pgbench.c (also printed by
//! `pgbench --show-script=simple-update`): tpcb-like without the tellers and branches updates,
//! five statements, one round trip each. pgbench still draws `bid` and `tid` (they go into the
//! history row), so the same four values are drawn here.

use pgwire::{Connection, Protocol};

use super::sql::{self, Statements};
use super::Args;
use crate::workload::TxnEnd;

/// simple-update's statements (its own names; the tellers' and branches' are never sent).
pub const STATEMENTS: Statements = sql::statements!("su");

/// Runs one transaction. Any error is returned as is: the driver rolls back.
pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    super::tpcb::run_on(conn, protocol, a, &STATEMENTS, false).await
}
