//! TPC-H's schema for PostgreSQL: the eight tables of clause 1.4.1 with the datatypes of
//! clause 1.3.1, their primary keys (clause 1.4.2.2), and, as separate pieces a user opts
//! into, the foreign keys of clause 1.4.2.3 and the indexes a PostgreSQL user adds on the
//! foreign-key columns and the two date columns the queries range over.
//!
//! Clause 1.3.1's types map as: identifier → `integer` (`bigint` for the order keys, which
//! pass 2^31 above SF ~350), integer → `integer`, decimal → `decimal(15,2)`, fixed text of
//! size N → `char(N)`, variable text of size N → `varchar(N)`, date → `date`.
//! Primary keys are separate statements so a loader can add them after COPY (faster, and
//! clause 1.4.2.2 allows keys to be declared either way); [`create_tables`] has none.

use super::rows::Table;

/// `CREATE TABLE` for `table` without keys (clause 1.4.1's columns, in its order).
pub fn create_table(table: Table) -> &'static str {
    match table {
        Table::Region => {
            "CREATE TABLE region (
    r_regionkey integer NOT NULL,
    r_name char(25) NOT NULL,
    r_comment varchar(152) NOT NULL)"
        }
        Table::Nation => {
            "CREATE TABLE nation (
    n_nationkey integer NOT NULL,
    n_name char(25) NOT NULL,
    n_regionkey integer NOT NULL,
    n_comment varchar(152) NOT NULL)"
        }
        Table::Part => {
            "CREATE TABLE part (
    p_partkey integer NOT NULL,
    p_name varchar(55) NOT NULL,
    p_mfgr char(25) NOT NULL,
    p_brand char(10) NOT NULL,
    p_type varchar(25) NOT NULL,
    p_size integer NOT NULL,
    p_container char(10) NOT NULL,
    p_retailprice decimal(15,2) NOT NULL,
    p_comment varchar(23) NOT NULL)"
        }
        Table::Supplier => {
            "CREATE TABLE supplier (
    s_suppkey integer NOT NULL,
    s_name char(25) NOT NULL,
    s_address varchar(40) NOT NULL,
    s_nationkey integer NOT NULL,
    s_phone char(15) NOT NULL,
    s_acctbal decimal(15,2) NOT NULL,
    s_comment varchar(101) NOT NULL)"
        }
        Table::PartSupp => {
            "CREATE TABLE partsupp (
    ps_partkey integer NOT NULL,
    ps_suppkey integer NOT NULL,
    ps_availqty integer NOT NULL,
    ps_supplycost decimal(15,2) NOT NULL,
    ps_comment varchar(199) NOT NULL)"
        }
        Table::Customer => {
            "CREATE TABLE customer (
    c_custkey integer NOT NULL,
    c_name varchar(25) NOT NULL,
    c_address varchar(40) NOT NULL,
    c_nationkey integer NOT NULL,
    c_phone char(15) NOT NULL,
    c_acctbal decimal(15,2) NOT NULL,
    c_mktsegment char(10) NOT NULL,
    c_comment varchar(117) NOT NULL)"
        }
        Table::Orders => {
            "CREATE TABLE orders (
    o_orderkey bigint NOT NULL,
    o_custkey integer NOT NULL,
    o_orderstatus char(1) NOT NULL,
    o_totalprice decimal(15,2) NOT NULL,
    o_orderdate date NOT NULL,
    o_orderpriority char(15) NOT NULL,
    o_clerk char(15) NOT NULL,
    o_shippriority integer NOT NULL,
    o_comment varchar(79) NOT NULL)"
        }
        Table::LineItem => {
            "CREATE TABLE lineitem (
    l_orderkey bigint NOT NULL,
    l_partkey integer NOT NULL,
    l_suppkey integer NOT NULL,
    l_linenumber integer NOT NULL,
    l_quantity decimal(15,2) NOT NULL,
    l_extendedprice decimal(15,2) NOT NULL,
    l_discount decimal(15,2) NOT NULL,
    l_tax decimal(15,2) NOT NULL,
    l_returnflag char(1) NOT NULL,
    l_linestatus char(1) NOT NULL,
    l_shipdate date NOT NULL,
    l_commitdate date NOT NULL,
    l_receiptdate date NOT NULL,
    l_shipinstruct char(25) NOT NULL,
    l_shipmode char(10) NOT NULL,
    l_comment varchar(44) NOT NULL)"
        }
    }
}

