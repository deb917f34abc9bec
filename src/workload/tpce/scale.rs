//! The size of a TPC-E-like database: the knobs (customers in load units, initial trade days,
//! scale factor), their validation, the row counts that follow from them, the trade-id space
//! of the initial trades, and the per-customer counts that must be exact (tiers) or bounded
//! (accounts, watch items).
//!
//! Facts: load unit = 1,000 customers, SF 500, ITD in 8-hour days (tpce.md §1); per-LU and
//! per-entity counts and the growth rule (tpce.md §2.1–§2.5); one trade id in 101 skipped
//! (tpce.md §2.5, §6 item 5). Ids start at 1: EGen's id shifts (tpce.md §1) only keep its ids
//! clear of other data, which ours never meet.

use super::rng::{permute, Entity, Tag};

pub const CUSTOMERS_PER_LU: u64 = 1_000;
pub const COMPANIES_PER_LU: u64 = 500;
pub const SECURITIES_PER_LU: u64 = 685;
/// Brokers = customers / 100 (tpce.md §2.2).
pub const CUSTOMERS_PER_BROKER: u64 = 100;
/// 5 years × 261 trading days (tpce.md §2.3).
pub const DAILY_MARKET_DAYS: u64 = 1_305;
pub const FINANCIALS_PER_COMPANY: u64 = 20;
pub const NEWS_PER_COMPANY: u64 = 2;
pub const WATCH_ITEMS: (i64, i64) = (50, 150);
/// The TPC-E compliant scale factor: customers per tpsE (tpce.md §1).
pub const DEFAULT_SCALE_FACTOR: u32 = 500;
pub const SECONDS_PER_TRADE_DAY: u64 = 8 * 3_600;
/// Of every 101 consecutive trade ids the last is never loaded (`iAbortTrade`, tpce.md §2.5).
pub const ABORT_TRADE_EVERY: u64 = 101;
/// Trade ids are PostgreSQL BIGINTs.
const MAX_TRADE_ID: u128 = i64::MAX as u128;

/// Why the knobs do not make a database; each message names the flag and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScaleError {
    #[error("--customers must be at least 1000 (one load unit); use --customers 1000 or more")]
    NoCustomers,
    #[error(
        "--customers {0} is not a multiple of 1000 (the load unit); use --customers {lower} or {upper}",
        lower = .0 / 1000 * 1000,
        upper = (.0 / 1000 + 1) * 1000
    )]
    NotLoadUnits(u64),
    #[error("--trade-days must be at least 1 (the initial trade history, in 8-hour days)")]
    NoTradeDays,
    #[error("--scale-factor must be at least 1 (customers per trade per second; TPC-E uses 500)")]
    NoScaleFactor,
    #[error(
        "--trade-days {trade_days} with --customers {customers} makes more initial trades than \
         a BIGINT trade id holds; lower --trade-days"
    )]
    TooManyTrades { customers: u64, trade_days: u32 },
}

/// Validated knobs, and every count that follows from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    customers: u64,
    trade_days: u32,
    scale_factor: u32,
}

impl Scale {
    pub fn new(customers: u64, trade_days: u32, scale_factor: u32) -> Result<Scale, ScaleError> {
        if customers < CUSTOMERS_PER_LU {
            return Err(ScaleError::NoCustomers);
        }
        if !customers.is_multiple_of(CUSTOMERS_PER_LU) {
            return Err(ScaleError::NotLoadUnits(customers));
        }
        if trade_days == 0 {
            return Err(ScaleError::NoTradeDays);
        }
        if scale_factor == 0 {
            return Err(ScaleError::NoScaleFactor);
        }
        let scale = Scale {
            customers,
            trade_days,
            scale_factor,
        };
        let trades = scale.initial_trades_wide();
        // The last loaded id is about 1.01 × trades; leave room for the run's own trades too.
        if trades * 2 > MAX_TRADE_ID {
            return Err(ScaleError::TooManyTrades {
                customers,
                trade_days,
            });
        }
        Ok(scale)
    }

