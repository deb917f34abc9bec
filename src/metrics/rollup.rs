//! One roll-up of a recorder's slots by any dimension of its keys (segment, target, group,
//! transaction type), used by the progress line, the polling block, the summary, the
//! Prometheus endpoint and the report, so none of them walks the key arithmetic itself.

use super::{KeySpace, Recorder, Slot};

/// What a recorder key stands for, with the target's group looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyParts {
    pub segment: usize,
    pub target: usize,
    pub group: usize,
    pub txn: usize,
}

impl KeySpace {
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
}
