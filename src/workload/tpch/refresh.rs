//! TPC-H's update data and its two refresh functions (clause 2.5): RF1 (new sales) inserts
//! SF × 1,500 new orders with their 1 to 7 lineitems, RF2 (old sales) deletes as many orders
//! and their lineitems. `tpchgen` makes the base tables only, so the update sets are made
//! here, from the specification's rules for the two tables' columns (clause 4.2.3), with the
//! crate's own text pool, lists and dates, and this run's seed for every draw.
//!
//! Keys (clause 4.2.3's sparse ORDERS keys): the base data uses the first 8 keys of every 32,
//! an order's index `i` giving key `(i / 8) × 32 + i mod 8`. The other 24 keys of each 32 are
//! three gaps of 8 (`+8`, `+16`, `+24`), which the update sets fill in order, so no new key
//! can meet an old one: insert set `k` takes the next `n` indexes of gap 1, then of gap 2 once
//! gap 1 is full, then gap 3. Delete set `k` takes the base orders in index order (`n` a
//! set, as DBGEN's delete files do); once those are gone it deletes what insert set
//! `k − sets_per_gap` put in gap 1, and so on. After pair `k` the tables hold as many orders as
//! they were loaded with, and a database takes `3 × sets_per_gap` pairs (3,000 when SF × 1,500
//! is whole) before it must be reloaded (`prepare --force`).
//!
//! Each refresh function is one transaction (one simple-protocol message), and it keeps the
//! pairs applied in `tpch_refresh`, so the next run continues with the next pair.

use std::fmt::Write as _;

use rand::{Rng as _, SeedableRng};
use tpchgen::dates::{TPCHDate, MIN_GENERATE_DATE, TOTAL_DATE_RANGE};
use tpchgen::distribution::{Distribution, Distributions};
use tpchgen::generators::{
    ClerkName, LineItemGenerator, OrderGenerator, PartGeneratorIterator, PartSuppGeneratorIterator,
};
use tpchgen::text::TextPool;

use super::rows::ScaleFactor;
use crate::workload::Rng;

/// The table that keeps how many refresh pairs a database has taken.
pub const STATE_TABLE: &str = "tpch_refresh";

/// `tpch_refresh`, created by `prepare` with one row.
pub const CREATE_STATE: &str = "CREATE TABLE tpch_refresh (inserted integer NOT NULL, \
     deleted integer NOT NULL);\nINSERT INTO tpch_refresh VALUES (0, 0);";

/// The gaps of 8 unused keys in every 32 that new orders fill (clause 4.2.3's sparse keys).
const GAPS: i64 = 3;

/// Why a refresh set cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefreshError {
    #[error(
        "refresh pair {pair} is past the {max} this database's key space holds; reload it with \
         `tidebench prepare --workload tpch --force`"
    )]
    KeysSpent { pair: u32, max: u32 },
    #[error("refresh pairs count from 1, got 0")]
    Zero,
}

/// One new order with its lineitems, as SQL value lists.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    pub key: i64,
    /// `(o_orderkey, …, o_comment)` in clause 1.4.1's column order.
    pub order: String,
    /// `(l_orderkey, …, l_comment)` per line.
    pub lines: Vec<String>,
}

/// The update sets of a database of scale factor `sf`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UpdateSets {
    sf: ScaleFactor,
    /// Orders per set: SF × 1,500 (a thousandth of ORDERS), at least 1.
    per_set: i64,
    /// Sets whose keys fill one gap (ORDERS' rows over `per_set`).
    sets_per_gap: i64,
}

/// `key` for order index `index` (from 1) in gap `gap` (0: the base data's keys).
fn sparse_key(index: i64, gap: i64) -> i64 {
    ((((index >> 3) << 2) + gap) << 3) | (index & 7)
}

impl UpdateSets {
    pub fn new(sf: ScaleFactor) -> UpdateSets {
        let orders = OrderGenerator::calculate_row_count(sf.get(), 1, 1).max(1);
        let per_set = (orders / 1000).max(1);
        UpdateSets {
            sf,
            per_set,
            sets_per_gap: orders / per_set,
        }
    }

    /// Orders each refresh function inserts or deletes.
    pub fn per_set(&self) -> i64 {
        self.per_set
    }

    /// The refresh pairs a freshly loaded database takes.
    pub fn max_pairs(&self) -> u32 {
        u32::try_from(GAPS * self.sets_per_gap).unwrap_or(u32::MAX)
    }

    /// The keys of set `pair` in gap `gap_base + slot / sets_per_gap`.
    fn keys(&self, pair: u32, gap_base: i64) -> Result<Vec<i64>, RefreshError> {
        if pair == 0 {
            return Err(RefreshError::Zero);
        }
        if pair > self.max_pairs() {
            return Err(RefreshError::KeysSpent {
                pair,
                max: self.max_pairs(),
            });
        }
        let slot = i64::from(pair) - 1;
        let gap = gap_base + slot / self.sets_per_gap;
        let first = (slot % self.sets_per_gap) * self.per_set;
        Ok((first + 1..=first + self.per_set)
            .map(|i| sparse_key(i, gap))
            .collect())
    }

