//! Wait profiles (issue 41): what the run's sessions were doing when the wait sampler looked
//! (`sampler::waits`), counted per segment of the timeline, group, set and class, written as
//! `waits.csv` and `locks.csv` and summarised in `summary.json`'s `waits`.
//!
//! `waits.csv` columns ([`WAITS_HEADER`]):
//! `segment,label,iteration,measured,group,set,class,event,samples`
//! - `segment`: index into `summary.json`'s `phases` (ramps included), `label` its name,
//!   `iteration` its iteration (from 1), `measured` whether it is in the measured window.
//! - `class`: `CPU` (active, no wait event), a `wait_event_type` of `pg_stat_activity`
//!   (`Lock`, `LWLock`, `IO`, `IPC`, `Client`, `Timeout`, `BufferPin`, `Activity`,
//!   `Extension`), `IdleInTransaction` (the server waits for the client inside an open
//!   transaction: `ClientRead` in state `idle in transaction`), `Idle` (between transactions)
//!   or `Other` (any other state); `event` the `wait_event` (empty for `CPU`, `Idle`).
//! - `samples`: how many times a session of that group and set was seen so.
//!
//! `locks.csv` columns ([`LOCKS_HEADER`]): `segment,label,iteration,measured,group,set,blocked_by,samples`:
//! a session waiting on a lock, counted once per blocker `pg_blocking_pids` names; `blocked_by`
//! is the blocker's group when it is one of the run's sessions, else `other:` and its
//! `application_name` (or its backend type when it has none).
//!
//! `summary.json`'s `waits.groups[]` also has `by_type` (the measured window per transaction
//! type, told by the session's query: `sampler::waits::types`) and `over_time` (the whole run
//! in at most [`MAX_BUCKETS`] buckets of whole seconds, for report.html's chart).
//!
//! The driver's share is `Client`, `IdleInTransaction` and `Idle` together: the time the
//! server spent waiting for tidebench (mid-protocol, inside a transaction, or between two).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::csv::csv_field;
use crate::config::timeline::Segment;

pub const WAITS_FILE: &str = "waits.csv";
pub const LOCKS_FILE: &str = "locks.csv";
pub const WAITS_HEADER: &str = "segment,label,iteration,measured,group,set,class,event,samples";
pub const LOCKS_HEADER: &str = "segment,label,iteration,measured,group,set,blocked_by,samples";

/// The classes that are the server waiting for the client (see the module header).
pub const DRIVER_CLASSES: [&str; 3] = ["Client", "IdleInTransaction", "Idle"];

/// What one sampled session was doing, under its segment, group and set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WaitKey {
    pub segment: usize,
    pub group: String,
    pub set: String,
    pub class: String,
    pub event: String,
}

/// A session waiting on a lock held by `blocked_by`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LockKey {
    pub segment: usize,
    pub group: String,
    pub set: String,
    pub blocked_by: String,
}

/// A sampled session's class under the transaction type its query names
/// (`sampler::waits::types`; `unknown` where it names none or several).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TypeKey {
    pub segment: usize,
    pub group: String,
    pub txn: String,
    pub class: String,
}

/// Everything the wait sampler counted over a run.
#[derive(Debug, Clone, Default)]
pub struct WaitRecord {
    /// Samples per second asked for.
    pub per_second: u32,
    /// Sampling rounds per segment (a round reads every server once).
    pub rounds: BTreeMap<usize, u64>,
    pub waits: BTreeMap<WaitKey, u64>,
    pub locks: BTreeMap<LockKey, u64>,
    /// The same samples as `waits`, per transaction type and class.
    pub by_type: BTreeMap<TypeKey, u64>,
    /// The same samples per (second of the run, group, class), ramps included.
    pub over_time: BTreeMap<(u32, String, String), u64>,
    /// `pg_stat_statements` deltas over the measured window, where readable.
    pub statements: Vec<DbStatements>,
}

