//! Securities: the SECURITY, LAST_TRADE and DAILY_MARKET rows of a security index (tpce.md
//! §2.3), and the pure functions behind them, which the transactions and tests can call to
//! know a loaded value without reading it (Market-Watch's closing prices, Security-Detail's
//! 52-week range and daily rows).
//!
//! DAILY_MARKET (1,305 weekdays from 2000-01-03) is a series of our own in the $20–30 range:
//! a slow trend through knots every 20 trading days plus a ripple through knots every 5,
//! each eased between knots with the smoothstep curve, so it looks like a price chart and any
//! day is computed in O(1) from a handful of draws. High and low lie a few cents either side
//! of the close. Integer arithmetic only, so every machine gets the same cents.
//!
//! SECURITY's 52-week high and low are the extremes of the last 260 DAILY_MARKET rows (52
//! weeks of weekdays, 2004-01-05 to 2004-12-31), dated on the earliest day they occur.
//! LAST_TRADE is where the run's market starts: the price curve of [`Curve`] at
//! [`clock::run_start`], and its open price the curve at the start of that trading day.

use super::catalog::{security_exchange, EXCHANGES};
use super::clock::{self, Day, MarketMs, TRADE_DAY_MS};
use super::market_company::open_date;
use super::{ids, Batch, Table};
use crate::workload::tpce::names::{company_name, symbol};
use crate::workload::tpce::price::{Curve, HIGH_CENTS, LOW_CENTS};
use crate::workload::tpce::rng::{Entity, Tag};
use crate::workload::tpce::scale::{Scale, DAILY_MARKET_DAYS};

/// DAILY_MARKET rows in the 52-week window of SECURITY's high and low.
pub const YEAR_DAYS: u64 = 52 * 5;
/// Trading days between the trend's knots and between the ripple's.
const TREND_DAYS: u64 = 20;
const RIPPLE_DAYS: u64 = 5;
/// The trend's knots, the ripple's amplitude and the daily spread of high and low, in cents.
const TREND: (i64, i64) = (2_150, 2_850);
const RIPPLE: i64 = 60;
const SPREAD: i64 = 75;
/// Securities are listed before DAILY_MARKET starts, and change exchange before trading.
const LISTED_BY: Day = Day::from_ymd(1999, 12, 31);
const LAST_EXCHANGE_CHANGE: Day = Day::from_ymd(2004, 12, 31);

/// Fields of the market stream (keyed by S_ID): knots, then four per day from `F_DAY`.
const F_TREND: u32 = 1_000;
const F_RIPPLE: u32 = 2_000;
const F_DAY: u32 = 10_000;
const D_HIGH: u32 = 0;
const D_LOW: u32 = 1;
const D_VOLUME: u32 = 2;
/// Fields of the security stream (keyed by S_ID); [`security_exchange`] uses 90.
const F_SHARES: u32 = 0;
const F_SHARES_DECADE: u32 = 1;
const F_START: u32 = 2;
const F_EXCH: u32 = 3;
const F_PAYS: u32 = 4;
const F_DIVIDEND: u32 = 5;
const F_TURNOVER: u32 = 6;
const F_LT_VOLUME: u32 = 7;

/// One DAILY_MARKET row's figures; prices in cents, `high ≥ close ≥ low`, all in $20–30.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    pub close: i64,
    pub high: i64,
    pub low: i64,
    pub volume: i64,
}

/// SECURITY's 52-week figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YearRange {
    pub high: i64,
    pub high_date: Day,
    pub low: i64,
    pub low_date: Day,
}

/// LAST_TRADE's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastTrade {
    pub dts: MarketMs,
    pub price: i64,
    pub open_price: i64,
    pub volume: i64,
}

/// S_NUM_OUT: 10 million to 10 billion common shares, 1–50 million preferred.
pub fn shares_outstanding(seed: u64, s_id: u64) -> i64 {
    let e = Entity::new(seed, Tag::Security, s_id);
    match ids::security_company(s_id).1 {
        "COMMON" => e.range(F_SHARES, 100, 999) * 10i64.pow(e.range(F_SHARES_DECADE, 5, 7) as u32),
        _ => e.range(F_SHARES, 1_000, 50_000) * 1_000,
    }
}

