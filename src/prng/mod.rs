//! The pseudo-random generators every room may draw from: PostgreSQL's own ([`pg_prng`],
//! with pgbench 15's seeding order) and [`splitmix`], which derives unrelated seeds from one.
//!
//! A shared leaf, like `event`: any room may use it and it imports nothing of the crate, so the
//! transaction log (metrics), the workloads and the driver draw from one place without an
//! import running up the rooms (issue 48).

pub mod pg_prng;

pub use pg_prng::{PgPrng, PgbenchSeeds};

/// SplitMix64 of `x` under `seed`: a client's seed from the run's, a generated row's values
/// from the data's seed and its id; distinct `x` give unrelated outputs.
pub fn splitmix(seed: u64, x: u64) -> u64 {
    let mut z = seed ^ x.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
