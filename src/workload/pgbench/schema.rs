//! pgbench's schema as `pgbench -i` (PostgreSQL 15) creates it, with `-i`'s options
//! ([`InitOptions`]): the statements of its steps, unqualified as pgbench sends them, so the
//! loader runs them in tidebench's staging schema or in place alike.
//!
//! Facts taken from pgbench.c (`initCreateTables`, `createPartitions`, `initCreatePKeys`,
//! `initCreateFKeys`, `SCALE_32BIT_THRESHOLD`) and checked against pgbench 15's catalogs by
//! the integration tests: the column lists; `fillfactor` on every table but history (and
//! never on a partitioned table: its partitions get it); `aid` widened to bigint from scale
//! 20000 on (100000 * scale no longer fits an int4 from 21475 on; pgbench rounds down);
//! `unlogged` and the tablespace on the four tables (partitions inherit the tablespace);
//! range partitions of `ceil(naccounts / N)` aids, the first from MINVALUE and the last to
//! MAXVALUE; primary keys only on branches, tellers and accounts; five foreign keys.

use super::init::InitOptions;

/// Rows per unit of scale (pgbench's `nbranches`, `ntellers`, `naccounts`).
pub const BRANCHES_PER_SCALE: i64 = 1;
pub const TELLERS_PER_SCALE: i64 = 10;
pub const ACCOUNTS_PER_SCALE: i64 = 100_000;

/// From this scale on, `aid` is bigint in accounts and history.
pub const SCALE_64BIT_AID: u32 = 20_000;

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

/// The four names, alphabetically, as pgbench's `drop` and `truncate` list them.
pub const NAMES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_history",
    "pgbench_tellers",
];

/// pgbench's foreign keys, in its order: (table, column, referenced table).
const FOREIGN_KEYS: [(&str, &str, &str); 5] = [
    ("pgbench_tellers", "bid", "pgbench_branches"),
    ("pgbench_accounts", "bid", "pgbench_branches"),
    ("pgbench_history", "bid", "pgbench_branches"),
    ("pgbench_history", "tid", "pgbench_tellers"),
    ("pgbench_history", "aid", "pgbench_accounts"),
];

/// Whether `aid` is bigint at this scale.
pub fn big_aid(scale: u32) -> bool {
    scale >= SCALE_64BIT_AID
}

/// `name` quoted as an SQL identifier (pgbench quotes tablespace names the same way).
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `d`: pgbench's drop.
pub fn drop_sql() -> String {
    format!("drop table if exists {}", NAMES.join(", "))
}

/// The first statement of `g` and `G`: all four emptied, in the loading transaction.
pub fn truncate_sql(tables: &[&str]) -> String {
    format!("truncate table {}", tables.join(", "))
}

/// `t`: the four tables and the partitions of accounts. `staging`: autovacuum off on every
/// table that stores rows (it would compete with the load, and its snapshot would keep the
/// vacuum step from marking pages all-visible); [`reset_autovacuum_sql`] takes it off again.
pub fn create_sql(scale: u32, init: &InitOptions, staging: bool) -> Vec<String> {
    let mut out: Vec<String> = TABLES
        .iter()
        .map(|t| t.create_sql(scale, init, staging))
        .collect();
    out.extend((1..=init.partitions).map(|p| partition_sql(p, scale, init, staging)));
    out
}

/// The tables that hold rows (a partitioned accounts holds none, its partitions do).
pub fn leaf_tables(init: &InitOptions) -> Vec<String> {
    let mut out: Vec<String> = TABLES
        .iter()
        .filter(|t| init.partitions == 0 || t.name != ACCOUNTS.name)
        .map(|t| t.name.to_string())
        .collect();
    out.extend((1..=init.partitions).map(partition_name));
    out
}

/// Every table `t` creates: the four, then the partitions.
pub fn all_tables(init: &InitOptions) -> Vec<String> {
    let mut out: Vec<String> = TABLES.iter().map(|t| t.name.to_string()).collect();
    out.extend((1..=init.partitions).map(partition_name));
    out
}

pub fn partition_name(p: u32) -> String {
    format!("{}_{p}", ACCOUNTS.name)
}

/// Undoes the load's `autovacuum_enabled=false` on `table`.
pub fn reset_autovacuum_sql(table: &str) -> String {
    format!("alter table {table} reset (autovacuum_enabled)")
}

/// Partition `p` (from 1) of accounts, as pgbench's `createPartitions`.
fn partition_sql(p: u32, scale: u32, init: &InitOptions, staging: bool) -> String {
    let n = i64::from(init.partitions);
    let bounds = match init.method {
        super::init::PartitionMethod::Range => {
            let naccounts = ACCOUNTS_PER_SCALE * i64::from(scale);
            let part = (naccounts + n - 1) / n;
            let p = i64::from(p);
            let from = if p == 1 {
                "minvalue".to_string()
            } else {
                ((p - 1) * part + 1).to_string()
            };
            let to = if p == n {
                "maxvalue".to_string()
            } else {
                (p * part + 1).to_string()
            };
            format!("for values from ({from}) to ({to})")
        }
        super::init::PartitionMethod::Hash => {
            format!("for values with (modulus {n}, remainder {})", p - 1)
        }
    };
    format!(
        "create{} table {} partition of {} {bounds}{}",
        unlogged(init),
        partition_name(p),
        ACCOUNTS.name,
        with_clause(Some(init.fillfactor), staging)
    )
}

