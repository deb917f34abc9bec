//! The money rules of a completed trade (commission, tax, settlement amount) in integer cents,
//! and the numeric text that travels to and from PostgreSQL.
//!
//! The rules are the ones the loader's trade simulation and Trade-Result share (see the
//! module doc of [`super`]); PL/pgSQL computes the same figures with numeric `round()`, which
//! rounds half away from zero, so [`round_div`] does too and both back ends agree to the cent.

/// `num / den` rounded half away from zero (PostgreSQL numeric `round()`); `den > 0`.
pub fn round_div(num: i128, den: i128) -> i128 {
    let half = den / 2;
    if num >= 0 {
        (num + half) / den
    } else {
        -((-num + half) / den)
    }
}

/// Commission of `qty` shares at `price_cents`: round(cr_rate / 100 × qty × price, 2), with the
/// rate in hundredths of a percent (COMMISSION_RATE.cr_rate 0.45 → 45).
pub fn commission_cents(rate_hundredths: i64, qty: i64, price_cents: i64) -> i64 {
    let num = i128::from(rate_hundredths) * i128::from(qty) * i128::from(price_cents);
    round_div(num, 10_000) as i64
}

/// Tax on a gain: round(gain × Σ tx_rate, 2) when the gain is positive, else 0; the summed rate
/// in units of 1/100,000 (TAXRATE.tx_rate is numeric(6,5)).
pub fn tax_cents(gain_cents: i64, rate_e5: i64) -> i64 {
    if gain_cents <= 0 {
        return 0;
    }
    round_div(i128::from(gain_cents) * i128::from(rate_e5), 100_000) as i64
}

/// The cash a trade moves (SETTLEMENT.se_amt): the proceeds of a sell or minus the cost of a
/// buy, less charge and commission, less the tax when the account withholds it (tax status 1).
pub fn settlement_cents(
    is_sell: bool,
    qty: i64,
    price_cents: i64,
    charge_cents: i64,
    commission_cents: i64,
    tax_cents: i64,
    tax_status: i64,
) -> i64 {
    let value = qty * price_cents;
    let gross = if is_sell { value } else { -value };
    let withheld = if tax_status == 1 { tax_cents } else { 0 };
    gross - charge_cents - commission_cents - withheld
}

/// Cents as a numeric literal: 1234 → "12.34", -5 → "-0.05".
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// A numeric's text as an integer of `scale` decimal places: ("12.3", 2) → 1230,
/// ("-0.23456", 5) → -23456. Digits beyond `scale` must be zeros (None otherwise), as must
/// anything that is not a plain decimal.
pub fn parse_fixed(text: &str, scale: u32) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (units, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if units.is_empty() || !units.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = scale as usize;
    let (kept, dropped) = fraction.split_at(fraction.len().min(scale));
    if dropped.bytes().any(|b| b != b'0') {
        return None;
    }
    let mut value: i64 = units.parse().ok()?;
    for k in 0..scale {
        let d = kept.as_bytes().get(k).map_or(0, |b| i64::from(b - b'0'));
        value = value.checked_mul(10)?.checked_add(d)?;
    }
    Some(if negative { -value } else { value })
}

/// `parse_fixed(text, 2)`: a money or price column in cents.
pub fn cents(text: &str) -> Option<i64> {
    parse_fixed(text, 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round_div(5, 10), 1);
        assert_eq!(round_div(4, 10), 0);
        assert_eq!(round_div(-5, 10), -1);
        assert_eq!(round_div(-4, 10), 0);
        assert_eq!(round_div(15, 10), 2);
        assert_eq!(round_div(25, 10), 3);
    }

    #[test]
    fn commission_follows_the_rate_in_hundredths_of_a_percent() {
        // 0.45 % of 100 × $25.00 = $11.25.
        assert_eq!(commission_cents(45, 100, 2_500), 1_125);
        // 0.33 % of 200 × $20.01 = $13.2066 → $13.21.
        assert_eq!(commission_cents(33, 200, 2_001), 1_321);
        // 0.05 % of 100 × $20.01 = $1.0005 → $1.00, and of 100 × $20.10 = $1.005: the half
        // cent rounds up.
        assert_eq!(commission_cents(5, 100, 2_001), 100);
        assert_eq!(commission_cents(5, 100, 2_010), 101);
    }

    #[test]
    fn tax_only_on_gains() {
        // A $123.45 gain at 25.5 % = $31.47975 → $31.48.
        assert_eq!(tax_cents(12_345, 25_500), 3_148);
        assert_eq!(tax_cents(0, 25_500), 0);
        assert_eq!(tax_cents(-10_000, 25_500), 0);
        // Exactly half a cent: $0.10 at 5 % = $0.005 → $0.01.
        assert_eq!(tax_cents(10, 5_000), 1);
    }

    #[test]
    fn settlement_signs_and_withholding() {
        // Sell 100 at $25.00, charge $5, commission $11.25, tax $3 withheld (status 1).
        assert_eq!(
            settlement_cents(true, 100, 2_500, 500, 1_125, 300, 1),
            250_000 - 500 - 1_125 - 300
        );
        // Status 2 pays its tax elsewhere: not withheld.
        assert_eq!(
            settlement_cents(true, 100, 2_500, 500, 1_125, 300, 2),
            250_000 - 500 - 1_125
        );
        assert_eq!(
            settlement_cents(false, 200, 2_000, 350, 900, 0, 0),
            -400_000 - 350 - 900
        );
    }

    #[test]
    fn numeric_text_round_trips() {
        for c in [0, 5, -5, 99, 100, 1_234, -1_234, 987_654_321] {
            assert_eq!(cents(&money(c)), Some(c), "{c}");
        }
        assert_eq!(money(-5), "-0.05");
        assert_eq!(parse_fixed("0.23456", 5), Some(23_456));
        assert_eq!(parse_fixed("12.3", 2), Some(1_230));
        assert_eq!(parse_fixed("12", 2), Some(1_200));
        assert_eq!(parse_fixed("1.500", 2), Some(150));
        assert_eq!(parse_fixed("1.505", 2), None);
        assert_eq!(parse_fixed("-", 2), None);
        assert_eq!(parse_fixed("1e5", 2), None);
        assert_eq!(parse_fixed("", 2), None);
    }
}