/// A value eased through knots every `span` days (smoothstep between knot `j` and `j + 1`),
/// the knots drawn from fields `field + j` in `lo..=hi`.
fn eased(e: &Entity, field: u32, span: u64, k: u64, (lo, hi): (i64, i64)) -> i64 {
    let j = (k / span) as u32;
    let (r, len) = ((k % span) as i64, span as i64);
    let a = e.range(field + j, lo, hi);
    let b = e.range(field + j + 1, lo, hi);
    a + (b - a) * r * r * (3 * len - 2 * r) / (len * len * len)
}

/// The volume a security trades on an ordinary day: 0.1–1 % of its shares.
fn base_volume(seed: u64, s_id: u64) -> i64 {
    let turnover = Entity::new(seed, Tag::Security, s_id).range(F_TURNOVER, 10, 100);
    (shares_outstanding(seed, s_id) / 10_000 * turnover).max(100)
}

fn bar_with(e: &Entity, base_volume: i64, k: u64) -> Bar {
    let trend = eased(e, F_TREND, TREND_DAYS, k, TREND);
    let ripple = eased(e, F_RIPPLE, RIPPLE_DAYS, k, (-RIPPLE, RIPPLE));
    let close = (trend + ripple).clamp(LOW_CENTS, HIGH_CENTS);
    let f = F_DAY + 4 * k as u32;
    Bar {
        close,
        high: (close + e.range(f + D_HIGH, 0, SPREAD)).min(HIGH_CENTS),
        low: (close - e.range(f + D_LOW, 0, SPREAD)).max(LOW_CENTS),
        volume: base_volume * e.range(f + D_VOLUME, 50, 150) / 100,
    }
}

/// DAILY_MARKET of security `s_id` on day `k` (0..1,305; its date is [`Day::daily_market`]).
pub fn daily_bar(seed: u64, s_id: u64, k: u64) -> Bar {
    bar_with(
        &Entity::new(seed, Tag::Market, s_id),
        base_volume(seed, s_id),
        k,
    )
}

/// The DAILY_MARKET day index of `day`, if it is one of the 1,305.
pub fn daily_market_index(day: Day) -> Option<u64> {
    let first = Day::daily_market(0);
    if day < first || day.weekday() > 4 {
        return None;
    }
    let weeks = (day.0 - first.0) / 7;
    let k = (weeks * 5 + day.weekday()) as u64;
    (k < DAILY_MARKET_DAYS).then_some(k)
}

/// SECURITY's 52-week high and low: the extremes of the last [`YEAR_DAYS`] daily rows, each
/// dated on the earliest day it occurs.
pub fn year_range(seed: u64, s_id: u64) -> YearRange {
    let e = Entity::new(seed, Tag::Market, s_id);
    let volume = base_volume(seed, s_id);
    let mut high = (i64::MIN, 0);
    let mut low = (i64::MAX, 0);
    for k in DAILY_MARKET_DAYS - YEAR_DAYS..DAILY_MARKET_DAYS {
        let bar = bar_with(&e, volume, k);
        if bar.high > high.0 {
            high = (bar.high, k);
        }
        if bar.low < low.0 {
            low = (bar.low, k);
        }
    }
    YearRange {
        high: high.0,
        high_date: Day::daily_market(high.1),
        low: low.0,
        low_date: Day::daily_market(low.1),
    }
}

/// The last DAILY_MARKET close, 2004-12-31: the price P/E and yield are quoted at.
pub fn last_close(seed: u64, s_id: u64) -> i64 {
    daily_bar(seed, s_id, DAILY_MARKET_DAYS - 1).close
}

