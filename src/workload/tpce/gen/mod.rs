//! The rows of a `tpce` load, as COPY text, by unit of load work. Every row is a pure function
//! of (seed, scale, entity id), so any loader session reproduces any unit and the tables come
//! out byte-identical whatever `--jobs` is (tpce.md §6).
//!
//! - [`Unit`]: the pieces of work a loader session takes: the fixed tables once, then per load
//!   unit its market rows (companies, securities, prices, news), its customer rows and its
//!   simulated trade history.
//! - [`Batch`] and [`Row`]: the text COPY format (tab-separated, `\N` for NULL), one buffer per
//!   table, so a generator writes rows of several tables in one pass.
//! - [`ids`]: how entity ids are laid out per load unit, [`clock`]: market time and dates,
//!   [`catalog`]: the fixed reference values the generator and the transactions share.

pub mod catalog;
pub mod clock;
pub mod customers;
pub mod customers_profile;
pub mod fixed;
pub mod ids;
pub mod market;
pub mod market_company;
pub mod market_financial;
pub mod market_news;
pub mod market_security;
pub mod trades;

use std::fmt::Write as _;

use super::scale::Scale;
use clock::{Day, MarketMs};

/// The 33 tables, in `schema.sql`'s order; [`Table::name`] is the SQL name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    AccountPermission,
    Customer,
    CustomerAccount,
    CustomerTaxrate,
    Holding,
    HoldingHistory,
    HoldingSummary,
    WatchItem,
    WatchList,
    Broker,
    CashTransaction,
    Charge,
    CommissionRate,
    Settlement,
    Trade,
    TradeHistory,
    TradeRequest,
    TradeType,
    Company,
    CompanyCompetitor,
    DailyMarket,
    Exchange,
    Financial,
    Industry,
    LastTrade,
    NewsItem,
    NewsXref,
    Sector,
    Security,
    Address,
    StatusType,
    Taxrate,
    ZipCode,
}

impl Table {
    pub const ALL: [Table; 33] = [
        Table::AccountPermission,
        Table::Customer,
        Table::CustomerAccount,
        Table::CustomerTaxrate,
        Table::Holding,
        Table::HoldingHistory,
        Table::HoldingSummary,
        Table::WatchItem,
        Table::WatchList,
        Table::Broker,
        Table::CashTransaction,
        Table::Charge,
        Table::CommissionRate,
        Table::Settlement,
        Table::Trade,
        Table::TradeHistory,
        Table::TradeRequest,
        Table::TradeType,
        Table::Company,
        Table::CompanyCompetitor,
        Table::DailyMarket,
        Table::Exchange,
        Table::Financial,
        Table::Industry,
        Table::LastTrade,
        Table::NewsItem,
        Table::NewsXref,
        Table::Sector,
        Table::Security,
        Table::Address,
        Table::StatusType,
        Table::Taxrate,
        Table::ZipCode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::AccountPermission => "account_permission",
            Table::Customer => "customer",
            Table::CustomerAccount => "customer_account",
            Table::CustomerTaxrate => "customer_taxrate",
            Table::Holding => "holding",
            Table::HoldingHistory => "holding_history",
            Table::HoldingSummary => "holding_summary",
            Table::WatchItem => "watch_item",
            Table::WatchList => "watch_list",
            Table::Broker => "broker",
            Table::CashTransaction => "cash_transaction",
            Table::Charge => "charge",
            Table::CommissionRate => "commission_rate",
            Table::Settlement => "settlement",
            Table::Trade => "trade",
            Table::TradeHistory => "trade_history",
            Table::TradeRequest => "trade_request",
            Table::TradeType => "trade_type",
            Table::Company => "company",
            Table::CompanyCompetitor => "company_competitor",
            Table::DailyMarket => "daily_market",
            Table::Exchange => "exchange",
            Table::Financial => "financial",
            Table::Industry => "industry",
            Table::LastTrade => "last_trade",
            Table::NewsItem => "news_item",
            Table::NewsXref => "news_xref",
            Table::Sector => "sector",
            Table::Security => "security",
            Table::Address => "address",
            Table::StatusType => "status_type",
            Table::Taxrate => "taxrate",
            Table::ZipCode => "zip_code",
        }
    }
}

