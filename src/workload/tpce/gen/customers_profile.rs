//! The parts of a customer's rows that no transaction recomputes: birth date, middle initial,
//! phones, e-mail addresses, street address and country, and the name, balance and access
//! strings of accounts. Each is a pure function of (seed, id) like everything the generator
//! makes, so loads stay byte-identical across `--jobs`; they live apart from
//! [`super::customers`] only to keep that file about rows and batches.
//!
//! Facts: age bands, six e-mail domains, street numbers 100–25,000, line 2 empty in 60 %,
//! 80 % positive balances (tpce.md §6, "Addresses" and "Accounts"). The bands' bounds, the
//! domains, the countries and the access strings are ours (tpce.md §6, License).

use super::catalog::COUNTRY_TAXRATES;
use super::clock::{Day, TRADING_START};
use crate::workload::tpce::customer::{customer_taxrates, Customer};
use crate::workload::tpce::names::address_line;
use crate::workload::tpce::rng::{Entity, Tag};

/// Fields of the [`Tag::CustomerInfo`] stream (keyed by C_ID) from 10 up; 0–2 are
/// [`customer_taxrates`]'s.
const F_MIDDLE: u32 = 10;
const F_AGE_BAND: u32 = 11;
const F_AGE_DAYS: u32 = 12;
const F_DOMAIN: u32 = 13;
const F_OTHER_DOMAIN: u32 = 14;
const F_MAIL_NUMBER: u32 = 15;
const F_LINE1: u32 = 20; // and the next three
const F_LINE2: u32 = 24;
const F_LINE2_KIND: u32 = 25;
const F_LINE2_NUMBER: u32 = 26;
const F_ZIP: u32 = 27;
/// Phone `k` (0–2) uses the six fields from `F_PHONES + 8·k`.
const F_PHONES: u32 = 40;
/// Fields of the [`Tag::AccountInfo`] stream (keyed by CA_ID) from 10 up; 0 is the tax status.
const F_BALANCE_SIGN: u32 = 10;
const F_BALANCE: u32 = 11;
const F_ACCOUNT_KIND: u32 = 12;
/// Fields of the [`Tag::Permission`] stream (keyed by CA_ID) from 10 up; 0–2 choose the people.
const F_ACL: u32 = 10;

/// Age bands at the start of trading, in years inclusive, with their share in percent.
const AGE_BANDS: [(i64, i64, u32); 7] = [
    (18, 24, 5),
    (25, 34, 15),
    (35, 44, 20),
    (45, 54, 25),
    (55, 64, 20),
    (65, 74, 10),
    (75, 90, 5),
];

/// The countries of the country tax rates, in their order, with their dialing codes: most
/// customers live in the first four ([`customer_taxrates`]).
pub const COUNTRIES: [(&str, &str); COUNTRY_TAXRATES] = [
    ("United States", "1"),
    ("Canada", "1"),
    ("United Kingdom", "44"),
    ("Germany", "49"),
    ("France", "33"),
    ("Japan", "81"),
    ("Australia", "61"),
    ("Netherlands", "31"),
    ("Switzerland", "41"),
    ("Sweden", "46"),
    ("Spain", "34"),
    ("Italy", "39"),
    ("Ireland", "353"),
    ("Singapore", "65"),
    ("New Zealand", "64"),
    ("Norway", "47"),
    ("Denmark", "45"),
    ("Belgium", "32"),
    ("Austria", "43"),
    ("Mexico", "52"),
];

/// Six mail domains of our own.
const MAIL_DOMAINS: [&str; 6] = [
    "postlark.com",
    "quillmail.net",
    "harborbox.org",
    "mailwren.com",
    "lanternpost.net",
    "tidewire.com",
];
const LINE2_KINDS: [&str; 4] = ["Apt", "Suite", "Unit", "Floor"];
const ACCOUNT_KINDS: [&str; 8] = [
    "Brokerage",
    "Retirement",
    "Savings",
    "Education",
    "Joint",
    "Growth",
    "Income",
    "Trust",
];
/// The access strings of permitted people other than the owner, whose string is [`OWNER_ACL`].
const OTHER_ACLS: [&str; 4] = ["0001", "0011", "0101", "0111"];
pub const OWNER_ACL: &str = "0000";
/// Balances: up to $1,000,000 when positive, down to −$50,000 otherwise, in cents.
const MAX_BALANCE: i64 = 100_000_000;
const MIN_BALANCE: i64 = -5_000_000;

