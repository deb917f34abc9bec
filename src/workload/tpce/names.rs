//! Names and codes, made from small syllable tables written for tidebench: person first and last
//! names, company names, ticker symbols, street names, broker names and tax ids. EGen ships
//! lists of 65,000 last names, 5,000 companies and 6,850 symbols (tpce.md §6); its license
//! keeps them out of this crate (tpce.md §6, License), so nothing here comes from them.
//!
//! What must be unique is unique by construction, not by luck: company names (CO_NAME is
//! searched by name, tpce.md §2.3), symbols (S_SYMB is a key), broker names (Broker-Volume
//! names brokers, tpce.md §1) and tax ids (Customer-Position finds a customer by tax id,
//! tpce.md §6 item 3). Each is a keyed permutation of the entity's index decoded into a
//! fixed-shape string, so two indexes never give one string. Lengths fit the column widths of
//! TPC-E's schema as DBT-5 declares it (C_F_NAME 20, C_L_NAME 25, CO_NAME 60, S_SYMB 15,
//! B_NAME 49, C_TAX_ID 20, AD_LINE1 80).

use super::rng::{permute, Entity, Tag};

/// Consonant-vowel pairs spell the unique words: one letter each, so a word splits back into
/// its pairs in one way only, and different pair sequences never spell one word.
const CONSONANTS: &[u8; 16] = b"BDFGKLMNPRSTVWXZ";
const VOWELS: &[u8; 5] = b"AEIOU";
const PAIRS: u64 = 16 * 5;

const FIRST_STARTS: [&str; 24] = [
    "Al", "Bren", "Cal", "Dor", "El", "Fen", "Gal", "Hal", "Is", "Jor", "Kel", "Lor", "Mar", "Nel",
    "Or", "Per", "Quin", "Ros", "Sel", "Tam", "Ul", "Vin", "Wil", "Yor",
];
const FIRST_MIDDLES: [&str; 8] = ["", "", "", "i", "e", "an", "ar", "on"];
const FEMALE_ENDINGS: [&str; 8] = ["a", "ia", "ine", "elle", "ora", "ette", "ina", "ys"];
const MALE_ENDINGS: [&str; 8] = ["o", "an", "el", "us", "ard", "en", "ik", "or"];

const LAST_SYLLABLES: [&str; 24] = [
    "Ash", "Bram", "Cor", "Dun", "Ev", "Fair", "Gren", "Hol", "Ing", "Kes", "Lang", "Mor", "Nor",
    "Ost", "Pen", "Rad", "Stan", "Thorn", "Ul", "Ver", "Wex", "Yar", "Bel", "Cran",
];
const LAST_ENDINGS: [&str; 12] = [
    "", "son", "ley", "ford", "ton", "berg", "wick", "man", "ridge", "well", "by", "croft",
];

const COMPANY_KINDS: [&str; 8] = [
    "Systems",
    "Holdings",
    "Industries",
    "Group",
    "Partners",
    "Labs",
    "Works",
    "Trust",
];
const STREET_SYLLABLES: [&str; 16] = [
    "Oak", "Mill", "Lake", "River", "Stone", "Elm", "Cedar", "Hill", "Bay", "Park", "Spring",
    "Green", "Maple", "Church", "North", "West",
];
const STREET_KINDS: [&str; 8] = [
    "Street", "Avenue", "Road", "Lane", "Way", "Drive", "Court", "Place",
];

/// Fields of the person-name stream.
const F_START: u32 = 0;
const F_MIDDLE: u32 = 1;
const F_END: u32 = 2;
const F_LAST_LEN: u32 = 3;
const F_LAST: u32 = 4; // and the next two
const F_LAST_END: u32 = 7;

/// A person's gender, which picks the first name's ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gender {
    Female,
    Male,
}

