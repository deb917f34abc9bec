//! The money of a completed trade, in integer cents: charge, commission, tax and the
//! settlement amount, by the rules the simulation shares with Trade-Result (tpce.md §3.2
//! Trade-Result frames 3–6; the exact formulas are the ones the lead fixed for both sides).
//! PostgreSQL's numeric `round()` rounds half away from zero, and so does [`round_div`], so the
//! loaded rows and a run's Trade-Result agree to the cent.

use crate::workload::tpce::gen::catalog::{charge_cents, commission_band, commission_rate};

use super::order::LoadedTrade;

/// The facts of an account that price a trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountTerms {
    /// The owner's tier, 1–3.
    pub tier: u8,
    /// CA_TAX_ST: 0 not taxable, 1 taxable with withholding, 2 taxable.
    pub tax_status: u8,
    /// Σ TX_RATE of the owner's CUSTOMER_TAXRATE rows, in units of 1/100,000.
    pub tax_rate: i64,
}

/// What a completed trade costs and settles for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money {
    pub charge: i64,
    pub commission: i64,
    pub tax: i64,
    /// SE_AMT, also CT_AMT for a cash trade.
    pub settlement: i64,
}

/// `n / d` rounded to the nearest integer, halves away from zero; `d` > 0.
pub fn round_div(n: i128, d: i128) -> i64 {
    let q = (n.abs() * 2 + d) / (2 * d);
    (if n < 0 { -q } else { q }) as i64
}

/// round(cr_rate / 100 × qty × price, 2) with cr_rate in hundredths of a percent and the price
/// in cents: rate/10,000 × qty × price cents.
pub fn commission(rate: i64, qty: i64, price: i64) -> i64 {
    round_div(
        i128::from(rate) * i128::from(qty) * i128::from(price),
        10_000,
    )
}

/// round(gain × Σ tx_rate, 2) for a positive gain in cents, else 0.
pub fn tax(gain: i64, tax_rate: i64) -> i64 {
    if gain <= 0 {
        return 0;
    }
    round_div(i128::from(gain) * i128::from(tax_rate), 100_000)
}

/// The money of trade `t` on an account of `terms`, on exchange `exchange` (index into
/// the catalog's exchanges), whose closing of long lots gained `gain` cents (0 for a buy).
pub fn settle(t: &LoadedTrade, terms: &AccountTerms, exchange: usize, gain: i64) -> Money {
    let charge = charge_cents(t.tt, terms.tier);
    let rate = commission_rate(terms.tier, t.tt, exchange, commission_band(t.qty));
    let commission = commission(rate, t.qty, t.price);
    let tax = if terms.tax_status != 0 && t.is_sell() {
        tax(gain, terms.tax_rate)
    } else {
        0
    };
    let value = t.qty * t.price;
    let mut settlement = if t.is_sell() { value } else { -value } - charge - commission;
    if terms.tax_status == 1 {
        settlement -= tax;
    }
    Money {
        charge,
        commission,
        tax,
        settlement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpce::gen::catalog::TRADE_TYPES;
    use crate::workload::tpce::gen::clock::MarketMs;

    fn trade(tt: &str, qty: i64, price: i64) -> LoadedTrade {
        LoadedTrade {
            index: 0,
            t_id: 1,
            c_id: 1,
            ca_id: 1,
            s_id: 1,
            slot: 0,
            tt: TRADE_TYPES.iter().position(|t| t.id == tt).unwrap(),
            qty,
            is_cash: true,
            lifo: false,
            executor: 1,
            bid: price,
            submitted: MarketMs(0),
            triggered: None,
            completed: MarketMs(0),
            price,
        }
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round_div(5, 10), 1);
        assert_eq!(round_div(-5, 10), -1);
        assert_eq!(round_div(4, 10), 0);
        assert_eq!(round_div(-15, 10), -2);
        assert_eq!(round_div(14, 10), 1);
        assert_eq!(round_div(0, 7), 0);
    }

    #[test]
    fn commission_and_tax_are_percentages_of_dollars() {
        // 0.50 % of 100 × $25.00 = $12.50.
        assert_eq!(commission(50, 100, 2_500), 1_250);
        // 0.37 % of 200 × $20.01 = $14.8074 → $14.81.
        assert_eq!(commission(37, 200, 2_001), 1_481);
        // 25 % of a $100.00 gain; 12.345 % of $0.10 = $0.012345 → $0.01.
        assert_eq!(tax(10_000, 25_000), 2_500);
        assert_eq!(tax(10, 12_345), 1);
        assert_eq!(tax(-10_000, 25_000), 0);
        assert_eq!(tax(0, 25_000), 0);
    }

    #[test]
    fn settlements_take_charge_commission_and_withheld_tax() {
        let terms = |tax_status| AccountTerms {
            tier: 2,
            tax_status,
            tax_rate: 20_000,
        };
        let sell = trade("TMS", 400, 2_500);
        let m = settle(&sell, &terms(1), 0, 50_000);
        assert_eq!(m.charge, charge_cents(sell.tt, 2));
        let rate = commission_rate(2, sell.tt, 0, commission_band(400));
        assert_eq!(m.commission, commission(rate, 400, 2_500));
        assert_eq!(m.tax, 10_000);
        assert_eq!(m.settlement, 1_000_000 - m.charge - m.commission - 10_000);
        // Taxable without withholding: taxed, not withheld.
        let m2 = settle(&sell, &terms(2), 0, 50_000);
        assert_eq!(m2.tax, 10_000);
        assert_eq!(m2.settlement, 1_000_000 - m.charge - m.commission);
        // Not taxable, or a loss: no tax.
        assert_eq!(settle(&sell, &terms(0), 0, 50_000).tax, 0);
        assert_eq!(settle(&sell, &terms(1), 0, -50_000).tax, 0);
        let buy = trade("TLB", 100, 2_000);
        let m = settle(&buy, &terms(1), 3, 0);
        assert_eq!(m.tax, 0);
        assert_eq!(m.settlement, -200_000 - m.charge - m.commission);
        // A buy is never taxed, whatever gain is passed.
        assert_eq!(settle(&buy, &terms(1), 3, 9_999).tax, 0);
    }
}