/// One phone number's four columns; the extension is usually absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phone {
    pub country: &'static str,
    pub area: String,
    pub local: String,
    pub extension: Option<String>,
}

/// The generated details of one customer beyond [`Customer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub middle_initial: char,
    pub birth_date: Day,
    /// Index into [`COUNTRIES`]: the country of the customer's country tax rate.
    pub country: usize,
    /// Phone 1 always, phone 2 in 70 %, phone 3 in 30 %.
    pub phones: [Option<Phone>; 3],
    pub emails: [String; 2],
    pub address_line1: String,
    pub address_line2: Option<String>,
    /// Index into the ZIP_CODE rows (`catalog::zip_code`).
    pub zip: u64,
}

impl Profile {
    pub fn generate(seed: u64, c: &Customer) -> Profile {
        let e = Entity::new(seed, Tag::CustomerInfo, c.c_id);
        let country = customer_taxrates(seed, c.c_id)[0];
        let dialing = COUNTRIES[country].1;
        let phones = [(0, 100), (1, 70), (2, 30)].map(|(k, share)| {
            let f = F_PHONES + 8 * k;
            e.chance(f, share).then(|| Phone {
                country: dialing,
                area: e.range(f + 1, 200, 999).to_string(),
                local: format!(
                    "{:03}-{:04}",
                    e.range(f + 2, 200, 999),
                    e.range(f + 3, 0, 9999)
                ),
                extension: e
                    .chance(f + 4, 20)
                    .then(|| e.range(f + 5, 1, 99_999).to_string()),
            })
        });
        Profile {
            middle_initial: char::from(b'A' + e.range(F_MIDDLE, 0, 25) as u8),
            birth_date: birth_date(&e),
            country,
            phones,
            emails: emails(&e, c),
            address_line1: address_line(&e, F_LINE1),
            address_line2: (!e.chance(F_LINE2, 60)).then(|| {
                let kind = e.pick(F_LINE2_KIND, &LINE2_KINDS).copied().unwrap_or("Apt");
                format!("{kind} {}", e.range(F_LINE2_NUMBER, 1, 999))
            }),
            zip: e.range(F_ZIP, 0, super::catalog::ZIP_CODES as i64 - 1) as u64,
        }
    }
}

/// A birth date in one of [`AGE_BANDS`], counted back from the first trading day.
fn birth_date(e: &Entity) -> Day {
    let p = e.percent(F_AGE_BAND);
    let mut acc = 0;
    let (lo, hi) = AGE_BANDS
        .iter()
        .find(|(_, _, share)| {
            acc += share;
            p <= acc
        })
        .map_or((18, 90), |&(lo, hi, _)| (lo, hi));
    // Whole years of 365.25 days: an age of `lo` up to the day before `hi + 1`.
    let days = e.range(F_AGE_DAYS, (lo * 1461 + 3) / 4, (hi + 1) * 1461 / 4 - 1);
    TRADING_START.plus(-days)
}

/// Two addresses on two different domains: "first.last@…" and "flast<n>@…".
fn emails(e: &Entity, c: &Customer) -> [String; 2] {
    let first = c.first_name.to_lowercase();
    let last = c.last_name.to_lowercase();
    let d1 = e.range(F_DOMAIN, 0, MAIL_DOMAINS.len() as i64 - 1) as usize;
    let d2 = (d1 + e.range(F_OTHER_DOMAIN, 1, MAIL_DOMAINS.len() as i64 - 1) as usize)
        % MAIL_DOMAINS.len();
    let initial = first.chars().next().unwrap_or('x');
    [
        format!("{first}.{last}@{}", MAIL_DOMAINS[d1]),
        format!(
            "{initial}{last}{}@{}",
            e.range(F_MAIL_NUMBER, 1, 99),
            MAIL_DOMAINS[d2]
        ),
    ]
}

/// CA_NAME of account `ca_id` of customer `c`, e.g. "Kelina Ashmorley Retirement".
pub fn account_name(seed: u64, ca_id: u64, c: &Customer) -> String {
    let e = Entity::new(seed, Tag::AccountInfo, ca_id);
    let kind = e
        .pick(F_ACCOUNT_KIND, &ACCOUNT_KINDS)
        .copied()
        .unwrap_or("");
    format!("{} {} {kind}", c.first_name, c.last_name)
}

