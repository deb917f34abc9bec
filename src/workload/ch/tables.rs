//! CH-benCHmark's three added tables and two added columns, and their rows.
//!
//! - REGION: five regions. NATION: 62 nations, one per character an a-string starts with
//!   (clause 4.3.2.2's letters and digits), keyed by that character's ASCII code, so a
//!   customer's nation is the code of C_STATE's first character. SUPPLIER: 10,000 suppliers,
//!   each in a random nation; the supplier of a STOCK row is (S_W_ID × S_I_ID) mod 10,000.
//!   The names and regions are the CH-benCHmark kit's (as BenchBase ships them); comments,
//!   names, addresses, phones and balances are random, as its loader makes them.
//! - The two joins as stored columns (CH's later kit keeps them so, Psaroudakis et al., TPC TC
//!   2014): STOCK's S_SU_SUPPKEY and CUSTOMER's C_N_NATIONKEY, written by TPC-C's loader in
//!   its CH flavor (`tpcc::Flavor::Ch`), equal to the original queries' `mod()` and `ascii()`.

use std::fmt::Write as _;

use rand::{Rng as _, SeedableRng};

use crate::workload::tpcc::random::{push_astring, push_nstring};
use crate::workload::tpcc::CH_SUPPLIERS;
use crate::workload::Rng;

/// Created in the staging schema beside TPC-C's tables, before their rows; below the kit's
/// marker, the keys built after the load.
pub const SCHEMA: &str = "\
ALTER TABLE stock ADD COLUMN s_su_suppkey int;
ALTER TABLE customer ADD COLUMN c_n_nationkey int;
CREATE TABLE region (
    r_regionkey int NOT NULL,
    r_name varchar(55) NOT NULL,
    r_comment varchar(152) NOT NULL
);
CREATE TABLE nation (
    n_nationkey int NOT NULL,
    n_name varchar(25) NOT NULL,
    n_regionkey int NOT NULL,
    n_comment varchar(152) NOT NULL
);
CREATE TABLE supplier (
    su_suppkey int NOT NULL,
    su_name varchar(25) NOT NULL,
    su_address varchar(40) NOT NULL,
    su_nationkey int NOT NULL,
    su_phone varchar(15) NOT NULL,
    su_acctbal numeric(12,2) NOT NULL,
    su_comment varchar(101) NOT NULL
);
-- @indexes
ALTER TABLE region ADD PRIMARY KEY (r_regionkey);
ALTER TABLE nation ADD PRIMARY KEY (n_nationkey);
ALTER TABLE supplier ADD PRIMARY KEY (su_suppkey);
";

/// The tables CH adds, in load order.
pub const TABLES: [&str; 3] = ["region", "nation", "supplier"];

/// The regions, keyed from 1.
pub const REGIONS: [&str; 5] = ["Africa", "America", "Asia", "Australia", "Europe"];

/// The nations in key order (the ASCII codes of `0`-`9`, `A`-`Z`, `a`-`z`), each with its
/// region's key.
pub const NATIONS: [(&str, u8); 62] = [
    ("Australia", 4),
    ("Belgium", 5),
    ("Cameroon", 1),
    ("Denmark", 5),
    ("Ecuador", 2),
    ("France", 5),
    ("Germany", 5),
    ("Hungary", 5),
    ("Italy", 5),
    ("Japan", 3),
    ("Kenya", 1),
    ("Lithuania", 5),
    ("Mexico", 2),
    ("Netherlands", 5),
    ("Oman", 1),
    ("Portugal", 5),
    ("Qatar", 1),
    ("Rwanda", 1),
    ("Serbia", 5),
    ("Togo", 1),
    ("United States", 2),
    ("Vietnam", 3),
    ("Singapore", 3),
    ("Cambodia", 3),
    ("Yemen", 1),
    ("Zimbabwe", 1),
    ("Argentina", 2),
    ("Bolivia", 2),
    ("Canada", 2),
    ("Dominican Republic", 2),
    ("Egypt", 1),
    ("Finland", 5),
    ("Ghana", 1),
    ("Haiti", 2),
    ("India", 3),
    ("Jamaica", 4),
    ("Kazakhstan", 3),
    ("Luxembourg", 5),
    ("Morocco", 1),
    ("Norway", 5),
    ("Poland", 5),
    ("Peru", 2),
    ("Nicaragua", 2),
    ("Romania", 5),
    ("South Africa", 1),
    ("Thailand", 3),
    ("United Kingdom", 5),
    ("Venezuela", 2),
    ("Liechtenstein", 5),
    ("Austria", 5),
    ("Laos", 3),
    ("Zambia", 1),
    ("Switzerland", 5),
    ("China", 3),
    ("Papua New Guinea", 4),
    ("East Timor", 4),
    ("Bulgaria", 5),
    ("Brazil", 2),
    ("Albania", 5),
    ("Andorra", 5),
    ("Belize", 2),
    ("Botswana", 1),
];

