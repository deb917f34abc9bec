//! One roll-up of a recorder's slots by any dimension of its keys (segment, target, group,
//! transaction type), used by the progress line, the polling block, the summary, the
//! Prometheus endpoint and the report, so none of them walks the key arithmetic itself.

use super::{KeySpace, Recorder, Slot};

/// The key arithmetic alone, small and `Copy` for the hot path: key = (segment × targets +
/// target) × types + type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyShape {
    pub targets: usize,
    pub txn_types: usize,
}

impl KeyShape {
    #[inline]
    pub fn key(&self, segment: usize, target: usize, txn: usize) -> usize {
        (segment * self.targets + target) * self.txn_types + txn
    }

    /// (segment, target, txn) of a key.
    pub fn split(&self, key: usize) -> (usize, usize, usize) {
        let types = self.txn_types.max(1);
        let targets = self.targets.max(1);
        (key / types / targets, (key / types) % targets, key % types)
    }
}

/// The role of a transaction type when nothing names one (results written before roles).
pub use crate::config::DEFAULT_ROLE;

/// What a recorder key stands for, with the target's group looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyParts {
    pub segment: usize,
    pub target: usize,
    pub group: usize,
    pub txn: usize,
}

impl KeySpace {
    /// The arithmetic of this key space.
    pub fn shape(&self) -> KeyShape {
        KeyShape {
            targets: self.targets.len(),
            txn_types: self.txn_types.len(),
        }
    }

    /// The parts of `key`.
    pub fn parts(&self, key: usize) -> KeyParts {
        let (segment, target, txn) = self.split(key);
        KeyParts {
            segment,
            target,
            group: self.targets.get(target).map_or(0, |t| t.group),
            txn,
        }
    }

