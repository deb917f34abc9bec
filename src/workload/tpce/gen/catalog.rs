//! The fixed reference values that both the generator and the transactions need: trade and
//! status types, exchanges (and which exchange lists a security), charges, commission rates,
//! sectors, industries, tax rates and zip codes. The lists are ours (tpce.md §6, License: EGen's
//! `flat_in` lists may not be used); their sizes are TPC-E's (tpce.md §2: 5 trade types,
//! 5 status types, 4 exchanges, 15 charges, 240 commission rates, 12 sectors, 102 industries,
//! 320 tax rates, 14,741 zip codes).

use crate::workload::tpce::rng::{permute, Entity, Tag};

/// Trade type ids (tpce.md §5): market buy, market sell, stop-loss, limit sell, limit buy.
pub const TMB: &str = "TMB";
pub const TMS: &str = "TMS";
pub const TSL: &str = "TSL";
pub const TLS: &str = "TLS";
pub const TLB: &str = "TLB";

/// A trade type row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeType {
    pub id: &'static str,
    pub name: &'static str,
    pub is_sell: bool,
    pub is_market: bool,
}

pub const TRADE_TYPES: [TradeType; 5] = [
    TradeType {
        id: TMB,
        name: "Market-Buy",
        is_sell: false,
        is_market: true,
    },
    TradeType {
        id: TMS,
        name: "Market-Sell",
        is_sell: true,
        is_market: true,
    },
    TradeType {
        id: TSL,
        name: "Stop-Loss",
        is_sell: true,
        is_market: false,
    },
    TradeType {
        id: TLS,
        name: "Limit-Sell",
        is_sell: true,
        is_market: false,
    },
    TradeType {
        id: TLB,
        name: "Limit-Buy",
        is_sell: false,
        is_market: false,
    },
];

/// The row of trade type `id`.
pub fn trade_type(id: &str) -> Option<&'static TradeType> {
    TRADE_TYPES.iter().find(|t| t.id == id)
}

/// Status type ids (tpce.md §5).
pub const CMPT: &str = "CMPT";
pub const ACTV: &str = "ACTV";
pub const SBMT: &str = "SBMT";
pub const PNDG: &str = "PNDG";
pub const CNCL: &str = "CNCL";

pub const STATUS_TYPES: [(&str, &str); 5] = [
    (CMPT, "Completed"),
    (ACTV, "Active"),
    (SBMT, "Submitted"),
    (PNDG, "Pending"),
    (CNCL, "Canceled"),
];

/// An exchange row's fixed part; its symbol count is counted over the securities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub id: &'static str,
    pub name: &'static str,
    /// Opening and closing time as hhmm.
    pub open: i64,
    pub close: i64,
    pub desc: &'static str,
    /// Share of securities listed here, percent.
    pub share: u32,
}

pub const EXCHANGES: [Exchange; 4] = [
    Exchange {
        id: "NYSE",
        name: "New York Stock Exchange",
        open: 930,
        close: 1600,
        desc: "The largest exchange by listed market value",
        share: 40,
    },
    Exchange {
        id: "NASDAQ",
        name: "NASDAQ Stock Market",
        open: 930,
        close: 1600,
        desc: "An electronic exchange, many technology listings",
        share: 40,
    },
    Exchange {
        id: "AMEX",
        name: "American Stock Exchange",
        open: 930,
        close: 1600,
        desc: "Smaller listings and exchange-traded funds",
        share: 10,
    },
    Exchange {
        id: "PCX",
        name: "Pacific Exchange",
        open: 930,
        close: 1600,
        desc: "A regional exchange on the west coast",
        share: 10,
    },
];

/// The exchange (index into [`EXCHANGES`]) listing security `s_id`: 40/40/10/10 %.
pub fn security_exchange(seed: u64, s_id: u64) -> usize {
    let p = Entity::new(seed, Tag::Security, s_id).percent(90);
    let mut acc = 0;
    for (i, ex) in EXCHANGES.iter().enumerate() {
        acc += ex.share;
        if p <= acc {
            return i;
        }
    }
    EXCHANGES.len() - 1
}

/// The fee of a trade of type `tt` (index into [`TRADE_TYPES`]) for a customer of `tier`
/// (1–3), in cents: market orders cost less than limit orders, higher tiers pay less.
pub fn charge_cents(tt: usize, tier: u8) -> i64 {
    let base = if TRADE_TYPES[tt].is_market { 500 } else { 800 };
    base - (i64::from(tier.clamp(1, 3)) - 1) * 150
}

/// The quantity bands of COMMISSION_RATE: `(from, to)` inclusive.
pub const COMMISSION_BANDS: [(i64, i64); 4] =
    [(1, 199), (200, 399), (400, 799), (800, 999_999_999)];

