//! Companies: the COMPANY row, its ADDRESS row and its three COMPANY_COMPETITOR rows
//! (tpce.md §2.3), and the pure functions the transactions use to find companies by industry
//! (Market-Watch by industry, tpce.md §3.2) without reading the database.
//!
//! Industries are dealt, not drawn: a keyed permutation of a unit's 500 companies is cut into
//! 102 interleaved slices, so every industry has 4 or 5 companies in every load unit. A
//! Market-Watch by industry thus always finds securities, and each company has at least three
//! others of its industry in its unit to name as competitors, which keeps a unit's rows
//! self-contained.

use super::catalog::{industry, INDUSTRIES};
use super::clock::Day;
use super::fixed::{push_address, ADDRESS_FIELDS};
use super::{ids, Batch, Table};
use crate::workload::tpce::names::{company_name, first_name, last_name, Gender};
use crate::workload::tpce::rng::{permute, Entity, Tag};
use crate::workload::tpce::scale::COMPANIES_PER_LU;

/// Competitors per company (tpce.md §2.3).
pub const COMPETITORS: usize = 3;

/// Fields of the company stream (keyed by CO_ID). 0–7 are the CEO's name ([`first_name`],
/// [`last_name`]); the financials use 100 and up.
const F_CEO_GENDER: u32 = 20;
const F_RATING: u32 = 21;
const F_DESC_VERB: u32 = 22;
const F_DESC_AUDIENCE: u32 = 23;
const F_DESC_MARKETS: u32 = 24;
const F_OPEN_DATE: u32 = 25;
const F_COMPETITOR: u32 = 30; // and the next two
const F_ADDRESS: u32 = 40; // ADDRESS_FIELDS of them
                           // The address's fields end below the financials' (market_financial, from 100).
const _: () = assert!(F_ADDRESS + ADDRESS_FIELDS <= 100);

/// S&P-style long-term ratings with weights (per 1,000), most companies investment grade.
const RATINGS: [(&str, i64); 19] = [
    ("AAA", 20),
    ("AA+", 30),
    ("AA", 40),
    ("AA-", 50),
    ("A+", 70),
    ("A", 90),
    ("A-", 100),
    ("BBB+", 110),
    ("BBB", 120),
    ("BBB-", 100),
    ("BB+", 70),
    ("BB", 60),
    ("BB-", 50),
    ("B+", 30),
    ("B", 25),
    ("B-", 15),
    ("CCC", 10),
    ("CC", 5),
    ("D", 5),
];

const DESC_VERBS: [&str; 6] = [
    "Makes", "Supplies", "Designs", "Operates", "Provides", "Develops",
];
const DESC_AUDIENCES: [&str; 8] = [
    "households",
    "small businesses",
    "large enterprises",
    "governments",
    "manufacturers",
    "hospitals",
    "retailers",
    "other industries",
];

/// Companies open between these dates; their securities are listed before DAILY_MARKET starts.
const OPEN_FROM: Day = Day::from_ymd(1850, 1, 1);
const OPEN_TO: Day = Day::from_ymd(1998, 12, 31);

/// The industry (index for [`industry`]) of company `co_id`: 4 or 5 companies of each
/// industry in every load unit.
pub fn company_industry(seed: u64, co_id: u64) -> usize {
    let c = co_id - 1;
    let slot = permute(
        seed,
        Tag::Company,
        c / COMPANIES_PER_LU,
        COMPANIES_PER_LU,
        c % COMPANIES_PER_LU,
    );
    (slot % INDUSTRIES as u64) as usize
}

/// The companies (CO_IDs, ascending) of industry `industry` in load unit `lu`.
pub fn companies_in_industry(seed: u64, lu: u64, industry: usize) -> Vec<u64> {
    ids::companies_of(lu)
        .filter(|&co| company_industry(seed, co) == industry)
        .collect()
}

/// Every industry's companies in load unit `lu`: `[industry] → CO_IDs`, ascending.
pub fn industry_table(seed: u64, lu: u64) -> Vec<Vec<u64>> {
    let mut table = vec![Vec::new(); INDUSTRIES];
    for co in ids::companies_of(lu) {
        table[company_industry(seed, co)].push(co);
    }
    table
}

/// The three competitors of company `co_id` (COMPANY_COMPETITOR.cp_comp_co_id): distinct
/// other companies of its industry and load unit.
pub fn competitors(seed: u64, co_id: u64) -> [u64; COMPETITORS] {
    let lu = (co_id - 1) / COMPANIES_PER_LU;
    let peers = companies_in_industry(seed, lu, company_industry(seed, co_id));
    pick_competitors(seed, co_id, &peers)
}

/// Three distinct companies of `peers` (the industry's companies, `co_id` among them) other
/// than `co_id`: a partial shuffle of the others. Every industry has at least four companies
/// per unit (500 over 102), so there are always three.
fn pick_competitors(seed: u64, co_id: u64, peers: &[u64]) -> [u64; COMPETITORS] {
    let e = Entity::new(seed, Tag::Company, co_id);
    let mut others: Vec<u64> = peers.iter().copied().filter(|&p| p != co_id).collect();
    let n = others.len();
    let mut out = [0; COMPETITORS];
    for (j, slot) in out.iter_mut().enumerate() {
        if j >= n {
            break;
        }
        let k = e.range(F_COMPETITOR + j as u32, j as i64, n as i64 - 1) as usize;
        others.swap(j, k);
        *slot = others[j];
    }
    out
}

