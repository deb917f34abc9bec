//! A customer and its accounts as pure functions of (seed, C_ID): tier, gender, names, tax id,
//! number of accounts and their CA_ID range, each account's broker and the people permitted to
//! trade it. The driver recomputes these to build Trade-Order's executor checks and
//! Customer-Position's tax-id lookups without reading the database (tpce.md §6, "What the
//! run-time generator must reproduce", items 2 and 3).
//!
//! Facts: CA_ID = (C_ID − 1) × 10 + 1 + k with k below the customer's account count, at most 10
//! (tpce.md §1); tiers and accounts per tier (tpce.md §2.1, computed in [`super::scale`]);
//! permissions 60 % owner only, 38 % one more person, 2 % two more (tpce.md §2.1). Which other
//! people those are is not stated there: we take other customers of the same load unit, so the
//! extra executors are real customers whose names and tax ids the generator already knows.

use std::ops::RangeInclusive;

use super::names::{first_name, last_name, tax_id, Gender};
use super::rng::{Entity, Tag};
use super::scale::{accounts, tier, Tier, CUSTOMERS_PER_BROKER, CUSTOMERS_PER_LU};

/// CA_ID slots per customer: the most accounts any tier allows (tpce.md §1).
pub const ACCOUNTS_PER_CUSTOMER_SLOT: u64 = 10;
/// Fields of the customer stream above those [`super::names`] uses for person names.
const F_GENDER: u32 = 20;
/// Fields of the permission stream (keyed by CA_ID).
const F_COUNT: u32 = 0;
const F_OTHER: u32 = 1; // and the next one
/// Fields of the account stream (keyed by CA_ID; [`super::scale::accounts`] uses C_ID keys).
const F_BROKER: u32 = 100;

/// One customer's generated attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer {
    pub c_id: u64,
    pub tier: Tier,
    pub gender: Gender,
    pub first_name: String,
    pub last_name: String,
    pub tax_id: String,
    pub accounts: u64,
}

impl Customer {
    pub fn generate(seed: u64, c_id: u64) -> Customer {
        let e = Entity::new(seed, Tag::Customer, c_id);
        let gender = if e.chance(F_GENDER, 50) {
            Gender::Female
        } else {
            Gender::Male
        };
        Customer {
            c_id,
            tier: tier(seed, c_id),
            gender,
            first_name: first_name(&e, gender),
            last_name: last_name(&e),
            tax_id: tax_id(seed, c_id),
            accounts: accounts(seed, c_id),
        }
    }

    /// The customer's CA_IDs, first to last.
    pub fn account_ids(&self) -> RangeInclusive<u64> {
        let first = first_account_id(self.c_id);
        first..=first + self.accounts.saturating_sub(1)
    }
}

/// The first CA_ID of customer `c_id` (from 1).
pub fn first_account_id(c_id: u64) -> u64 {
    c_id.saturating_sub(1) * ACCOUNTS_PER_CUSTOMER_SLOT + 1
}

/// The owner and index k of account `ca_id`, whether or not the owner has that many accounts.
pub fn account_slot(ca_id: u64) -> (u64, u64) {
    let a = ca_id.saturating_sub(1);
    (
        a / ACCOUNTS_PER_CUSTOMER_SLOT + 1,
        a % ACCOUNTS_PER_CUSTOMER_SLOT,
    )
}

/// True when `ca_id` is one of its owner's accounts (k below the owner's account count).
pub fn account_exists(seed: u64, ca_id: u64) -> bool {
    let (c_id, k) = account_slot(ca_id);
    ca_id > 0 && k < accounts(seed, c_id)
}

/// The broker of account `ca_id`: one of the brokers of the owner's load unit, so a load unit's
/// rows only name brokers of that unit and loaders can work unit by unit (brokers =
/// customers / 100, tpce.md §2.2).
pub fn account_broker(seed: u64, ca_id: u64) -> u64 {
    let (c_id, _) = account_slot(ca_id);
    let per_lu = CUSTOMERS_PER_LU / CUSTOMERS_PER_BROKER;
    let lu = (c_id - 1) / CUSTOMERS_PER_LU;
    let k = Entity::new(seed, Tag::Account, ca_id).range(F_BROKER, 0, per_lu as i64 - 1);
    lu * per_lu + 1 + k as u64
}

/// The number of people permitted to trade account `ca_id`, the owner included: 1 (60 %),
/// 2 (38 %) or 3 (2 %) (tpce.md §2.1, ACCOUNT_PERMISSION).
pub fn permission_count(seed: u64, ca_id: u64) -> u64 {
    match Entity::new(seed, Tag::Permission, ca_id).percent(F_COUNT) {
        1..=60 => 1,
        61..=98 => 2,
        _ => 3,
    }
}

/// The customers permitted to trade account `ca_id`: its owner first, then up to two other,
/// distinct customers of the owner's load unit.
pub fn permitted(seed: u64, ca_id: u64) -> Vec<u64> {
    let (owner, _) = account_slot(ca_id);
    let e = Entity::new(seed, Tag::Permission, ca_id);
    let lu_first = (owner - 1) / CUSTOMERS_PER_LU * CUSTOMERS_PER_LU + 1;
    let mut people = vec![owner];
    for extra in 0..permission_count(seed, ca_id).saturating_sub(1) {
        // Draw among the unit's customers other than those already chosen: an offset that
        // skips them keeps the draw uniform without a retry loop.
        let others = CUSTOMERS_PER_LU - people.len() as u64;
        let mut pick = lu_first + e.range(F_OTHER + extra as u32, 0, others as i64 - 1) as u64;
        let mut taken: Vec<u64> = people.clone();
        taken.sort_unstable();
        for t in taken {
            if pick >= t {
                pick += 1;
            }
        }
        people.push(pick);
    }
    people
}

