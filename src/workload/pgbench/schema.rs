//! pgbench's schema as `pgbench -i` (PostgreSQL 15) creates it, and the names of the staging
//! tables the loader fills before swapping them in.
//!
//! Facts taken from pgbench.c (`initCreateTables`, `initCreatePKeys`, `SCALE_32BIT_THRESHOLD`):
//! the column lists, `fillfactor=100` on every table but history, `aid` widened to bigint from
//! scale 20000 on (100000 * scale no longer fits an int4 from 21475 on; pgbench rounds down),
//! and primary keys only on branches, tellers and accounts.

/// Rows per unit of scale (pgbench's `nbranches`, `ntellers`, `naccounts`).
pub const BRANCHES_PER_SCALE: i64 = 1;
pub const TELLERS_PER_SCALE: i64 = 10;
pub const ACCOUNTS_PER_SCALE: i64 = 100_000;

/// From this scale on, `aid` is bigint in accounts and history.
pub const SCALE_64BIT_AID: u32 = 20_000;

/// Suffix of the tables being loaded. Nothing reads a table with this suffix, so an
/// interrupted load never leaves something that looks like a finished one.
pub const STAGING_SUFFIX: &str = "__loading";

/// One of pgbench's four tables.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    /// Column list when `aid` is int4; `{aid}` stands for the type of `aid`.
    columns: &'static str,
    fillfactor: bool,
    /// Primary key column, if the table has one.
    pub key: Option<&'static str>,
}

pub const HISTORY: Table = Table {
    name: "pgbench_history",
    columns: "tid int, bid int, aid {aid}, delta int, mtime timestamp, filler char(22)",
    fillfactor: false,
    key: None,
};
pub const TELLERS: Table = Table {
    name: "pgbench_tellers",
    columns: "tid int not null, bid int, tbalance int, filler char(84)",
    fillfactor: true,
    key: Some("tid"),
};
pub const ACCOUNTS: Table = Table {
    name: "pgbench_accounts",
    columns: "aid {aid} not null, bid int, abalance int, filler char(84)",
    fillfactor: true,
    key: Some("aid"),
};
pub const BRANCHES: Table = Table {
    name: "pgbench_branches",
    columns: "bid int not null, bbalance int, filler char(88)",
    fillfactor: true,
    key: Some("bid"),
};

/// All four, in pgbench's creation order.
pub const TABLES: [Table; 4] = [HISTORY, TELLERS, ACCOUNTS, BRANCHES];

/// Whether `aid` is bigint at this scale.
pub fn big_aid(scale: u32) -> bool {
    scale >= SCALE_64BIT_AID
}

impl Table {
    pub fn staging_name(&self) -> String {
        format!("{}{STAGING_SUFFIX}", self.name)
    }

    /// `CREATE TABLE` of the staging table for data of `scale`. Autovacuum stays off while
    /// loading: a concurrent autovacuum (or its ANALYZE snapshot) would compete for the CPU
    /// and keep the loader's VACUUM from marking pages all-visible. [`Table::rename_sql`]
    /// resets it, so the final options are pgbench's.
    pub fn create_staging_sql(&self, scale: u32) -> String {
        let aid = if big_aid(scale) { "bigint" } else { "int" };
        let fillfactor = if self.fillfactor {
            "fillfactor=100, "
        } else {
            ""
        };
        format!(
            "create table {}({}) with ({fillfactor}autovacuum_enabled=false)",
            self.staging_name(),
            self.columns.replace("{aid}", aid)
        )
    }

    /// Name of the primary key index once swapped in (what pgbench's `add primary key` makes).
    pub fn pkey_name(&self) -> String {
        format!("{}_pkey", self.name)
    }

    /// Adds the primary key to the staging table, under a staging name (the final name may
    /// still belong to the old table's index until the swap).
    pub fn add_staging_pkey_sql(&self) -> Option<String> {
        self.key.map(|col| {
            format!(
                "alter table {0} add constraint {0}_pkey primary key ({col})",
                self.staging_name()
            )
        })
    }

    /// Statements that give the staging table (and its index) the real names and pgbench's
    /// storage options.
    pub fn rename_sql(&self) -> String {
        let staging = self.staging_name();
        let mut sql = format!(
            "alter table {staging} reset (autovacuum_enabled);\n\
             alter table {staging} rename to {};\n",
            self.name
        );
        if self.key.is_some() {
            sql.push_str(&format!(
                "alter index {}_pkey rename to {};\n",
                self.staging_name(),
                self.pkey_name()
            ));
        }
        sql
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aid_widens_at_pgbench_threshold() {
        assert!(ACCOUNTS
            .create_staging_sql(19_999)
            .contains("aid int not null"));
        assert!(ACCOUNTS
            .create_staging_sql(20_000)
            .contains("aid bigint not null"));
        assert!(HISTORY.create_staging_sql(20_000).contains("aid bigint,"));
        assert!(HISTORY
            .create_staging_sql(1)
            .ends_with("with (autovacuum_enabled=false)"));
        assert!(BRANCHES
            .create_staging_sql(1)
            .ends_with("with (fillfactor=100, autovacuum_enabled=false)"));
    }

    #[test]
    fn renames_table_and_index() {
        let sql = ACCOUNTS.rename_sql();
        assert!(
            sql.starts_with("alter table pgbench_accounts__loading reset (autovacuum_enabled);")
        );
        assert!(sql.contains("alter table pgbench_accounts__loading rename to pgbench_accounts;"));
        assert!(sql.contains(
            "alter index pgbench_accounts__loading_pkey rename to pgbench_accounts_pkey;"
        ));
        assert!(!HISTORY.rename_sql().contains("index"));
    }
}
