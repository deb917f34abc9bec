//! The fixed unit ([`super::Unit::Fixed`]): the nine fixed tables (TRADE_TYPE, STATUS_TYPE,
//! CHARGE, COMMISSION_RATE, EXCHANGE, SECTOR, INDUSTRY, TAXRATE, ZIP_CODE; tpce.md §2) and the
//! four exchanges' ADDRESS rows. Their values come from [`super::catalog`], which the
//! transactions read too; only the towns and divisions of the zip codes, the countries and
//! the address rows are made here.
//!
//! Also here, for the other units' ADDRESS rows: [`push_address`], which writes an address
//! whose zip code, division and country agree with ZIP_CODE. A zip code belongs to a
//! division (`zip % 300`, one of TAXRATE's 300 division rates) and a division to a country
//! (`division / 15`, one of its 20 country rates), so an address's zip names both of its tax
//! rates.
//!
//! The whole unit is about 0.7 MB of text, so it comes as one batch, well under
//! [`super::BATCH_BYTES`].

use super::catalog::{
    charge_cents, commission_rate, industry, taxrate, zip_code, COMMISSION_BANDS, COUNTRY_TAXRATES,
    DIVISION_TAXRATES, EXCHANGES, INDUSTRIES, SECTORS, STATUS_TYPES, TAXRATES, TRADE_TYPES,
    ZIP_CODES,
};
use super::{catalog, Batch, Table};
use crate::workload::tpce::names::address_line;
use crate::workload::tpce::rng::{Entity, Tag};
use crate::workload::tpce::scale::Scale;

/// Divisions per country: 300 division rates over 20 countries.
pub const DIVISIONS_PER_COUNTRY: usize = DIVISION_TAXRATES / COUNTRY_TAXRATES;

/// The 20 countries, one per country tax rate, in tax-rate order. Invented names.
pub const COUNTRIES: [&str; COUNTRY_TAXRATES] = [
    "Aldmark",
    "Brevonia",
    "Calder Isles",
    "Dunmore",
    "Estravia",
    "Falkreach",
    "Galmoor",
    "Hestland",
    "Ivorra",
    "Jutmark",
    "Kestovia",
    "Lorvale",
    "Marrow Coast",
    "Norvik",
    "Ostmere",
    "Pellonia",
    "Quarrin",
    "Rosvald",
    "Sundavia",
    "Tarnholm",
];

/// Division names are a country syllable and a division ending: 20 × 15 distinct words.
const DIVISION_STARTS: [&str; COUNTRY_TAXRATES] = [
    "Ald", "Brev", "Cald", "Dun", "Estr", "Falk", "Galm", "Hest", "Ivor", "Jut", "Kest", "Lorv",
    "Marr", "Norv", "Ostm", "Pell", "Quar", "Rosv", "Sund", "Tarn",
];
const DIVISION_ENDINGS: [&str; DIVISIONS_PER_COUNTRY] = [
    "amere", "ebury", "idale", "oshire", "undel", "avale", "emoor", "ifield", "oland", "uport",
    "agate", "enholt", "irock", "owick", "uvale",
];

/// Town names: a start, an ending and, now and then, a second word.
const TOWN_STARTS: [&str; 24] = [
    "Ash", "Birch", "Clear", "Dal", "East", "Fox", "Glen", "High", "Iron", "King", "Long", "Mill",
    "New", "Oak", "Pine", "Red", "Salt", "Thorn", "Up", "Vale", "West", "Wolf", "York", "Brook",
];
const TOWN_ENDINGS: [&str; 16] = [
    "ton", "ville", "field", "ford", "bury", "port", "wood", "dale", "haven", "stead", "burg",
    "ham", "mouth", "bridge", "well", "view",
];
const TOWN_SECOND_WORDS: [&str; 6] = ["Falls", "Springs", "Heights", "Crossing", "Landing", "Park"];

/// Entity ids of the address stream for town names, far above any AD_ID a load can have,
/// so a town never shares draws with an address (TAXRATE uses 1,000,000,000 + i).
const TOWN_ID_BASE: u64 = 2_000_000_000;
const F_TOWN_START: u32 = 0;
const F_TOWN_END: u32 = 1;
const F_TOWN_SECOND: u32 = 2;
const F_TOWN_SECOND_WORD: u32 = 3;

