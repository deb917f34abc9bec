//! Numeric text to and from PostgreSQL: the transactions send money as numeric literals and
//! read numeric columns (prices, charges, rates) from the text the server returns as integers
//! of a fixed scale, so no figure passes through a float on its way to the money rules
//! ([`crate::workload::tpce::rules::money`]).

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