/// The commission rate, in hundredths of a percent (numeric(5,2) in the table), of a trade of
/// type `tt` on exchange `ex` of quantity band `band` for a customer of `tier`: 0.50 % for
/// tier 1's smallest trades, less for higher tiers, bigger trades and market orders.
pub fn commission_rate(tier: u8, tt: usize, ex: usize, band: usize) -> i64 {
    let tier = i64::from(tier.clamp(1, 3));
    let market = if TRADE_TYPES[tt].is_market { 5 } else { 0 };
    50 - (tier - 1) * 10 - band as i64 * 5 - market + ex as i64 % 2
}

/// The band of quantity `qty`.
pub fn commission_band(qty: i64) -> usize {
    COMMISSION_BANDS
        .iter()
        .position(|&(lo, hi)| qty >= lo && qty <= hi)
        .unwrap_or(0)
}

/// The 12 sectors: (SC_ID, SC_NAME).
pub const SECTORS: [(&str, &str); 12] = [
    ("EN", "Energy"),
    ("MA", "Materials"),
    ("IN", "Industrials"),
    ("CD", "Consumer Discretionary"),
    ("CS", "Consumer Staples"),
    ("HC", "Health Care"),
    ("FI", "Financials"),
    ("IT", "Information Technology"),
    ("CM", "Communication Services"),
    ("UT", "Utilities"),
    ("RE", "Real Estate"),
    ("TR", "Transportation"),
];

pub const INDUSTRIES: usize = 102;

/// Words of industry names, joined with the sector's words below.
const INDUSTRY_WORDS: [&str; 9] = [
    "Equipment",
    "Services",
    "Products",
    "Suppliers",
    "Distributors",
    "Holdings",
    "Systems",
    "Networks",
    "Specialists",
];

/// Industry `i` (0..102): (IN_ID, IN_NAME, index of its sector). Industries go round the
/// sectors, so every sector has 8 or 9; names are unique.
pub fn industry(i: usize) -> (String, String, usize) {
    let sector = i % SECTORS.len();
    let nth = i / SECTORS.len();
    let id = format!(
        "{}{}",
        char::from(b'A' + (i / 26) as u8),
        char::from(b'A' + (i % 26) as u8)
    );
    let name = format!(
        "{} {}",
        SECTORS[sector].1,
        INDUSTRY_WORDS[nth % INDUSTRY_WORDS.len()]
    );
    (id, name, sector)
}

/// Tax rates: 20 country rates then 300 division rates (320, tpce.md §2.4).
pub const COUNTRY_TAXRATES: usize = 20;
pub const DIVISION_TAXRATES: usize = 300;
pub const TAXRATES: usize = COUNTRY_TAXRATES + DIVISION_TAXRATES;

/// Tax rate `i` (0..320): (TX_ID, TX_NAME, rate in 1/100,000). Country rates 10–30 %,
/// division rates 0–10 %.
pub fn taxrate(seed: u64, i: usize) -> (String, String, i64) {
    let e = Entity::new(seed, Tag::Address, 1_000_000_000 + i as u64);
    if i < COUNTRY_TAXRATES {
        let id = format!("C{:02}", i + 1);
        let name = format!("National income tax {}", i + 1);
        (id, name, e.range(0, 10_000, 30_000))
    } else {
        let d = i - COUNTRY_TAXRATES + 1;
        let id = format!("D{d:03}");
        let name = format!("Division {d} income tax");
        (id, name, e.range(0, 0, 10_000))
    }
}

pub const ZIP_CODES: u64 = 14_741;

/// Zip code `i` (0..14,741): five digits, unique.
pub fn zip_code(seed: u64, i: u64) -> String {
    format!("{:05}", permute(seed, Tag::Address, u64::MAX, 100_000, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_tpc_e_s() {
        let mut names: Vec<String> = (0..INDUSTRIES).map(|i| industry(i).1).collect();
        let mut ids: Vec<String> = (0..INDUSTRIES).map(|i| industry(i).0).collect();
        names.sort();
        names.dedup();
        ids.sort();
        ids.dedup();
        assert_eq!((names.len(), ids.len()), (102, 102));
        let bands = COMMISSION_BANDS.len() * TRADE_TYPES.len() * EXCHANGES.len() * 3;
        assert_eq!(bands, 240);
        let mut zips: Vec<String> = (0..ZIP_CODES).map(|i| zip_code(1, i)).collect();
        zips.sort();
        zips.dedup();
        assert_eq!(zips.len() as u64, ZIP_CODES);
    }

    #[test]
    fn rates_are_positive_and_exchanges_split() {
        for tier in 1..=3 {
            for tt in 0..5 {
                assert!(charge_cents(tt, tier) > 0);
                for ex in 0..4 {
                    for band in 0..4 {
                        assert!(commission_rate(tier, tt, ex, band) > 0);
                    }
                }
            }
        }
        let nyse = (1..=10_000)
            .filter(|&s| security_exchange(5, s) == 0)
            .count();
        assert!((3_700..4_300).contains(&nyse), "{nyse}");
        assert_eq!(commission_band(100), 0);
        assert_eq!(commission_band(800), 3);
    }
}
