//! The facts one load unit's trade simulation looks up for every trade, computed once per unit:
//! its customers (account count, the name an executor shows), its accounts (securities,
//! permitted people, broker, tier, tax status and rates) and the securities they trade
//! (symbol, name, exchange, price curve). About 5,000 accounts and at most 18 securities
//! each, so it stays small whatever the trade days; it saves recomputing names and lists for
//! each of a unit's 17 million trades at TPC-E's 300 days.

use std::collections::HashMap;

use crate::workload::tpce::customer::{
    account_broker, account_securities, account_slot, account_tax_status, customer_taxrates,
    permitted, Customer,
};
use crate::workload::tpce::gen::catalog::{
    charge_cents, commission_band, commission_rate, security_exchange, taxrate, TAXRATES,
};
use crate::workload::tpce::gen::ids::{brokers_of, customers_of, security_company};
use crate::workload::tpce::names::{company_name, symbol};
use crate::workload::tpce::price::Curve;
use crate::workload::tpce::rules::money::Terms;
use crate::workload::tpce::scale::{Scale, CUSTOMERS_PER_LU};

use super::order::Book;

/// A customer of the unit.
#[derive(Debug)]
pub struct CustomerFacts {
    /// "first last", as T_EXEC_NAME shows the executor.
    pub name: String,
    pub accounts: u64,
    /// The index in [`UnitBook::accounts`] of the customer's first account.
    first_account: usize,
}

/// The facts of an account that price its trades.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountTerms {
    /// The owner's tier, 1–3.
    pub tier: u8,
    /// CA_TAX_ST: 0 not taxable, 1 taxable with withholding, 2 taxable.
    pub tax_status: u8,
    /// Σ TX_RATE of the owner's CUSTOMER_TAXRATE rows, in units of 1/100,000.
    pub tax_rate: i64,
}

impl AccountTerms {
    /// The terms of a trade of type `tt` (index into the catalog's trade types) for `qty`
    /// shares on exchange `exchange` (index into its exchanges): the catalog's charge and
    /// commission rate, the values Trade-Result reads from CHARGE and COMMISSION_RATE.
    pub fn for_trade(&self, tt: usize, qty: i64, exchange: usize) -> Terms {
        Terms {
            charge: charge_cents(tt, self.tier),
            commission_rate: commission_rate(self.tier, tt, exchange, commission_band(qty)),
            tax_status: i64::from(self.tax_status),
            tax_rate: self.tax_rate,
        }
    }
}

/// An account of the unit.
#[derive(Debug)]
pub struct AccountFacts {
    pub ca_id: u64,
    pub terms: AccountTerms,
    /// Index of the broker among the unit's brokers.
    pub broker: usize,
    /// The securities it trades (indexes) and, slot by slot, their index in
    /// [`UnitBook::securities`].
    pub held: Vec<u64>,
    pub local: Vec<usize>,
    pub permitted: Vec<u64>,
}

/// A security some account of the unit trades.
#[derive(Debug)]
pub struct SecurityFacts {
    pub symbol: String,
    /// S_NAME: the company's name, a space and the issue.
    pub name: String,
    /// Index into the catalog's exchanges.
    pub exchange: usize,
    pub curve: Curve,
}

#[derive(Debug)]
pub struct UnitBook {
    first_c_id: u64,
    pub customers: Vec<CustomerFacts>,
    /// The unit's accounts in CA_ID order.
    pub accounts: Vec<AccountFacts>,
    pub securities: Vec<SecurityFacts>,
    /// B_IDs of the unit's brokers, in order.
    pub brokers: Vec<u64>,
}

impl UnitBook {
    pub fn new(seed: u64, scale: &Scale, lu: u64) -> UnitBook {
        let rates: Vec<i64> = (0..TAXRATES).map(|i| taxrate(seed, i).2).collect();
        let brokers: Vec<u64> = brokers_of(lu).collect();
        let mut customers = Vec::with_capacity(CUSTOMERS_PER_LU as usize);
        let mut accounts = Vec::new();
        let mut securities = Vec::new();
        let mut local_of: HashMap<u64, usize> = HashMap::new();
        for c_id in customers_of(lu) {
            let c = Customer::generate(seed, c_id);
            let tax_rate = customer_taxrates(seed, c_id)
                .iter()
                .map(|&i| rates[i])
                .sum();
            customers.push(CustomerFacts {
                name: format!("{} {}", c.first_name, c.last_name),
                accounts: c.accounts,
                first_account: accounts.len(),
            });
            for ca_id in c.account_ids() {
                let held = account_securities(seed, ca_id, scale.securities());
                let local = held
                    .iter()
                    .map(|&s_id| {
                        *local_of.entry(s_id).or_insert_with(|| {
                            securities.push(SecurityFacts::new(seed, s_id));
                            securities.len() - 1
                        })
                    })
                    .collect();
                accounts.push(AccountFacts {
                    ca_id,
                    terms: AccountTerms {
                        tier: c.tier as u8,
                        tax_status: account_tax_status(seed, ca_id),
                        tax_rate,
                    },
                    broker: (account_broker(seed, ca_id) - brokers[0]) as usize,
                    held,
                    local,
                    permitted: permitted(seed, ca_id),
                });
            }
        }
        UnitBook {
            first_c_id: lu * CUSTOMERS_PER_LU + 1,
            customers,
            accounts,
            securities,
            brokers,
        }
    }