/// Every table's `CREATE TABLE`, parents first.
pub fn create_tables() -> Vec<&'static str> {
    Table::ALL.iter().map(|&t| create_table(t)).collect()
}

/// Drops every table the schema creates (children first, so it also works with foreign keys).
pub const DROP_TABLES: &str =
    "DROP TABLE IF EXISTS lineitem, orders, customer, partsupp, supplier, part, nation, region";

/// Clause 1.4.2.2's primary keys, one statement per table in [`Table::ALL`]'s order.
pub const PRIMARY_KEYS: [&str; 8] = [
    "ALTER TABLE region ADD PRIMARY KEY (r_regionkey)",
    "ALTER TABLE nation ADD PRIMARY KEY (n_nationkey)",
    "ALTER TABLE part ADD PRIMARY KEY (p_partkey)",
    "ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)",
    "ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)",
    "ALTER TABLE customer ADD PRIMARY KEY (c_custkey)",
    "ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)",
    "ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)",
];

/// Clause 1.4.2.3's foreign keys (optional in the spec, off by default here); they need the
/// primary keys first.
pub const FOREIGN_KEYS: [&str; 10] = [
    "ALTER TABLE nation ADD FOREIGN KEY (n_regionkey) REFERENCES region",
    "ALTER TABLE supplier ADD FOREIGN KEY (s_nationkey) REFERENCES nation",
    "ALTER TABLE customer ADD FOREIGN KEY (c_nationkey) REFERENCES nation",
    "ALTER TABLE partsupp ADD FOREIGN KEY (ps_partkey) REFERENCES part",
    "ALTER TABLE partsupp ADD FOREIGN KEY (ps_suppkey) REFERENCES supplier",
    "ALTER TABLE orders ADD FOREIGN KEY (o_custkey) REFERENCES customer",
    "ALTER TABLE lineitem ADD FOREIGN KEY (l_orderkey) REFERENCES orders",
    "ALTER TABLE lineitem ADD FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp",
    "ALTER TABLE lineitem ADD FOREIGN KEY (l_partkey) REFERENCES part",
    "ALTER TABLE lineitem ADD FOREIGN KEY (l_suppkey) REFERENCES supplier",
];

/// The secondary indexes a PostgreSQL user adds (clause 1.5 allows indexes on key columns and
/// single date columns): PostgreSQL indexes no referencing column by itself, and most queries
/// range over `l_shipdate` or `o_orderdate`. Off by default, like [`FOREIGN_KEYS`].
pub const INDEXES: [&str; 11] = [
    "CREATE INDEX ON nation (n_regionkey)",
    "CREATE INDEX ON supplier (s_nationkey)",
    "CREATE INDEX ON customer (c_nationkey)",
    "CREATE INDEX ON partsupp (ps_suppkey)",
    "CREATE INDEX ON orders (o_custkey)",
    "CREATE INDEX ON orders (o_orderdate)",
    "CREATE INDEX ON lineitem (l_orderkey)",
    "CREATE INDEX ON lineitem (l_partkey, l_suppkey)",
    "CREATE INDEX ON lineitem (l_suppkey)",
    "CREATE INDEX ON lineitem (l_shipdate)",
    "CREATE INDEX ON lineitem (l_partkey)",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_lists_the_columns_rows_writes() {
        for table in Table::ALL {
            let ddl = create_table(table);
            assert!(ddl.starts_with(&format!("CREATE TABLE {} (", table.name())));
            let declared: Vec<&str> = ddl
                .lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next())
                .collect();
            assert_eq!(declared, table.columns(), "{}", table.name());
        }
    }

    #[test]
    fn keys_follow_the_table_order() {
        for (table, pk) in Table::ALL.iter().zip(PRIMARY_KEYS) {
            assert!(
                pk.starts_with(&format!("ALTER TABLE {} ", table.name())),
                "{pk}"
            );
        }
        assert!(create_tables()
            .iter()
            .all(|ddl| !ddl.contains("PRIMARY KEY")));
    }
}
