//! The market unit ([`super::Unit::Market`]) of load unit `lu`: its 500 companies with their
//! addresses, competitors, financials and news, and its 685 securities with their last trades
//! and daily market rows (tpce.md §2.3). Every row names only the unit's own companies and
//! securities, so units load independently and in any order.
//!
//! The rows come in three passes, cut into batches near [`BATCH_BYTES`] between entities:
//! first the companies (one company's rows at a time), then SECURITY and LAST_TRADE, then
//! DAILY_MARKET (1,305 rows a security, ~40 MB of text per unit, so never held whole). Each
//! pass's values are pure functions, split by subject:
//!
//! - [`super::market_company`]: industries, competitors and the company's own fields;
//! - [`super::market_financial`]: the 20 quarters of FINANCIAL and the trailing EPS;
//! - [`super::market_security`]: shares, dividends, the daily series, 52-week range, last
//!   trade;
//! - [`super::market_news`]: news items.
//!
//! What the transactions can recompute without the database is re-exported here:
//! [`company_industry`] and [`companies_in_industry`] (Market-Watch by industry),
//! [`competitors`], [`daily_bar`], [`year_range`], [`last_trade`], [`shares_outstanding`]
//! (Market-Watch's market cap, Security-Detail), [`quarters`] and [`news_item`].

use super::market_company::{industry_table, write_company};
use super::market_financial::{trailing_eps, write_financials};
use super::market_news::write_news;
use super::market_security::{daily_dates, write_daily, write_security};
use super::{ids, Batch, BATCH_BYTES};
use crate::workload::tpce::scale::{Scale, COMPANIES_PER_LU, SECURITIES_PER_LU};

pub use super::market_company::{companies_in_industry, company_industry, competitors};
pub use super::market_financial::{quarters, Quarter};
pub use super::market_news::{news_item, NewsItem};
pub use super::market_security::{
    daily_bar, daily_market_index, dividend, last_close, last_trade, shares_outstanding,
    year_range, Bar, LastTrade, YearRange, YEAR_DAYS,
};

/// The unit's batches.
pub fn batches(seed: u64, scale: &Scale, lu: u64) -> Box<dyn Iterator<Item = Batch> + Send> {
    Box::new(MarketUnit {
        seed,
        scale: *scale,
        lu,
        industries: industry_table(seed, lu),
        dates: daily_dates(),
        step: 0,
    })
}

const COMPANY_STEPS: u64 = COMPANIES_PER_LU;
const SECURITY_STEPS: u64 = SECURITIES_PER_LU;
const STEPS: u64 = COMPANY_STEPS + 2 * SECURITY_STEPS;

/// The generator of one unit: `step` counts entities written over the three passes.
struct MarketUnit {
    seed: u64,
    scale: Scale,
    lu: u64,
    /// The unit's companies by industry, for competitors.
    industries: Vec<Vec<u64>>,
    dates: Vec<String>,
    step: u64,
}

impl MarketUnit {
    fn write_step(&self, b: &mut Batch, step: u64) {
        let seed = self.seed;
        let first_company = *ids::companies_of(self.lu).start();
        let first_security = *ids::securities_of(self.lu).start();
        if step < COMPANY_STEPS {
            let co_id = first_company + step;
            let peers = &self.industries[company_industry(seed, co_id)];
            write_company(b, seed, co_id, peers);
            write_financials(b, co_id, &quarters(seed, co_id));
            write_news(b, seed, co_id);
        } else if step < COMPANY_STEPS + SECURITY_STEPS {
            let s_id = first_security + step - COMPANY_STEPS;
            let (co_id, _) = ids::security_company(s_id);
            write_security(b, seed, &self.scale, s_id, trailing_eps(seed, co_id));
        } else {
            let s_id = first_security + step - COMPANY_STEPS - SECURITY_STEPS;
            write_daily(b, seed, s_id, &self.dates);
        }
    }
}

impl Iterator for MarketUnit {
    type Item = Batch;

