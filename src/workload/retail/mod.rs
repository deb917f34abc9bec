//! The `retail` workload: the analytic side of the Greenplum study. A five-year
//! retail fact table, `order_lineitems`, range-partitioned monthly and then weekly, with its
//! small dimensions; `prepare` streams it in with parallel COPY straight into the partitions
//! (gpfdist's role); a run draws the study's two reports, FullScanSQL (`full_scan`) and
//! PartialScanSQL (`partial_scan`), on the set's `dss` target and records each one's response
//! time; the `load` test case copies more line items in as a run's transaction (the Greenplum study's
//! "Data Loading"). Files: `gen` (the rows, pure functions of seed and id), `loader`
//! (`prepare`), `segments` (MPP over segment instances), `plugin` (the registered workload and
//! `check`), `cases` (the test cases a client runs).

mod cases;
mod error;
mod gen;
mod loader;
mod plugin;
mod segments;

pub use error::{RetailError, SegmentsOver};
pub use plugin::RETAIL;

/// Line items per unit of `--scale` (about 12 MB of the fact table).
pub const ROWS_PER_SCALE: u64 = 100_000;
/// The generator's seed: one data set for every load, so any two loads of a scale are equal.
pub const DATA_SEED: u64 = 2_010;

/// The tables, the fact table's partitions made by `loader`.
const SCHEMA: &str = "\
CREATE TABLE product_categories (product_category_id int PRIMARY KEY, \
  product_category_name text NOT NULL);
CREATE TABLE products (product_id int PRIMARY KEY, product_name text NOT NULL, \
  product_category_id int NOT NULL, price numeric(10,2) NOT NULL);
CREATE TABLE customers (customer_id bigint PRIMARY KEY, customer_name text NOT NULL);
CREATE TABLE order_lineitems (lineitem_id bigint NOT NULL, order_id bigint NOT NULL, \
  customer_id bigint NOT NULL, product_id int NOT NULL, product_category_id int NOT NULL, \
  product_category_name text NOT NULL, order_datetime timestamp NOT NULL, \
  item_quantity int NOT NULL, item_price numeric(10,2) NOT NULL, \
  item_amount numeric(12,2) NOT NULL) PARTITION BY RANGE (order_datetime);
";

/// The segment instances a load spreads the fact table over (`--segments`; 0: none).
pub fn segments_of(options: &crate::config::OptionValues) -> u64 {
    options
        .get(SEGMENTS)
        .and_then(|v| v.as_integer())
        .map_or(0, |n| n.max(0) as u64)
}

/// The option `--segments`.
pub(crate) const SEGMENTS: &str = "segments";
/// The fact table's size in bytes of COPY text (`--size 10GB`), instead of `--scale`.
const SIZE: &str = "size";
/// Each segment's cores and memory (`--segment-cpus`, `--segment-memory`).
const SEGMENT_CPUS: &str = "segment_cpus";
const SEGMENT_MEMORY: &str = "segment_memory";
/// Segments as real VMs (`--segment-hypervisor qemu`, issue 40).
const SEGMENT_HYPERVISOR: &str = "segment_hypervisor";
/// The test cases the clients draw (`--cases`).
const CASES: &str = "cases";
/// What one `load` test case copies (`--load-size`).
const LOAD_SIZE: &str = "load_size";

/// A size option's bytes, when given (checked as a size before any workload reads it).
fn bytes_of(options: &crate::config::OptionValues, key: &str) -> Option<u64> {
    options
        .get(key)
        .and_then(|v| v.as_str())
        .and_then(|s| crate::config::size::parse_size(s).ok())
}

/// The line items of a load of `scale` with `options`: `--size` worth of COPY text when
/// given, else `--scale` units of [`ROWS_PER_SCALE`].
pub fn rows_of(scale: u32, options: &crate::config::OptionValues) -> u64 {
    match bytes_of(options, SIZE) {
        Some(bytes) => gen::rows_for_bytes(bytes, DATA_SEED),
        None => u64::from(scale.max(1)) * ROWS_PER_SCALE,
    }
}

/// Written last by `prepare`: a load without it is incomplete.
const META: &str = "retail_meta";

const TABLES: [&str; 5] = [
    "order_lineitems",
    "customers",
    "products",
    "product_categories",
    META,
];

/// FullScanSQL as the Greenplum study gives it (its schema qualifier left out): each customer's first
/// and last order per product category, over the whole fact table. One change: the seed's
/// `ROW_NUMBER() ... ORDER BY NULL` keeps an arbitrary row of each group, and LAST_VALUE (its
/// frame ends at that row) then reads that row's order, so the result depends on the plan and
/// differs between one instance and segments. Ordered by time, newest first, the row kept is
/// the last order, as the report's name says, and every plan returns the same rows.
pub const FULL_SCAN: &str = "\
SELECT customer_id, product_category_name, first_order_datetime, first_order_id, \
       last_order_datetime, last_order_id
FROM (
  SELECT customer_id, product_category_name,
    FIRST_VALUE(order_datetime) OVER (PARTITION BY customer_id, product_category_id \
      ORDER BY order_datetime ASC) AS first_order_datetime,
    FIRST_VALUE(order_id) OVER (PARTITION BY customer_id, product_category_id \
      ORDER BY order_datetime ASC) AS first_order_id,
    LAST_VALUE(order_datetime) OVER (PARTITION BY customer_id, product_category_id \
      ORDER BY order_datetime ASC) AS last_order_datetime,
    LAST_VALUE(order_id) OVER (PARTITION BY customer_id, product_category_id \
      ORDER BY order_datetime ASC) AS last_order_id,
    ROW_NUMBER() OVER (PARTITION BY customer_id, product_category_id \
      ORDER BY order_datetime DESC, lineitem_id DESC) AS rn
  FROM order_lineitems
  WHERE product_id IN (20, 25, 29, 50, 38)
) base
WHERE base.rn = 1";

/// PartialScanSQL as the Greenplum study gives it: the average items bought per customer and month of
/// the year 2010, whose partitions alone are read.
pub const PARTIAL_SCAN: &str = "\
SELECT ROUND(AVG(item_count), 2) AS average_item_count
FROM (SELECT customer_id, TO_CHAR(order_datetime, 'YYYY/MM') AS order_month,
             SUM(item_quantity) AS item_count
      FROM order_lineitems
      WHERE order_datetime BETWEEN TIMESTAMP '2010-01-01' AND DATE '2010-12-31'
      GROUP BY customer_id, TO_CHAR(order_datetime, 'YYYY/MM')
      ORDER BY TO_CHAR(order_datetime, 'YYYY/MM')) lineitems";