/// S_DIVIDEND, annual, in cents: 60 % of common stocks pay $0.10–1.50, preferred stock
/// always pays $1.00–2.50.
pub fn dividend(seed: u64, s_id: u64) -> i64 {
    let e = Entity::new(seed, Tag::Security, s_id);
    match ids::security_company(s_id).1 {
        "COMMON" if e.chance(F_PAYS, 60) => e.range(F_DIVIDEND, 10, 150),
        "COMMON" => 0,
        _ => e.range(F_DIVIDEND, 100, 250),
    }
}

/// LAST_TRADE of security `s_id`: the price curve at the run's start and at the start of
/// that trading day, and the shares traded since the open. The run starts 15 minutes into
/// the day, exactly one 900 s period of the curve, so the two prices are equal.
pub fn last_trade(seed: u64, scale: &Scale, s_id: u64) -> LastTrade {
    let curve = Curve::for_security(seed, s_id);
    let dts = clock::run_start(scale.trade_days());
    let open = MarketMs(dts.trade_day() * TRADE_DAY_MS);
    LastTrade {
        dts,
        price: curve.price_at(dts.0),
        open_price: curve.price_at(open.0),
        volume: Entity::new(seed, Tag::Security, s_id).range(F_LT_VOLUME, 1, 200) * 100,
    }
}

/// `a / b` in hundredths, rounded half up (`a ≥ 0`, `b > 0`).
fn hundredths(a: i64, b: i64) -> i64 {
    (a * 100 + b / 2) / b
}

/// Writes security `s_id`'s SECURITY and LAST_TRADE rows; `trailing_eps` is its company's
/// EPS of the last four quarters, in cents (P/E is 0.00 when that is not positive).
pub(super) fn write_security(b: &mut Batch, seed: u64, scale: &Scale, s_id: u64, eps: i64) {
    let (co_id, issue) = ids::security_company(s_id);
    let e = Entity::new(seed, Tag::Security, s_id);
    let symb = symbol(seed, s_id);
    let start = Day(e.range(F_START, open_date(seed, co_id).0, LISTED_BY.0));
    let exch = Day(e.range(F_EXCH, start.0, LAST_EXCHANGE_CHANGE.0));
    let close = last_close(seed, s_id);
    let pe = if eps > 0 { hundredths(close, eps) } else { 0 };
    let div = dividend(seed, s_id);
    let year = year_range(seed, s_id);
    b.row(Table::Security)
        .text(&symb)
        .text(issue)
        .text("ACTV")
        .text(&format!("{} {issue}", company_name(seed, co_id)))
        .text(EXCHANGES[security_exchange(seed, s_id)].id)
        .int(co_id as i64)
        .int(shares_outstanding(seed, s_id))
        .date(start)
        .date(exch)
        .cents(pe)
        .cents(year.high)
        .date(year.high_date)
        .cents(year.low)
        .date(year.low_date)
        .cents(div)
        .cents(hundredths(div * 100, close))
        .end();
    let lt = last_trade(seed, scale, s_id);
    b.row(Table::LastTrade)
        .text(&symb)
        .ts(lt.dts)
        .cents(lt.price)
        .cents(lt.open_price)
        .int(lt.volume)
        .end();
}

/// The 1,305 DAILY_MARKET dates as text, to write each once per unit rather than per row.
pub(super) fn daily_dates() -> Vec<String> {
    (0..DAILY_MARKET_DAYS)
        .map(|k| Day::daily_market(k).text())
        .collect()
}