/// The number of columns of `table` in `schema.sql`: tests compare every generated row with it.
pub fn columns(table: Table) -> usize {
    let schema = include_str!("../schema.sql");
    let create = format!("CREATE TABLE {} (", table.name());
    let body = schema
        .split_once(&create)
        .and_then(|(_, rest)| rest.split_once("\n);"))
        .map_or("", |(body, _)| body);
    body.lines().filter(|l| !l.trim().is_empty()).count()
}

/// Asserts that every row of `batch` has the column count of its table (for tests).
pub fn assert_rows_fit_schema(batch: &Batch) {
    for (table, text) in &batch.tables {
        let want = columns(*table);
        for line in text.lines() {
            let got = line.split('\t').count();
            assert_eq!(got, want, "{}: {line}", table.name());
        }
    }
}

/// A piece of load work: a loader session takes one, generates its batches and COPYs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The nine fixed tables and the exchanges' rows (whose symbol counts depend on the scale).
    Fixed,
    /// Load unit `lu`'s (from 0) companies, competitors, securities, daily market, financials,
    /// news, last trades and company addresses.
    Market(u64),
    /// Load unit `lu`'s customers, their addresses, accounts, permissions, tax rates and watch
    /// lists.
    Customers(u64),
    /// Load unit `lu`'s simulated trade history: trades, their history, settlements, cash
    /// transactions, holdings and their history and summaries, and the unit's brokers with
    /// counts that match the trades.
    Trades(u64),
}

impl Unit {
    /// Every unit of a load, fixed tables first.
    pub fn all(scale: &Scale) -> Vec<Unit> {
        let mut out = vec![Unit::Fixed];
        for lu in 0..scale.load_units() {
            out.extend([Unit::Market(lu), Unit::Customers(lu), Unit::Trades(lu)]);
        }
        out
    }

    /// The unit's rows, in batches of bounded size (a few MB of text) so a loader never holds
    /// a whole load unit's trade history in memory.
    pub fn batches(self, seed: u64, scale: &Scale) -> Box<dyn Iterator<Item = Batch> + Send> {
        match self {
            Unit::Fixed => fixed::batches(seed, scale),
            Unit::Market(lu) => market::batches(seed, scale, lu),
            Unit::Customers(lu) => customers::batches(seed, scale, lu),
            Unit::Trades(lu) => trades::batches(seed, scale, lu),
        }
    }
}

/// Rows of several tables as COPY text, one buffer per table.
#[derive(Debug, Default)]
pub struct Batch {
    tables: Vec<(Table, String)>,
    rows: u64,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Starts a row of `table`; its fields follow in column order and [`Row::end`] closes it.
    pub fn row(&mut self, table: Table) -> Row<'_> {
        self.rows += 1;
        let at = match self.tables.iter().position(|(t, _)| *t == table) {
            Some(at) => at,
            None => {
                self.tables.push((table, String::with_capacity(64 * 1024)));
                self.tables.len() - 1
            }
        };
        Row {
            buf: &mut self.tables[at].1,
            first: true,
        }
    }

    /// Rows written so far, over all tables.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes of text held.
    pub fn bytes(&self) -> usize {
        self.tables.iter().map(|(_, s)| s.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The tables' COPY texts, in the order they were first written.
    pub fn into_tables(self) -> Vec<(Table, String)> {
        self.tables
    }

    /// The COPY text of `table` (empty when no row was written).
    pub fn text(&self, table: Table) -> &str {
        self.tables
            .iter()
            .find(|(t, _)| *t == table)
            .map_or("", |(_, s)| s.as_str())
    }
}

/// Batches are cut at about this many bytes of text.
pub const BATCH_BYTES: usize = 4 << 20;

/// One row being written: each call appends a field.
pub struct Row<'a> {
    buf: &'a mut String,
    first: bool,
}