    /// The keys RF1 of pair `pair` inserts.
    pub fn insert_keys(&self, pair: u32) -> Result<Vec<i64>, RefreshError> {
        self.keys(pair, 1)
    }

    /// The keys RF2 of pair `pair` deletes.
    pub fn delete_keys(&self, pair: u32) -> Result<Vec<i64>, RefreshError> {
        self.keys(pair, 0)
    }

    /// The new orders of pair `pair`, drawn from `seed` (the same seed and pair give the same
    /// rows).
    pub fn new_sales(&self, pair: u32, seed: u64) -> Result<Vec<NewOrder>, RefreshError> {
        let keys = self.insert_keys(pair)?;
        let mut rng = Rng::seed_from_u64(crate::prng::splitmix(seed, u64::from(pair)));
        let draw = Draw::new(self.sf);
        Ok(keys
            .into_iter()
            .map(|key| draw.order(key, &mut rng))
            .collect())
    }
}

/// What a new row's columns are drawn from (clause 4.2.3).
struct Draw {
    sf: f64,
    customers: i64,
    parts: i64,
    clerks: i64,
    dists: &'static Distributions,
    pool: &'static TextPool,
}

/// Clause 4.2.3's dates: orders from STARTDATE to ENDDATE − 151 days, so each line's latest
/// receipt (121 days to ship, 30 to arrive) stays in the data's range.
const ORDER_DATE_MIN: i32 = MIN_GENERATE_DATE;
const ORDER_DATE_MAX: i32 =
    MIN_GENERATE_DATE + TOTAL_DATE_RANGE - LineItemGenerator::ITEM_SHIP_DAYS - 1;

impl Draw {
    fn new(sf: ScaleFactor) -> Draw {
        let sf = sf.get();
        Draw {
            sf,
            customers: ((150_000.0 * sf) as i64).max(1),
            parts: ((200_000.0 * sf) as i64).max(1),
            // DBGEN's clerks: SF × 1,000, at least 1,000.
            clerks: ((1_000.0 * sf) as i64).max(1_000),
            dists: Distributions::static_default(),
            pool: TextPool::get_or_init_default(),
        }
    }

    /// A text of clause 4.2.2.10's grammar, `avg` × 0.4 to 1.6 characters long, cut from
    /// the pool of such text.
    fn text(&self, avg: f64, rng: &mut Rng) -> String {
        let (min, max) = ((avg * 0.4) as i32, (avg * 1.6) as i32);
        let len = rng.gen_range(min..=max);
        let at = rng.gen_range(0..=self.pool.size() - max);
        quoted(self.pool.text(at, at + len))
    }

    fn pick(list: &Distribution, rng: &mut Rng) -> String {
        let values = list.get_values();
        quoted(values[rng.gen_range(0..values.len())])
    }

    /// One order and its lines; its status and total come from its lines (clause 4.2.3).
    fn order(&self, key: i64, rng: &mut Rng) -> NewOrder {
        let date = rng.gen_range(ORDER_DATE_MIN..=ORDER_DATE_MAX);
        // A third of the customers place no orders: keys divisible by 3 are skipped.
        let mut cust = rng.gen_range(1..=self.customers);
        if cust % 3 == 0 {
            cust = if cust > 1 { cust - 1 } else { cust + 1 };
        }
        let count = rng.gen_range(1..=7);
        let mut total = 0i64;
        let mut shipped = 0;
        let lines: Vec<String> = (1..=count)
            .map(|number| {
                let (line, cents, ship) = self.line(key, number, date, rng);
                total += cents;
                shipped += i32::from(TPCHDate::is_in_past(ship));
                line
            })
            .collect();
        let status = match shipped {
            s if s == count => "F",
            0 => "O",
            _ => "P",
        };
        let order = format!(
            "({key},{cust},'{status}',{},'{}',{},'{}',0,{})",
            money(total),
            TPCHDate::new(date),
            Self::pick(self.dists.order_priority(), rng),
            ClerkName::new(rng.gen_range(1..=self.clerks) as i32),
            self.text(49.0, rng)
        );
        NewOrder { key, order, lines }
    }

    /// Line `number` of order `key` placed on `date`: its values, its charge in cents
    /// (extended price less discount plus tax) and its ship date.
    fn line(&self, key: i64, number: i32, date: i32, rng: &mut Rng) -> (String, i64, i32) {
        let part = rng.gen_range(1..=self.parts);
        let supp =
            PartSuppGeneratorIterator::select_part_supplier(part, rng.gen_range(0..4), self.sf);
        let quantity: i64 = rng.gen_range(1..=50);
        let extended = quantity * PartGeneratorIterator::calculate_part_price(part);
        let discount: i64 = rng.gen_range(0..=10);
        let tax: i64 = rng.gen_range(0..=8);
        let ship = date + rng.gen_range(1..=121);
        let commit = date + rng.gen_range(30..=90);
        let receipt = ship + rng.gen_range(1..=30);
        let flag = if TPCHDate::is_in_past(receipt) {
            if rng.gen_bool(0.5) {
                "R"
            } else {
                "A"
            }
        } else {
            "N"
        };
        let status = if TPCHDate::is_in_past(ship) { "F" } else { "O" };
        let charge = extended * (100 - discount) / 100 * (100 + tax) / 100;
        let line = format!(
            "({key},{part},{supp},{number},{quantity},{},0.{discount:02},0.{tax:02},'{flag}',\
             '{status}','{}','{}','{}',{},{},{})",
            money(extended),
            TPCHDate::new(ship),
            TPCHDate::new(commit),
            TPCHDate::new(receipt),
            Self::pick(self.dists.ship_instructions(), rng),
            Self::pick(self.dists.ship_modes(), rng),
            self.text(27.0, rng)
        );
        (line, charge, ship)
    }
}

