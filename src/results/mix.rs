//! `summary.json`'s `mix`: each transaction type's completed transactions over the measured
//! window, every target merged, with its share of the mix.
//!
//! Counting rules: a type's share is its completed transactions (committed + expected
//! rollbacks; a failed one did not complete) as a percent of those of every drawn type. Types
//! the workload's emulator issues (TPC-E's Trade-Result, Market-Feed, Data-Maintenance,
//! Trade-Cleanup) are never drawn from a deck: they are listed with their counts and rates,
//! marked `emulated`, and have no share, so the drawn types' shares read as the deck's
//! (TPC-E's CE mix) and still add up to 100.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::summary::tps;
use crate::metrics::{KeySpace, Slot};

/// One type's place in the mix over the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeShare {
    pub txn_type: String,
    /// Issued by the workload's emulator: outside the shares.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// Committed + expected rollbacks.
    pub completed: u64,
    /// `completed` per second of the measured window (3 decimals).
    pub tps: f64,
    /// Percent of the drawn types' completed transactions (2 decimals); absent for an
    /// emulated type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_pct: Option<f64>,
}

/// The mix of the types that ran in the measured window (`per_type`: a slot per type of
/// `keys`), in key-space order.
pub fn of(keys: &KeySpace, per_type: &[Slot], measured: Duration) -> Vec<TypeShare> {
    let completed = |s: &Slot| s.committed + s.expected_rollback;
    per_type
        .iter()
        .enumerate()
        .filter(|(_, s)| s.total() > 0)
        .map(|(t, s)| TypeShare {
            txn_type: keys.txn_types.get(t).cloned().unwrap_or_default(),
            emulated: keys.is_emulated(t),
            completed: completed(s),
            tps: tps(completed(s), measured),
            share_pct: keys
                .mix_share(per_type, t, completed)
                .map(|p| (p * 100.0).round() / 100.0),
        })
        .collect()
}

/// The types of `mix` the workload's emulator issued.
pub fn emulated(mix: &[TypeShare]) -> impl Iterator<Item = &TypeShare> {
    mix.iter().filter(|t| t.emulated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ErrorClass, Outcome, Recorder};

    #[test]
    fn emulated_types_are_listed_without_a_share() {
        let mut keys = crate::results::intervals::tests::two_phase_keys();
        keys.txn_types.push("c".into());
        keys.txn_emulated = vec![false, true, false];
        let mut rec = Recorder::new(3);
        for _ in 0..30 {
            rec.record(0, Outcome::Committed, 10, None, 0);
        }
        rec.record(0, Outcome::ExpectedRollback, 10, None, 0);
        rec.record(0, Outcome::Failed(ErrorClass::Deadlock), 0, None, 0);
        for _ in 0..9 {
            rec.record(2, Outcome::Committed, 10, None, 0);
        }
        for _ in 0..100 {
            rec.record(1, Outcome::Committed, 10, None, 0);
        }
        let mix = of(&keys, &rec.slots, Duration::from_secs(10));
        let rows: Vec<(&str, bool, u64, Option<f64>)> = mix
            .iter()
            .map(|t| (t.txn_type.as_str(), t.emulated, t.completed, t.share_pct))
            .collect();
        assert_eq!(
            rows,
            [
                ("a", false, 31, Some(77.5)),
                ("b", true, 100, None),
                ("c", false, 9, Some(22.5)),
            ]
        );
        assert_eq!(mix[1].tps, 10.0, "emulated types keep their rate");
        let names: Vec<&str> = emulated(&mix).map(|t| t.txn_type.as_str()).collect();
        assert_eq!(names, ["b"]);
        let json = serde_json::to_string(&mix).unwrap();
        assert_eq!(json.matches("emulated").count(), 1, "{json}");
    }
}