    /// The customer `c_id` of this unit.
    pub fn customer(&self, c_id: u64) -> &CustomerFacts {
        &self.customers[(c_id - self.first_c_id) as usize]
    }

    /// The index in [`UnitBook::accounts`] of account `ca_id` of this unit.
    pub fn account_index(&self, ca_id: u64) -> usize {
        let (c_id, k) = account_slot(ca_id);
        self.customer(c_id).first_account + k as usize
    }
}

impl SecurityFacts {
    fn new(seed: u64, s_id: u64) -> SecurityFacts {
        let (co_id, issue) = security_company(s_id);
        SecurityFacts {
            symbol: symbol(seed, s_id),
            name: format!("{} {issue}", company_name(seed, co_id)),
            exchange: security_exchange(seed, s_id),
            curve: Curve::for_security(seed, s_id),
        }
    }
}

impl Book for UnitBook {
    fn accounts(&mut self, c_id: u64) -> u64 {
        self.customer(c_id).accounts
    }

    fn securities(&mut self, ca_id: u64) -> &[u64] {
        &self.accounts[self.account_index(ca_id)].held
    }

    fn permitted(&mut self, ca_id: u64) -> &[u64] {
        &self.accounts[self.account_index(ca_id)].permitted
    }

    fn curve(&mut self, ca_id: u64, slot: usize) -> Curve {
        let local = self.accounts[self.account_index(ca_id)].local[slot];
        self.securities[local].curve
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpce::customer::account_exists;
    use crate::workload::tpce::gen::catalog::{TLB, TMS, TRADE_TYPES};
    use crate::workload::tpce::scale::accounts;

    #[test]
    fn the_book_answers_as_the_pure_functions_do() {
        let scale = Scale::new(2_000, 1, 500).unwrap();
        let mut book = UnitBook::new(6, &scale, 1);
        assert_eq!(book.customers.len(), 1_000);
        let total: u64 = (1_001..=2_000).map(|c| accounts(6, c)).sum();
        assert_eq!(book.accounts.len() as u64, total);
        assert_eq!(book.brokers, (11..=20).collect::<Vec<_>>());
        for i in (0..book.accounts.len()).step_by(37) {
            let ca_id = book.accounts[i].ca_id;
            assert!(account_exists(6, ca_id));
            assert_eq!(book.account_index(ca_id), i);
            let want = account_securities(6, ca_id, scale.securities());
            assert_eq!(book.securities(ca_id), want.as_slice());
            assert_eq!(book.permitted(ca_id), permitted(6, ca_id).as_slice());
            let a = &book.accounts[i];
            assert_eq!(book.brokers[a.broker], account_broker(6, ca_id));
            assert_eq!(a.terms.tax_status, account_tax_status(6, ca_id));
            for (slot, &s_id) in want.iter().enumerate() {
                assert_eq!(book.securities[a.local[slot]].symbol, symbol(6, s_id));
            }
            for (slot, &s_id) in want.iter().enumerate() {
                assert_eq!(book.curve(ca_id, slot), Curve::for_security(6, s_id));
            }
        }
        let c = Customer::generate(6, 1_234);
        assert_eq!(
            book.customer(1_234).name,
            format!("{} {}", c.first_name, c.last_name)
        );
        let (co, issue) = security_company(3);
        let s = SecurityFacts::new(6, 3);
        assert_eq!(s.name, format!("{} {issue}", company_name(6, co)));
    }

    #[test]
    fn trade_terms_come_from_the_catalog() {
        let tt = |id: &str| TRADE_TYPES.iter().position(|t| t.id == id).unwrap();
        let account = AccountTerms {
            tier: 2,
            tax_status: 1,
            tax_rate: 20_000,
        };
        for (tt, qty, ex) in [(tt(TMS), 400, 0), (tt(TLB), 100, 3)] {
            let terms = account.for_trade(tt, qty, ex);
            assert_eq!(terms.charge, charge_cents(tt, 2));
            let rate = commission_rate(2, tt, ex, commission_band(qty));
            assert_eq!(terms.commission_rate, rate);
            assert_eq!((terms.tax_status, terms.tax_rate), (1, 20_000));
        }
    }
}
