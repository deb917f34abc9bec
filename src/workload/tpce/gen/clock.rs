//! Market time and calendar dates of the generated data, without a date library.
//!
//! - [`Day`]: a calendar date, days since 1970-01-01; [`Day::weekdays_after`] steps over
//!   weekends, as both DAILY_MARKET (1,305 weekdays = 5 × 261 from 2000-01-03, tpce.md §2.3)
//!   and the trading days do.
//! - [`MarketMs`]: milliseconds of *trading* time since the initial trades began on Monday
//!   2005-01-03 09:00 (tpce.md §1, EGen's base time). A trading day is 8 hours, 09:00–17:00, so
//!   market time `t` falls on trading day `t / 8 h`. The price curve ([`super::super::price`])
//!   is a function of market time, so prices in TRADE, HOLDING and LAST_TRADE all agree.

use std::fmt::Write as _;

use crate::workload::tpce::scale::SECONDS_PER_TRADE_DAY;

/// Milliseconds in one trading day (8 h).
pub const TRADE_DAY_MS: i64 = SECONDS_PER_TRADE_DAY as i64 * 1_000;
/// Trading opens at 09:00.
const OPEN_MS: i64 = 9 * 3_600_000;

/// A calendar date: days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub i64);

/// The first DAILY_MARKET date, Monday 2000-01-03 (tpce.md §2.3).
pub const DAILY_MARKET_START: Day = Day::from_ymd(2000, 1, 3);
/// The first trading day of the initial trades, Monday 2005-01-03 (tpce.md §1).
pub const TRADING_START: Day = Day::from_ymd(2005, 1, 3);

impl Day {
    /// The date `y-m-d` (proleptic Gregorian; the days-from-civil algorithm).
    pub const fn from_ymd(y: i64, m: i64, d: i64) -> Day {
        let y = if m <= 2 { y - 1 } else { y };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        Day(era * 146_097 + doe - 719_468)
    }

    /// (year, month, day).
    pub fn ymd(self) -> (i64, i64, i64) {
        let z = self.0 + 719_468;
        let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        (yoe + era * 400 + i64::from(m <= 2), m, d)
    }

    /// Day of the week, 0 = Monday … 6 = Sunday.
    pub fn weekday(self) -> i64 {
        (self.0 + 3).rem_euclid(7)
    }

    pub fn plus(self, days: i64) -> Day {
        Day(self.0 + days)
    }

    /// The `n`-th weekday from `self` (a weekday): `n = 0` is `self`.
    pub fn weekdays_after(self, n: i64) -> Day {
        let w = self.weekday().min(4);
        let total = w + n;
        Day(self.0 - w + total.div_euclid(5) * 7 + total.rem_euclid(5))
    }

    /// The DAILY_MARKET date of day index `k` (0..1,305).
    pub fn daily_market(k: u64) -> Day {
        DAILY_MARKET_START.weekdays_after(k as i64)
    }

    pub fn push_to(self, out: &mut String) {
        let (y, m, d) = self.ymd();
        let _ = write!(out, "{y:04}-{m:02}-{d:02}");
    }

    pub fn text(self) -> String {
        let mut s = String::new();
        self.push_to(&mut s);
        s
    }
}

/// A moment of market time: trading milliseconds since 2005-01-03 09:00.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MarketMs(pub i64);

impl MarketMs {
    /// The trading day (from 0) this moment falls on.
    pub fn trade_day(self) -> i64 {
        self.0.div_euclid(TRADE_DAY_MS)
    }

    /// The calendar date of this moment.
    pub fn date(self) -> Day {
        TRADING_START.weekdays_after(self.trade_day())
    }

    /// Milliseconds since midnight of [`MarketMs::date`].
    pub fn time_of_day_ms(self) -> i64 {
        OPEN_MS + self.0.rem_euclid(TRADE_DAY_MS)
    }

    pub fn plus_ms(self, ms: i64) -> MarketMs {
        MarketMs(self.0 + ms)
    }

    /// `YYYY-MM-DD HH:MM:SS.mmm`, as COPY and SQL read a timestamp.
    pub fn push_to(self, out: &mut String) {
        self.date().push_to(out);
        let t = self.time_of_day_ms();
        let _ = write!(
            out,
            " {:02}:{:02}:{:02}.{:03}",
            t / 3_600_000,
            t / 60_000 % 60,
            t / 1_000 % 60,
            t % 1_000
        );
    }

    pub fn text(self) -> String {
        let mut s = String::new();
        self.push_to(&mut s);
        s
    }
}

/// When the initial trades stop being submitted: `trade_days` trading days after the start.
/// Orders still open then complete within the 15 minutes after (tpce.md §6, "15 extra minutes
/// are appended for orders pending at the end"), so a run's market time starts at
/// [`run_start`].
pub fn initial_trades_end(trade_days: u32) -> MarketMs {
    MarketMs(i64::from(trade_days) * TRADE_DAY_MS)
}

/// The market time a run starts at: the end of the initial trades plus the 15 minutes in
/// which their last orders complete.
pub fn run_start(trade_days: u32) -> MarketMs {
    initial_trades_end(trade_days).plus_ms(15 * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_know_their_weekday() {
        assert_eq!(Day::from_ymd(1970, 1, 1), Day(0));
        assert_eq!(TRADING_START.text(), "2005-01-03");
        assert_eq!(TRADING_START.weekday(), 0);
        assert_eq!(Day::from_ymd(2004, 2, 29).ymd(), (2004, 2, 29));
        assert_eq!(Day::from_ymd(2004, 3, 1).plus(-1).text(), "2004-02-29");
    }

    #[test]
    fn weekdays_skip_weekends() {
        let mon = TRADING_START;
        assert_eq!(mon.weekdays_after(4).text(), "2005-01-07");
        assert_eq!(mon.weekdays_after(5).text(), "2005-01-10");
        // 1,305 weekdays from 2000-01-03 end on Friday 2004-12-31, the last day before trading.
        assert_eq!(Day::daily_market(1_304).text(), "2004-12-31");
        assert_eq!(Day::daily_market(1_304).weekday(), 4);
    }

    #[test]
    fn market_time_is_trading_hours() {
        assert_eq!(MarketMs(500).text(), "2005-01-03 09:00:00.500");
        assert_eq!(MarketMs(TRADE_DAY_MS - 1).text(), "2005-01-03 16:59:59.999");
        assert_eq!(MarketMs(TRADE_DAY_MS * 5).text(), "2005-01-10 09:00:00.000");
    }
}
