//! Checks of the substitution rules (clause 2.4.x.3) against their ranges, of determinism per
//! (seed, stream), and of the rendered text.

use super::params::*;
use super::*;

fn sf1() -> ScaleFactor {
    ScaleFactor::new(1.0).unwrap()
}

fn int_in(v: &str, lo: i64, hi: i64) -> bool {
    v.parse::<i64>().is_ok_and(|n| (lo..=hi).contains(&n))
}

/// A first-of-month date from `first` to `last` (both "YYYY-MM").
fn month_in(v: &str, first: &str, last: &str) -> bool {
    v.len() == 10 && v.ends_with("-01") && &v[..7] >= first && &v[..7] <= last
}

fn new_year_in_range(v: &str) -> bool {
    ["1993", "1994", "1995", "1996", "1997"]
        .map(|y| format!("{y}-01-01"))
        .contains(&v.to_string())
}

fn brand_ok(v: &str) -> bool {
    let digits = v.strip_prefix("Brand#").unwrap_or("");
    digits.len() == 2 && digits.chars().all(|c| ('1'..='5').contains(&c))
}

fn is_nation(v: &str) -> bool {
    NATIONS.iter().any(|(n, _)| *n == v)
}

fn distinct_ints(values: &[String], lo: i64, hi: i64) -> bool {
    let mut seen: Vec<&String> = values.iter().collect();
    seen.sort();
    seen.dedup();
    seen.len() == values.len() && values.iter().all(|v| int_in(v, lo, hi))
}

/// Whether `p` obeys query `q`'s clause 2.4.x.3 rules.
fn in_spec_range(q: u8, p: &[String]) -> bool {
    let p: Vec<&str> = p.iter().map(String::as_str).collect();
    match q {
        1 => int_in(p[0], 60, 120),
        2 => int_in(p[0], 1, 50) && TYPE_S3.contains(&p[1]) && REGIONS.contains(&p[2]),
        3 => SEGMENTS.contains(&p[0]) && p[1] >= "1995-03-01" && p[1] <= "1995-03-31",
        4 | 15 => month_in(p[0], "1993-01", "1997-10"),
        5 => REGIONS.contains(&p[0]) && new_year_in_range(p[1]),
        6 => {
            let d: f64 = p[1].parse().unwrap_or(-1.0);
            new_year_in_range(p[0]) && (0.02..=0.09).contains(&d) && int_in(p[2], 24, 25)
        }
        7 => is_nation(p[0]) && is_nation(p[1]) && p[0] != p[1],
        8 => {
            let region = NATIONS
                .iter()
                .find(|(n, _)| *n == p[0])
                .map(|(_, r)| REGIONS[*r]);
            let t: Vec<&str> = p[2].split(' ').collect();
            region == Some(p[1])
                && t.len() == 3
                && TYPE_S1.contains(&t[0])
                && TYPE_S2.contains(&t[1])
                && TYPE_S3.contains(&t[2])
        }
        9 => COLORS.contains(&p[0]),
        10 => month_in(p[0], "1993-02", "1995-01"),
        11 => is_nation(p[0]) && p[1] == "0.0001000000",
        12 => {
            SHIP_MODES.contains(&p[0])
                && SHIP_MODES.contains(&p[1])
                && p[0] != p[1]
                && new_year_in_range(p[2])
        }
        13 => Q13_WORD1.contains(&p[0]) && Q13_WORD2.contains(&p[1]),
        14 => month_in(p[0], "1993-01", "1997-12"),
        16 => {
            let t: Vec<&str> = p[1].split(' ').collect();
            let sizes: Vec<String> = p[2..].iter().map(|s| s.to_string()).collect();
            brand_ok(p[0])
                && t.len() == 2
                && TYPE_S1.contains(&t[0])
                && TYPE_S2.contains(&t[1])
                && sizes.len() == 8
                && distinct_ints(&sizes, 1, 50)
        }
        17 => {
            let c: Vec<&str> = p[1].split(' ').collect();
            brand_ok(p[0]) && CONTAINER_S1.contains(&c[0]) && CONTAINER_S2.contains(&c[1])
        }
        18 => int_in(p[0], 312, 315),
        19 => {
            p[..3].iter().all(|b| brand_ok(b))
                && int_in(p[3], 1, 10)
                && int_in(p[4], 10, 20)
                && int_in(p[5], 20, 30)
        }
        20 => COLORS.contains(&p[0]) && new_year_in_range(p[1]) && is_nation(p[2]),
        21 => is_nation(p[0]),
        22 => {
            let codes: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            codes.len() == 7 && distinct_ints(&codes, 10, 34)
        }
        _ => false,
    }
}

