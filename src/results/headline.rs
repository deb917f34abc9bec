//! The workload's headline rate (TPC-C's NOTPM) and the per-minute rates it is read from, so
//! the console and the report print what the summary names instead of a type they know.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::summary::TargetTypeStats;

/// What a workload calls its headline: a label and the transaction type it counts per minute
/// (TPC-C: `NOTPM` over `new_order`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headline {
    pub label: String,
    pub txn_type: String,
}

/// The headline over the measured window, as `summary.json` states it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadlineRate {
    pub label: String,
    pub txn_type: String,
    /// Committed transactions of `txn_type` per minute (expected rollbacks are not counted).
    pub per_minute: f64,
}

impl HeadlineRate {
    /// The headline's rate out of `tpm` (zero when its type never committed).
    pub fn of(h: &Headline, tpm: &BTreeMap<String, f64>) -> HeadlineRate {
        HeadlineRate {
            label: h.label.clone(),
            txn_type: h.txn_type.clone(),
            per_minute: tpm.get(&h.txn_type).copied().unwrap_or(0.0),
        }
    }
}

/// Committed transactions per minute by type name, 1 decimal; zero for an empty window.
pub fn per_minute(rows: &[TargetTypeStats], window: Duration) -> BTreeMap<String, f64> {
    let mut committed: BTreeMap<String, u64> = BTreeMap::new();
    for r in rows {
        *committed.entry(r.txn_type.clone()).or_default() += r.stats.committed;
    }
    let minutes = window.as_secs_f64() / 60.0;
    committed
        .into_iter()
        .map(|(t, n)| {
            let tpm = if minutes > 0.0 {
                (n as f64 / minutes * 10.0).round() / 10.0
            } else {
                0.0
            };
            (t, tpm)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_reads_its_type_or_zero() {
        let h = Headline {
            label: "NOTPM".into(),
            txn_type: "new_order".into(),
        };
        let tpm: BTreeMap<String, f64> = [("new_order".to_string(), 12.5)].into();
        assert_eq!(HeadlineRate::of(&h, &tpm).per_minute, 12.5);
        assert_eq!(HeadlineRate::of(&h, &BTreeMap::new()).per_minute, 0.0);
    }
}
