//! `Protocol::Simple`: parameters inlined into the SQL text as literals, the way pgbench's
//! `-M simple` sends its statements.
//!
//! Only `$n` tokens outside string literals, quoted identifiers, comments and dollar-quoted
//! bodies are replaced, so a `'$1'` in the SQL stays text. A `$n` with no matching parameter is
//! left as written: the server then reports it (42P02), as it would in the extended protocol.

use std::fmt::Write;

use crate::Param;

/// Writes `sql` into `out` (cleared first) with every `$n` replaced by the literal of
/// `params[n - 1]`.
pub(crate) fn substitute(sql: &str, params: &[Param<'_>], out: &mut String) {
    out.clear();
    let bytes = sql.as_bytes();
    let mut i = 0;
    // Start of the text not yet copied to `out`: plain SQL is copied in slices, not bytes.
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => {
                let escapes = i > 0
                    && matches!(bytes[i - 1], b'E' | b'e')
                    && (i < 2 || !is_ident_byte(bytes[i - 2]));
                i = skip_quoted(bytes, i, b'\'', escapes);
            }
            b'"' => i = skip_quoted(bytes, i, b'"', false),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2);
            }
            // `a$1` is one identifier in PostgreSQL, not `a` followed by a parameter.
            b'$' if i > 0 && is_ident_byte(bytes[i - 1]) => i += 1,
            b'$' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let start = i;
                let mut end = i + 1;
                let mut n: usize = 0;
                while let Some(d) = bytes.get(end).filter(|b| b.is_ascii_digit()) {
                    n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
                    end += 1;
                }
                if let Some(param) = n.checked_sub(1).and_then(|k| params.get(k)) {
                    out.push_str(&sql[copied..start]);
                    write_literal(param, out);
                    copied = end;
                }
                i = end;
            }
            b'$' => i = skip_dollar_quoted(sql, i),
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied..]);
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Index just past the closing `quote` of the literal opening at `open`. A doubled quote is
/// part of the text; with `backslash_escapes` (an `E'...'` string) so is `\'`.
fn skip_quoted(bytes: &[u8], open: usize, quote: u8, backslash_escapes: bool) -> usize {
    let mut i = open + 1;
    while i < bytes.len() {
        let b = bytes[i];
        if backslash_escapes && b == b'\\' {
            i += 2;
        } else if b == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// Index just past a `$tag$ ... $tag$` body starting at `open`, or `open + 1` when the `$`
/// does not open one.
fn skip_dollar_quoted(sql: &str, open: usize) -> usize {
    let rest = &sql[open + 1..];
    let Some(tag_len) = rest.find('$') else {
        return open + 1;
    };
    let tag = &rest[..tag_len];
    let valid_tag = tag.bytes().enumerate().all(|(k, b)| {
        b == b'_' || b >= 0x80 || b.is_ascii_alphabetic() || (k > 0 && b.is_ascii_digit())
    });
    if !valid_tag {
        return open + 1;
    }
    let delimiter = &sql[open..open + tag_len + 2];
    let body_start = open + delimiter.len();
    sql[body_start..]
        .find(delimiter)
        .map_or(sql.len(), |p| body_start + p + delimiter.len())
}

/// Appends the SQL literal for one parameter.
pub(crate) fn write_literal(param: &Param<'_>, out: &mut String) {
    match *param {
        // Negative numbers go in parentheses so that `x-$1` cannot become the comment `x--1`.
        Param::Int(v) if v < 0 => {
            out.push('(');
            out.push_str(itoa::Buffer::new().format(v));
            out.push(')');
        }
        Param::Int(v) => out.push_str(itoa::Buffer::new().format(v)),
        Param::Float(v) if v.is_nan() => out.push_str("'NaN'::float8"),
        Param::Float(v) if v.is_infinite() => out.push_str(if v > 0.0 {
            "'Infinity'::float8"
        } else {
            "'-Infinity'::float8"
        }),
        Param::Float(v) => {
            let negative = v.is_sign_negative();
            if negative {
                out.push('(');
            }
            let start = out.len();
            // Display never uses an exponent, so the text is a valid SQL numeric constant.
            let _ = write!(out, "{v}");
            // A float stays a non-integer constant: `2` would make `$1 / 3` integer division.
            if !out[start..].contains('.') {
                out.push_str(".0");
            }
            if negative {
                out.push(')');
            }
        }
        Param::Text(s) => {
            // An E'' string reads backslashes as escapes whatever standard_conforming_strings is,
            // so doubling them gives the same text on every server setting.
            let backslashes = s.contains('\\');
            if backslashes {
                out.push('E');
            }
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    '\\' => out.push_str("\\\\"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        Param::Null => out.push_str("NULL"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(sql: &str, params: &[Param<'_>]) -> String {
        let mut out = String::from("stale");
        substitute(sql, params, &mut out);
        out
    }

    #[test]
    fn replaces_numbered_parameters_with_literals() {
        let params = [
            Param::Int(7),
            Param::Text("it's"),
            Param::Null,
            Param::Float(1.5),
        ];
        assert_eq!(
            sub("SELECT $1, $2, $3, $4", &params),
            "SELECT 7, 'it''s', NULL, 1.5"
        );
    }

    #[test]
    fn two_digit_parameters_are_not_read_as_one_digit() {
        let params: Vec<Param<'_>> = (1..=11).map(Param::Int).collect();
        assert_eq!(sub("$1+$10+$11", &params), "1+10+11");
    }

    #[test]
    fn negative_numbers_cannot_form_a_comment() {
        assert_eq!(sub("a-$1", &[Param::Int(-3)]), "a-(-3)");
        assert_eq!(sub("a-$1", &[Param::Float(-0.5)]), "a-(-0.5)");
        assert_eq!(sub("$1", &[Param::Int(i64::MIN)]), "(-9223372036854775808)");
    }

    #[test]
    fn floats_keep_a_decimal_point_and_special_values_are_typed() {
        assert_eq!(sub("$1", &[Param::Float(2.0)]), "2.0");
        assert_eq!(sub("$1", &[Param::Float(1e-7)]), "0.0000001");
        assert_eq!(sub("$1", &[Param::Float(f64::NAN)]), "'NaN'::float8");
        assert_eq!(
            sub(
                "$1 $2",
                &[Param::Float(f64::INFINITY), Param::Float(f64::NEG_INFINITY)]
            ),
            "'Infinity'::float8 '-Infinity'::float8"
        );
    }

    #[test]
    fn text_with_backslashes_uses_an_escape_string() {
        assert_eq!(sub("$1", &[Param::Text(r"a\b'c")]), r"E'a\\b''c'");
        assert_eq!(sub("$1", &[Param::Text("")]), "''");
        assert_eq!(sub("$1", &[Param::Text("ü'")]), "'ü'''");
    }

    #[test]
    fn dollars_inside_literals_identifiers_and_comments_stay() {
        let p = [Param::Int(1)];
        assert_eq!(sub("SELECT '$1', $1", &p), "SELECT '$1', 1");
        assert_eq!(sub("SELECT 'it''s $1', $1", &p), "SELECT 'it''s $1', 1");
        assert_eq!(sub(r"SELECT E'\'$1', $1", &p), r"SELECT E'\'$1', 1");
        assert_eq!(sub(r#"SELECT "$1", $1"#, &p), r#"SELECT "$1", 1"#);
        assert_eq!(sub("SELECT $1 -- $1\n, $1", &p), "SELECT 1 -- $1\n, 1");
        assert_eq!(sub("SELECT /* $1 */ $1", &p), "SELECT /* $1 */ 1");
        assert_eq!(sub("SELECT $$ $1 $$, $1", &p), "SELECT $$ $1 $$, 1");
        assert_eq!(sub("SELECT $q$ $1 $q$, $1", &p), "SELECT $q$ $1 $q$, 1");
        assert_eq!(sub("SELECT a$1, $1", &p), "SELECT a$1, 1");
    }

    #[test]
    fn unknown_parameters_are_left_for_the_server_to_report() {
        assert_eq!(
            sub("SELECT $1, $2, $0", &[Param::Int(5)]),
            "SELECT 5, $2, $0"
        );
        assert_eq!(sub("SELECT 1", &[]), "SELECT 1");
        assert_eq!(
            sub("SELECT 'unterminated $1", &[Param::Int(5)]),
            "SELECT 'unterminated $1"
        );
    }
}