/// Offsets of the fields [`push_address`] takes from its caller's entity.
const F_LINE1: u32 = 0; // and the next three
const F_LINE2_NULL: u32 = 4;
const F_LINE2_KIND: u32 = 5;
const F_LINE2_NUMBER: u32 = 6;
const F_ZIP: u32 = 7;
/// Fields [`push_address`] takes: `field..field + ADDRESS_FIELDS`.
pub const ADDRESS_FIELDS: u32 = 8;
/// Share of addresses with a second line (tpce.md §6: 60 % have none).
const LINE2_PCT: u32 = 40;

/// The rows of the fixed unit: one batch.
pub fn batches(seed: u64, scale: &Scale) -> Box<dyn Iterator<Item = Batch> + Send> {
    Box::new(std::iter::once(fixed_rows(seed, scale)))
}

fn fixed_rows(seed: u64, scale: &Scale) -> Batch {
    let mut b = Batch::new();
    for tt in &TRADE_TYPES {
        b.row(Table::TradeType)
            .text(tt.id)
            .text(tt.name)
            .bool(tt.is_sell)
            .bool(tt.is_market)
            .end();
    }
    for (id, name) in STATUS_TYPES {
        b.row(Table::StatusType).text(id).text(name).end();
    }
    for (tt, t) in TRADE_TYPES.iter().enumerate() {
        for tier in 1..=3u8 {
            b.row(Table::Charge)
                .text(t.id)
                .int(i64::from(tier))
                .cents(charge_cents(tt, tier))
                .end();
        }
    }
    write_commission_rates(&mut b);
    write_exchanges(&mut b, seed, scale);
    for (id, name) in SECTORS {
        b.row(Table::Sector).text(id).text(name).end();
    }
    for i in 0..INDUSTRIES {
        let (id, name, sector) = industry(i);
        b.row(Table::Industry)
            .text(&id)
            .text(&name)
            .text(SECTORS[sector].0)
            .end();
    }
    for i in 0..TAXRATES {
        let (id, name, rate) = taxrate(seed, i);
        b.row(Table::Taxrate)
            .text(&id)
            .text(&name)
            .fixed(rate, 5)
            .end();
    }
    for i in 0..ZIP_CODES {
        b.row(Table::ZipCode)
            .text(&zip_code(seed, i))
            .text(&town_name(seed, i))
            .text(&division_name(zip_division(i)))
            .end();
    }
    b
}

fn write_commission_rates(b: &mut Batch) {
    for tier in 1..=3u8 {
        for (tt, t) in TRADE_TYPES.iter().enumerate() {
            for (ex, x) in EXCHANGES.iter().enumerate() {
                for (band, &(from, to)) in COMMISSION_BANDS.iter().enumerate() {
                    b.row(Table::CommissionRate)
                        .int(i64::from(tier))
                        .text(t.id)
                        .text(x.id)
                        .int(from)
                        .int(to)
                        .fixed(commission_rate(tier, tt, ex, band), 2)
                        .end();
                }
            }
        }
    }
}

/// EXCHANGE rows and their addresses, AD_ID 1–4 in [`EXCHANGES`] order.
fn write_exchanges(b: &mut Batch, seed: u64, scale: &Scale) {
    let symbols = exchange_symbols(seed, scale.securities());
    for (i, ex) in EXCHANGES.iter().enumerate() {
        let ad_id = i as u64 + 1;
        b.row(Table::Exchange)
            .text(ex.id)
            .text(ex.name)
            .int(symbols[i] as i64)
            .int(ex.open)
            .int(ex.close)
            .text(ex.desc)
            .int(ad_id as i64)
            .end();
        push_address(b, seed, ad_id, &Entity::new(seed, Tag::Address, ad_id), 0);
    }
}

/// EX_NUM_SYMB of each exchange, in [`EXCHANGES`] order: how many of the securities
/// 1..=`securities` [`catalog::security_exchange`] lists there.
pub fn exchange_symbols(seed: u64, securities: u64) -> [u64; EXCHANGES.len()] {
    let mut counts = [0; EXCHANGES.len()];
    for s_id in 1..=securities {
        counts[catalog::security_exchange(seed, s_id)] += 1;
    }
    counts
}

/// The division (0..300; its tax rate is [`taxrate`]`(seed, COUNTRY_TAXRATES + division)`)
/// of zip code `i` (0..14,741).
pub fn zip_division(i: u64) -> usize {
    (i % DIVISION_TAXRATES as u64) as usize
}

/// The country (0..20, its tax rate is [`taxrate`]`(seed, country)`) of division `d`.
pub fn division_country(d: usize) -> usize {
    (d / DIVISIONS_PER_COUNTRY).min(COUNTRY_TAXRATES - 1)
}

