//! TPC-H's qualification answers (clause 2.1.3) and the tolerances a result is held to
//! (clause 2.1.3.5).
//!
//! The answer set for SF 1 is the one the TPC's tools ship, as the `tpchgen` crate bundles it:
//! pipe-separated, a header line of column names, values padded with blanks. Each column is of
//! one kind (the TPC's `colprecision` table follows clause 2.1.3.5) and compared by its rule:
//!
//! - strings, integers, counts: exactly, after trimming blanks (`char(n)` pads them);
//! - other singleton numbers (balances, sizes): equal once both are rounded to 1/100;
//! - SUM aggregates: within $100 of the answer;
//! - AVG aggregates and ratios: rounded to 1/100, within 1% of the answer
//!   (0.99 × v ≤ round(r, 2) ≤ 1.01 × v).

use std::fmt;

/// How a column's values are compared (clause 2.1.3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Text, dates: exact after trimming.
    Str,
    /// A singleton integer: exact.
    Int,
    /// A COUNT aggregate: exact.
    Cnt,
    /// A singleton decimal: equal at 1/100.
    Num,
    /// A SUM aggregate: within 100.
    Sum,
    /// An AVG aggregate: within 1% after rounding to 1/100.
    Avg,
    /// A ratio: within 1% after rounding to 1/100.
    Rat,
}

/// Each query's column kinds, in its select list's order.
pub fn column_kinds(query: u8) -> &'static [ColumnKind] {
    use ColumnKind::*;
    match query {
        1 => &[Str, Str, Sum, Sum, Sum, Sum, Avg, Avg, Avg, Cnt],
        2 => &[Num, Str, Str, Int, Str, Str, Str, Str],
        3 => &[Int, Sum, Str, Int],
        4 => &[Str, Cnt],
        5 => &[Str, Sum],
        6 => &[Sum],
        7 => &[Str, Str, Int, Sum],
        8 => &[Int, Rat],
        9 => &[Str, Int, Sum],
        10 => &[Int, Str, Sum, Num, Str, Str, Str, Str],
        11 => &[Int, Sum],
        12 => &[Str, Sum, Sum],
        13 => &[Cnt, Cnt],
        14 => &[Rat],
        15 => &[Int, Str, Str, Str, Sum],
        16 => &[Str, Str, Num, Cnt],
        17 => &[Avg],
        18 => &[Str, Int, Int, Str, Num, Sum],
        19 => &[Sum],
        20 => &[Str, Str],
        21 => &[Str, Cnt],
        22 => &[Num, Cnt, Sum],
        _ => &[],
    }
}

/// An answer set: column names and rows of trimmed values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn split_trimmed(line: &str) -> Vec<String> {
    line.split('|').map(|v| v.trim().to_string()).collect()
}

/// Parses the TPC's answer format: blank lines skipped, the first line names the columns,
/// each further line is a row.
pub fn parse_answer(text: &str) -> AnswerSet {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let columns = lines.next().map(split_trimmed).unwrap_or_default();
    AnswerSet {
        columns,
        rows: lines.map(split_trimmed).collect(),
    }
}

/// The spec's answer to query `query` (1 to 22) at SF 1 with the qualification parameters.
pub fn sf1_answer(query: u8) -> Option<AnswerSet> {
    tpchgen::q_and_a::answers_sf1::answer(i32::from(query)).map(parse_answer)
}

/// The first difference between a result and its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    RowCount {
        expected: usize,
        actual: usize,
    },
    ColumnCount {
        row: usize,
        expected: usize,
        actual: usize,
    },
    Value {
        row: usize,
        column: String,
        expected: String,
        actual: String,
        rule: &'static str,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::RowCount { expected, actual } => {
                write!(f, "{actual} rows where the answer has {expected}")
            }
            Mismatch::ColumnCount {
                row,
                expected,
                actual,
            } => write!(
                f,
                "row {} has {actual} columns where the answer has {expected}",
                row + 1
            ),
            Mismatch::Value {
                row,
                column,
                expected,
                actual,
                rule,
            } => write!(
                f,
                "row {} column {column}: {actual} where the answer has {expected} ({rule})",
                row + 1
            ),
        }
    }
}

