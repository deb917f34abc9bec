//! The money of a completed trade in integer cents: charge, commission, tax and the
//! settlement amount (tpce.md §3.2 Trade-Result frames 3–6; the exact formulas are the ones the
//! lead fixed for the loader and the transactions alike):
//!
//! - commission = round(cr_rate / 100 × qty × price, 2);
//! - tax, for a taxable account's sell (ca_tax_st ≠ 0) = round(gain × Σ tx_rate, 2) when the
//!   long lots it closed gained, else 0;
//! - settlement (SE_AMT) = ±qty × price − charge − commission, minus the tax when the account
//!   withholds it (ca_tax_st = 1).
//!
//! PostgreSQL's numeric `round()` rounds half away from zero, and so does [`round_div`], so the
//! loaded rows, the client-side Trade-Result and the PL/pgSQL one agree to the cent. Where the
//! charge and the rates come from is the caller's business: the catalog for the loader, the
//! CHARGE, COMMISSION_RATE and TAXRATE rows for the transactions.

/// `num / den` rounded to the nearest integer, halves away from zero (PostgreSQL numeric
/// `round()`); `den > 0`.
pub fn round_div(num: i128, den: i128) -> i64 {
    let half = den / 2;
    let q = if num >= 0 {
        (num + half) / den
    } else {
        -((-num + half) / den)
    };
    q as i64
}

/// Commission of `qty` shares at `price_cents`: round(cr_rate / 100 × qty × price, 2), with the
/// rate in hundredths of a percent (COMMISSION_RATE.cr_rate 0.45 → 45).
pub fn commission_cents(rate_hundredths: i64, qty: i64, price_cents: i64) -> i64 {
    let num = i128::from(rate_hundredths) * i128::from(qty) * i128::from(price_cents);
    round_div(num, 10_000)
}

/// Tax on a gain: round(gain × Σ tx_rate, 2) when the gain is positive, else 0; the summed rate
/// in units of 1/100,000 (TAXRATE.tx_rate is numeric(6,5)).
pub fn tax_cents(gain_cents: i64, rate_e5: i64) -> i64 {
    if gain_cents <= 0 {
        return 0;
    }
    round_div(i128::from(gain_cents) * i128::from(rate_e5), 100_000)
}

/// What prices a trade besides its quantity and price, as the caller looked it up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terms {
    /// CH_CHRG for the trade's type and the customer's tier, in cents.
    pub charge: i64,
    /// CR_RATE for (tier, type, the security's exchange, the band holding qty), in hundredths
    /// of a percent.
    pub commission_rate: i64,
    /// CA_TAX_ST: 0 not taxable, 1 taxable with withholding, 2 taxable.
    pub tax_status: i64,
    /// Σ TX_RATE of the owner's CUSTOMER_TAXRATE rows, in units of 1/100,000.
    pub tax_rate: i64,
}

/// What a completed trade costs and settles for, in cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money {
    pub charge: i64,
    pub commission: i64,
    pub tax: i64,
    /// SE_AMT, also CT_AMT for a cash trade.
    pub settlement: i64,
}