fn word(e: &Entity, field: u32, table: &[&'static str]) -> &'static str {
    e.pick(field, table).copied().unwrap_or("")
}

/// A first name for the entity of `e`, e.g. "Kelina" or "Dorard"; at most 14 characters.
pub fn first_name(e: &Entity, gender: Gender) -> String {
    let endings: &[&str] = match gender {
        Gender::Female => &FEMALE_ENDINGS,
        Gender::Male => &MALE_ENDINGS,
    };
    [
        word(e, F_START, &FIRST_STARTS),
        word(e, F_MIDDLE, &FIRST_MIDDLES),
        word(e, F_END, endings),
    ]
    .concat()
}

/// A last name of two or three syllables and an ending, e.g. "Ashmorley"; at most 20
/// characters. Not unique, as real last names are not.
pub fn last_name(e: &Entity) -> String {
    let syllables = e.range(F_LAST_LEN, 2, 3) as u32;
    let mut name = String::new();
    for k in 0..syllables {
        let s = word(e, F_LAST + k, &LAST_SYLLABLES);
        // Only the first syllable keeps its capital.
        if k == 0 {
            name.push_str(s);
        } else {
            name.push_str(&s.to_lowercase());
        }
    }
    name.push_str(word(e, F_LAST_END, &LAST_ENDINGS));
    name
}

/// Appends the consonant-vowel word of `n` pairs spelling `value` (mixed radix, lowest pair
/// last), capitalized.
fn push_pairs(out: &mut String, mut value: u64, n: u32) {
    let mut pairs = Vec::with_capacity(n as usize);
    for _ in 0..n {
        pairs.push(value % PAIRS);
        value /= PAIRS;
    }
    for (k, p) in pairs.iter().rev().enumerate() {
        let c = CONSONANTS[(p / 5) as usize] as char;
        let v = VOWELS[(p % 5) as usize] as char;
        out.push(if k == 0 { c } else { c.to_ascii_lowercase() });
        out.push(v.to_ascii_lowercase());
    }
}

/// The name of company `co_id` (from 1), e.g. "Kavoru Holdings"; unique per company. Beyond
/// the 4,096,000 names of the table (8,192 load units) a cycle number follows, as EGen's "#n"
/// (tpce.md §6).
pub fn company_name(seed: u64, co_id: u64) -> String {
    let kinds = COMPANY_KINDS.len() as u64;
    let capacity = PAIRS.pow(3) * kinds;
    let i = co_id.saturating_sub(1);
    let j = permute(seed, Tag::CompanyName, 0, capacity, i % capacity);
    let mut name = String::with_capacity(32);
    push_pairs(&mut name, j / kinds, 3);
    name.push(' ');
    name.push_str(COMPANY_KINDS[(j % kinds) as usize]);
    if i >= capacity {
        name.push_str(&format!(" #{}", i / capacity + 1));
    }
    name
}

/// Appends `len` letters spelling `value` in base 26.
fn push_letters(out: &mut String, mut value: u64, len: u32) {
    let start = out.len();
    for _ in 0..len {
        out.insert(start, char::from(b'A' + (value % 26) as u8));
        value /= 26;
    }
}

/// The ticker symbol of security `s_id` (from 1): uppercase, unique per security, at most 15
/// characters. The first 474,552 securities (692 load units) get 3 or 4 letters, later ones 5,
/// and past 5-letter room a "-" and a cycle in letters (EGen extends symbols, tpce.md §6).
pub fn symbol(seed: u64, s_id: u64) -> String {
    const THREE: u64 = 26 * 26 * 26;
    const SHORT: u64 = THREE + THREE * 26;
    const FIVE: u64 = THREE * 26 * 26;
    let i = s_id.saturating_sub(1);
    let mut s = String::with_capacity(15);
    if i < SHORT {
        match permute(seed, Tag::Symbol, 0, SHORT, i) {
            j if j < THREE => push_letters(&mut s, j, 3),
            j => push_letters(&mut s, j - THREE, 4),
        }
        return s;
    }
    let k = i - SHORT;
    push_letters(&mut s, permute(seed, Tag::Symbol, 1, FIVE, k % FIVE), 5);
    let mut cycle = k / FIVE;
    if cycle > 0 {
        s.push('-');
        let at = s.len();
        while cycle > 0 {
            s.insert(at, char::from(b'A' + (cycle % 26) as u8));
            cycle /= 26;
        }
    }
    s
}

/// A street name, e.g. "Cedarmill Lane"; not unique.
pub fn street(e: &Entity, field: u32) -> String {
    let first = word(e, field, &STREET_SYLLABLES);
    let second = word(e, field + 1, &STREET_SYLLABLES).to_lowercase();
    let kind = word(e, field + 2, &STREET_KINDS);
    format!("{first}{second} {kind}")
}

/// Address line 1: a street number 100–25,000 (tpce.md §6) and a street; takes fields
/// `field..field + 4`.
pub fn address_line(e: &Entity, field: u32) -> String {
    format!("{} {}", e.range(field, 100, 25_000), street(e, field + 1))
}

/// The name of broker `b_id` (from 1), e.g. "Selina Kavoru"; unique per broker, since the last
/// word is a permuted code (Broker-Volume asks for brokers by name, tpce.md §1).
pub fn broker_name(seed: u64, b_id: u64) -> String {
    let e = Entity::new(seed, Tag::BrokerName, b_id);
    let gender = if e.chance(10, 50) {
        Gender::Female
    } else {
        Gender::Male
    };
    let capacity = PAIRS.pow(3);
    let i = b_id.saturating_sub(1);
    let mut name = first_name(&e, gender);
    name.push(' ');
    push_pairs(
        &mut name,
        permute(seed, Tag::BrokerName, 0, capacity, i % capacity),
        3,
    );
    if i >= capacity {
        name.push_str(&format!(" {}", i / capacity + 1));
    }
    name
}

/// The tax id of customer `c_id` (from 1): two letters and 12 digits, e.g. "KT-4821-9103-3720".
/// The digits are a permutation of `c_id − 1` over 10^12, so they are unique per customer; the
/// letters only dress them.
pub fn tax_id(seed: u64, c_id: u64) -> String {
    let e = Entity::new(seed, Tag::TaxId, c_id);
    let digits = format!(
        "{:012}",
        permute(
            seed,
            Tag::TaxId,
            0,
            1_000_000_000_000,
            c_id.saturating_sub(1)
        )
    );
    let (a, rest) = digits.split_at(4);
    let (b, c) = rest.split_at(4);
    let l1 = char::from(b'A' + e.range(0, 0, 25) as u8);
    let l2 = char::from(b'A' + e.range(1, 0, 25) as u8);
    format!("{l1}{l2}-{a}-{b}-{c}")
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn all_unique(names: impl Iterator<Item = String>) -> usize {
        let mut seen = HashSet::new();
        for n in names {
            assert!(seen.insert(n.clone()), "{n} twice");
        }
        seen.len()
    }

    #[test]
    fn unique_names_are_unique_over_several_load_units() {
        assert_eq!(all_unique((1..=5 * 500).map(|i| company_name(7, i))), 2500);
        assert_eq!(all_unique((1..=5 * 685).map(|i| symbol(7, i))), 3425);
        assert_eq!(all_unique((1..=200).map(|i| broker_name(7, i))), 200);
        assert_eq!(all_unique((1..=5000).map(|i| tax_id(7, i))), 5000);
    }

    #[test]
    fn unique_names_stay_unique_past_their_tables() {
        let capacity = PAIRS.pow(3) * 8;
        let ids = (capacity - 2..=capacity + 2).chain([1, 2, 2 * capacity + 1]);
        assert_eq!(all_unique(ids.map(|i| company_name(3, i))), 8);
        let short = 26u64.pow(3) + 26u64.pow(4);
        let five = 26u64.pow(5);
        let ids = [
            1,
            short,
            short + 1,
            short + five,
            short + five + 1,
            u64::MAX,
        ];
        let symbols: Vec<String> = ids.iter().map(|&i| symbol(3, i)).collect();
        assert_eq!(all_unique(symbols.iter().cloned()), ids.len());
        for s in &symbols {
            assert!(s.len() <= 15, "{s}");
        }
    }

    #[test]
    fn names_fit_their_columns() {
        for id in 1..=5000u64 {
            let e = Entity::new(1, Tag::Customer, id);
            let gender = if id % 2 == 0 {
                Gender::Female
            } else {
                Gender::Male
            };
            let first = first_name(&e, gender);
            assert!((2..=20).contains(&first.len()), "{first}");
            let last = last_name(&e);
            assert!((4..=25).contains(&last.len()), "{last}");
            assert!(company_name(1, id).len() <= 60);
            let s = symbol(1, id);
            assert!((3..=15).contains(&s.len()), "{s}");
            assert!(
                s.bytes().all(|b| b.is_ascii_uppercase() || b == b'-'),
                "{s}"
            );
            assert!(broker_name(1, id).len() <= 49);
            assert_eq!(tax_id(1, id).len(), 17);
            assert!(address_line(&e, 10).len() <= 80);
        }
    }

    #[test]
    fn names_are_deterministic() {
        let e = Entity::new(9, Tag::Customer, 42);
        assert_eq!(
            first_name(&e, Gender::Female),
            first_name(&e, Gender::Female)
        );
        assert_eq!(last_name(&e), last_name(&Entity::new(9, Tag::Customer, 42)));
        assert_eq!(company_name(9, 42), company_name(9, 42));
        assert_eq!(symbol(9, 42), symbol(9, 42));
        assert_eq!(tax_id(9, 42), tax_id(9, 42));
        assert_ne!(company_name(9, 42), company_name(10, 42));
        // Person names vary: 1,000 customers give many distinct last names.
        let last: HashSet<String> = (1..=1000)
            .map(|i| last_name(&Entity::new(9, Tag::Customer, i)))
            .collect();
        assert!(last.len() > 700, "{}", last.len());
    }

    #[test]
    fn unique_words_decode_one_way() {
        let mut s = String::new();
        push_pairs(&mut s, 0, 3);
        assert_eq!(s, "Bababa");
        let mut s = String::new();
        push_letters(&mut s, 27, 3);
        assert_eq!(s, "ABB");
    }
}
