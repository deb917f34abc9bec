//! Trade-Order's inputs (tpce.md §3.2): a customer (non-uniform) and one of its accounts, a
//! security the account trades named by symbol (60 %) or by company name and issue (40 %),
//! the executor (the owner 90 %, else another person permitted on the account), and the
//! order: market 60 % / limit 40 %, buy 50 % / sell 50 %, a limit sell a stop-loss half the
//! time, margin for 8 % of all orders (buys only, so 16 % of buys), LIFO 35 %, 100, 200, 400
//! or 800 shares, a limit uniform in $20.00–30.00, rolled back 1 %.
//!
//! Everything comes from (seed, scale) and the client's random stream, never from the
//! database: the executor's names and tax id are the generated ones the loader wrote to
//! CUSTOMER and ACCOUNT_PERMISSION.

use rand::Rng as _;

use super::Args;
use crate::workload::tpce::customer::{account_securities, permitted, Customer};
use crate::workload::tpce::gen::catalog::{TLB, TLS, TMB, TMS, TSL};
use crate::workload::tpce::gen::ids::security_company;
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::names::{company_name, symbol};
use crate::workload::tpce::price::{HIGH_CENTS, LOW_CENTS};
use crate::workload::Rng;

const BY_SYMBOL_PCT: u32 = 60;
const OWNER_EXECUTES_PCT: u32 = 90;
const MARKET_PCT: u32 = 60;
const BUY_PCT: u32 = 50;
const STOP_LOSS_OF_LIMIT_SELLS_PCT: u32 = 50;
/// 8 % of all orders are on margin and only buys may be, so 16 % of buys.
const MARGIN_OF_BUYS_PCT: u32 = 16;
const LIFO_PCT: u32 = 35;
const ROLLBACK_PCT: u32 = 1;
const QUANTITIES: [i64; 4] = [100, 200, 400, 800];

/// How the order names its security (tpce.md §3.2: by symbol 60 %, else company + issue).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecurityKey {
    Symbol(String),
    Company { name: String, issue: &'static str },
}

fn percent(rng: &mut Rng, pct: u32) -> bool {
    rng.gen_range(0..100) < pct
}

pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    let seed = inputs.seed();
    let c_id = inputs.customer(rng);
    let ca_id = inputs.account(rng, c_id);
    let traded = account_securities(seed, ca_id, inputs.scale().securities());
    let s_id = if traded.is_empty() {
        inputs.security(rng)
    } else {
        traded[rng.gen_range(0..traded.len())]
    };
    let security = if percent(rng, BY_SYMBOL_PCT) {
        SecurityKey::Symbol(symbol(seed, s_id))
    } else {
        let (co_id, issue) = security_company(s_id);
        SecurityKey::Company {
            name: company_name(seed, co_id),
            issue,
        }
    };

    // The owner unless the draw picks someone else and someone else is permitted.
    let others = permitted(seed, ca_id).split_off(1);
    let executor = if percent(rng, OWNER_EXECUTES_PCT) || others.is_empty() {
        c_id
    } else {
        others[rng.gen_range(0..others.len())]
    };
    let person = Customer::generate(seed, executor);

    let market = percent(rng, MARKET_PCT);
    let buy = percent(rng, BUY_PCT);
    let tt_id = match (market, buy) {
        (true, true) => TMB,
        (true, false) => TMS,
        (false, true) => TLB,
        (false, false) if percent(rng, STOP_LOSS_OF_LIMIT_SELLS_PCT) => TSL,
        (false, false) => TLS,
    };
    Args {
        ca_id: ca_id as i64,
        exec_f_name: person.first_name,
        exec_l_name: person.last_name,
        exec_tax_id: person.tax_id,
        security,
        tt_id,
        is_lifo: percent(rng, LIFO_PCT),
        is_margin: buy && percent(rng, MARGIN_OF_BUYS_PCT),
        qty: QUANTITIES[rng.gen_range(0..QUANTITIES.len())],
        limit_cents: (!market).then(|| rng.gen_range(LOW_CENTS..=HIGH_CENTS)),
        roll_it_back: percent(rng, ROLLBACK_PCT),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use rand::SeedableRng;

    use super::*;
    use crate::workload::tpce::customer::account_slot;
    use crate::workload::tpce::gen::ids::security_of;
    use crate::workload::tpce::scale::Scale;

    const SEED: u64 = 17;
    const N: u32 = 50_000;

    fn draws() -> (Inputs, Vec<Args>) {
        let inputs = Inputs::new(SEED, Scale::new(2_000, 1, 500).unwrap());
        let mut rng = Rng::seed_from_u64(3);
        let args = (0..N).map(|_| draw(&inputs, &mut rng)).collect();
        (inputs, args)
    }

    /// The share of draws that `f` holds for, with its tolerance of ±`within` points.
    fn share_near(args: &[Args], pct: f64, within: f64, f: impl Fn(&Args) -> bool) {
        let hits = args.iter().filter(|a| f(a)).count();
        let share = hits as f64 * 100.0 / args.len() as f64;
        assert!((share - pct).abs() <= within, "{share} % not near {pct} %");
    }

    #[test]
    fn order_types_split_30_30_20_10_10() {
        let (_, args) = draws();
        let is = |t: &'static str| move |a: &Args| a.tt_id == t;
        share_near(&args, 30.0, 1.0, is(TMB));
        share_near(&args, 30.0, 1.0, is(TMS));
        share_near(&args, 20.0, 1.0, is(TLB));
        share_near(&args, 10.0, 1.0, is(TLS));
        share_near(&args, 10.0, 1.0, is(TSL));
        // Limit prices exactly for the non-market types, within $20–30, spread over it.
        let mut lows = 0;
        for a in &args {
            let limit_type = matches!(a.tt_id, TLB | TLS | TSL);
            assert_eq!(a.limit_cents.is_some(), limit_type, "{a:?}");
            if let Some(p) = a.limit_cents {
                assert!((LOW_CENTS..=HIGH_CENTS).contains(&p), "{p}");
                lows += usize::from(p < 2_500);
            }
        }
        let limits = args.iter().filter(|a| a.limit_cents.is_some()).count();
        assert!(
            (lows as f64 / limits as f64 - 0.5).abs() < 0.02,
            "{lows}/{limits}"
        );
    }

    #[test]
    fn margin_only_on_buys_lifo_quantities_and_rollbacks() {
        let (_, args) = draws();
        assert!(args
            .iter()
            .all(|a| !a.is_margin || matches!(a.tt_id, TMB | TLB)));
        share_near(&args, 8.0, 0.6, |a| a.is_margin);
        share_near(&args, 35.0, 1.0, |a| a.is_lifo);
        share_near(&args, 1.0, 0.25, |a| a.roll_it_back);
        let mut per_qty: HashMap<i64, u32> = HashMap::new();
        for a in &args {
            *per_qty.entry(a.qty).or_default() += 1;
        }
        let mut qtys: Vec<i64> = per_qty.keys().copied().collect();
        qtys.sort_unstable();
        assert_eq!(qtys, QUANTITIES);
        for (q, n) in per_qty {
            assert!(
                (f64::from(n) / f64::from(N) - 0.25).abs() < 0.015,
                "{q}: {n}"
            );
        }
    }

    #[test]
    fn securities_are_the_accounts_own_named_60_40() {
        let (inputs, args) = draws();
        share_near(&args, 60.0, 1.0, |a| {
            matches!(a.security, SecurityKey::Symbol(_))
        });
        let securities = inputs.scale().securities();
        // Names back to security indexes, for the draws' accounts.
        let by_symbol: HashMap<String, u64> =
            (1..=securities).map(|s| (symbol(SEED, s), s)).collect();
        let by_company: HashMap<String, u64> = (1..=inputs.scale().companies())
            .map(|co| (company_name(SEED, co), co))
            .collect();
        for a in args.iter().take(5_000) {
            let ca_id = a.ca_id as u64;
            assert!(inputs.account_exists(ca_id), "{ca_id}");
            let s_id = match &a.security {
                SecurityKey::Symbol(s) => by_symbol[s],
                SecurityKey::Company { name, issue } => {
                    security_of(by_company[name], issue).expect("a listed issue")
                }
            };
            assert!(
                account_securities(SEED, ca_id, securities).contains(&s_id),
                "{a:?}"
            );
        }
    }

    #[test]
    fn the_owner_executes_90_percent_where_others_may() {
        let (_, args) = draws();
        let (mut may, mut owner_where_may, mut others) = (0u32, 0u32, 0u32);
        for a in &args {
            let ca_id = a.ca_id as u64;
            let people = permitted(SEED, ca_id);
            let owner = Customer::generate(SEED, account_slot(ca_id).0);
            let is_owner = a.exec_tax_id == owner.tax_id;
            if is_owner {
                assert_eq!(
                    (&a.exec_f_name, &a.exec_l_name),
                    (&owner.first_name, &owner.last_name)
                );
            } else {
                others += 1;
                let who = people[1..]
                    .iter()
                    .map(|&c| Customer::generate(SEED, c))
                    .find(|p| p.tax_id == a.exec_tax_id)
                    .expect("a non-owner executor is permitted on the account");
                assert_eq!(
                    (&a.exec_f_name, &a.exec_l_name),
                    (&who.first_name, &who.last_name)
                );
            }
            if people.len() > 1 {
                may += 1;
                owner_where_may += u32::from(is_owner);
            }
        }
        let share = f64::from(owner_where_may) / f64::from(may);
        assert!((share - 0.90).abs() < 0.015, "{share}");
        // Overall: 10 % of the 40 % of accounts with another permitted person.
        let share = f64::from(others) / f64::from(N);
        assert!((share - 0.04).abs() < 0.006, "{share}");
    }
}
