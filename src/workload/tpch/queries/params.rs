//! TPC-H's substitution parameters: each query's clause 2.4.x.3 rules (as qgen applies them)
//! and its clause 2.4.x.4 qualification ("validation") values, which produce the answer set.
//!
//! The value lists are the spec's (clause 4.2.2.13 and 4.2.3): part types from three syllable
//! lists, containers from two, segments, ship modes, nations with their regions, P_NAME's
//! colours, and Q13's words.

use super::rng::Rng;
use crate::workload::tpch::rows::ScaleFactor;

/// Where a stream's parameters come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamSource {
    /// Drawn by qgen's rules from the run's seed (same seed and stream, same values).
    Seeded(u64),
    /// Clause 2.4.x.4's qualification values, whose results are the spec's answer set.
    Qualification,
}

/// Part type syllables (clause 4.2.2.13): P_TYPE is one of each, in order.
pub const TYPE_S1: [&str; 6] = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
pub const TYPE_S2: [&str; 5] = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
pub const TYPE_S3: [&str; 5] = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];
/// Container syllables (clause 4.2.2.13): P_CONTAINER is one of each.
pub const CONTAINER_S1: [&str; 5] = ["SM", "LG", "MED", "JUMBO", "WRAP"];
pub const CONTAINER_S2: [&str; 8] = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];
pub const SEGMENTS: [&str; 5] = [
    "AUTOMOBILE",
    "BUILDING",
    "FURNITURE",
    "MACHINERY",
    "HOUSEHOLD",
];
pub const SHIP_MODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];
pub const REGIONS: [&str; 5] = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];
/// Clause 4.2.3's nations in key order, each with its region key.
pub const NATIONS: [(&str, usize); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];
/// The words P_NAME is made of (clause 4.2.3), from which Q9 and Q20 pick a colour.
pub const COLORS: [&str; 92] = [
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
    "chocolate",
    "coral",
    "cornflower",
    "cornsilk",
    "cream",
    "cyan",
    "dark",
    "deep",
    "dim",
    "dodger",
    "drab",
    "firebrick",
    "floral",
    "forest",
    "frosted",
    "gainsboro",
    "ghost",
    "goldenrod",
    "green",
    "grey",
    "honeydew",
    "hot",
    "indian",
    "ivory",
    "khaki",
    "lace",
    "lavender",
    "lawn",
    "lemon",
    "light",
    "lime",
    "linen",
    "magenta",
    "maroon",
    "medium",
    "metallic",
    "midnight",
    "mint",
    "misty",
    "moccasin",
    "navajo",
    "navy",
    "olive",
    "orange",
    "orchid",
    "pale",
    "papaya",
    "peach",
    "peru",
    "pink",
    "plum",
    "powder",
    "puff",
    "purple",
    "red",
    "rose",
    "rosy",
    "royal",
    "saddle",
    "salmon",
    "sandy",
    "seashell",
    "sienna",
    "sky",
    "slate",
    "smoke",
    "snow",
    "spring",
    "steel",
    "tan",
    "thistle",
    "tomato",
    "turquoise",
    "violet",
    "wheat",
    "white",
    "yellow",
];
pub const Q13_WORD1: [&str; 4] = ["special", "pending", "unusual", "express"];
pub const Q13_WORD2: [&str; 4] = ["packages", "requests", "accounts", "deposits"];

/// Q11's FRACTION (clause 2.4.11.3): 0.0001 / SF, printed as qgen prints it (`%11.10f`).
pub fn q11_fraction(sf: ScaleFactor) -> String {
    format!("{:.10}", 0.0001 / sf.get())
}

/// The parameters of query `number` (1 to 22) for `stream`, in the order `:1`, `:2`, … take
/// them; empty outside 1..=22.
pub fn parameters(number: u8, source: ParamSource, stream: u32, sf: ScaleFactor) -> Vec<String> {
    match source {
        ParamSource::Qualification => qualification(number, sf),
        ParamSource::Seeded(seed) => drawn(number, &mut Rng::new(seed, stream, number), sf),
    }
}

/// Clause 2.4.x.4's values (qgen's `-d` defaults); Q11's FRACTION still scales with SF.
fn qualification(number: u8, sf: ScaleFactor) -> Vec<String> {
    let values: &[&str] = match number {
        1 => &["90"],
        2 => &["15", "BRASS", "EUROPE"],
        3 => &["BUILDING", "1995-03-15"],
        4 => &["1993-07-01"],
        5 => &["ASIA", "1994-01-01"],
        6 => &["1994-01-01", "0.06", "24"],
        7 => &["FRANCE", "GERMANY"],
        8 => &["BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"],
        9 => &["green"],
        10 => &["1993-10-01"],
        11 => return vec!["GERMANY".to_string(), q11_fraction(sf)],
        12 => &["MAIL", "SHIP", "1994-01-01"],
        13 => &["special", "requests"],
        14 => &["1995-09-01"],
        15 => &["1996-01-01"],
        16 => &[
            "Brand#45",
            "MEDIUM POLISHED",
            "49",
            "14",
            "23",
            "45",
            "19",
            "3",
            "36",
            "9",
        ],
        17 => &["Brand#23", "MED BOX"],
        18 => &["300"],
        19 => &["Brand#12", "Brand#23", "Brand#34", "1", "10", "20"],
        20 => &["forest", "1994-01-01", "CANADA"],
        21 => &["SAUDI ARABIA"],
        22 => &["13", "31", "23", "29", "30", "18", "17"],
        _ => &[],
    };
    values.iter().map(|v| v.to_string()).collect()
}

