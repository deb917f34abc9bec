//! FINANCIAL: 20 quarters per company, 2000 Q1 to 2004 Q4, the five years DAILY_MARKET covers
//! (tpce.md §2.3). The figures hang together as a real filing's would: revenue grows or
//! shrinks quarter by quarter around a level set by the company's common shares (price about
//! $25, a price-to-sales ratio of 0.2–2), net earnings are revenue times a margin, EPS is
//! earnings over the shares outstanding, and the balance sheet scales with revenue. The
//! security's P/E ([`trailing_eps`]) is computed from the last four quarters.
//!
//! Money is integer cents and ratios basis points, so every figure is exact and the same on
//! every machine (no floating point).

use super::clock::Day;
use super::ids;
use super::market_security::shares_outstanding;
use super::{Batch, Table};
use crate::workload::tpce::rng::{Entity, Tag};
use crate::workload::tpce::scale::FINANCIALS_PER_COMPANY;

pub const FIRST_YEAR: i64 = 2000;
const BP: i128 = 10_000;
/// The price the revenue level is scaled from: the middle of the $20–30 range, in cents.
const REFERENCE_PRICE_CENTS: i128 = 2_500;

/// Fields of the company stream (keyed by CO_ID) used here: 100 and up.
const F_PRICE_TO_SALES: u32 = 100;
const F_GROWTH: u32 = 101;
const F_MARGIN: u32 = 102;
const F_SHARE_DRIFT: u32 = 103;
const F_DILUTION: u32 = 104;
const F_INVENTORY: u32 = 105;
const F_ASSETS: u32 = 106;
const F_LEVERAGE: u32 = 107;
const F_QUARTER: u32 = 120; // 4 per quarter
const Q_REVENUE: u32 = 0;
const Q_MARGIN: u32 = 1;

/// One FINANCIAL row. Money in cents, the margin in basis points (FI_MARGIN is that as a
/// percent with two decimals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarter {
    pub year: i64,
    pub qtr: i64,
    pub start: Day,
    pub revenue: i64,
    pub net_earn: i64,
    pub basic_eps: i64,
    pub dilut_eps: i64,
    pub margin_bp: i64,
    pub inventory: i64,
    pub assets: i64,
    pub liability: i64,
    pub out_basic: i64,
    pub out_dilut: i64,
}

/// `v × bp / 10,000`, rounded half away from zero.
fn times_bp(v: i64, bp: i64) -> i64 {
    div_round(i128::from(v) * i128::from(bp), BP)
}

/// `a / b` rounded half away from zero (as PostgreSQL's round() would), `b > 0`.
fn div_round(a: i128, b: i128) -> i64 {
    let q = (a.abs() + b / 2) / b;
    (if a < 0 { -q } else { q }) as i64
}

/// Company `co_id`'s 20 quarters, oldest first.
pub fn quarters(seed: u64, co_id: u64) -> Vec<Quarter> {
    let e = Entity::new(seed, Tag::Company, co_id);
    let n = FINANCIALS_PER_COMPANY as usize;
    let common = ids::security_of(co_id, "COMMON").unwrap_or(1);
    let shares_now = shares_outstanding(seed, common);
    let price_to_sales = i128::from(e.range(F_PRICE_TO_SALES, 200, 2_000));
    let growth = e.range(F_GROWTH, -200, 500);
    let margin = e.range(F_MARGIN, -300, 2_500);
    let drift = e.range(F_SHARE_DRIFT, 0, 50);
    let dilution = e.range(F_DILUTION, 0, 400);
    let inventory = e.range(F_INVENTORY, 0, 6_000);
    let assets = e.range(F_ASSETS, 20_000, 80_000);
    let leverage = e.range(F_LEVERAGE, 2_000, 9_000);
    // Revenue runs backwards from the latest quarter, whose level the shares set.
    let annual = i128::from(shares_now) * REFERENCE_PRICE_CENTS * price_to_sales / 1_000;
    let mut revenue = vec![0i64; n];
    revenue[n - 1] = (annual / 4) as i64;
    for q in (1..n).rev() {
        let f = F_QUARTER + 4 * q as u32;
        let change = BP + i128::from(growth + e.range(f + Q_REVENUE, -300, 300));
        revenue[q - 1] = div_round(i128::from(revenue[q]) * BP, change);
    }
    (0..n)
        .map(|q| {
            let f = F_QUARTER + 4 * q as u32;
            let margin_bp = margin + e.range(f + Q_MARGIN, -400, 400);
            let net_earn = times_bp(revenue[q], margin_bp);
            // Shares grow slowly to today's count.
            let out_basic = times_bp(shares_now, 10_000 - drift * (n - 1 - q) as i64).max(1);
            let out_dilut = times_bp(out_basic, 10_000 + dilution);
            let assets = times_bp(revenue[q], assets);
            let year = FIRST_YEAR + q as i64 / 4;
            let qtr = q as i64 % 4 + 1;
            Quarter {
                year,
                qtr,
                start: Day::from_ymd(year, 3 * (qtr - 1) + 1, 1),
                revenue: revenue[q],
                net_earn,
                basic_eps: div_round(i128::from(net_earn), i128::from(out_basic)),
                dilut_eps: div_round(i128::from(net_earn), i128::from(out_dilut)),
                margin_bp,
                inventory: times_bp(revenue[q], inventory),
                assets,
                liability: times_bp(assets, leverage),
                out_basic,
                out_dilut,
            }
        })
        .collect()
}