impl Row<'_> {
    fn sep(&mut self) {
        if !self.first {
            self.buf.push('\t');
        }
        self.first = false;
    }

    pub fn int(mut self, v: i64) -> Self {
        self.sep();
        let _ = write!(self.buf, "{v}");
        self
    }

    /// Text, escaped for COPY (backslash, tab, newline, carriage return).
    pub fn text(mut self, v: &str) -> Self {
        self.sep();
        for ch in v.chars() {
            match ch {
                '\\' => self.buf.push_str("\\\\"),
                '\t' => self.buf.push_str("\\t"),
                '\n' => self.buf.push_str("\\n"),
                '\r' => self.buf.push_str("\\r"),
                c => self.buf.push(c),
            }
        }
        self
    }

    pub fn opt_text(self, v: Option<&str>) -> Self {
        match v {
            Some(v) => self.text(v),
            None => self.null(),
        }
    }

    pub fn null(mut self) -> Self {
        self.sep();
        self.buf.push_str("\\N");
        self
    }

    pub fn bool(mut self, v: bool) -> Self {
        self.sep();
        self.buf.push(if v { 't' } else { 'f' });
        self
    }

    /// An amount in hundredths (cents) as a numeric with two decimals, e.g. -1234 → `-12.34`.
    pub fn cents(mut self, v: i64) -> Self {
        self.sep();
        push_fixed(self.buf, v, 2);
        self
    }

    /// A value in units of 10^-`places` as a numeric with `places` decimals.
    pub fn fixed(mut self, v: i64, places: u32) -> Self {
        self.sep();
        push_fixed(self.buf, v, places);
        self
    }

    pub fn date(mut self, d: Day) -> Self {
        self.sep();
        d.push_to(self.buf);
        self
    }

    /// A timestamp of market time (see [`clock`]).
    pub fn ts(mut self, t: MarketMs) -> Self {
        self.sep();
        t.push_to(self.buf);
        self
    }

    /// Ends the row.
    pub fn end(self) {
        self.buf.push('\n');
    }
}

/// Appends `v / 10^places` with exactly `places` decimals.
pub fn push_fixed(out: &mut String, v: i64, places: u32) {
    let scale = 10i64.pow(places);
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    let s = scale as u64;
    if places == 0 {
        let _ = write!(out, "{sign}{a}");
    } else {
        let _ = write!(out, "{sign}{}.{:0w$}", a / s, a % s, w = places as usize);
    }
}

/// `v / 10^places` as text with exactly `places` decimals.
pub fn fixed_text(v: i64, places: u32) -> String {
    let mut s = String::new();
    push_fixed(&mut s, v, places);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_copy_text() {
        let mut b = Batch::new();
        b.row(Table::Sector).text("AB").text("tab\there\\").end();
        b.row(Table::Sector)
            .null()
            .cents(-1205)
            .fixed(5, 3)
            .bool(true)
            .end();
        assert_eq!(
            b.text(Table::Sector),
            "AB\ttab\\there\\\\\n\\N\t-12.05\t0.005\tt\n"
        );
        assert_eq!(b.rows(), 2);
        assert_eq!(fixed_text(7, 2), "0.07");
        assert_eq!(fixed_text(-300, 2), "-3.00");
    }

    #[test]
    fn column_counts_come_from_the_schema() {
        assert_eq!(columns(Table::Trade), 15);
        assert_eq!(columns(Table::Sector), 2);
        assert_eq!(columns(Table::Customer), 24);
    }

    #[test]
    fn every_table_is_in_the_schema_once() {
        let schema = include_str!("../schema.sql");
        for t in Table::ALL {
            let create = format!("CREATE TABLE {} (", t.name());
            assert_eq!(schema.matches(&create).count(), 1, "{}", t.name());
        }
    }
}
