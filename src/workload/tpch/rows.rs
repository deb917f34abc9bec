//! TPC-H's scale factor and its eight tables' rows as PostgreSQL COPY text.
//!
//! The scale factor is clause 4.1.3's SF: any positive finite number, fractional ones included
//! (0.01, 0.1, 1, 10, …; the published ones are listed there, smaller ones are for tests).
//! Cardinalities are clause 4.2.5's: SUPPLIER 10,000×SF, PART 200,000×SF, PARTSUPP 800,000×SF,
//! CUSTOMER 150,000×SF, ORDERS 1,500,000×SF, NATION 25, REGION 5, and LINEITEM varying (about
//! 6,000,000×SF) because each order draws 1 to 7 lines (clause 4.2.3). Rows come from the
//! `tpchgen` generators, whose output matches DBGEN's (clause 4.2.1), split into parts the way
//! DBGEN's `-C`/`-S` split them so a loader can run one COPY stream per part.
//!
//! COPY text (PostgreSQL's default format) separates columns by a tab and rows by a newline;
//! a backslash, tab, newline or carriage return inside a value is written as `\\`, `\t`, `\n`,
//! `\r`. DBGEN's text has none of them today, but escaping costs little and keeps a future
//! generator change from corrupting a load.

use std::fmt::{self, Display, Write as _};
use std::io::{self, Write};

use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// A validated TPC-H scale factor (clause 4.1.3): positive and finite.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct ScaleFactor(f64);

/// Why a scale factor was refused; the message names the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScaleError {
    #[error("TPC-H scale factor {0} is not a finite number: give one such as 0.01, 0.1, 1 or 10")]
    NotFinite(f64),
    #[error(
        "TPC-H scale factor {0} is not above zero: give a positive one such as 0.01, 0.1, 1 or 10"
    )]
    NotPositive(f64),
    #[error("TPC-H scale factor {0} gives no supplier row (10,000 × SF < 1): give 0.0001 or more")]
    TooSmall(f64),
}

impl ScaleFactor {
    /// Checks `sf`; a scale so small that SUPPLIER (the smallest scaled table) would be empty
    /// is refused too, since every query would then answer nothing.
    pub fn new(sf: f64) -> Result<Self, ScaleError> {
        if !sf.is_finite() {
            return Err(ScaleError::NotFinite(sf));
        }
        if sf <= 0.0 {
            return Err(ScaleError::NotPositive(sf));
        }
        if scaled(10_000, sf) < 1 {
            return Err(ScaleError::TooSmall(sf));
        }
        Ok(Self(sf))
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl Display for ScaleFactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// DBGEN's row count for a scaled table: base × SF, truncated (as `tpchgen` computes it).
fn scaled(base: u64, sf: f64) -> u64 {
    (base as f64 * sf) as u64
}

/// The eight tables of clause 1.4, in an order that loads parents before children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    Region,
    Nation,
    Part,
    Supplier,
    PartSupp,
    Customer,
    Orders,
    LineItem,
}

impl Table {
    pub const ALL: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Part,
        Table::Supplier,
        Table::PartSupp,
        Table::Customer,
        Table::Orders,
        Table::LineItem,
    ];

    /// The table's name in SQL (clause 1.4.1, lower case as PostgreSQL folds it).
    pub fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Part => "part",
            Table::Supplier => "supplier",
            Table::PartSupp => "partsupp",
            Table::Customer => "customer",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    /// The columns in the order [`write_part`] writes them (clause 1.4.1's order).
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Region => &["r_regionkey", "r_name", "r_comment"],
            Table::Nation => &["n_nationkey", "n_name", "n_regionkey", "n_comment"],
            Table::Part => &[
                "p_partkey",
                "p_name",
                "p_mfgr",
                "p_brand",
                "p_type",
                "p_size",
                "p_container",
                "p_retailprice",
                "p_comment",
            ],
            Table::Supplier => &[
                "s_suppkey",
                "s_name",
                "s_address",
                "s_nationkey",
                "s_phone",
                "s_acctbal",
                "s_comment",
            ],
            Table::PartSupp => &[
                "ps_partkey",
                "ps_suppkey",
                "ps_availqty",
                "ps_supplycost",
                "ps_comment",
            ],
            Table::Customer => &[
                "c_custkey",
                "c_name",
                "c_address",
                "c_nationkey",
                "c_phone",
                "c_acctbal",
                "c_mktsegment",
                "c_comment",
            ],
            Table::Orders => &[
                "o_orderkey",
                "o_custkey",
                "o_orderstatus",
                "o_totalprice",
                "o_orderdate",
                "o_orderpriority",
                "o_clerk",
                "o_shippriority",
                "o_comment",
            ],
            Table::LineItem => &[
                "l_orderkey",
                "l_partkey",
                "l_suppkey",
                "l_linenumber",
                "l_quantity",
                "l_extendedprice",
                "l_discount",
                "l_tax",
                "l_returnflag",
                "l_linestatus",
                "l_shipdate",
                "l_commitdate",
                "l_receiptdate",
                "l_shipinstruct",
                "l_shipmode",
                "l_comment",
            ],
        }
    }

    /// The `COPY … FROM STDIN` statement that takes [`write_part`]'s bytes.
    pub fn copy_statement(self) -> String {
        format!(
            "COPY {} ({}) FROM STDIN",
            self.name(),
            self.columns().join(", ")
        )
    }

    /// Clause 4.2.5's cardinality at `sf`; `None` for LINEITEM, whose count depends on the
    /// lines each order draws (the loader counts what it wrote instead).
    pub fn expected_rows(self, sf: ScaleFactor) -> Option<u64> {
        let sf = sf.get();
        match self {
            Table::Region => Some(5),
            Table::Nation => Some(25),
            Table::Part => Some(scaled(200_000, sf)),
            Table::Supplier => Some(scaled(10_000, sf)),
            // Four suppliers per part (clause 4.2.5), so it follows PART's truncation.
            Table::PartSupp => Some(4 * scaled(200_000, sf)),
            Table::Customer => Some(scaled(150_000, sf)),
            Table::Orders => Some(scaled(1_500_000, sf)),
            Table::LineItem => None,
        }
    }

    /// Whether the table splits into parts; NATION and REGION are fixed and come whole in
    /// part 1 (DBGEN writes them once too).
    pub fn splits(self) -> bool {
        !matches!(self, Table::Region | Table::Nation)
    }
}