/// Writes security `s_id`'s 1,305 DAILY_MARKET rows; `dates` from [`daily_dates`].
pub(super) fn write_daily(b: &mut Batch, seed: u64, s_id: u64, dates: &[String]) {
    let symb = symbol(seed, s_id);
    let e = Entity::new(seed, Tag::Market, s_id);
    let volume = base_volume(seed, s_id);
    for (k, date) in dates.iter().enumerate() {
        let bar = bar_with(&e, volume, k as u64);
        b.row(Table::DailyMarket)
            .text(date)
            .text(&symb)
            .cents(bar.close)
            .cents(bar.high)
            .cents(bar.low)
            .int(bar.volume)
            .end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_stay_in_range_and_move_smoothly() {
        for s_id in [1, 2, 500, 501, 685, 10_000] {
            let bars: Vec<Bar> = (0..DAILY_MARKET_DAYS)
                .map(|k| daily_bar(4, s_id, k))
                .collect();
            for b in &bars {
                assert!(LOW_CENTS <= b.low && b.low <= b.close && b.close <= b.high);
                assert!(b.high <= HIGH_CENTS && b.volume > 0, "{b:?}");
            }
            // Smooth: a day's close is near the day before's, yet the series wanders.
            let steps: Vec<i64> = bars.windows(2).map(|w| w[1].close - w[0].close).collect();
            assert!(steps.iter().all(|d| d.abs() <= 120), "{s_id}");
            let lo = bars.iter().map(|b| b.close).min().unwrap_or(0);
            let hi = bars.iter().map(|b| b.close).max().unwrap_or(0);
            assert!(hi - lo > 300, "{s_id}: {lo}..{hi}");
        }
        assert_ne!(daily_bar(4, 1, 100), daily_bar(4, 2, 100));
        assert_ne!(daily_bar(4, 1, 100), daily_bar(5, 1, 100));
    }

    #[test]
    fn the_year_range_is_the_extremes_of_the_last_260_days() {
        assert_eq!(
            Day::daily_market(DAILY_MARKET_DAYS - YEAR_DAYS).text(),
            "2004-01-05"
        );
        for s_id in 1..=20 {
            let y = year_range(3, s_id);
            let window: Vec<(Day, Bar)> = (DAILY_MARKET_DAYS - YEAR_DAYS..DAILY_MARKET_DAYS)
                .map(|k| (Day::daily_market(k), daily_bar(3, s_id, k)))
                .collect();
            let high = window.iter().map(|w| w.1.high).max();
            let low = window.iter().map(|w| w.1.low).min();
            assert_eq!((Some(y.high), Some(y.low)), (high, low));
            let first_high = window.iter().find(|w| w.1.high == y.high).map(|w| w.0);
            let first_low = window.iter().find(|w| w.1.low == y.low).map(|w| w.0);
            assert_eq!(
                (Some(y.high_date), Some(y.low_date)),
                (first_high, first_low)
            );
        }
    }

    #[test]
    fn daily_market_days_index_back() {
        for k in [0, 1, 4, 5, 600, DAILY_MARKET_DAYS - 1] {
            assert_eq!(daily_market_index(Day::daily_market(k)), Some(k));
        }
        assert_eq!(daily_market_index(Day::from_ymd(2000, 1, 8)), None);
        assert_eq!(daily_market_index(Day::from_ymd(1999, 12, 31)), None);
        assert_eq!(daily_market_index(Day::from_ymd(2005, 1, 3)), None);
    }

    #[test]
    fn last_trade_is_the_curve_at_the_run_start() {
        let scale = Scale::new(1_000, 3, 500).unwrap();
        let lt = last_trade(7, &scale, 42);
        assert_eq!(lt.dts, clock::run_start(3));
        assert_eq!(lt.dts.text(), "2005-01-06 09:15:00.000");
        let curve = Curve::for_security(7, 42);
        assert_eq!(lt.price, curve.price_at(lt.dts.0));
        // 15 minutes after the open: the open price is the curve 900,000 ms earlier.
        assert_eq!(lt.open_price, curve.price_at(lt.dts.0 - 900_000));
    }

    #[test]
    fn shares_dividends_and_yields_are_plausible() {
        for s_id in 1..=685 {
            let shares = shares_outstanding(1, s_id);
            let div = dividend(1, s_id);
            match ids::security_company(s_id).1 {
                "COMMON" => assert!((10_000_000..10_000_000_000).contains(&shares)),
                _ => assert!((1_000_000..=50_000_000).contains(&shares) && div >= 100),
            }
            // Yield (numeric(5,2)) stays a realistic percentage.
            assert!(hundredths(div * 100, last_close(1, s_id)) <= 1_250);
        }
        let payers = (1..=500).filter(|&s| dividend(1, s) > 0).count();
        assert!((260..=340).contains(&payers), "{payers}");
    }
}