/// The company's S&P-style rating (CO_SP_RATE).
pub fn rating(seed: u64, co_id: u64) -> &'static str {
    let total: i64 = RATINGS.iter().map(|r| r.1).sum();
    let mut draw = Entity::new(seed, Tag::Company, co_id).range(F_RATING, 1, total);
    for (r, weight) in RATINGS {
        if draw <= weight {
            return r;
        }
        draw -= weight;
    }
    RATINGS[RATINGS.len() - 1].0
}

/// The company's opening date (CO_OPEN_DATE), 1850–1998.
pub fn open_date(seed: u64, co_id: u64) -> Day {
    Day(Entity::new(seed, Tag::Company, co_id).range(F_OPEN_DATE, OPEN_FROM.0, OPEN_TO.0))
}

/// The CEO's name (CO_CEO), e.g. "Kelina Ashmorley"; at most 35 characters.
pub fn ceo(seed: u64, co_id: u64) -> String {
    let e = Entity::new(seed, Tag::Company, co_id);
    let gender = if e.chance(F_CEO_GENDER, 50) {
        Gender::Female
    } else {
        Gender::Male
    };
    format!("{} {}", first_name(&e, gender), last_name(&e))
}

/// CO_DESC: what the company does, from its industry; at most 150 characters.
fn description(seed: u64, co_id: u64, industry_name: &str) -> String {
    let e = Entity::new(seed, Tag::Company, co_id);
    let verb = e.pick(F_DESC_VERB, &DESC_VERBS).copied().unwrap_or("Makes");
    let audience = e
        .pick(F_DESC_AUDIENCE, &DESC_AUDIENCES)
        .copied()
        .unwrap_or("households");
    let markets = e.range(F_DESC_MARKETS, 1, 60);
    let (year, _, _) = open_date(seed, co_id).ymd();
    format!(
        "{verb} {} for {audience} in {markets} markets; in business since {year}.",
        industry_name.to_lowercase()
    )
}

/// Writes company `co_id`'s COMPANY, ADDRESS and COMPANY_COMPETITOR rows; `peers` are the
/// companies of its industry in its unit ([`industry_table`]).
pub(super) fn write_company(b: &mut Batch, seed: u64, co_id: u64, peers: &[u64]) {
    let (in_id, in_name, _) = industry(company_industry(seed, co_id));
    let ad_id = ids::company_address(co_id);
    b.row(Table::Company)
        .int(co_id as i64)
        .text("ACTV")
        .text(&company_name(seed, co_id))
        .text(&in_id)
        .text(rating(seed, co_id))
        .text(&ceo(seed, co_id))
        .int(ad_id as i64)
        .text(&description(seed, co_id, &in_name))
        .date(open_date(seed, co_id))
        .end();
    push_address(
        b,
        seed,
        ad_id,
        &Entity::new(seed, Tag::Company, co_id),
        F_ADDRESS,
    );
    for comp in pick_competitors(seed, co_id, peers) {
        b.row(Table::CompanyCompetitor)
            .int(co_id as i64)
            .int(comp as i64)
            .text(&in_id)
            .end();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_industry_has_four_or_five_companies_per_unit() {
        for lu in [0, 3] {
            let table = industry_table(8, lu);
            let sizes: Vec<usize> = table.iter().map(Vec::len).collect();
            assert!(sizes.iter().all(|&n| n == 4 || n == 5), "{sizes:?}");
            assert_eq!(sizes.iter().sum::<usize>(), 500);
            for (i, cos) in table.iter().enumerate() {
                assert_eq!(*cos, companies_in_industry(8, lu, i));
            }
        }
        // Not in blocks: neighbouring companies mostly differ in industry.
        let same = (1..500)
            .filter(|&c| company_industry(8, c) == company_industry(8, c + 1))
            .count();
        assert!(same < 30, "{same}");
    }

    #[test]
    fn competitors_are_three_distinct_others_of_the_industry_and_unit() {
        for co in (1..=1_000).chain(4_501..=4_600) {
            let comps = competitors(4, co);
            let distinct: HashSet<u64> = comps.iter().copied().collect();
            assert_eq!(distinct.len(), COMPETITORS, "{co}: {comps:?}");
            for c in comps {
                assert_ne!(c, co);
                assert_eq!((c - 1) / 500, (co - 1) / 500, "{co}: {comps:?}");
                assert_eq!(company_industry(4, c), company_industry(4, co));
            }
        }
    }

    #[test]
    fn attributes_fit_their_columns() {
        let mut ratings = HashSet::new();
        for co in 1..=2_000 {
            assert!(ceo(6, co).len() <= 46);
            let (_, name, _) = industry(company_industry(6, co));
            let d = description(6, co, &name);
            assert!(d.len() <= 150, "{d}");
            let open = open_date(6, co);
            assert!(OPEN_FROM <= open && open <= OPEN_TO);
            ratings.insert(rating(6, co));
            assert!(rating(6, co).len() <= 4);
        }
        assert!(ratings.len() >= 15, "{ratings:?}");
        let mut b = Batch::new();
        let peers = companies_in_industry(6, 0, company_industry(6, 7));
        write_company(&mut b, 6, 7, &peers);
        super::super::assert_rows_fit_schema(&b);
        assert_eq!(b.text(Table::CompanyCompetitor).lines().count(), 3);
        assert_eq!(b.text(Table::Address).lines().count(), 1);
    }
}
