//! The text forms of values, as pgbench 15 writes and reads them: what a variable holding a
//! value turns into when substituted into SQL (`%.15g` for doubles, through PostgreSQL's own
//! `snprintf`, which spells infinities and NaN its way), and how a variable's text is read
//! back as a value (pgbench's `makeVariableValue`, with C's `strtol`/`strtod` rules: leading
//! white space, hex floats, `inf`/`nan`, and out-of-range input refused).

use std::fmt::Write as _;

use super::Value;

/// Significant digits pgbench prints a double with (`DBL_DIG`).
const DBL_DIG: i32 = 15;

impl Value {
    /// The text pgbench substitutes for a variable holding this value: an int in decimal, a
    /// double as `%.15g` (`Infinity`, `-Infinity` and `NaN` for the special values), a bool as
    /// `true`/`false`, and NULL as `NULL` (pgbench 15 substitutes the word, checked).
    pub fn write_text(&self, out: &mut String) {
        match *self {
            Value::Null => out.push_str("NULL"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            // itoa, not `write!`: a `\set` of an integer runs per transaction.
            Value::Int(i) => out.push_str(itoa::Buffer::new().format(i)),
            Value::Double(d) => write_double(d, out),
        }
    }

    /// pgbench's `makeVariableValue`: a variable's text read as a value. `null` (any case) is
    /// NULL; a case-insensitive prefix of `true` or `yes`, or `on`, is true; a prefix of
    /// `false` or `no`, or `off`/`of`, is false; then an int64 (`^\s*[-+]?[0-9]+$`), then a
    /// double as C's `strtod` reads it. `None` for the empty string, an int out of range, a
    /// double out of range (overflow or underflow), or anything else: the caller reports
    /// `malformed variable "x" value: "..."`.
    pub fn from_text(s: &str) -> Option<Value> {
        if s.is_empty() {
            return None;
        }
        if s.eq_ignore_ascii_case("null") {
            return Some(Value::Null);
        }
        // pgbench accepts prefixes (y, ye, n, t, fa...) but not "o", which could be on or off.
        if is_prefix_ci(s, "true") || is_prefix_ci(s, "yes") || s.eq_ignore_ascii_case("on") {
            return Some(Value::Bool(true));
        }
        if is_prefix_ci(s, "false")
            || is_prefix_ci(s, "no")
            || s.eq_ignore_ascii_case("off")
            || s.eq_ignore_ascii_case("of")
        {
            return Some(Value::Bool(false));
        }
        if looks_like_int(s) {
            // Looking like an int commits to one: out of range is an error, not a double.
            return s
                .trim_start_matches(is_c_space)
                .parse()
                .ok()
                .map(Value::Int);
        }
        parse_c_double(s).map(Value::Double)
    }

    /// The truth of a value where pgbench needs a condition (`\if`, `\elif`, `CASE WHEN`):
    /// NULL is false, numbers are true when non-zero. Never an error.
    pub fn truth(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// The type's name in pgbench's coercion errors (`cannot coerce boolean to int`).
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }
}

/// Whether `s` (not empty) is a case-insensitive prefix of `word`, as pgbench tests it with
/// `pg_strncasecmp(s, word, strlen(s))`.
fn is_prefix_ci(s: &str, word: &str) -> bool {
    s.len() <= word.len() && word.as_bytes()[..s.len()].eq_ignore_ascii_case(s.as_bytes())
}

/// C's `isspace` in the C locale.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// pgbench's `is_an_int`: `^\s*[-+]?[0-9]+$`, except that it also says yes to a bare sign or
/// to blanks (which the int conversion then refuses, so the value is malformed either way).
fn looks_like_int(s: &str) -> bool {
    let rest = s.trim_start_matches(is_c_space);
    let rest = rest.strip_prefix(['+', '-']).unwrap_or(rest);
    rest.bytes().all(|b| b.is_ascii_digit())
}

/// Writes a double as pgbench does: `%.15g`, with PostgreSQL's spelling of the special values.
pub(super) fn write_double(d: f64, out: &mut String) {
    if d.is_nan() {
        out.push_str("NaN");
        return;
    }
    if d.is_infinite() {
        out.push_str(if d < 0.0 { "-Infinity" } else { "Infinity" });
        return;
    }
    // %g decides between fixed and exponent notation from the exponent the value has once
    // rounded to 15 significant digits, so round first (Rust rounds exactly, ties to even,
    // as glibc does).
    let start = out.len();
    let _ = write!(out, "{:.*e}", (DBL_DIG - 1) as usize, d);
    let e_at = start + out[start..].rfind('e').expect("{:e} writes an exponent");
    let exp: i32 = out[e_at + 1..]
        .parse()
        .expect("{:e} writes a decimal exponent");
    if (-4..DBL_DIG).contains(&exp) {
        out.truncate(start);
        let _ = write!(out, "{:.*}", (DBL_DIG - 1 - exp) as usize, d);
        trim_fraction(out, start);
    } else {
        out.truncate(e_at);
        trim_fraction(out, start);
        let _ = write!(
            out,
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
    }
}

/// Drops trailing zeros after a decimal point, then the point itself, as `%g` does.
fn trim_fraction(out: &mut String, start: usize) {
    if out[start..].contains('.') {
        let kept = out.trim_end_matches('0').trim_end_matches('.').len();
        out.truncate(kept);
    }
}

/// A double as C's `%f` writes it in pgbench's messages (`double to int overflow for %f`),
/// with PostgreSQL's spelling of the special values.
pub(super) fn c_fixed(d: f64) -> String {
    if d.is_nan() {
        "NaN".to_string()
    } else if d.is_infinite() {
        if d < 0.0 { "-Infinity" } else { "Infinity" }.to_string()
    } else {
        format!("{d:.6}")
    }
}

/// pgbench's `strtodouble`: C's `strtod` in the C locale, where the whole text must be the
/// number and a result out of range (overflow to infinity, or underflow to zero or to a
/// subnormal) is refused, as glibc flags it with `ERANGE`.
pub(super) fn parse_c_double(s: &str) -> Option<f64> {
    let body = s.trim_start_matches(is_c_space);
    let (negative, unsigned) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    let magnitude = if is_inf_word(unsigned) {
        f64::INFINITY
    } else if is_nan_word(unsigned) {
        f64::NAN
    } else if let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        parse_hex_float(hex)?
    } else {
        parse_decimal(unsigned)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

fn is_inf_word(s: &str) -> bool {
    s.eq_ignore_ascii_case("inf") || s.eq_ignore_ascii_case("infinity")
}

/// `nan`, or `nan(chars)` with letters, digits and underscores inside.
fn is_nan_word(s: &str) -> bool {
    if s.len() < 3 || !s[..3].eq_ignore_ascii_case("nan") {
        return false;
    }
    let rest = &s[3..];
    rest.is_empty()
        || (rest.starts_with('(')
            && rest.ends_with(')')
            && rest.len() >= 2
            && rest[1..rest.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// An unsigned decimal: digits with an optional point (at least one digit in all), then an
/// optional exponent with at least one digit.
fn parse_decimal(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut digits = 0;
    let mut nonzero = false;
    while i < b.len() && b[i].is_ascii_digit() {
        nonzero |= b[i] != b'0';
        digits += 1;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            nonzero |= b[i] != b'0';
            digits += 1;
            i += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    in_range(v, nonzero)
}

/// A hex float after its `0x`: hex digits with an optional point (at least one digit), then an
/// optional binary exponent `p[+-]digits`.
fn parse_hex_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    // The mantissa's leading 28 hex digits (112 bits, far more than a double keeps); any
    // non-zero digit past them only makes the value inexact, which a sticky low bit records.
    let mut mantissa: u128 = 0;
    let mut kept = 0u32;
    let mut sticky = false;
    let mut scale: i64 = 0; // binary exponent adjustment from dropped or fractional digits
    let mut digits = 0;
    let mut seen_point = false;
    while i < b.len() {
        let c = b[i];
        if c == b'.' && !seen_point {
            seen_point = true;
            i += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else {
            break;
        };
        digits += 1;
        if mantissa == 0 && d == 0 {
            // Leading zeros carry no bits, only position.
        } else if kept < 28 {
            mantissa = (mantissa << 4) | d as u128;
            kept += 1;
        } else {
            sticky |= d != 0;
            scale += 4;
        }
        if seen_point {
            scale -= 4;
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'p' || b[i] == b'P') {
        let rest = &s[i + 1..];
        let digits_at = usize::from(rest.starts_with(['+', '-']));
        if rest.len() == digits_at || !rest[digits_at..].bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        // Absurd exponents saturate: the result is out of range either way.
        let exp: i64 = rest.parse().unwrap_or(if rest.starts_with('-') {
            -100_000
        } else {
            100_000
        });
        scale = scale.saturating_add(exp);
        i = b.len();
    }
    if i != b.len() {
        return None;
    }
    if mantissa == 0 {
        return Some(0.0);
    }
    if sticky {
        mantissa |= 1;
    }
    // The value's binary exponent decides the range before any rounding of the scaling.
    let top_bit = 127 - mantissa.leading_zeros() as i64;
    let exponent = top_bit + scale;
    if !(-1022..=1023).contains(&exponent) {
        return None;
    }
    // Rounding to 53 bits happens here, once; scaling by powers of two within the normal
    // range is exact (in two steps, since each factor must itself be a normal double).
    let half = scale / 2;
    let v = mantissa as f64 * 2f64.powi(half as i32) * 2f64.powi((scale - half) as i32);
    in_range(v, true)
}

/// glibc's `ERANGE` cases: overflow to infinity, or a non-zero input that became zero or
/// subnormal.
fn in_range(v: f64, nonzero_input: bool) -> Option<f64> {
    if v.is_infinite() || (nonzero_input && (v == 0.0 || v.is_subnormal())) {
        None
    } else {
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Value) -> String {
        let mut s = String::new();
        v.write_text(&mut s);
        s
    }

    #[test]
    fn doubles_print_as_pgbench_15_prints_them() {
        // Each right-hand side is what pgbench 15 substituted for `\set v <left>`.
        let cases: &[(f64, &str)] = &[
            (1.0 / 3.0, "0.333333333333333"),
            (std::f64::consts::PI, "3.14159265358979"),
            (std::f64::consts::SQRT_2, "1.4142135623731"),
            (1024.0, "1024"),
            (0.1, "0.1"),
            (1e15, "1e+15"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (1e-4, "0.0001"),
            (0.0001234, "0.0001234"),
            (100000.0, "100000"),
            (1e100, "1e+100"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1234567890123445.0, "1.23456789012344e+15"),
            (1234567890123455.0, "1.23456789012346e+15"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (f64::from_bits(1), "4.94065645841247e-324"),
        ];
        for &(d, want) in cases {
            assert_eq!(text(Value::Double(d)), want, "{d:e}");
        }
        assert_eq!(text(Value::Int(i64::MIN)), "-9223372036854775808");
        assert_eq!(text(Value::Bool(true)), "true");
        assert_eq!(text(Value::Bool(false)), "false");
        assert_eq!(text(Value::Null), "NULL");
    }

    #[test]
    fn variable_text_is_read_as_pgbench_15_reads_it() {
        use Value::*;
        // Each case was given to pgbench 15 as `-D x=<text>` and read back with `debug(:x)`.
        let cases: &[(&str, Option<Value>)] = &[
            ("0x10", Some(Double(16.0))),
            (" 12", Some(Int(12))),
            ("12 ", None),
            ("+5", Some(Int(5))),
            ("-0", Some(Int(0))),
            ("1e-310", None),
            ("1e400", None),
            ("inf", Some(Double(f64::INFINITY))),
            ("-Infinity", Some(Double(f64::NEG_INFINITY))),
            ("yes", Some(Bool(true))),
            ("y", Some(Bool(true))),
            ("YE", Some(Bool(true))),
            ("o", None),
            ("of", Some(Bool(false))),
            ("off", Some(Bool(false))),
            ("On", Some(Bool(true))),
            ("n", Some(Bool(false))),
            ("nu", None),
            ("Null", Some(Null)),
            ("t", Some(Bool(true))),
            ("tr", Some(Bool(true))),
            ("truex", None),
            ("f", Some(Bool(false))),
            ("1.5", Some(Double(1.5))),
            (".5", Some(Double(0.5))),
            ("5.", Some(Double(5.0))),
            ("1e3", Some(Double(1000.0))),
            ("abc", None),
            ("", None),
            ("99999999999999999999", None),
            ("0x1p3", Some(Double(8.0))),
            (" 1.5", Some(Double(1.5))),
            ("1,5", None),
        ];
        for (s, want) in cases {
            assert_eq!(Value::from_text(s), *want, "{s:?}");
        }
        for s in ["nan", "nan(123)", "-nan", "NAN"] {
            assert!(
                matches!(Value::from_text(s), Some(Double(d)) if d.is_nan()),
                "{s}"
            );
        }
        for s in [
            "-", "+", "  ", "0x", "1e", "1e+", "0x1p", ".", "nan(", "--1",
        ] {
            assert_eq!(Value::from_text(s), None, "{s:?}");
        }
    }

    #[test]
    fn hex_floats_round_like_strtod() {
        assert_eq!(parse_c_double("0x1.8p1"), Some(3.0));
        assert_eq!(parse_c_double("0X.8"), Some(0.5));
        assert_eq!(parse_c_double("0x0"), Some(0.0));
        assert_eq!(parse_c_double("0x1p-1022"), Some(f64::MIN_POSITIVE));
        assert_eq!(parse_c_double("0x1p-1023"), None);
        assert_eq!(parse_c_double("0x1p1024"), None);
        assert_eq!(parse_c_double("0x1.fffffffffffffp1023"), Some(f64::MAX));
        // 2^53 + 1 needs 54 bits: ties to even, unless a later non-zero digit breaks the tie.
        assert_eq!(parse_c_double("0x20000000000001"), Some(9007199254740992.0));
        assert_eq!(
            parse_c_double("0x20000000000001000000000000000001"),
            parse_c_double("0x20000000000002p72")
        );
    }

    #[test]
    fn fixed_notation_for_messages() {
        assert_eq!(c_fixed(1e19), "10000000000000000000.000000");
        assert_eq!(c_fixed(1.5), "1.500000");
        assert_eq!(c_fixed(f64::NAN), "NaN");
        assert_eq!(c_fixed(f64::NEG_INFINITY), "-Infinity");
    }
}