/// A part request that cannot be served.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PartError {
    #[error("part {part} of {parts} does not exist: parts are numbered 1 to {parts}")]
    OutOfRange { part: u32, parts: u32 },
    #[error("{parts} parts is more than the generator takes (at most {max})")]
    TooMany { parts: u32, max: u32 },
}

/// Why a part could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Part(#[from] PartError),
    #[error("writing TPC-H rows: {0}")]
    Io(#[from] io::Error),
}

/// Writes part `part` (1-based) of `parts` of `table` at `sf` to `out` as COPY text lines and
/// returns the number of rows written. The parts of a table together hold each row once.
pub fn write_part<W: Write>(
    table: Table,
    sf: ScaleFactor,
    part: u32,
    parts: u32,
    out: &mut W,
) -> Result<u64, WriteError> {
    let max = i32::MAX as u32;
    if parts > max {
        return Err(PartError::TooMany { parts, max }.into());
    }
    if part == 0 || part > parts {
        return Err(PartError::OutOfRange { part, parts }.into());
    }
    if !table.splits() && part != 1 {
        return Ok(0);
    }
    let (s, p, n) = (sf.get(), part as i32, parts as i32);
    let mut line = Line::default();
    let rows = match table {
        Table::Region => emit(RegionGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[&r.r_regionkey, &r.r_name, &r.r_comment])
        }),
        Table::Nation => emit(NationGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[&r.n_nationkey, &r.n_name, &r.n_regionkey, &r.n_comment])
        }),
        Table::Part => emit(PartGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[
                &r.p_partkey,
                &r.p_name,
                &r.p_mfgr,
                &r.p_brand,
                &r.p_type,
                &r.p_size,
                &r.p_container,
                &r.p_retailprice,
                &r.p_comment,
            ])
        }),
        Table::Supplier => emit(SupplierGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[
                &r.s_suppkey,
                &r.s_name,
                &r.s_address,
                &r.s_nationkey,
                &r.s_phone,
                &r.s_acctbal,
                &r.s_comment,
            ])
        }),
        Table::PartSupp => emit(PartSuppGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[
                &r.ps_partkey,
                &r.ps_suppkey,
                &r.ps_availqty,
                &r.ps_supplycost,
                &r.ps_comment,
            ])
        }),
        Table::Customer => emit(CustomerGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[
                &r.c_custkey,
                &r.c_name,
                &r.c_address,
                &r.c_nationkey,
                &r.c_phone,
                &r.c_acctbal,
                &r.c_mktsegment,
                &r.c_comment,
            ])
        }),
        Table::Orders => emit(OrderGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[
                &r.o_orderkey,
                &r.o_custkey,
                &r.o_orderstatus,
                &r.o_totalprice,
                &r.o_orderdate,
                &r.o_orderpriority,
                &r.o_clerk,
                &r.o_shippriority,
                &r.o_comment,
            ])
        }),
        Table::LineItem => emit(LineItemGenerator::new(s, p, n), &mut line, out, |l, r| {
            l.fields(&[
                &r.l_orderkey,
                &r.l_partkey,
                &r.l_suppkey,
                &r.l_linenumber,
                &r.l_quantity,
                &r.l_extendedprice,
                &r.l_discount,
                &r.l_tax,
                &r.l_returnflag,
                &r.l_linestatus,
                &r.l_shipdate,
                &r.l_commitdate,
                &r.l_receiptdate,
                &r.l_shipinstruct,
                &r.l_shipmode,
                &r.l_comment,
            ])
        }),
    }?;
    Ok(rows)
}

