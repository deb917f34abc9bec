use std::time::Duration;

use super::*;
use crate::config::timeline::{Segment, SegmentKind};
use crate::metrics::{Outcome, TargetKey};
use crate::results::breakdown::GroupStats;
use crate::results::summary::Stats;

/// Group O (the tenant, type `new_order`) and group A (type `q`) on one target each; phases
/// `alone`, `beside`, `more` of 10 s, the last with O at 2 clients where it never ran alone.
fn keys() -> KeySpace {
    let seg = |phase: usize, label: &str| Segment {
        kind: SegmentKind::Phase,
        iteration: 1,
        phase,
        label: label.into(),
        start: Duration::from_secs(10 * phase as u64),
        end: Duration::from_secs(10 * phase as u64 + 10),
        measured: true,
    };
    let target = |group: usize| TargetKey {
        label: format!("t{group}"),
        group,
        set: "1".into(),
    };
    KeySpace {
        segments: vec![seg(0, "alone"), seg(1, "beside"), seg(2, "more")],
        targets: vec![target(0), target(1)],
        groups: vec!["O".into(), "A".into()],
        txn_types: vec!["new_order".into(), "q".into()],
        txn_roles: vec!["oltp".into(), "oltp".into()],
        txn_emulated: Vec::new(),
    }
}

/// The phases as `breakdown::phases` and `headline::fill` leave them: clients per group, O's
/// NOTPM, A's committed.
fn phases(rec: &Recorder, k: &KeySpace) -> Vec<PhaseStats> {
    let clients = [(1, 0), (1, 2), (2, 2)];
    k.segments
        .iter()
        .enumerate()
        .map(|(si, seg)| {
            let groups = (0..2)
                .map(|g| {
                    let slot = k.sum_where(rec, |p| p.segment == si && p.group == g);
                    let n_new = k.sum_where(rec, |p| p.segment == si && p.group == g && p.txn == 0);
                    GroupStats {
                        group: k.groups[g].clone(),
                        configured_share: None,
                        achieved_share: 0.0,
                        clients: Some(if g == 0 { clients[si].0 } else { clients[si].1 }),
                        headline: Some(n_new.committed as f64 * 6.0),
                        stats: Stats::from_slot(&slot, Duration::from_secs(10), false),
                    }
                })
                .collect();
            PhaseStats {
                iteration: 1,
                phase: seg.label.clone(),
                measured: true,
                start_s: 0.0,
                duration_s: 10.0,
                headline: None,
                stats: Stats::from_slot(&Default::default(), Duration::from_secs(10), false),
                groups,
            }
        })
        .collect()
}

#[test]
fn the_tenant_alone_is_set_against_it_beside_the_others_with_the_same_clients() {
    let k = keys();
    let mut rec = Recorder::new(k.len());
    // Alone: 10 New-Orders of 10 ms; beside: 5 of 20 ms, while A commits 3 queries.
    for _ in 0..10 {
        rec.record(k.key(0, 0, 0), Outcome::Committed, 10_000, None, 0);
    }
    for _ in 0..5 {
        rec.record(k.key(1, 0, 0), Outcome::Committed, 20_000, None, 0);
    }
    for _ in 0..3 {
        rec.record(k.key(1, 1, 1), Outcome::Committed, 900_000, None, 0);
        rec.record(k.key(2, 1, 1), Outcome::Committed, 900_000, None, 0);
    }
    rec.record(k.key(2, 0, 0), Outcome::Committed, 10_000, None, 0);
    let h = Headline::per_minute("NOTPM", "new_order");
    let pairs = of(Some(&h), &k, &rec, &phases(&rec, &k));
    // Phase `more` has O at 2 clients, never alone at 2: no pair. A never ran new_order.
    assert_eq!(pairs.len(), 1, "{pairs:?}");
    let p = &pairs[0];
    assert_eq!(
        (p.group.as_str(), p.label.as_str(), p.clients),
        ("O", "NOTPM", 1)
    );
    assert_eq!(
        (p.alone.phase.as_str(), p.beside.phase.as_str()),
        ("alone", "beside")
    );
    assert_eq!((p.alone.headline, p.beside.headline), (60.0, 30.0));
    assert_eq!(p.ratio, Some(0.5));
    let (a, b) = (p.alone.p95_ms.unwrap(), p.beside.p95_ms.unwrap());
    assert!(
        (9.9..10.1).contains(&a) && (19.9..20.1).contains(&b),
        "{a} {b}"
    );
    assert!((1.98..2.02).contains(&p.p95_ratio.unwrap()), "{p:?}");
    assert_eq!(
        p.neighbours,
        [Neighbour {
            group: "A".into(),
            clients: 2,
            committed: 3,
            per_hour: 1080.0
        }]
    );
    assert_eq!(
        p.line(),
        "what A (2 clients, 3 committed) cost O (1 client): NOTPM 60.0 → 30.0 (×0.500), \
         new_order p95 10.0 → 20.0 ms (×2.000) [phase alone → beside]"
    );
    // Without a headline, or one whose type the run lacks, there is nothing to set.
    assert!(of(None, &k, &rec, &phases(&rec, &k)).is_empty());
    let other = Headline::per_minute("NOTPM", "payment");
    assert!(of(Some(&other), &k, &rec, &phases(&rec, &k)).is_empty());
}