/// The money of a trade of `qty` shares at `price_cents` on `terms`, whose closing of long lots
/// gained `gain_cents` (see [`super::lots::Settled::gain_cents`]; a buy is never taxed).
pub fn settle(is_sell: bool, qty: i64, price_cents: i64, terms: &Terms, gain_cents: i64) -> Money {
    let commission = commission_cents(terms.commission_rate, qty, price_cents);
    let tax = if terms.tax_status != 0 && is_sell {
        tax_cents(gain_cents, terms.tax_rate)
    } else {
        0
    };
    let value = qty * price_cents;
    let gross = if is_sell { value } else { -value };
    let withheld = if terms.tax_status == 1 { tax } else { 0 };
    Money {
        charge: terms.charge,
        commission,
        tax,
        settlement: gross - terms.charge - commission - withheld,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round_div(5, 10), 1);
        assert_eq!(round_div(-5, 10), -1);
        assert_eq!(round_div(4, 10), 0);
        assert_eq!(round_div(-4, 10), 0);
        assert_eq!(round_div(14, 10), 1);
        assert_eq!(round_div(15, 10), 2);
        assert_eq!(round_div(-15, 10), -2);
        assert_eq!(round_div(25, 10), 3);
        assert_eq!(round_div(0, 7), 0);
    }

    #[test]
    fn commission_follows_the_rate_in_hundredths_of_a_percent() {
        // 0.50 % of 100 × $25.00 = $12.50; 0.45 % of it = $11.25.
        assert_eq!(commission_cents(50, 100, 2_500), 1_250);
        assert_eq!(commission_cents(45, 100, 2_500), 1_125);
        // 0.37 % of 200 × $20.01 = $14.8074 → $14.81; 0.33 % = $13.2066 → $13.21.
        assert_eq!(commission_cents(37, 200, 2_001), 1_481);
        assert_eq!(commission_cents(33, 200, 2_001), 1_321);
        // 0.05 % of 100 × $20.01 = $1.0005 → $1.00, and of 100 × $20.10 = $1.005: the half
        // cent rounds up.
        assert_eq!(commission_cents(5, 100, 2_001), 100);
        assert_eq!(commission_cents(5, 100, 2_010), 101);
    }

    #[test]
    fn tax_only_on_gains() {
        // 25 % of a $100.00 gain; a $123.45 gain at 25.5 % = $31.47975 → $31.48.
        assert_eq!(tax_cents(10_000, 25_000), 2_500);
        assert_eq!(tax_cents(12_345, 25_500), 3_148);
        // 12.345 % of $0.10 = $0.012345 → $0.01; exactly half a cent, $0.10 at 5 % = $0.005,
        // rounds up to $0.01.
        assert_eq!(tax_cents(10, 12_345), 1);
        assert_eq!(tax_cents(10, 5_000), 1);
        assert_eq!(tax_cents(0, 25_500), 0);
        assert_eq!(tax_cents(-10_000, 25_500), 0);
    }

    #[test]
    fn settlements_take_charge_commission_and_withheld_tax() {
        let terms = |tax_status| Terms {
            charge: 500,
            commission_rate: 45,
            tax_status,
            tax_rate: 20_000,
        };
        // Sell 400 at $25.00 with a $500.00 gain: 20 % tax, withheld at status 1.
        let m = settle(true, 400, 2_500, &terms(1), 50_000);
        assert_eq!(m.charge, 500);
        assert_eq!(m.commission, commission_cents(45, 400, 2_500));
        assert_eq!(m.tax, 10_000);
        assert_eq!(m.settlement, 1_000_000 - 500 - m.commission - 10_000);
        // Taxable without withholding (status 2): taxed, not withheld.
        let m2 = settle(true, 400, 2_500, &terms(2), 50_000);
        assert_eq!(m2.tax, 10_000);
        assert_eq!(m2.settlement, 1_000_000 - 500 - m.commission);
        // Not taxable, or a loss: no tax.
        assert_eq!(settle(true, 400, 2_500, &terms(0), 50_000).tax, 0);
        assert_eq!(settle(true, 400, 2_500, &terms(1), -50_000).tax, 0);
        // Sell 100 at $25.00: charge $5, commission $11.25, a $3 tax ($15 gain at 20 %)
        // withheld.
        assert_eq!(
            settle(true, 100, 2_500, &terms(1), 1_500).settlement,
            250_000 - 500 - 1_125 - 300
        );
        // A buy pays its cost, and is never taxed, whatever gain is passed.
        let buy = Terms {
            charge: 350,
            commission_rate: 23,
            tax_status: 1,
            tax_rate: 20_000,
        };
        let m = settle(false, 200, 2_000, &buy, 0);
        assert_eq!((m.commission, m.tax), (920, 0));
        assert_eq!(m.settlement, -400_000 - 350 - 920);
        assert_eq!(settle(false, 200, 2_000, &buy, 9_999).tax, 0);
    }
}