    pub fn customers(&self) -> u64 {
        self.customers
    }
    pub fn trade_days(&self) -> u32 {
        self.trade_days
    }
    pub fn scale_factor(&self) -> u32 {
        self.scale_factor
    }
    pub fn load_units(&self) -> u64 {
        self.customers / CUSTOMERS_PER_LU
    }
    pub fn companies(&self) -> u64 {
        self.load_units() * COMPANIES_PER_LU
    }
    pub fn securities(&self) -> u64 {
        self.load_units() * SECURITIES_PER_LU
    }
    pub fn brokers(&self) -> u64 {
        self.customers / CUSTOMERS_PER_BROKER
    }
    pub fn daily_market_rows(&self) -> u64 {
        self.securities() * DAILY_MARKET_DAYS
    }
    pub fn financial_rows(&self) -> u64 {
        self.companies() * FINANCIALS_PER_COMPANY
    }
    pub fn news_items(&self) -> u64 {
        self.companies() * NEWS_PER_COMPANY
    }

    fn initial_trades_wide(&self) -> u128 {
        u128::from(self.trade_days) * u128::from(SECONDS_PER_TRADE_DAY) * u128::from(self.customers)
            / u128::from(self.scale_factor)
    }

    /// TRADE rows at load: ITD × 8 h × 3600 s × C / SF, nominal tpsE running for the initial
    /// trade days (tpce.md §2.5). [`Scale::new`] checked that it fits.
    pub fn initial_trades(&self) -> u64 {
        self.initial_trades_wide() as u64
    }

    /// The first trade id the run hands out: one past the last loaded id (tpce.md §6 item 5).
    pub fn first_run_trade_id(&self) -> u64 {
        match self.initial_trades() {
            0 => 1,
            n => trade_id(n - 1) + 1,
        }
    }
}

/// The id of the `n`-th loaded trade (from 0): ids 1..=100 then 102..=201 and so on, every
/// multiple of 101 skipped to mimic rolled-back Trade-Orders (tpce.md §2.5).
pub fn trade_id(n: u64) -> u64 {
    n + n / (ABORT_TRADE_EVERY - 1) + 1
}

/// The inverse of [`trade_id`]: `None` for a skipped id (or 0).
pub fn trade_index(id: u64) -> Option<u64> {
    if id == 0 || id.is_multiple_of(ABORT_TRADE_EVERY) {
        return None;
    }
    Some(id - id / ABORT_TRADE_EVERY - 1)
}

/// Customer tier 1–3 (tpce.md §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    One = 1,
    Two = 2,
    Three = 3,
}

impl Tier {
    /// The bounds of this tier's number of accounts (tpce.md §2.1: 1–4 / 2–8 / 5–10).
    pub fn account_bounds(self) -> (i64, i64) {
        match self {
            Tier::One => (1, 4),
            Tier::Two => (2, 8),
            Tier::Three => (5, 10),
        }
    }
}

/// The tier of customer `c_id` (from 1): within each load unit exactly 200 customers are tier 1,
/// 600 tier 2 and 200 tier 3 (tpce.md §2.1), spread by a keyed permutation of the unit's 1,000
/// places so neighbours are not alike.
pub fn tier(seed: u64, c_id: u64) -> Tier {
    let c = c_id.saturating_sub(1);
    let place = permute(
        seed,
        Tag::Tier,
        c / CUSTOMERS_PER_LU,
        CUSTOMERS_PER_LU,
        c % CUSTOMERS_PER_LU,
    );
    match place {
        0..=199 => Tier::One,
        200..=799 => Tier::Two,
        _ => Tier::Three,
    }
}

/// The number of accounts of customer `c_id`: uniform within its tier's bounds, 5 on average
/// (0.2 × 2.5 + 0.6 × 5 + 0.2 × 7.5; tpce.md §2.1 "A = 5·C avg").
pub fn accounts(seed: u64, c_id: u64) -> u64 {
    let (lo, hi) = tier(seed, c_id).account_bounds();
    Entity::new(seed, Tag::Account, c_id).range(0, lo, hi) as u64
}