    fn next(&mut self) -> Option<Batch> {
        let mut b = Batch::new();
        while self.step < STEPS && b.bytes() < BATCH_BYTES {
            self.write_step(&mut b, self.step);
            self.step += 1;
        }
        (!b.is_empty()).then_some(b)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::super::{assert_rows_fit_schema, Table};
    use super::*;
    use crate::workload::tpce::names::symbol;
    use crate::workload::tpce::scale::DAILY_MARKET_DAYS;

    /// The primary key columns of each market table but DAILY_MARKET (schema.sql's ADD
    /// PRIMARY KEY); DAILY_MARKET's is checked per symbol, which is cheaper for its 894k rows.
    const KEYS: [(Table, &[usize]); 8] = [
        (Table::Company, &[0]),
        (Table::CompanyCompetitor, &[0, 1, 2]),
        (Table::Financial, &[0, 1, 2]),
        (Table::LastTrade, &[0]),
        (Table::NewsItem, &[0]),
        (Table::NewsXref, &[0, 1]),
        (Table::Security, &[0]),
        (Table::Address, &[0]),
    ];

    type Keys = HashSet<(Table, Vec<String>)>;

    /// Adds the primary keys of `b`'s rows to `keys`, failing on a duplicate.
    fn collect_keys(b: &Batch, keys: &mut Keys) {
        for (t, cols) in KEYS {
            for line in b.text(t).lines() {
                let f: Vec<&str> = line.split('\t').collect();
                let key = cols.iter().map(|&c| f[c].to_string()).collect();
                assert!(keys.insert((t, key)), "{}: {line:.80}", t.name());
            }
        }
    }

    fn cents(s: &str) -> i64 {
        let (whole, frac) = s.split_once('.').unwrap_or((s, "00"));
        whole.parse::<i64>().unwrap_or(0) * 100 + frac.parse::<i64>().unwrap_or(0)
    }

    fn lines(b: &Batch, t: Table) -> impl Iterator<Item = Vec<&str>> {
        b.text(t).lines().map(|l| l.split('\t').collect())
    }

    /// 52-week high, its date, low, its date.
    type Year = (i64, String, i64, String);

    /// Per symbol: DAILY_MARKET rows seen, and the 52-week figures they give. A security's
    /// rows are contiguous, so only the current one is open.
    #[derive(Default)]
    struct Daily {
        done: HashMap<String, (usize, Option<Year>)>,
        current: Option<(String, usize, Option<Year>)>,
    }

    impl Daily {
        /// Checks the rows of `b`: per symbol the dates run through the 1,305 days in order
        /// (so (symbol, date) is unique and complete), and high ≥ close ≥ low in $20–30.
        fn add(&mut self, b: &Batch, dates: &[String]) {
            let window = (DAILY_MARKET_DAYS - YEAR_DAYS) as usize;
            for line in b.text(Table::DailyMarket).lines() {
                let mut f = line.split('\t');
                let mut next = || f.next().unwrap_or("");
                let (date, symb) = (next(), next());
                let (close, high, low) = (cents(next()), cents(next()), cents(next()));
                assert!(2_000 <= low && low <= close && close <= high && high <= 3_000);
                if self.current.as_ref().map(|c| c.0.as_str()) != Some(symb) {
                    self.finish();
                    self.current = Some((symb.to_string(), 0, None));
                }
                let Some((_, k, year)) = self.current.as_mut() else {
                    continue;
                };
                assert_eq!(date, dates[*k], "{symb}");
                if *k >= window {
                    let y = year.get_or_insert((i64::MIN, String::new(), i64::MAX, String::new()));
                    // Strict comparisons keep the earliest date of an extreme.
                    if high > y.0 {
                        (y.0, y.1) = (high, date.to_string());
                    }
                    if low < y.2 {
                        (y.2, y.3) = (low, date.to_string());
                    }
                }
                *k += 1;
            }
        }

        fn finish(&mut self) {
            if let Some((symb, k, year)) = self.current.take() {
                assert!(
                    self.done.insert(symb.clone(), (k, year)).is_none(),
                    "{symb}"
                );
            }
        }
    }

    #[test]
    fn a_whole_unit_has_its_rows_keys_and_consistent_figures() {
        let scale = Scale::new(2_000, 2, 500).unwrap();
        let (seed, lu) = (21, 1);
        let dates = daily_dates();
        let mut counts: HashMap<Table, u64> = HashMap::new();
        let mut keys = Keys::new();
        let mut daily = Daily::default();
        let mut stated: HashMap<String, Year> = HashMap::new();
        let companies: HashSet<String> = ids::companies_of(lu).map(|c| c.to_string()).collect();
        let mut cut = 0;
        for b in batches(seed, &scale, lu) {
            cut += 1;
            assert!(b.bytes() < BATCH_BYTES + 256 * 1024, "{}", b.bytes());
            assert_rows_fit_schema(&b);
            collect_keys(&b, &mut keys);
            daily.add(&b, &dates);
            for t in Table::ALL {
                *counts.entry(t).or_default() += b.text(t).lines().count() as u64;
            }
            for r in lines(&b, Table::CompanyCompetitor) {
                assert!(companies.contains(r[1]), "{r:?}");
            }
            for r in lines(&b, Table::Security) {
                let y = (cents(r[10]), r[11].into(), cents(r[12]), r[13].into());
                stated.insert(r[0].to_string(), y);
            }
        }
        assert!(cut > 5, "{cut}");
        let want = [
            (Table::Company, 500),
            (Table::Address, 500),
            (Table::CompanyCompetitor, 1_500),
            (Table::Financial, 10_000),
            (Table::NewsItem, 1_000),
            (Table::NewsXref, 1_000),
            (Table::Security, 685),
            (Table::LastTrade, 685),
            (Table::DailyMarket, 685 * 1_305),
        ];
        for (t, n) in want {
            assert_eq!(counts.remove(&t), Some(n), "{}", t.name());
        }
        assert!(counts.values().all(|&n| n == 0), "{counts:?}");
        // Every security has its 1,305 days, and its 52-week figures are its last 260.
        daily.finish();
        assert_eq!(daily.done.len(), 685);
        assert_eq!(stated.len(), 685);
        for (symb, (k, year)) in daily.done {
            assert_eq!(k, dates.len());
            assert_eq!(year.as_ref(), stated.get(&symb), "{symb}");
        }

        // Another unit: none of its keys is one of this unit's. Its rows other than
        // DAILY_MARKET all come before its first DAILY_MARKET row; DAILY_MARKET's key holds the
        // symbol, which SECURITY's key shows unique.
        for b in batches(seed, &scale, 0) {
            collect_keys(&b, &mut keys);
            if !b.text(Table::DailyMarket).is_empty() {
                break;
            }
        }
        let securities = keys.iter().filter(|(t, _)| *t == Table::Security).count();
        assert_eq!(securities, 2 * 685);
    }

    #[test]
    fn batches_are_deterministic_and_follow_the_seed() {
        let scale = Scale::new(1_000, 1, 500).unwrap();
        let first = |seed| -> Vec<String> {
            batches(seed, &scale, 0)
                .take(2)
                .map(|b| {
                    Table::ALL
                        .iter()
                        .map(|&t| b.text(t).to_string())
                        .collect::<String>()
                })
                .collect()
        };
        let a = first(3);
        assert_eq!(a, first(3));
        assert_ne!(a, first(4));
        // The daily rows of one security too.
        let dates = daily_dates();
        let daily = |seed| {
            let mut b = Batch::new();
            write_daily(&mut b, seed, 7, &dates);
            b.text(Table::DailyMarket).to_string()
        };
        assert_eq!(daily(3), daily(3));
        assert!(daily(3).starts_with(&format!("2000-01-03\t{}\t", symbol(3, 7))));
    }
}
