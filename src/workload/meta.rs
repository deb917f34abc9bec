//! The `*_meta` table a loader writes last: a load is complete only once its row is there, so
//! every workload's readiness check starts by reading it. A missing table or an empty one
//! means "not prepared" (with the `prepare` command that fixes it); any other error is the
//! server's, said as it said it.

use tokio_postgres::{Client, Row};

use crate::workload::WorkloadError;

/// A workload's meta table: what the load is called in messages, the table, and the
/// `prepare` command that loads it.
pub struct MetaTable {
    pub load: &'static str,
    pub table: &'static str,
    pub prepare: &'static str,
}

impl MetaTable {
    /// The row `sql` reads from the meta table; [`WorkloadError::NoLoad`] or
    /// [`WorkloadError::IncompleteLoad`] when the table or its row is missing.
    pub async fn read(&self, client: &Client, sql: &str) -> Result<Row, WorkloadError> {
        match client.query_opt(sql, &[]).await {
            Ok(Some(row)) => Ok(row),
            Ok(None) => Err(WorkloadError::IncompleteLoad {
                load: self.load,
                table: self.table,
                prepare: self.prepare,
            }),
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                Err(WorkloadError::NoLoad {
                    load: self.load,
                    table: self.table,
                    prepare: self.prepare,
                })
            }
            Err(e) => Err(WorkloadError::query(&format!(
                "checking the {} tables",
                self.load
            ))(e)),
        }
    }
}