#[test]
fn every_drawn_value_lies_in_the_specs_range() {
    for seed in [1, 42, 0xDEAD_BEEF] {
        for stream in 0..8 {
            for q in 1..=22 {
                let p = parameters(q, ParamSource::Seeded(seed), stream, sf1());
                assert!(
                    in_spec_range(q, &p),
                    "seed {seed} stream {stream} Q{q}: {p:?}"
                );
            }
        }
    }
}

#[test]
fn qualification_values_are_in_range_too_except_q18() {
    for q in 1..=22 {
        let p = parameters(q, ParamSource::Qualification, 0, sf1());
        // Q18's qualification QUANTITY is 300, outside its random range [312, 315].
        assert_eq!(in_spec_range(q, &p), q != 18, "Q{q}: {p:?}");
    }
}

#[test]
fn same_seed_same_texts_and_streams_differ() {
    for seed in [1, 42, 0xDEAD_BEEF] {
        let a = stream_queries(1, ParamSource::Seeded(seed), sf1());
        let b = stream_queries(1, ParamSource::Seeded(seed), sf1());
        assert_eq!(a, b);
        let other = stream_queries(2, ParamSource::Seeded(seed), sf1());
        let params =
            |s: &[QueryText], q: u8| s.iter().find(|t| t.number == q).unwrap().params.clone();
        let differing = (1..=22)
            .filter(|&q| params(&a, q) != params(&other, q))
            .count();
        assert!(
            differing >= 15,
            "seed {seed}: only {differing} queries differ"
        );
    }
    let one = stream_queries(1, ParamSource::Seeded(1), sf1());
    let two = stream_queries(1, ParamSource::Seeded(2), sf1());
    assert_ne!(one, two);
}

#[test]
fn power_stream_runs_appendix_a_row_zero_and_every_row_is_a_permutation() {
    assert_eq!(
        stream_order(0),
        [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12]
    );
    assert_eq!(stream_order(41), stream_order(0));
    for row in STREAM_ORDERS {
        let mut sorted = row;
        sorted.sort_unstable();
        assert_eq!(sorted.to_vec(), (1..=22).collect::<Vec<u8>>());
    }
}

#[test]
fn rendered_text_has_no_placeholder_left() {
    for source in [ParamSource::Qualification, ParamSource::Seeded(9)] {
        for q in stream_queries(3, source, sf1()) {
            for s in &q.statements {
                assert!(!s.contains(':'), "Q{} kept a placeholder: {s}", q.number);
            }
        }
    }
}

#[test]
fn q15_names_its_view_per_stream_and_answers_from_the_middle() {
    let q = render(15, 7, ParamSource::Qualification, sf1()).unwrap();
    assert_eq!(q.statements.len(), 3);
    assert_eq!(q.answer_statement, 1);
    assert!(q.statements[0].starts_with("create view revenue_s7 "));
    assert!(q.statements[1].contains("from supplier, revenue_s7"));
    assert_eq!(q.statements[2], "drop view revenue_s7");
    assert!(q.sql().contains("date '1996-01-01' + interval '3' month"));
}

#[test]
fn qualification_q16_fills_all_ten_places() {
    let q = render(16, 0, ParamSource::Qualification, sf1()).unwrap();
    assert!(q.statements[0].contains("p_size in (49, 14, 23, 45, 19, 3, 36, 9)"));
    assert!(q.statements[0].contains("p_type not like 'MEDIUM POLISHED%'"));
    assert!(render(23, 0, ParamSource::Qualification, sf1()).is_err());
}

#[test]
fn q11_fraction_scales_with_sf() {
    let sf = ScaleFactor::new(0.01).unwrap();
    assert_eq!(q11_fraction(sf), "0.0100000000");
    assert_eq!(
        q11_fraction(ScaleFactor::new(10.0).unwrap()),
        "0.0000100000"
    );
}