/// `summary.json`'s `waits`: the measured window per group, each phase apart, and the locks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitsSummary {
    pub per_second: u32,
    /// Sampling rounds in the measured window.
    pub rounds: u64,
    pub groups: Vec<GroupWaits>,
    /// Measured window: who waited on whom, most samples first.
    pub locks: Vec<LockWait>,
    /// Measured window: each database's top statements by total time (`pg_stat_statements`,
    /// where the server loads it); empty elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<DbStatements>,
}

/// One database's statements over the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbStatements {
    pub database: String,
    /// Distinct statements that ran (the top ones are in `top`).
    pub statements: usize,
    pub top: Vec<StatementDelta>,
}

/// One statement's `pg_stat_statements` deltas (summed over users).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementDelta {
    pub query: String,
    pub calls: i64,
    pub total_ms: f64,
    pub mean_ms: f64,
    pub rows: i64,
    pub shared_blks_hit: i64,
    pub shared_blks_read: i64,
    pub shared_blks_dirtied: i64,
    pub wal_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupWaits {
    pub group: String,
    /// Sessions seen over the measured window's rounds.
    pub samples: u64,
    /// Per class, most samples first; `share` is of `samples` (0..1, 4 decimals).
    pub classes: Vec<Share>,
    /// `Client` + `IdleInTransaction` + `Idle` over `samples`.
    pub driver_share: f64,
    /// The most frequent (class, event) pairs, at most [`TOP_EVENTS`].
    pub top_events: Vec<Share>,
    /// Every segment (ramps too) with samples, in time order.
    pub by_phase: Vec<PhaseWaits>,
    /// Measured window, per transaction type (`unknown` last): where its time went.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_type: Vec<TypeWaits>,
    /// The whole run (ramps included) in buckets of equal length, for the chart over time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_time: Option<OverTime>,
}

/// A group's samples over the run: `buckets[k]` covers `[k * bucket_s, (k + 1) * bucket_s)`
/// seconds since the run started and holds the samples of each of `classes`, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverTime {
    pub bucket_s: u32,
    pub classes: Vec<String>,
    pub buckets: Vec<Vec<u64>>,
}

/// Most buckets of [`OverTime`] (the bucket grows with the run).
pub const MAX_BUCKETS: u32 = 120;