/// Symbols on customer `c_id`'s watch list, 50–150 (tpce.md §2.1).
pub fn watch_items(seed: u64, c_id: u64) -> u64 {
    Entity::new(seed, Tag::WatchList, c_id).range(0, WATCH_ITEMS.0, WATCH_ITEMS.1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_are_validated_with_the_flag_and_the_fix() {
        let e = Scale::new(1500, 10, 500).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--customers 1500 is not a multiple of 1000 (the load unit); use --customers 1000 or 2000"
        );
        assert_eq!(Scale::new(0, 10, 500), Err(ScaleError::NoCustomers));
        assert_eq!(Scale::new(999, 10, 500), Err(ScaleError::NoCustomers));
        let e = Scale::new(1000, 0, 500).unwrap_err();
        assert!(e.to_string().starts_with("--trade-days must be"));
        assert_eq!(Scale::new(1000, 1, 0), Err(ScaleError::NoScaleFactor));
        let e = Scale::new(1_000_000_000_000, u32::MAX, 1).unwrap_err();
        assert!(e.to_string().contains("lower --trade-days"), "{e}");
    }

    #[test]
    fn one_load_unit_has_the_sizes_of_tpce_md_2_5() {
        let s = Scale::new(1000, 300, DEFAULT_SCALE_FACTOR).unwrap();
        assert_eq!(s.load_units(), 1);
        assert_eq!(s.customers(), 1_000);
        assert_eq!(s.companies(), 500);
        assert_eq!(s.securities(), 685);
        assert_eq!(s.brokers(), 10);
        assert_eq!(s.daily_market_rows(), 893_925);
        assert_eq!(s.financial_rows(), 10_000);
        assert_eq!(s.news_items(), 1_000);
        assert_eq!(s.initial_trades(), 17_280_000);
        let five = Scale::new(5000, 300, 500).unwrap();
        assert_eq!(five.initial_trades(), 86_400_000);
        assert_eq!(five.securities(), 5 * 685);
        assert_eq!(five.brokers(), 50);
    }

    #[test]
    fn one_trade_id_in_101_is_skipped() {
        assert_eq!((0..5).map(trade_id).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert_eq!(trade_id(99), 100);
        assert_eq!(trade_id(100), 102);
        assert_eq!(trade_id(199), 201);
        assert_eq!(trade_id(200), 203);
        let ids: Vec<u64> = (0..10_100).map(trade_id).collect();
        let last = ids[ids.len() - 1];
        let skipped = (1..=last).filter(|id| trade_index(*id).is_none()).count();
        assert_eq!(skipped, 100);
        assert_eq!(last, 10_200);
        for (n, id) in ids.iter().enumerate() {
            assert_eq!(trade_index(*id), Some(n as u64));
        }
        assert_eq!(trade_index(0), None);
        let s = Scale::new(1000, 1, 500).unwrap();
        assert_eq!(s.initial_trades(), 57_600);
        assert_eq!(s.first_run_trade_id(), trade_id(57_599) + 1);
        // 57,600 loaded ids and 575 skipped ones below them: 58,175 is the last.
        assert_eq!(s.first_run_trade_id(), 58_176);
    }

    #[test]
    fn tiers_split_20_60_20_exactly_in_every_load_unit() {
        for seed in [1, 2] {
            for lu in 0..4u64 {
                let mut counts = [0; 3];
                for c_id in lu * 1000 + 1..=(lu + 1) * 1000 {
                    counts[tier(seed, c_id) as usize - 1] += 1;
                }
                assert_eq!(counts, [200, 600, 200]);
            }
        }
        // Spread, not in blocks: the first 50 customers are not all of one tier.
        let first: Vec<Tier> = (1..=50).map(|c| tier(1, c)).collect();
        assert!(first.iter().any(|t| *t != first[0]));
    }

    #[test]
    fn accounts_stay_in_their_tier_bounds_and_average_five() {
        let mut total = 0;
        let customers = 20_000;
        for c_id in 1..=customers {
            let (lo, hi) = tier(3, c_id).account_bounds();
            let n = accounts(3, c_id);
            assert!((lo as u64..=hi as u64).contains(&n), "c_id {c_id}: {n}");
            assert!(n <= 10, "CA_ID ranges hold at most 10 accounts");
            total += n;
        }
        let avg = total as f64 / customers as f64;
        assert!((4.9..=5.1).contains(&avg), "{avg}");
        let mut watch = 0;
        for c_id in 1..=customers {
            let n = watch_items(3, c_id);
            assert!((50..=150).contains(&n));
            watch += n;
        }
        let avg = watch as f64 / customers as f64;
        assert!((99.0..=101.0).contains(&avg), "{avg}");
    }
}