/// The basic EPS of the last four quarters (2004), in cents: the earnings of a share over
/// the year before trading starts, which the securities' P/E divides their price by.
pub fn trailing_eps(seed: u64, co_id: u64) -> i64 {
    quarters(seed, co_id)
        .iter()
        .rev()
        .take(4)
        .map(|q| q.basic_eps)
        .sum()
}

/// Writes the FINANCIAL rows of company `co_id`.
pub(super) fn write_financials(b: &mut Batch, co_id: u64, quarters: &[Quarter]) {
    for q in quarters {
        b.row(Table::Financial)
            .int(co_id as i64)
            .int(q.year)
            .int(q.qtr)
            .date(q.start)
            .cents(q.revenue)
            .cents(q.net_earn)
            .cents(q.basic_eps)
            .cents(q.dilut_eps)
            .fixed(q.margin_bp, 2)
            .cents(q.inventory)
            .cents(q.assets)
            .cents(q.liability)
            .int(q.out_basic)
            .int(q.out_dilut)
            .end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numeric(17,2) holds less than 10^15 in whole units.
    const MAX_17_2: i64 = 100_000_000_000_000_000 - 1;

    #[test]
    fn quarters_cover_2000_to_2004_and_hang_together() {
        for co in (1..=300).chain(5_001..=5_020) {
            let qs = quarters(2, co);
            assert_eq!(qs.len(), 20);
            assert_eq!((qs[0].year, qs[0].qtr), (2000, 1));
            assert_eq!((qs[19].year, qs[19].qtr), (2004, 4));
            assert_eq!(qs[5].start.text(), "2001-04-01");
            for q in &qs {
                assert!(q.revenue > 0, "{co}: {q:?}");
                assert!(q.revenue.abs() <= MAX_17_2 && q.assets <= MAX_17_2);
                assert_eq!(q.net_earn, times_bp(q.revenue, q.margin_bp));
                assert!(q.liability < q.assets && q.inventory <= q.revenue);
                assert!(q.out_basic <= q.out_dilut);
                // Diluted EPS is never further from zero than basic EPS.
                assert!(q.dilut_eps.abs() <= q.basic_eps.abs(), "{q:?}");
                assert!((-700..=2_900).contains(&q.margin_bp));
            }
            let last = shares_outstanding(2, ids::security_of(co, "COMMON").unwrap());
            assert_eq!(qs[19].out_basic, last);
            assert_eq!(
                trailing_eps(2, co),
                qs[16..].iter().map(|q| q.basic_eps).sum::<i64>()
            );
        }
    }

    #[test]
    fn most_companies_earn_and_pe_ratios_are_plausible() {
        let mut pes: Vec<i64> = (1..=500)
            .map(|co| trailing_eps(9, co))
            .filter(|&eps| eps > 0)
            .map(|eps| 2_500 / eps)
            .collect();
        assert!((400..=495).contains(&pes.len()), "{}", pes.len());
        // At $25 a share the typical P/E is one markets show.
        pes.sort_unstable();
        let median = pes[pes.len() / 2];
        assert!((3..=40).contains(&median), "{median}");
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(div_round(5, 2), 3);
        assert_eq!(div_round(-5, 2), -3);
        assert_eq!(div_round(4, 3), 1);
        assert_eq!(times_bp(-15, 5_000), -8);
    }

    #[test]
    fn rows_fit_the_schema() {
        let mut b = Batch::new();
        write_financials(&mut b, 12, &quarters(1, 12));
        super::super::assert_rows_fit_schema(&b);
        assert_eq!(b.text(Table::Financial).lines().count(), 20);
    }
}