/// The country name of zip code `i`.
pub fn zip_country(i: u64) -> &'static str {
    COUNTRIES[division_country(zip_division(i))]
}

/// The name of division `d` (0..300), e.g. "Brevebury"; unique per division.
pub fn division_name(d: usize) -> String {
    let d = d % DIVISION_TAXRATES;
    [
        DIVISION_STARTS[division_country(d)],
        DIVISION_ENDINGS[d % DIVISIONS_PER_COUNTRY],
    ]
    .concat()
}

/// The town of zip code `i`, e.g. "Oakhaven" or "Millford Springs"; not unique, as towns
/// are not.
pub fn town_name(seed: u64, i: u64) -> String {
    let e = Entity::new(seed, Tag::Address, TOWN_ID_BASE + i);
    let start = e.pick(F_TOWN_START, &TOWN_STARTS).copied().unwrap_or("");
    let end = e.pick(F_TOWN_END, &TOWN_ENDINGS).copied().unwrap_or("");
    let mut town = [start, end].concat();
    if e.chance(F_TOWN_SECOND, 15) {
        town.push(' ');
        town.push_str(
            e.pick(F_TOWN_SECOND_WORD, &TOWN_SECOND_WORDS)
                .copied()
                .unwrap_or(""),
        );
    }
    town
}

/// The zip code index (0..14,741; its code is [`zip_code`]) an address of entity `e` uses,
/// drawn from field `field`.
pub fn zip_of(e: &Entity, field: u32) -> u64 {
    e.range(field, 0, ZIP_CODES as i64 - 1) as u64
}

