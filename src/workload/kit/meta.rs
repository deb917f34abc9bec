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
        match client.query_typed_opt(sql, &[]).await {
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

    /// A count the meta row holds (TPC-C's warehouses, tpce's customers) as the data's scale:
    /// not prepared, with the `prepare` that reloads it, unless it is a positive `u32`.
    pub fn scale(&self, count: i64, unit: &str) -> Result<u32, WorkloadError> {
        u32::try_from(count).ok().filter(|&n| n > 0).ok_or_else(|| {
            WorkloadError::not_prepared(
                format!("{} says {count} {unit}", self.table),
                format!("run `{}` first (add `--force` to reload)", self.prepare),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_empty_meta_table_is_not_prepared_and_a_query_error_is_not() {
        let (load, table, prepare) = ("retail", "retail_meta", "tidebench prepare -w retail");
        let none = WorkloadError::NoLoad {
            load,
            table,
            prepare,
        };
        let empty = WorkloadError::IncompleteLoad {
            load,
            table,
            prepare,
        };
        assert!(none.is_not_prepared() && empty.is_not_prepared());
        assert!(empty.to_string().contains("add `--force` to reload"));
        let query = WorkloadError::Query {
            what: "checking the retail tables".into(),
            message: "permission denied".into(),
        };
        assert!(!query.is_not_prepared());
        assert_eq!(
            query.to_string(),
            "checking the retail tables failed: permission denied"
        );
    }

    #[test]
    fn a_meta_row_scale_must_be_a_positive_u32() {
        let meta = MetaTable {
            load: "TPC-C",
            table: "tpcc_meta",
            prepare: "tidebench prepare --workload tpcc --warehouses W",
        };
        assert_eq!(meta.scale(3, "warehouses").unwrap(), 3);
        for bad in [0, -1, i64::from(u32::MAX) + 1] {
            let e = meta.scale(bad, "warehouses").unwrap_err();
            assert!(e.is_not_prepared());
            assert_eq!(
                e.to_string(),
                format!(
                    "tpcc_meta says {bad} warehouses; run `tidebench prepare --workload tpcc \
                     --warehouses W` first (add `--force` to reload)"
                )
            );
        }
    }
}
