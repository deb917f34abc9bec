//! The run-time input generator's shared draws (tpce.md §3.2, "Customer selection"): which
//! customer, account and security a transaction is about. Each transaction's own inputs (trade
//! ids, times, frames) are drawn in its own file from these.
//!
//! Everything here is computed from (seed, scale), never read from the database, so a client
//! draws inputs that exist in the loaded data (tpce.md §6, "What the run-time generator must
//! reproduce").

use rand::Rng as _;

use super::customer::{account_exists, first_account_id, Customer};
use super::rng::{permute, Tag};
use super::scale::{accounts, Scale, CUSTOMERS_PER_LU};
use crate::workload::Rng;

/// Tier bands of a customer pick: a uniform draw in 1..=2000 lands in tier 1 up to 200 (10 % of
/// picks), tier 2 up to 1400 (60 %) and tier 3 above (30 %) (tpce.md §3.2).
const PICK_RANGE: u32 = 2_000;
const TIER_ONE_UP_TO: u32 = 200;
const TIER_TWO_UP_TO: u32 = 1_400;
/// The places of each tier inside a load unit (see [`super::scale::tier`]).
const TIER_PLACES: [(u64, u64); 3] = [(0, 200), (200, 800), (800, 1_000)];

/// The run-time generator of one database's inputs: seed and scale of its load, and for each
/// load unit which customer holds each tier place (the inverse of the tier permutation).
#[derive(Debug, Clone)]
pub struct Inputs {
    seed: u64,
    scale: Scale,
    /// `customer_at[lu][place]`: the index inside the unit (0..1000) of the customer at `place`.
    customer_at: Vec<Vec<u16>>,
}

impl Inputs {
    pub fn new(seed: u64, scale: Scale) -> Inputs {
        let customer_at = (0..scale.load_units())
            .map(|lu| {
                let mut at = vec![0u16; CUSTOMERS_PER_LU as usize];
                for index in 0..CUSTOMERS_PER_LU {
                    let place = permute(seed, Tag::Tier, lu, CUSTOMERS_PER_LU, index);
                    at[place as usize] = index as u16;
                }
                at
            })
            .collect();
        Inputs {
            seed,
            scale,
            customer_at,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn scale(&self) -> &Scale {
        &self.scale
    }

    /// A customer (C_ID): a uniform load unit, then a tier by the 10/60/30 % bands, then a
    /// place inside the tier skewed towards its end with a square root, as EGen's selection
    /// is sqrt-shaped (tpce.md §3.2).
    pub fn customer(&self, rng: &mut Rng) -> u64 {
        let lu = rng.gen_range(0..self.scale.load_units());
        let band = rng.gen_range(1..=PICK_RANGE);
        let (from, to) = if band <= TIER_ONE_UP_TO {
            TIER_PLACES[0]
        } else if band <= TIER_TWO_UP_TO {
            TIER_PLACES[1]
        } else {
            TIER_PLACES[2]
        };
        let skew: f64 = rng.gen::<f64>().sqrt();
        let place = from + ((skew * (to - from) as f64) as u64).min(to - from - 1);
        let index = self.customer_at[lu as usize][place as usize];
        lu * CUSTOMERS_PER_LU + u64::from(index) + 1
    }

    /// A uniform account of customer `c_id`.
    pub fn account(&self, rng: &mut Rng, c_id: u64) -> u64 {
        let n = accounts(self.seed, c_id);
        first_account_id(c_id) + rng.gen_range(0..n)
    }

    /// The customer's generated attributes (names, tax id, tier, accounts).
    pub fn customer_row(&self, c_id: u64) -> Customer {
        Customer::generate(self.seed, c_id)
    }

    /// True when `ca_id` names a loaded account.
    pub fn account_exists(&self, ca_id: u64) -> bool {
        account_exists(self.seed, ca_id) && (ca_id - 1) / 10 < self.scale.customers()
    }

    /// A uniform security index (from 1).
    pub fn security(&self, rng: &mut Rng) -> u64 {
        rng.gen_range(1..=self.scale.securities())
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::workload::tpce::scale::{tier, Tier};

    #[test]
    fn picks_follow_the_tier_bands() {
        let inputs = Inputs::new(9, Scale::new(2_000, 1, 500).unwrap());
        let mut rng = Rng::seed_from_u64(1);
        let n = 40_000;
        let mut counts = [0u32; 3];
        for _ in 0..n {
            let c = inputs.customer(&mut rng);
            assert!((1..=2_000).contains(&c));
            counts[tier(9, c) as usize - 1] += 1;
            let ca = inputs.account(&mut rng, c);
            assert!(inputs.account_exists(ca), "{ca}");
        }
        let share = |k: usize| f64::from(counts[k]) / f64::from(n);
        assert!((share(0) - 0.10).abs() < 0.01, "{counts:?}");
        assert!((share(1) - 0.60).abs() < 0.01, "{counts:?}");
        assert!((share(2) - 0.30).abs() < 0.01, "{counts:?}");
        assert_eq!(Tier::One as usize, 1);
    }
}