/// Writes every row of `rows` through `fill`, one COPY line each.
fn emit<I, W, F>(rows: I, line: &mut Line, out: &mut W, fill: F) -> io::Result<u64>
where
    I: IntoIterator,
    W: Write,
    F: Fn(&mut Line, &I::Item),
{
    let mut count = 0;
    for row in rows {
        fill(line, &row);
        line.finish(out)?;
        count += 1;
    }
    Ok(count)
}

/// One COPY text line under construction, with a scratch buffer reused across values so a
/// row costs no allocation once the buffers have grown.
#[derive(Default)]
struct Line {
    bytes: Vec<u8>,
    scratch: String,
}

impl Line {
    fn fields(&mut self, values: &[&dyn Display]) {
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.bytes.push(b'\t');
            }
            self.scratch.clear();
            // Writing into a String cannot fail; a Display impl that errs writes what it had.
            let _ = write!(self.scratch, "{value}");
            escape_into(&mut self.bytes, &self.scratch);
        }
    }

    fn finish<W: Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.bytes.push(b'\n');
        let result = out.write_all(&self.bytes);
        self.bytes.clear();
        result
    }
}

/// Appends `value` to `out` escaped as COPY's text format requires.
pub fn escape_into(out: &mut Vec<u8>, value: &str) {
    for &b in value.as_bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sf(v: f64) -> ScaleFactor {
        ScaleFactor::new(v).unwrap()
    }

    #[test]
    fn scale_factor_refuses_what_the_spec_cannot_scale() {
        assert!(ScaleFactor::new(0.01).is_ok());
        assert!(ScaleFactor::new(10.0).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 0.00001] {
            let err = ScaleFactor::new(bad).unwrap_err().to_string();
            assert!(err.contains("give"), "{err}");
        }
    }

    #[test]
    fn cardinalities_at_sf_one_are_the_specs() {
        let one = sf(1.0);
        let counts: Vec<_> = Table::ALL.iter().map(|t| t.expected_rows(one)).collect();
        assert_eq!(
            counts,
            [
                Some(5),
                Some(25),
                Some(200_000),
                Some(10_000),
                Some(800_000),
                Some(150_000),
                Some(1_500_000),
                None
            ]
        );
    }

    #[test]
    fn rows_written_at_sf_001_match_the_cardinalities() {
        let small = sf(0.01);
        for table in Table::ALL {
            let mut total = 0;
            for part in 1..=3 {
                let mut buf = Vec::new();
                let rows = write_part(table, small, part, 3, &mut buf).unwrap();
                assert_eq!(buf.iter().filter(|&&b| b == b'\n').count() as u64, rows);
                total += rows;
            }
            match table.expected_rows(small) {
                Some(expected) => assert_eq!(total, expected, "{}", table.name()),
                // About 6,000,000 × SF lines (clause 4.2.5): 60,175 at SF 0.01 from DBGEN.
                None => assert_eq!(total, 60_175, "lineitem"),
            }
        }
    }

    #[test]
    fn lines_are_copy_text_with_one_value_per_column() {
        let mut buf = Vec::new();
        write_part(Table::Nation, sf(1.0), 1, 1, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        let first = text.lines().next().unwrap();
        assert!(first.starts_with("0\tALGERIA\t0\t"), "{first}");
        for line in text.lines() {
            assert_eq!(line.split('\t').count(), Table::Nation.columns().len());
        }
        let mut buf = Vec::new();
        write_part(Table::LineItem, sf(0.01), 1, 4, &mut buf).unwrap();
        let line = String::from_utf8(buf).unwrap();
        let first = line.lines().next().unwrap();
        assert_eq!(first.split('\t').count(), Table::LineItem.columns().len());
    }

    #[test]
    fn fixed_tables_come_whole_in_part_one_only() {
        let mut buf = Vec::new();
        assert_eq!(
            write_part(Table::Region, sf(1.0), 2, 2, &mut buf).unwrap(),
            0
        );
        assert!(buf.is_empty());
        assert!(write_part(Table::Region, sf(1.0), 3, 2, &mut buf).is_err());
        assert!(write_part(Table::Region, sf(1.0), 0, 2, &mut buf).is_err());
    }

    #[test]
    fn escaping_covers_copy_text_specials() {
        let mut out = Vec::new();
        escape_into(&mut out, "a\\b\tc\nd\re");
        assert_eq!(out, b"a\\\\b\\tc\\nd\\re");
    }

    #[test]
    fn copy_statement_lists_the_columns() {
        assert_eq!(
            Table::Region.copy_statement(),
            "COPY region (r_regionkey, r_name, r_comment) FROM STDIN"
        );
    }
}