/// One transaction type's samples over the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeWaits {
    #[serde(rename = "type")]
    pub txn_type: String,
    pub samples: u64,
    pub classes: Vec<Share>,
    pub driver_share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseWaits {
    pub segment: usize,
    pub label: String,
    pub iteration: u32,
    pub measured: bool,
    pub samples: u64,
    pub classes: Vec<Share>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub class: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub event: String,
    pub samples: u64,
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockWait {
    pub group: String,
    pub blocked_by: String,
    pub samples: u64,
}

pub const TOP_EVENTS: usize = 5;
/// The type of samples whose query names no single type.
pub const UNKNOWN_TYPE: &str = "unknown";

impl WaitsSummary {
    /// Summarises `record` over `segments` (the run's timeline, `summary.json`'s `phases`).
    pub fn build(record: &WaitRecord, segments: &[Segment]) -> WaitsSummary {
        let measured = |s: usize| segments.get(s).is_some_and(|x| x.measured);
        let mut groups: Vec<String> = Vec::new();
        for k in record.waits.keys() {
            if !groups.contains(&k.group) {
                groups.push(k.group.clone());
            }
        }
        let mut locks: BTreeMap<(&str, &str), u64> = BTreeMap::new();
        for (k, n) in record.locks.iter().filter(|(k, _)| measured(k.segment)) {
            *locks.entry((&k.group, &k.blocked_by)).or_default() += n;
        }
        let mut locks: Vec<LockWait> = locks
            .into_iter()
            .map(|((g, b), n)| LockWait {
                group: g.to_string(),
                blocked_by: b.to_string(),
                samples: n,
            })
            .collect();
        locks.sort_by_key(|l| std::cmp::Reverse(l.samples));
        WaitsSummary {
            per_second: record.per_second,
            rounds: record
                .rounds
                .iter()
                .filter(|(s, _)| measured(**s))
                .map(|(_, n)| n)
                .sum(),
            groups: groups
                .iter()
                .map(|g| group_waits(record, segments, g))
                .collect(),
            locks,
            statements: record.statements.clone(),
        }
    }
}

impl GroupWaits {
    /// The classes as the end summary says them: the driver's classes as one `driver`, the
    /// largest first.
    pub fn headline(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .classes
            .iter()
            .filter(|c| !DRIVER_CLASSES.contains(&c.class.as_str()))
            .map(|c| (c.class.clone(), c.share))
            .collect();
        if self.driver_share > 0.0 {
            out.push(("driver".into(), self.driver_share));
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }
}

fn group_waits(record: &WaitRecord, segments: &[Segment], group: &str) -> GroupWaits {
    let mine = || record.waits.iter().filter(move |(k, _)| k.group == group);
    let measured = |s: usize| segments.get(s).is_some_and(|x| x.measured);
    let classes = shares(mine().filter(|(k, _)| measured(k.segment)), false);
    let samples: u64 = classes.iter().map(|c| c.samples).sum();
    let driver: u64 = classes
        .iter()
        .filter(|c| DRIVER_CLASSES.contains(&c.class.as_str()))
        .map(|c| c.samples)
        .sum();
    let mut top_events = shares(mine().filter(|(k, _)| measured(k.segment)), true);
    top_events.truncate(TOP_EVENTS);
    let mut seen: Vec<usize> = mine().map(|(k, _)| k.segment).collect();
    seen.dedup();
    let by_phase = seen
        .into_iter()
        .map(|s| {
            let classes = shares(mine().filter(|(k, _)| k.segment == s), false);
            let seg = segments.get(s);
            PhaseWaits {
                segment: s,
                label: seg.map_or_else(String::new, |x| x.label.clone()),
                iteration: seg.map_or(0, |x| x.iteration),
                measured: seg.is_some_and(|x| x.measured),
                samples: classes.iter().map(|c| c.samples).sum(),
                classes,
            }
        })
        .collect();
    GroupWaits {
        group: group.to_string(),
        samples,
        driver_share: ratio(driver, samples),
        classes,
        top_events,
        by_phase,
        by_type: type_waits(record, segments, group),
        over_time: over_time(record, group),
    }
}

/// `group`'s samples in at most [`MAX_BUCKETS`] buckets of whole seconds; `None` without any.
fn over_time(record: &WaitRecord, group: &str) -> Option<OverTime> {
    let mine: Vec<(u32, &str, u64)> = record
        .over_time
        .iter()
        .filter(|((_, g, _), _)| g == group)
        .map(|((t, _, c), n)| (*t, c.as_str(), *n))
        .collect();
    let last = mine.iter().map(|m| m.0).max()?;
    let bucket_s = (last + 1).div_ceil(MAX_BUCKETS).max(1);
    let mut classes: Vec<String> = Vec::new();
    for (_, c, _) in &mine {
        if !classes.iter().any(|x| x == c) {
            classes.push(c.to_string());
        }
    }
    classes.sort();
    let mut buckets = vec![vec![0u64; classes.len()]; (last / bucket_s + 1) as usize];
    for (t, c, n) in mine {
        if let Some(i) = classes.iter().position(|x| x == c) {
            buckets[(t / bucket_s) as usize][i] += n;
        }
    }
    Some(OverTime {
        bucket_s,
        classes,
        buckets,
    })
}

/// The measured window's samples of `group` per transaction type, the most sampled first and
/// `unknown` last.
fn type_waits(record: &WaitRecord, segments: &[Segment], group: &str) -> Vec<TypeWaits> {
    let measured = |s: usize| segments.get(s).is_some_and(|x| x.measured);
    let mut sums: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for (k, n) in &record.by_type {
        if k.group == group && measured(k.segment) {
            *sums.entry(&k.txn).or_default().entry(&k.class).or_default() += n;
        }
    }
    let mut out: Vec<TypeWaits> = sums
        .into_iter()
        .map(|(txn, classes)| {
            let samples: u64 = classes.values().sum();
            let driver: u64 = classes
                .iter()
                .filter(|(c, _)| DRIVER_CLASSES.contains(c))
                .map(|(_, n)| n)
                .sum();
            let mut shares: Vec<Share> = classes
                .into_iter()
                .map(|(c, n)| Share {
                    class: c.to_string(),
                    event: String::new(),
                    samples: n,
                    share: ratio(n, samples),
                })
                .collect();
            shares.sort_by_key(|s| std::cmp::Reverse(s.samples));
            TypeWaits {
                txn_type: txn.to_string(),
                samples,
                classes: shares,
                driver_share: ratio(driver, samples),
            }
        })
        .collect();
    out.sort_by_key(|t| (t.txn_type == UNKNOWN_TYPE, std::cmp::Reverse(t.samples)));
    out
}

/// Samples summed per class (or per class and event), most first, with their shares.
fn shares<'a>(rows: impl Iterator<Item = (&'a WaitKey, &'a u64)>, events: bool) -> Vec<Share> {
    let mut sums: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for (k, n) in rows {
        let event = if events { k.event.as_str() } else { "" };
        *sums.entry((&k.class, event)).or_default() += n;
    }
    let total: u64 = sums.values().sum();
    let mut out: Vec<Share> = sums
        .into_iter()
        .map(|((c, e), n)| Share {
            class: c.to_string(),
            event: e.to_string(),
            samples: n,
            share: ratio(n, total),
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.samples));
    out
}

fn ratio(n: u64, of: u64) -> f64 {
    if of == 0 {
        return 0.0;
    }
    (n as f64 / of as f64 * 1e4).round() / 1e4
}

/// `waits.csv` and `locks.csv` as text.
pub fn csv_text(record: &WaitRecord, segments: &[Segment]) -> (String, String) {
    let seg = |s: usize| {
        let x = segments.get(s);
        format!(
            "{s},{},{},{}",
            csv_field(x.map_or("", |x| x.label.as_str())),
            x.map_or(0, |x| x.iteration),
            x.is_some_and(|x| x.measured)
        )
    };
    let mut waits = format!("{WAITS_HEADER}\n");
    for (k, n) in &record.waits {
        let _ = writeln!(
            waits,
            "{},{},{},{},{},{n}",
            seg(k.segment),
            csv_field(&k.group),
            csv_field(&k.set),
            csv_field(&k.class),
            csv_field(&k.event)
        );
    }
    let mut locks = format!("{LOCKS_HEADER}\n");
    for (k, n) in &record.locks {
        let _ = writeln!(
            locks,
            "{},{},{},{},{n}",
            seg(k.segment),
            csv_field(&k.group),
            csv_field(&k.set),
            csv_field(&k.blocked_by)
        );
    }
    (waits, locks)
}

/// Writes `waits.csv` and `locks.csv` into `dir` (whole files, through a rename).
pub fn write(dir: &Path, record: &WaitRecord, segments: &[Segment]) -> Result<(), String> {
    let (waits, locks) = csv_text(record, segments);
    super::atomic::write(&dir.join(WAITS_FILE), waits.as_bytes()).map_err(|e| e.to_string())?;
    super::atomic::write(&dir.join(LOCKS_FILE), locks.as_bytes()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::timeline::SegmentKind;

    fn segment(label: &str, measured: bool) -> Segment {
        Segment {
            kind: SegmentKind::Phase,
            iteration: 1,
            phase: 0,
            label: label.into(),
            start: Duration::ZERO,
            end: Duration::from_secs(1),
            measured,
        }
    }

    fn key(segment: usize, class: &str, event: &str) -> WaitKey {
        WaitKey {
            segment,
            group: "a".into(),
            set: "a_1".into(),
            class: class.into(),
            event: event.into(),
        }
    }

    #[test]
    fn the_summary_counts_the_measured_window_and_the_driver_classes_together() {
        let segments = [segment("ramp-up", false), segment("p1", true)];
        let mut r = WaitRecord {
            per_second: 10,
            ..WaitRecord::default()
        };
        r.rounds.insert(0, 5);
        r.rounds.insert(1, 10);
        r.waits.insert(key(0, "Lock", "relation"), 50);
        r.waits.insert(key(1, "CPU", ""), 6);
        r.waits.insert(key(1, "IdleInTransaction", "ClientRead"), 3);
        r.waits.insert(key(1, "Idle", ""), 1);
        r.locks.insert(
            LockKey {
                segment: 1,
                group: "a".into(),
                set: "a_1".into(),
                blocked_by: "other:psql".into(),
            },
            2,
        );
        let tk = |segment: usize, txn: &str, class: &str| TypeKey {
            segment,
            group: "a".into(),
            txn: txn.into(),
            class: class.into(),
        };
        r.by_type.insert(tk(0, "tpcb", "Lock"), 50);
        r.by_type.insert(tk(1, "unknown", "CPU"), 5);
        r.by_type.insert(tk(1, "tpcb", "CPU"), 1);
        r.by_type.insert(tk(1, "tpcb", "IdleInTransaction"), 3);
        r.by_type.insert(tk(1, "tpcb", "Idle"), 1);
        for (t, class, n) in [
            (0, "Lock", 3),
            (1, "Lock", 2),
            (1, "CPU", 1),
            (250, "Idle", 4),
        ] {
            r.over_time.insert((t, "a".into(), class.into()), n);
        }
        let s = WaitsSummary::build(&r, &segments);
        // 251 seconds in buckets of 3 (at most 120): seconds 0 and 1 share the first.
        let o = s.groups[0].over_time.as_ref().unwrap();
        assert_eq!(o.bucket_s, 3);
        assert_eq!(o.classes, ["CPU", "Idle", "Lock"]);
        assert_eq!(o.buckets.len(), 84);
        assert_eq!(o.buckets[0], [1, 0, 5]);
        assert_eq!(o.buckets[83], [0, 4, 0]);
        let t = &s.groups[0].by_type;
        // The measured window only, the named types before `unknown` whatever their counts.
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].txn_type.as_str(), t[0].samples), ("tpcb", 5));
        assert_eq!(t[0].driver_share, 0.8);
        assert_eq!(t[0].classes[0].class, "IdleInTransaction");
        assert_eq!((t[1].txn_type.as_str(), t[1].samples), ("unknown", 5));
        assert_eq!(s.rounds, 10);
        let g = &s.groups[0];
        assert_eq!(g.samples, 10);
        assert_eq!(g.driver_share, 0.4);
        assert_eq!(g.classes[0].class, "CPU");
        assert_eq!(g.headline()[0], ("CPU".to_string(), 0.6));
        assert_eq!(g.headline()[1], ("driver".to_string(), 0.4));
        assert_eq!(g.by_phase.len(), 2);
        assert_eq!(g.by_phase[0].classes[0].class, "Lock");
        assert_eq!(s.locks[0].blocked_by, "other:psql");
        let (waits, locks) = csv_text(&r, &segments);
        assert!(waits.starts_with(WAITS_HEADER));
        assert!(waits.contains("0,ramp-up,1,false,a,a_1,Lock,relation,50\n"));
        assert!(locks.contains("1,p1,1,true,a,a_1,other:psql,2\n"));
    }
}