/// Writes ADDRESS row `ad_id` from the draws of entity `e`, fields
/// `field..field + ADDRESS_FIELDS`: line 1 a street address, line 2 a suite, floor or unit
/// in 40 % of addresses (NULL otherwise, tpce.md §6), a zip code of ZIP_CODE and that zip's
/// country.
pub fn push_address(b: &mut Batch, seed: u64, ad_id: u64, e: &Entity, field: u32) {
    let line2 = e.chance(field + F_LINE2_NULL, LINE2_PCT).then(|| {
        let n = e.range(field + F_LINE2_NUMBER, 2, 60);
        match e.range(field + F_LINE2_KIND, 0, 2) {
            0 => format!("Suite {}", n * 10),
            1 => format!("Floor {n}"),
            _ => format!("Unit {}", n * 3),
        }
    });
    let zip = zip_of(e, field + F_ZIP);
    b.row(Table::Address)
        .int(ad_id as i64)
        .text(&address_line(e, field + F_LINE1))
        .opt_text(line2.as_deref())
        .text(&zip_code(seed, zip))
        .text(zip_country(zip))
        .end();
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::super::assert_rows_fit_schema;
    use super::*;

    fn unit(seed: u64, customers: u64) -> Batch {
        let scale = Scale::new(customers, 1, 500).unwrap();
        let mut all: Vec<Batch> = batches(seed, &scale).collect();
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    fn rows(b: &Batch, t: Table) -> Vec<Vec<&str>> {
        b.text(t).lines().map(|l| l.split('\t').collect()).collect()
    }

    /// The first `key` columns of every row are distinct.
    fn assert_unique(b: &Batch, t: Table, key: usize) {
        let mut seen = HashSet::new();
        for r in rows(b, t) {
            assert!(seen.insert(r[..key].to_vec()), "{}: {r:?}", t.name());
        }
    }

    #[test]
    fn every_fixed_table_has_its_tpc_e_size_and_unique_keys() {
        let b = unit(3, 2_000);
        assert_rows_fit_schema(&b);
        let counts = [
            (Table::TradeType, 5, 1),
            (Table::StatusType, 5, 1),
            (Table::Charge, 15, 2),
            (Table::CommissionRate, 240, 4),
            (Table::Exchange, 4, 1),
            (Table::Address, 4, 1),
            (Table::Sector, 12, 1),
            (Table::Industry, 102, 1),
            (Table::Taxrate, 320, 1),
            (Table::ZipCode, 14_741, 1),
        ];
        for (t, n, key) in counts {
            assert_eq!(b.text(t).lines().count(), n, "{}", t.name());
            assert_unique(&b, t, key);
        }
        assert!(b.bytes() < super::super::BATCH_BYTES);
    }

    #[test]
    fn exchange_symbol_counts_sum_to_the_securities() {
        let b = unit(5, 3_000);
        let counted: Vec<i64> = rows(&b, Table::Exchange)
            .iter()
            .map(|r| r[2].parse().unwrap())
            .collect();
        assert_eq!(counted.iter().sum::<i64>(), 3 * 685);
        for (i, n) in counted.iter().enumerate() {
            let direct = (1..=3 * 685)
                .filter(|&s| catalog::security_exchange(5, s) == i)
                .count();
            assert_eq!(*n, direct as i64);
        }
        // Each exchange names its own address, and those addresses are rows of this unit.
        let ads: HashSet<&str> = rows(&b, Table::Address).iter().map(|r| r[0]).collect();
        for r in rows(&b, Table::Exchange) {
            assert!(ads.contains(r[6]), "{r:?}");
        }
    }

    #[test]
    fn zip_codes_agree_with_divisions_countries_and_tax_rates() {
        let b = unit(7, 1_000);
        let zips = rows(&b, Table::ZipCode);
        let tax_ids: HashSet<&str> = rows(&b, Table::Taxrate).iter().map(|r| r[0]).collect();
        let mut per_division: HashMap<&str, u64> = HashMap::new();
        for (i, r) in zips.iter().enumerate() {
            assert_eq!(r[0], zip_code(7, i as u64));
            *per_division.entry(r[2]).or_default() += 1;
            let d = zip_division(i as u64);
            // The division's and its country's tax rates are rows of TAXRATE.
            assert!(tax_ids.contains(taxrate(7, COUNTRY_TAXRATES + d).0.as_str()));
            assert!(tax_ids.contains(taxrate(7, division_country(d)).0.as_str()));
            assert!(!r[1].is_empty() && r[1].len() <= 80);
        }
        // 300 distinct division names, each with 49 or 50 of the 14,741 zip codes.
        assert_eq!(per_division.len(), DIVISION_TAXRATES);
        assert!(per_division.values().all(|&n| n == 49 || n == 50));
        let towns: HashSet<&str> = zips.iter().map(|r| r[1]).collect();
        assert!(towns.len() > 400, "{}", towns.len());
        let countries: HashSet<usize> = (0..DIVISION_TAXRATES).map(division_country).collect();
        assert_eq!(countries.len(), COUNTRY_TAXRATES);
    }

    #[test]
    fn addresses_use_loaded_zip_codes_and_their_countries() {
        let zips: HashMap<String, u64> = (0..ZIP_CODES).map(|i| (zip_code(2, i), i)).collect();
        let mut b = Batch::new();
        for ad_id in 1..=2_000 {
            push_address(&mut b, 2, ad_id, &Entity::new(2, Tag::Address, ad_id), 10);
        }
        assert_rows_fit_schema(&b);
        let mut line2 = 0;
        for r in rows(&b, Table::Address) {
            let i = zips[r[3]];
            assert_eq!(r[4], zip_country(i));
            assert!(r[1].len() <= 80);
            line2 += u32::from(r[2] != "\\N");
        }
        assert!((700..=900).contains(&line2), "{line2}");
    }

    #[test]
    fn fixed_rows_are_deterministic_and_follow_the_seed() {
        let a = unit(11, 1_000);
        assert_eq!(a.text(Table::ZipCode), unit(11, 1_000).text(Table::ZipCode));
        assert_ne!(a.text(Table::ZipCode), unit(12, 1_000).text(Table::ZipCode));
        // Only the exchange counts depend on the scale.
        let bigger = unit(11, 2_000);
        assert_eq!(a.text(Table::Taxrate), bigger.text(Table::Taxrate));
        assert_ne!(a.text(Table::Exchange), bigger.text(Table::Exchange));
    }

    #[test]
    fn commission_rates_are_catalog_values() {
        let b = unit(1, 1_000);
        for r in rows(&b, Table::CommissionRate) {
            let tier: u8 = r[0].parse().unwrap();
            let tt = TRADE_TYPES.iter().position(|t| t.id == r[1]).unwrap();
            let ex = EXCHANGES.iter().position(|x| x.id == r[2]).unwrap();
            let from: i64 = r[3].parse().unwrap();
            let band = catalog::commission_band(from);
            assert_eq!(COMMISSION_BANDS[band].1.to_string(), r[4]);
            let want = super::super::fixed_text(commission_rate(tier, tt, ex, band), 2);
            assert_eq!(r[5], want);
        }
    }
}