    /// Every non-empty slot of `rec` with its key's parts.
    pub fn slots<'a>(
        &'a self,
        rec: &'a Recorder,
    ) -> impl Iterator<Item = (KeyParts, &'a Slot)> + 'a {
        rec.slots
            .iter()
            .enumerate()
            .take(self.len())
            .filter(|(_, s)| s.total() > 0)
            .map(|(key, s)| (self.parts(key), s))
    }

    /// Sums `rec` into `n` buckets: `bucket` names the bucket of each key, or `None` to skip it.
    pub fn roll_up(
        &self,
        rec: &Recorder,
        n: usize,
        bucket: impl Fn(KeyParts) -> Option<usize>,
    ) -> Vec<Slot> {
        let mut out = vec![Slot::default(); n];
        for (parts, slot) in self.slots(rec) {
            if let Some(b) = bucket(parts).filter(|b| *b < n) {
                out[b].merge(slot);
            }
        }
        out
    }

    /// The sum of the slots whose parts pass `keep`.
    pub fn sum_where(&self, rec: &Recorder, keep: impl Fn(KeyParts) -> bool) -> Slot {
        let mut out = Slot::default();
        for (parts, slot) in self.slots(rec) {
            if keep(parts) {
                out.merge(slot);
            }
        }
        out
    }

    /// Per transaction type.
    pub fn by_type(&self, rec: &Recorder) -> Vec<Slot> {
        self.roll_up(rec, self.txn_types.len(), |p| Some(p.txn))
    }

    /// Per group.
    pub fn by_group(&self, rec: &Recorder) -> Vec<Slot> {
        self.roll_up(rec, self.groups.len(), |p| Some(p.group))
    }

    /// Per segment (iteration × phase, ramps included).
    pub fn by_segment(&self, rec: &Recorder) -> Vec<Slot> {
        self.roll_up(rec, self.segments.len(), |p| Some(p.segment))
    }

    /// The role a transaction type runs on; `oltp` for a type the key space names no role for
    /// (every type ran on one role before roles existed).
    pub fn role_of(&self, txn: usize) -> &str {
        self.txn_roles.get(txn).map_or(DEFAULT_ROLE, String::as_str)
    }

    /// The roles of the run's types, distinct, in the order the types name them.
    pub fn roles(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for t in 0..self.txn_types.len() {
            let role = self.role_of(t);
            if !out.contains(&role) {
                out.push(role);
            }
        }
        out
    }

    /// Per transaction type, the index of its role in [`KeySpace::roles`].
    pub fn role_index(&self) -> Vec<usize> {
        let roles = self.roles();
        (0..self.txn_types.len())
            .map(|t| {
                roles
                    .iter()
                    .position(|r| *r == self.role_of(t))
                    .unwrap_or(0)
            })
            .collect()
    }

    /// True for a type the workload's emulator issues (TPC-E's Trade-Result): never drawn
    /// from a deck, so outside the mix shares. Types the key space says nothing of are drawn.
    pub fn is_emulated(&self, txn: usize) -> bool {
        self.txn_emulated.get(txn).copied().unwrap_or(false)
    }

    /// Percent of `part` among the transactions of the drawn types in `per_type` (a slot per
    /// type, counted by `count`); `None` for an emulated type, which has no share.
    pub fn mix_share(
        &self,
        per_type: &[Slot],
        txn: usize,
        count: impl Fn(&Slot) -> u64,
    ) -> Option<f64> {
        if self.is_emulated(txn) {
            return None;
        }
        let drawn: u64 = per_type
            .iter()
            .enumerate()
            .filter(|(t, _)| !self.is_emulated(*t))
            .map(|(_, s)| count(s))
            .sum();
        let part = per_type.get(txn).map_or(0, &count);
        Some(if drawn == 0 {
            0.0
        } else {
            part as f64 * 100.0 / drawn as f64
        })
    }

    /// Per role, in the order of [`KeySpace::roles`].
    pub fn by_role(&self, rec: &Recorder) -> Vec<Slot> {
        let index = self.role_index();
        self.roll_up(rec, self.roles().len(), |p| index.get(p.txn).copied())
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::{Outcome, Recorder};

    #[test]
    fn roll_ups_partition_the_total() {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let mut rec = Recorder::new(keys.len());
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 10, None, 0);
        rec.record(keys.key(1, 1, 1), Outcome::Committed, 10, None, 0);
        rec.record(keys.key(1, 1, 0), Outcome::ExpectedRollback, 10, None, 0);
        let total = rec.total().total();
        for rolled in [
            keys.by_type(&rec),
            keys.by_group(&rec),
            keys.by_segment(&rec),
        ] {
            assert_eq!(rolled.iter().map(|s| s.total()).sum::<u64>(), total);
        }
        assert_eq!(keys.by_type(&rec)[0].total(), 2);
        let p = keys.parts(keys.key(1, 1, 0));
        assert_eq!((p.segment, p.target, p.txn), (1, 1, 0));
        assert_eq!(keys.sum_where(&rec, |p| p.segment == 1).total(), 2);
    }

    #[test]
    fn roles_roll_up_by_the_role_of_each_type() {
        let mut keys = crate::results::intervals::tests::two_phase_keys();
        keys.txn_roles = vec!["oltp".into(), "dss".into()];
        let mut rec = Recorder::new(keys.len());
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 10, None, 0);
        rec.record(keys.key(1, 1, 1), Outcome::Committed, 10, None, 0);
        rec.record(keys.key(1, 0, 1), Outcome::Committed, 10, None, 0);
        assert_eq!(keys.roles(), ["oltp", "dss"]);
        let by = keys.by_role(&rec);
        assert_eq!((by[0].total(), by[1].total()), (1, 2));
        keys.txn_roles.clear();
        assert_eq!(keys.roles(), ["oltp"], "no roles named: every type is oltp");
    }

    #[test]
    fn mix_shares_leave_emulated_types_out() {
        let mut keys = crate::results::intervals::tests::two_phase_keys();
        keys.txn_types.push("c".into());
        keys.txn_emulated = vec![false, true];
        let mut rec = Recorder::new(keys.len());
        for _ in 0..3 {
            rec.record(keys.key(0, 0, 0), Outcome::Committed, 10, None, 0);
        }
        rec.record(keys.key(0, 0, 2), Outcome::Committed, 10, None, 0);
        for _ in 0..50 {
            rec.record(keys.key(0, 0, 1), Outcome::Committed, 10, None, 0);
        }
        let by = keys.by_type(&rec);
        let total = |s: &crate::metrics::Slot| s.total();
        assert!(
            keys.is_emulated(1) && !keys.is_emulated(2),
            "past the end: drawn"
        );
        assert_eq!(keys.mix_share(&by, 0, total), Some(75.0));
        assert_eq!(keys.mix_share(&by, 2, total), Some(25.0));
        assert_eq!(keys.mix_share(&by, 1, total), None);
        assert_eq!(keys.mix_share(&[], 0, total), Some(0.0), "nothing ran");
    }
}