/// Whether `actual` agrees with `expected` under `kind`'s rule; the rule's name otherwise.
pub fn agrees(kind: ColumnKind, expected: &str, actual: &str) -> Result<(), &'static str> {
    let (e, a) = (expected.trim(), actual.trim());
    let num = |v: &str| v.parse::<f64>().ok().filter(|x| x.is_finite());
    let round2 = |x: f64| (x * 100.0).round() / 100.0;
    let ok = match kind {
        ColumnKind::Str => e == a,
        ColumnKind::Int | ColumnKind::Cnt => match (e.parse::<i64>(), a.parse::<i64>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => e == a,
        },
        ColumnKind::Num => {
            matches!((num(e), num(a)), (Some(x), Some(y)) if (round2(x) - round2(y)).abs() < 0.005)
        }
        ColumnKind::Sum => matches!((num(e), num(a)), (Some(x), Some(y)) if (x - y).abs() <= 100.0),
        ColumnKind::Avg | ColumnKind::Rat => match (num(e), num(a)) {
            (Some(v), Some(r)) => {
                let (lo, hi) = (0.99 * v, 1.01 * v);
                let r = round2(r);
                // A tiny epsilon so 1% exactly, computed in binary, still counts as within.
                r >= lo.min(hi) - 1e-9 && r <= lo.max(hi) + 1e-9
            }
            _ => false,
        },
    };
    if ok {
        return Ok(());
    }
    Err(match kind {
        ColumnKind::Str => "strings must match",
        ColumnKind::Int | ColumnKind::Cnt => "integers must match exactly",
        ColumnKind::Num => "must match when rounded to 1/100",
        ColumnKind::Sum => "sums must be within 100",
        ColumnKind::Avg | ColumnKind::Rat => "must be within 1% when rounded to 1/100",
    })
}

/// Compares `actual` (rows of PostgreSQL's text output, in order) with query `query`'s
/// answer `expected`; the first difference otherwise.
pub fn compare(query: u8, expected: &AnswerSet, actual: &[Vec<String>]) -> Result<(), Mismatch> {
    if expected.rows.len() != actual.len() {
        return Err(Mismatch::RowCount {
            expected: expected.rows.len(),
            actual: actual.len(),
        });
    }
    let kinds = column_kinds(query);
    for (row, (want, got)) in expected.rows.iter().zip(actual).enumerate() {
        if want.len() != got.len() {
            return Err(Mismatch::ColumnCount {
                row,
                expected: want.len(),
                actual: got.len(),
            });
        }
        for (i, (e, a)) in want.iter().zip(got).enumerate() {
            let kind = kinds.get(i).copied().unwrap_or(ColumnKind::Str);
            if query == 11 && i == 0 && shipped_q11_key(a) == *e {
                continue;
            }
            if let Err(rule) = agrees(kind, e, a) {
                return Err(Mismatch::Value {
                    row,
                    column: expected
                        .columns
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| i.to_string()),
                    expected: e.clone(),
                    actual: a.clone(),
                    rule,
                });
            }
        }
    }
    Ok(())
}