/// The first day of month `index` counted from January 1993 (index 0).
fn month(index: i64) -> String {
    format!("{}-{:02}-01", 1993 + index / 12, index % 12 + 1)
}

/// January 1st of a year drawn in 1993..=1997.
fn new_year(r: &mut Rng) -> String {
    format!("{}-01-01", r.int(1993, 1997))
}

/// `Brand#MN` with M and N drawn in 1..=5 (clause 2.4.16.3, 2.4.17.3, 2.4.19.3).
fn brand(r: &mut Rng) -> String {
    format!("Brand#{}{}", r.int(1, 5), r.int(1, 5))
}

/// Two different items of `list`, the second drawn again until it differs (as qgen does).
fn two_of(r: &mut Rng, list: &[&str]) -> [String; 2] {
    let first = r.index(list.len());
    let mut second = r.index(list.len());
    while second == first {
        second = r.index(list.len());
    }
    [list[first].to_string(), list[second].to_string()]
}

fn nation_names() -> Vec<&'static str> {
    NATIONS.iter().map(|(n, _)| *n).collect()
}

/// Clause 2.4.x.3's rules, one arm per query.
fn drawn(number: u8, r: &mut Rng, sf: ScaleFactor) -> Vec<String> {
    let s = |v: &str| v.to_string();
    match number {
        1 => vec![r.int(60, 120).to_string()],
        2 => vec![
            r.int(1, 50).to_string(),
            s(r.pick(&TYPE_S3)),
            s(r.pick(&REGIONS)),
        ],
        // A day of March 1995.
        3 => vec![s(r.pick(&SEGMENTS)), format!("1995-03-{:02}", r.int(1, 31))],
        // A month from January 1993 to October 1997.
        4 => vec![month(r.int(0, 57))],
        5 => vec![s(r.pick(&REGIONS)), new_year(r)],
        6 => vec![
            new_year(r),
            format!("0.{:02}", r.int(2, 9)),
            r.int(24, 25).to_string(),
        ],
        7 => two_of(r, &nation_names()).to_vec(),
        8 => {
            let (nation, region) = NATIONS[r.index(NATIONS.len())];
            let ty = format!(
                "{} {} {}",
                r.pick(&TYPE_S1),
                r.pick(&TYPE_S2),
                r.pick(&TYPE_S3)
            );
            vec![s(nation), s(REGIONS[region]), ty]
        }
        9 => vec![s(r.pick(&COLORS))],
        // A month from February 1993 to January 1995.
        10 => vec![month(r.int(1, 24))],
        11 => vec![s(r.pick(&nation_names())), q11_fraction(sf)],
        12 => {
            let [a, b] = two_of(r, &SHIP_MODES);
            vec![a, b, new_year(r)]
        }
        13 => vec![s(r.pick(&Q13_WORD1)), s(r.pick(&Q13_WORD2))],
        // A month of a year in 1993..=1997.
        14 => vec![month(r.int(0, 59))],
        15 => vec![month(r.int(0, 57))],
        16 => {
            let mut v = vec![
                brand(r),
                format!("{} {}", r.pick(&TYPE_S1), r.pick(&TYPE_S2)),
            ];
            v.extend(r.distinct(1, 50, 8).iter().map(i64::to_string));
            v
        }
        17 => vec![
            brand(r),
            format!("{} {}", r.pick(&CONTAINER_S1), r.pick(&CONTAINER_S2)),
        ],
        18 => vec![r.int(312, 315).to_string()],
        19 => vec![
            brand(r),
            brand(r),
            brand(r),
            r.int(1, 10).to_string(),
            r.int(10, 20).to_string(),
            r.int(20, 30).to_string(),
        ],
        20 => vec![s(r.pick(&COLORS)), new_year(r), s(r.pick(&nation_names()))],
        21 => vec![s(r.pick(&nation_names()))],
        // Country codes are nation keys + 10 (clause 4.2.2.9), so 10..=34.
        22 => r.distinct(10, 34, 7).iter().map(i64::to_string).collect(),
        _ => Vec::new(),
    }
}