/// `cents` as a decimal with two places.
fn money(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A SQL string literal.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// RF1 of pair `pair` as one message: the orders, their lines, and the pair recorded.
pub fn rf1_sql(orders: &[NewOrder], pair: u32) -> String {
    let mut sql = String::from("INSERT INTO orders VALUES ");
    let list: Vec<&str> = orders.iter().map(|o| o.order.as_str()).collect();
    sql.push_str(&list.join(",\n"));
    sql.push_str(";\nINSERT INTO lineitem VALUES ");
    let lines: Vec<&str> = orders
        .iter()
        .flat_map(|o| o.lines.iter().map(String::as_str))
        .collect();
    sql.push_str(&lines.join(",\n"));
    let _ = write!(sql, ";\nUPDATE {STATE_TABLE} SET inserted = {pair}");
    sql
}

/// RF2 of pair `pair` as one message: the lines, then the orders (so foreign keys hold), and
/// the pair recorded. If the orders deleted are not the whole set (the database is not where
/// `tpch_refresh` says), a cast of the explanation fails and the server rolls it all back.
pub fn rf2_sql(keys: &[i64], pair: u32) -> String {
    let list: Vec<String> = keys.iter().map(i64::to_string).collect();
    let list = list.join(",");
    let n = keys.len();
    format!(
        "DELETE FROM lineitem WHERE l_orderkey IN ({list});\n\
         UPDATE {STATE_TABLE} SET deleted = {pair};\n\
         WITH gone AS (DELETE FROM orders WHERE o_orderkey IN ({list}) RETURNING 1) \
         SELECT CASE WHEN count(*) = {n} THEN count(*) ELSE ('RF2 of pair {pair} deleted ' || \
         count(*) || ' orders, not its set''s {n}: reload with tidebench prepare --force')::bigint \
         END FROM gone"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(sf: f64) -> UpdateSets {
        UpdateSets::new(ScaleFactor::new(sf).unwrap())
    }

    #[test]
    fn keys_follow_the_sparse_rule_and_never_meet() {
        // The base data's keys are tpchgen's own.
        for i in [1, 7, 8, 9, 1000, 14_999] {
            assert_eq!(sparse_key(i, 0), OrderGenerator::make_order_key(i));
        }
        let s = sets(0.01);
        assert_eq!((s.per_set(), s.max_pairs()), (15, 3000));
        // Pair 1 deletes the first 15 base orders: keys 1..7, 32..39.
        let d = s.delete_keys(1).unwrap();
        assert_eq!(&d[..9], &[1, 2, 3, 4, 5, 6, 7, 32, 33]);
        assert_eq!(s.insert_keys(1).unwrap()[..2], [9, 10]);
        let base: std::collections::HashSet<i64> = (1..=15_000).map(|i| sparse_key(i, 0)).collect();
        let mut inserted = std::collections::HashSet::new();
        for pair in 1..=s.max_pairs() {
            for k in s.insert_keys(pair).unwrap() {
                assert!(
                    !base.contains(&k) && inserted.insert(k),
                    "pair {pair} key {k}"
                );
            }
        }
        // Pair 1001 deletes what pair 1 inserted; past the last pair, a clear refusal.
        assert_eq!(s.delete_keys(1001).unwrap(), s.insert_keys(1).unwrap());
        assert!(matches!(
            s.insert_keys(3001),
            Err(RefreshError::KeysSpent { max: 3000, .. })
        ));
        assert_eq!(s.delete_keys(0), Err(RefreshError::Zero));
    }

    #[test]
    fn new_sales_are_seeded_and_in_range() {
        let s = sets(0.01);
        let a = s.new_sales(3, 7).unwrap();
        assert_eq!(a, s.new_sales(3, 7).unwrap());
        assert_ne!(a, s.new_sales(3, 8).unwrap());
        assert_eq!(a.len(), 15);
        for o in &a {
            assert!((1..=7).contains(&o.lines.len()));
            assert!(o.order.starts_with(&format!("({},", o.key)));
            let cust: i64 = o.order.split(',').nth(1).unwrap().parse().unwrap();
            assert!(cust % 3 != 0 && (1..=1500).contains(&cust));
        }
        let sql = rf1_sql(&a, 3);
        assert!(sql.ends_with("UPDATE tpch_refresh SET inserted = 3"));
        assert!(rf2_sql(&[1, 2], 3).contains("o_orderkey IN (1,2)"));
    }
}
