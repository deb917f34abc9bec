//! How entity ids are laid out, so each load unit (LU, from 0) owns a block of every id space
//! and a loader session can generate one unit without knowing the others:
//!
//! | entity | ids of load unit `lu` |
//! |---|---|
//! | customer C_ID, watch list WL_ID | `lu·1000 + 1 ..= lu·1000 + 1000` (WL_ID = C_ID) |
//! | account CA_ID | `(C_ID − 1)·10 + 1 + k` ([`super::super::customer`]) |
//! | broker B_ID | `lu·10 + 1 ..= lu·10 + 10` |
//! | company CO_ID | `lu·500 + 1 ..= lu·500 + 500` |
//! | security index S_ID (its symbol is [`super::super::names::symbol`]) | `lu·685 + 1 ..= lu·685 + 685` |
//! | news NI_ID | `(CO_ID − 1)·2 + 1 + k`, k < 2 |
//! | address AD_ID | 1–4 the exchanges; then 1,500 per unit: its 1,000 customers, then its 500 companies |
//! | trade T_ID | the unit's k-th trade (from 0) is loaded trade `k·LUs + lu` ([`trade_index`]); its id skips multiples of 101 ([`super::super::scale::trade_id`]) |
//!
//! Interleaving trades over units keeps T_ID in time order across the whole database, as a
//! single market would number them, while every unit still generates only its own trades.

use crate::workload::tpce::scale::{
    COMPANIES_PER_LU, CUSTOMERS_PER_BROKER, CUSTOMERS_PER_LU, SECURITIES_PER_LU,
};

pub const EXCHANGE_ADDRESSES: u64 = 4;
const ADDRESSES_PER_LU: u64 = CUSTOMERS_PER_LU + COMPANIES_PER_LU;
pub const BROKERS_PER_LU: u64 = CUSTOMERS_PER_LU / CUSTOMERS_PER_BROKER;

/// The load unit (from 0) of customer `c_id`.
pub fn lu_of_customer(c_id: u64) -> u64 {
    (c_id - 1) / CUSTOMERS_PER_LU
}

/// The customers of load unit `lu`.
pub fn customers_of(lu: u64) -> std::ops::RangeInclusive<u64> {
    lu * CUSTOMERS_PER_LU + 1..=(lu + 1) * CUSTOMERS_PER_LU
}

/// The brokers of load unit `lu`.
pub fn brokers_of(lu: u64) -> std::ops::RangeInclusive<u64> {
    lu * BROKERS_PER_LU + 1..=(lu + 1) * BROKERS_PER_LU
}

/// The companies of load unit `lu`.
pub fn companies_of(lu: u64) -> std::ops::RangeInclusive<u64> {
    lu * COMPANIES_PER_LU + 1..=(lu + 1) * COMPANIES_PER_LU
}

/// The security indexes of load unit `lu`.
pub fn securities_of(lu: u64) -> std::ops::RangeInclusive<u64> {
    lu * SECURITIES_PER_LU + 1..=(lu + 1) * SECURITIES_PER_LU
}

/// The address of customer `c_id`.
pub fn customer_address(c_id: u64) -> u64 {
    let c = c_id - 1;
    EXCHANGE_ADDRESSES + c / CUSTOMERS_PER_LU * ADDRESSES_PER_LU + c % CUSTOMERS_PER_LU + 1
}

/// The address of company `co_id`.
pub fn company_address(co_id: u64) -> u64 {
    let c = co_id - 1;
    EXCHANGE_ADDRESSES
        + c / COMPANIES_PER_LU * ADDRESSES_PER_LU
        + CUSTOMERS_PER_LU
        + c % COMPANIES_PER_LU
        + 1
}

/// The news items of company `co_id`.
pub fn news_of(co_id: u64) -> std::ops::RangeInclusive<u64> {
    (co_id - 1) * 2 + 1..=(co_id - 1) * 2 + 2
}

/// The loaded-trade number (from 0; [`super::super::scale::trade_id`] gives its T_ID) of load
/// unit `lu`'s `k`-th trade in a database of `lus` load units.
pub fn trade_index(k: u64, lu: u64, lus: u64) -> u64 {
    k * lus + lu
}

/// Securities per load unit beyond one common issue per company: these companies (every other
/// one of the unit's first 370) also have a preferred issue, so 500 companies list 685
/// securities (tpce.md §2.3).
const PREFERRED_PER_LU: u64 = SECURITIES_PER_LU - COMPANIES_PER_LU;

/// The company (CO_ID) and issue (S_ISSUE) of security index `s_id`: a unit's first 500
/// securities are its companies' common stock, the other 185 preferred stock of every other
/// company.
pub fn security_company(s_id: u64) -> (u64, &'static str) {
    let i = s_id - 1;
    let (lu, k) = (i / SECURITIES_PER_LU, i % SECURITIES_PER_LU);
    let first = lu * COMPANIES_PER_LU + 1;
    if k < COMPANIES_PER_LU {
        (first + k, "COMMON")
    } else {
        (first + (k - COMPANIES_PER_LU) * 2, "PREF_A")
    }
}

/// The inverse of [`security_company`]: the security index of `(co_id, issue)`, if listed.
pub fn security_of(co_id: u64, issue: &str) -> Option<u64> {
    let c = co_id.checked_sub(1)?;
    let (lu, k) = (c / COMPANIES_PER_LU, c % COMPANIES_PER_LU);
    let first = lu * SECURITIES_PER_LU + 1;
    match issue {
        "COMMON" => Some(first + k),
        "PREF_A" if k % 2 == 0 && k / 2 < PREFERRED_PER_LU => {
            Some(first + COMPANIES_PER_LU + k / 2)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_do_not_overlap() {
        assert_eq!(customer_address(1), 5);
        assert_eq!(customer_address(1000), 1004);
        assert_eq!(company_address(1), 1005);
        assert_eq!(company_address(500), 1504);
        assert_eq!(customer_address(1001), 1505);
        assert_eq!(company_address(501), 2505);
    }

    #[test]
    fn securities_map_to_companies_of_their_unit_and_back() {
        let mut preferred = 0;
        for s in 1..=2 * SECURITIES_PER_LU {
            let (co, issue) = security_company(s);
            assert_eq!((co - 1) / COMPANIES_PER_LU, (s - 1) / SECURITIES_PER_LU);
            assert_eq!(security_of(co, issue), Some(s), "{s}");
            preferred += u64::from(issue == "PREF_A");
        }
        assert_eq!(preferred, 2 * PREFERRED_PER_LU);
        assert_eq!(security_of(2, "PREF_A"), None);
    }

    #[test]
    fn units_own_blocks() {
        assert_eq!(customers_of(1), 1001..=2000);
        assert_eq!(brokers_of(0), 1..=10);
        assert_eq!(securities_of(1), 686..=1370);
        assert_eq!(news_of(3), 5..=6);
        assert_eq!(lu_of_customer(1000), 0);
        assert_eq!(lu_of_customer(1001), 1);
    }
}