/// Q11's `ps_partkey` as the SF 1 answer set the `tpchgen` crate bundles writes it: the key
/// right-aligned in 6 characters and cut to the first 4 (`129760` → `1297`, `34452` → `344`,
/// while its values, `17538456.86` …, are whole). A key agrees when it reads so once cut.
fn shipped_q11_key(actual: &str) -> String {
    let wide = format!("{:>6}", actual.trim());
    wide.chars().take(4).collect::<String>().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    #[test]
    fn every_sf1_answer_parses_with_its_column_kinds() {
        for q in 1..=22 {
            let answer = sf1_answer(q).unwrap();
            assert_eq!(answer.columns.len(), column_kinds(q).len(), "Q{q}");
            assert!(!answer.rows.is_empty(), "Q{q}");
            assert!(
                answer.rows.iter().all(|r| r.len() == answer.columns.len()),
                "Q{q}"
            );
        }
        assert!(sf1_answer(23).is_none());
    }

    #[test]
    fn q11_keys_agree_as_the_bundled_answer_cuts_them() {
        let expected = sf1_answer(11).unwrap();
        assert_eq!(expected.rows[0], row(&["1297", "17538456.86"]));
        assert_eq!(expected.rows[4], row(&["344", "15983844.72"]));
        assert_eq!(shipped_q11_key("34452"), "344");
        let mut actual = expected.rows.clone();
        actual[0] = row(&["129760", "17538456.86"]);
        actual[4] = row(&["34452", "15983844.72"]);
        assert_eq!(compare(11, &expected, &actual), Ok(()));
        actual[0] = row(&["129761", "17538456.86"]);
        assert_eq!(
            compare(11, &expected, &actual),
            Ok(()),
            "cut, the last digits are gone"
        );
        actual[0] = row(&["139760", "17538456.86"]);
        assert!(compare(11, &expected, &actual).is_err());
    }

    #[test]
    fn q1_answer_reads_as_the_spec_prints_it() {
        let a = sf1_answer(1).unwrap();
        assert_eq!(a.columns[0], "l_returnflag");
        assert_eq!(a.rows.len(), 4);
        assert_eq!(a.rows[0][0], "A");
        assert_eq!(a.rows[0][9], "1478493");
    }

    #[test]
    fn postgres_text_output_within_tolerance_agrees() {
        let expected = sf1_answer(1).unwrap();
        let mut actual: Vec<Vec<String>> = expected.rows.clone();
        // PostgreSQL prints averages with many digits and sums to the cent.
        actual[0][6] = "25.5220058532573370".into();
        actual[0][2] = "37734107.00".into();
        actual[0][3] = "56586554450.00".into();
        assert_eq!(compare(1, &expected, &actual), Ok(()));
    }

    #[test]
    fn each_rule_refuses_what_it_must() {
        use ColumnKind::*;
        assert!(agrees(Str, "ALGERIA                  ", "ALGERIA").is_ok());
        assert!(agrees(Str, "ALGERIA", "ALGERIAN").is_err());
        assert!(agrees(Cnt, "1478493", "1478494").is_err());
        assert!(agrees(Int, "     185358", "185358").is_ok());
        assert!(agrees(Num, "9938.53", "9938.53").is_ok());
        assert!(agrees(Num, "9938.53", "9938.54").is_err());
        assert!(agrees(Sum, "1000.00", "1100.00").is_ok());
        assert!(agrees(Sum, "1000.00", "1100.01").is_err());
        assert!(agrees(Avg, "25.52", "25.7749").is_ok());
        assert!(agrees(Avg, "25.52", "25.79").is_err());
        assert!(agrees(Rat, "-10.00", "-10.09").is_ok());
        assert!(agrees(Rat, "-10.00", "-10.2").is_err());
        assert!(agrees(Sum, "1.0", "not a number").is_err());
    }

    #[test]
    fn row_and_column_counts_and_values_are_reported() {
        let expected = parse_answer("\na | n\nx | 1\ny | 2\n");
        assert_eq!(expected.columns, row(&["a", "n"]));
        let one_row = [row(&["x", "1"])];
        assert_eq!(
            compare(4, &expected, &one_row),
            Err(Mismatch::RowCount {
                expected: 2,
                actual: 1
            })
        );
        let wrong = [row(&["x", "1"]), row(&["y", "3"])];
        let err = compare(4, &expected, &wrong).unwrap_err();
        assert_eq!(
            err.to_string(),
            "row 2 column n: 3 where the answer has 2 (integers must match exactly)"
        );
        let short = [row(&["x"]), row(&["y", "2"])];
        assert!(matches!(
            compare(4, &expected, &short),
            Err(Mismatch::ColumnCount { row: 0, .. })
        ));
    }
}