/// Tax status of account `ca_id` (CA_TAX_ST): 0 non-taxable (20 %), 1 taxable with
/// withholding (50 %), 2 taxable (30 %) (tpce.md §6). Trade-Result taxes profitable sells of
/// accounts whose status is not 0.
pub fn account_tax_status(seed: u64, ca_id: u64) -> u8 {
    match Entity::new(seed, Tag::AccountInfo, ca_id).percent(0) {
        1..=20 => 0,
        21..=70 => 1,
        _ => 2,
    }
}

/// The two tax rates of customer `c_id` (CUSTOMER_TAXRATE) as indexes into
/// [`super::gen::catalog::taxrate`]: one country rate and one division rate.
pub fn customer_taxrates(seed: u64, c_id: u64) -> [usize; 2] {
    use super::gen::catalog::{COUNTRY_TAXRATES, DIVISION_TAXRATES};
    let e = Entity::new(seed, Tag::CustomerInfo, c_id);
    // Most customers live in the first few countries, as a real brokerage's would.
    let country = if e.chance(0, 80) {
        e.range(1, 0, 3)
    } else {
        e.range(1, 4, COUNTRY_TAXRATES as i64 - 1)
    };
    let division = COUNTRY_TAXRATES as i64 + e.range(2, 0, DIVISION_TAXRATES as i64 - 1);
    [country as usize, division as usize]
}

/// The bounds of the number of securities an account trades, by tier: at most 18
/// (tpce.md §2.5, "Securities per account: bounded by tier …, max 18").
fn security_bounds(tier: Tier) -> (i64, i64) {
    match tier {
        Tier::One => (6, 10),
        Tier::Two => (7, 14),
        Tier::Three => (10, 18),
    }
}

/// The securities (indexes, from 1) account `ca_id` trades, distinct, among `securities` in
/// all: the initial trades buy and sell only these, and a run's Trade-Order picks among them,
/// so sells mostly find a holding (tpce.md §6 item 3).
pub fn account_securities(seed: u64, ca_id: u64, securities: u64) -> Vec<u64> {
    let (c_id, _) = account_slot(ca_id);
    let (lo, hi) = security_bounds(tier(seed, c_id));
    let e = Entity::new(seed, Tag::Holding, ca_id);
    let n = (e.range(0, lo, hi) as u64).min(securities);
    let mut out: Vec<u64> = Vec::with_capacity(n as usize);
    let mut field = 1;
    while (out.len() as u64) < n {
        let s = e.range(field, 1, securities as i64) as u64;
        field += 1;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn customers_are_pure_functions_of_seed_and_id() {
        let a = Customer::generate(4, 1234);
        assert_eq!(a, Customer::generate(4, 1234));
        assert_ne!(a, Customer::generate(5, 1234));
        assert_eq!(a.tier, tier(4, 1234));
        assert_eq!(a.tax_id, tax_id(4, 1234));
        let genders = (1..=1000)
            .filter(|&c| Customer::generate(4, c).gender == Gender::Female)
            .count();
        assert!((430..=570).contains(&genders), "{genders}");
    }

    #[test]
    fn account_ids_follow_the_ca_id_rule() {
        for c_id in 1..=2000 {
            let c = Customer::generate(8, c_id);
            let ids: Vec<u64> = c.account_ids().collect();
            assert_eq!(ids.len() as u64, c.accounts);
            for (k, &ca_id) in ids.iter().enumerate() {
                assert_eq!(ca_id, (c_id - 1) * 10 + 1 + k as u64);
                assert_eq!(account_slot(ca_id), (c_id, k as u64));
                assert!(account_exists(8, ca_id));
            }
            // The slot after the last account is empty, unless the customer fills all ten.
            if c.accounts < 10 {
                assert!(!account_exists(8, (c_id - 1) * 10 + 1 + c.accounts));
            }
        }
        assert_eq!(first_account_id(1), 1);
        assert_eq!(first_account_id(2), 11);
        assert!(!account_exists(8, 0));
    }

    #[test]
    fn brokers_belong_to_the_owners_load_unit() {
        let mut seen = HashSet::new();
        for ca_id in 1..=10_000 {
            let b = account_broker(2, ca_id);
            assert!((1..=10).contains(&b), "{b}");
            seen.insert(b);
        }
        assert_eq!(seen.len(), 10);
        let b = account_broker(2, first_account_id(1_001));
        assert!((11..=20).contains(&b), "{b}");
    }

    #[test]
    fn permissions_split_60_38_2() {
        let mut counts = [0u64; 3];
        let n = 100_000;
        for ca_id in 1..=n {
            counts[permission_count(6, ca_id) as usize - 1] += 1;
        }
        let pct = |c: u64| c as f64 * 100.0 / n as f64;
        assert!((59.0..=61.0).contains(&pct(counts[0])), "{counts:?}");
        assert!((37.0..=39.0).contains(&pct(counts[1])), "{counts:?}");
        assert!((1.7..=2.3).contains(&pct(counts[2])), "{counts:?}");
    }

    #[test]
    fn permitted_people_are_distinct_customers_of_the_unit() {
        for ca_id in 10_001..=20_000 {
            let people = permitted(6, ca_id);
            assert_eq!(people.len() as u64, permission_count(6, ca_id));
            assert_eq!(people[0], account_slot(ca_id).0);
            let distinct: HashSet<u64> = people.iter().copied().collect();
            assert_eq!(distinct.len(), people.len(), "{people:?}");
            assert!(
                people.iter().all(|c| (1_001..=2_000).contains(c)),
                "{people:?}"
            );
        }
    }
}