/// The characters nations are keyed by, in key order.
const KEY_CHARS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Nation `i`'s key: the ASCII code of the `i`th character.
pub fn nation_key(i: usize) -> u8 {
    KEY_CHARS[i % KEY_CHARS.len()]
}

/// The added tables' rows as COPY text, by table, drawn from `seed`.
pub fn copies(seed: u64) -> Vec<(&'static str, String)> {
    let mut rng = Rng::seed_from_u64(seed);
    let rng = &mut rng;
    let mut region = String::new();
    for (i, name) in REGIONS.iter().enumerate() {
        let _ = write!(region, "{}\t{name}\t", i + 1);
        push_astring(&mut region, rng, 31, 152);
        region.push('\n');
    }
    let mut nation = String::new();
    for (i, (name, region)) in NATIONS.iter().enumerate() {
        let _ = write!(nation, "{}\t{name}\t{region}\t", nation_key(i));
        push_astring(&mut nation, rng, 31, 152);
        nation.push('\n');
    }
    let mut supplier = String::with_capacity(CH_SUPPLIERS as usize * 200);
    for key in 1..=CH_SUPPLIERS {
        let _ = write!(supplier, "{key}\tSupplier#{key:09}\t");
        push_astring(&mut supplier, rng, 20, 40);
        let nation = nation_key(rng.gen_range(0..NATIONS.len()));
        let _ = write!(supplier, "\t{nation}\t");
        push_nstring(&mut supplier, rng, 15, 15);
        let cents = rng.gen_range(-99_999..=999_999i64);
        let sign = if cents < 0 { "-" } else { "" };
        let _ = write!(
            supplier,
            "\t{sign}{}.{:02}\t",
            cents.abs() / 100,
            cents.abs() % 100
        );
        push_astring(&mut supplier, rng, 51, 101);
        supplier.push('\n');
    }
    vec![
        ("region", region),
        ("nation", nation),
        ("supplier", supplier),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_first_character_of_a_state_has_its_nation() {
        let keys: Vec<u8> = (0..NATIONS.len()).map(nation_key).collect();
        assert_eq!(keys[0], b'0');
        assert_eq!(keys[6], 54, "Germany is '6'");
        assert_eq!(keys[23], b'N', "Cambodia");
        assert_eq!(keys[61], b'z');
        let mut sorted = keys.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), 62);
        assert!(NATIONS.iter().all(|(_, r)| (1..=5).contains(r)));
    }

    #[test]
    fn the_copies_have_their_row_counts_and_fields() {
        let copies = copies(7);
        let lines = |t: &str| {
            copies
                .iter()
                .find(|(name, _)| *name == t)
                .map(|(_, text)| text.lines().count())
        };
        assert_eq!(lines("region"), Some(5));
        assert_eq!(lines("nation"), Some(62));
        assert_eq!(lines("supplier"), Some(10_000));
        let supplier = &copies[2].1;
        let first: Vec<&str> = supplier.lines().next().unwrap().split('\t').collect();
        assert_eq!(first.len(), 7);
        assert_eq!(first[1], "Supplier#000000001");
        assert!(first[5].parse::<f64>().is_ok(), "{}", first[5]);
        assert_eq!(copies, super::copies(7), "the same seed, the same rows");
    }
}