fn unlogged(init: &InitOptions) -> &'static str {
    if init.unlogged {
        " unlogged"
    } else {
        ""
    }
}

/// ` with (...)` for a table that stores rows, or nothing.
fn with_clause(fillfactor: Option<u32>, staging: bool) -> String {
    let mut options = Vec::new();
    if let Some(f) = fillfactor {
        options.push(format!("fillfactor={f}"));
    }
    if staging {
        options.push("autovacuum_enabled=false".to_string());
    }
    if options.is_empty() {
        String::new()
    } else {
        format!(" with ({})", options.join(", "))
    }
}

/// `p`: the primary keys, one statement per table (they build in parallel).
pub fn primary_keys_sql(init: &InitOptions) -> Vec<String> {
    let space = init
        .index_tablespace
        .as_deref()
        .map(|s| format!(" using index tablespace {}", ident(s)))
        .unwrap_or_default();
    [BRANCHES, TELLERS, ACCOUNTS]
        .iter()
        .filter_map(|t| {
            t.key
                .map(|k| format!("alter table {} add primary key ({k}){space}", t.name))
        })
        .collect()
}

/// `f`: the foreign keys, one after the other in pgbench's order (the names of those on a
/// partitioned accounts' partitions are numbered in creation order).
pub fn foreign_keys_sql() -> String {
    FOREIGN_KEYS
        .iter()
        .map(|(table, column, referenced)| {
            format!(
                "alter table {table} add constraint {table}_{column}_fkey foreign key \
                 ({column}) references {referenced};\n"
            )
        })
        .collect()
}

impl Table {
    /// pgbench's `CREATE TABLE` of this table with the options (`staging`: see
    /// [`create_sql`]).
    fn create_sql(&self, scale: u32, init: &InitOptions, staging: bool) -> String {
        let aid = if big_aid(scale) { "bigint" } else { "int" };
        let partitioned = self.name == ACCOUNTS.name && init.partitions > 0;
        let tail = if partitioned {
            format!(" partition by {} (aid)", init.method.as_sql())
        } else {
            with_clause(self.fillfactor.then_some(init.fillfactor), staging)
        };
        let space = init
            .tablespace
            .as_deref()
            .map(|s| format!(" tablespace {}", ident(s)))
            .unwrap_or_default();
        format!(
            "create{} table {}({}){tail}{space}",
            unlogged(init),
            self.name,
            self.columns.replace("{aid}", aid)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::init::PartitionMethod;
    use super::*;

    #[test]
    fn aid_widens_at_pgbench_threshold() {
        let init = InitOptions::default();
        assert!(ACCOUNTS
            .create_sql(19_999, &init, false)
            .contains("aid int not null"));
        assert!(ACCOUNTS
            .create_sql(20_000, &init, false)
            .contains("aid bigint not null"));
        assert!(HISTORY
            .create_sql(20_000, &init, false)
            .contains("aid bigint,"));
        assert!(HISTORY
            .create_sql(1, &init, true)
            .ends_with("with (autovacuum_enabled=false)"));
        assert!(BRANCHES
            .create_sql(1, &init, true)
            .ends_with("with (fillfactor=100, autovacuum_enabled=false)"));
        assert!(HISTORY.create_sql(1, &init, false).ends_with("char(22))"));
    }

    #[test]
    fn options_reach_the_statements() {
        let init = InitOptions {
            fillfactor: 90,
            partitions: 3,
            unlogged: true,
            tablespace: Some("t\"s".into()),
            index_tablespace: Some("ix".into()),
            ..InitOptions::default()
        };
        let sql = create_sql(2, &init, false);
        assert_eq!(sql.len(), 7);
        assert_eq!(
            sql[2],
            "create unlogged table pgbench_accounts(aid int not null, bid int, abalance int, \
             filler char(84)) partition by range (aid) tablespace \"t\"\"s\""
        );
        assert!(
            sql[1].contains("with (fillfactor=90) tablespace"),
            "{}",
            sql[1]
        );
        // ceil(200000 / 3) = 66667 aids a part, as pgbench's bounds.
        assert_eq!(
            sql[4],
            "create unlogged table pgbench_accounts_1 partition of pgbench_accounts for values \
             from (minvalue) to (66668) with (fillfactor=90)"
        );
        assert!(sql[5].contains("from (66668) to (133335)"), "{}", sql[5]);
        assert!(sql[6].contains("from (133335) to (maxvalue)"), "{}", sql[6]);
        assert_eq!(
            leaf_tables(&init),
            [
                "pgbench_history",
                "pgbench_tellers",
                "pgbench_branches",
                "pgbench_accounts_1",
                "pgbench_accounts_2",
                "pgbench_accounts_3"
            ]
        );
        assert!(primary_keys_sql(&init)
            .iter()
            .all(|s| s.ends_with("using index tablespace \"ix\"")));
        let hash = InitOptions {
            partitions: 2,
            method: PartitionMethod::Hash,
            ..InitOptions::default()
        };
        assert!(create_sql(1, &hash, false)[5]
            .contains("for values with (modulus 2, remainder 1) with (fillfactor=100)"));
    }

    #[test]
    fn foreign_keys_are_pgbench_five() {
        let sql = foreign_keys_sql();
        assert_eq!(sql.lines().count(), 5);
        assert!(sql.starts_with(
            "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key \
             (bid) references pgbench_branches;"
        ));
    }
}