/// CA_BAL of account `ca_id` at load, in cents: positive in 80 % (tpce.md §6), else at or
/// below zero.
pub fn account_balance(seed: u64, ca_id: u64) -> i64 {
    let e = Entity::new(seed, Tag::AccountInfo, ca_id);
    if e.chance(F_BALANCE_SIGN, 80) {
        e.range(F_BALANCE, 1, MAX_BALANCE)
    } else {
        e.range(F_BALANCE, MIN_BALANCE, 0)
    }
}

/// AP_ACL of the `k`-th person permitted on account `ca_id` (k = 0 is the owner).
pub fn access_string(seed: u64, ca_id: u64, k: usize) -> &'static str {
    if k == 0 {
        return OWNER_ACL;
    }
    let e = Entity::new(seed, Tag::Permission, ca_id);
    e.pick(F_ACL + k as u32, &OTHER_ACLS)
        .copied()
        .unwrap_or(OTHER_ACLS[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn years_before_trading(d: Day) -> f64 {
        (TRADING_START.0 - d.0) as f64 / 365.25
    }

    #[test]
    fn ages_fall_in_the_bands_with_their_shares() {
        let mut per_band = [0u32; AGE_BANDS.len()];
        let n = 20_000;
        for c_id in 1..=n {
            let p = Profile::generate(3, &Customer::generate(3, c_id));
            let age = years_before_trading(p.birth_date);
            assert!((18.0..91.0).contains(&age), "{age}");
            let band = AGE_BANDS
                .iter()
                .position(|&(_, hi, _)| age < (hi + 1) as f64)
                .unwrap();
            per_band[band] += 1;
        }
        for (k, &(_, _, share)) in AGE_BANDS.iter().enumerate() {
            let got = f64::from(per_band[k]) * 100.0 / f64::from(n as u32);
            assert!((got - f64::from(share)).abs() < 1.0, "{per_band:?}");
        }
    }

    #[test]
    fn phones_mails_and_line2_follow_their_shares() {
        let (mut phone2, mut phone3, mut line2, mut ext) = (0, 0, 0, 0);
        let n = 10_000;
        for c_id in 1..=n {
            let c = Customer::generate(5, c_id);
            let p = Profile::generate(5, &c);
            assert!(p.phones[0].is_some());
            phone2 += u32::from(p.phones[1].is_some());
            phone3 += u32::from(p.phones[2].is_some());
            line2 += u32::from(p.address_line2.is_some());
            ext += p
                .phones
                .iter()
                .flatten()
                .filter(|ph| ph.extension.is_some())
                .count();
            let domain = |m: &str| m.split_once('@').map(|(_, d)| d.to_string());
            assert_ne!(domain(&p.emails[0]), domain(&p.emails[1]));
            assert!(p.emails[0].starts_with(&c.first_name.to_lowercase()));
            for ph in p.phones.iter().flatten() {
                assert_eq!(ph.country, COUNTRIES[p.country].1);
            }
            assert!(p.zip < super::super::catalog::ZIP_CODES);
        }
        let pct = |x: u32| f64::from(x) * 100.0 / f64::from(n as u32);
        assert!((pct(phone2) - 70.0).abs() < 2.0, "{phone2}");
        assert!((pct(phone3) - 30.0).abs() < 2.0, "{phone3}");
        assert!((pct(line2) - 40.0).abs() < 2.0, "{line2}");
        assert!(ext > 0);
    }

    #[test]
    fn balances_are_positive_in_80_percent_and_acls_mark_the_owner() {
        let n = 20_000;
        let positive = (1..=n).filter(|&a| account_balance(7, a) > 0).count();
        let pct = positive as f64 * 100.0 / n as f64;
        assert!((pct - 80.0).abs() < 1.5, "{pct}");
        for ca_id in 1..=1000 {
            let b = account_balance(7, ca_id);
            assert!((MIN_BALANCE..=MAX_BALANCE).contains(&b));
            assert_eq!(access_string(7, ca_id, 0), OWNER_ACL);
            assert!(OTHER_ACLS.contains(&access_string(7, ca_id, 1)));
        }
    }
}
