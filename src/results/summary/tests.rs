//! Unit tests of building and reading `summary.json`, and the plan and run facts other
//! modules' tests build their summaries from.

use std::time::{Duration, SystemTime};

use super::*;
use crate::config::RunPlan;
use crate::metrics::{ErrorClass, KeySpace, Outcome, Recorder};
use crate::results::rules::{IsolationLevels, TypeRule};
use crate::results::SUMMARY_FILE;

fn keys() -> KeySpace {
    crate::results::intervals::tests::two_phase_keys()
}

/// A complete 20 s run over [`plan`]'s two phases, with no rules and no headline.
pub fn two_phase_facts() -> RunFacts {
    RunFacts {
        workload: "t".into(),
        started_at: SystemTime::UNIX_EPOCH,
        elapsed: Duration::from_secs(20),
        complete: true,
        rate_limited: false,
        type_rules: Vec::new(),
        headline: None,
        ratio_rules: Vec::new(),
    }
}

/// One group, two 10 s phases of 100 %, as `two_phase_keys`.
pub fn plan() -> RunPlan {
    let raw = crate::config::RawRun {
        workload: Some(crate::config::WorkloadName::new("tpcb")),
        duration: Some("10s".into()),
        ..Default::default()
    };
    let src = crate::config::groups::Source {
        file: "t",
        text: "",
    };
    let mut p = crate::config::validate_run(&src, raw, 1, 1, &crate::workload::Registry).unwrap();
    let mut second = p.phases[0].clone();
    second.name = "p2".into();
    p.phases[0].name = "p1".into();
    p.phases.push(second);
    p
}

fn run(rate_limited: bool) -> RunFacts {
    RunFacts {
        workload: "tpcb".into(),
        started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        elapsed: Duration::from_secs(10),
        complete: true,
        rate_limited,
        type_rules: Vec::new(),
        headline: None,
        ratio_rules: Vec::new(),
    }
}

#[test]
fn accounting_and_tps() {
    let k = keys();
    let mut rec = Recorder::new(k.len());
    for _ in 0..90 {
        rec.record(k.key(0, 0, 0), Outcome::Committed, 2_000, Some(10), 0);
    }
    for _ in 0..5 {
        rec.record(
            k.key(0, 0, 0),
            Outcome::ExpectedRollback,
            2_000,
            Some(10),
            0,
        );
    }
    rec.record(
        k.key(0, 1, 1),
        Outcome::Failed(ErrorClass::Serialization),
        0,
        None,
        3,
    );
    rec.record(
        k.key(0, 1, 1),
        Outcome::Failed(ErrorClass::Deadlock),
        0,
        None,
        0,
    );
    rec.record(
        k.key(0, 1, 1),
        Outcome::Failed(ErrorClass::Connection),
        0,
        None,
        0,
    );
    let s = Summary::build(&run(false), &plan(), &k, &rec, Vec::new());
    let t = &s.totals;
    assert_eq!(
        (
            t.committed,
            t.expected_rollback,
            t.failed,
            t.retried,
            t.retried_txns,
            t.total
        ),
        (90, 5, 3, 3, 1, 98)
    );
    assert_eq!(t.total, t.committed + t.expected_rollback + t.failed);
    assert_eq!(t.tps, 9.5, "failed transactions do not count toward tps");
    assert_eq!(
        t.failed_by_class,
        FailedByClass {
            serialization: 1,
            deadlock: 1,
            connection: 1,
            timeout: 0,
            other: 0
        }
    );
    assert!(
        t.lag_ms.is_none(),
        "lag is reported only for rate-limited runs"
    );
    // Only keys with transactions appear, in key order.
    let names: Vec<_> = s
        .by_target_and_type
        .iter()
        .map(|k| (k.target.as_str(), k.txn_type.as_str()))
        .collect();
    assert_eq!(
        names,
        [("instance:vm1/db", "a"), ("host=/tmp dbname=x,y", "b")]
    );
    assert!(
        s.by_target_and_type[1].stats.latency_ms.is_none(),
        "failures carry no latency"
    );
    assert_eq!(s.started_at, "2023-11-14T22:13:20Z");
    assert_eq!(
        (s.schema_version, s.duration_s, s.complete),
        (1, 10.0, true)
    );
}

#[test]
fn percentiles_in_milliseconds() {
    let k = keys();
    let mut rec = Recorder::new(k.len());
    // 1..=1000 ms, one of each: p50 = 500 ms, p99 = 990 ms within HDR's 3 digits.
    for ms in 1..=1000u64 {
        rec.record(0, Outcome::Committed, ms * 1000, Some(ms), 0);
    }
    let s = Summary::build(&run(true), &plan(), &k, &rec, Vec::new());
    let lat = s.totals.latency_ms.as_ref().unwrap();
    let near = |got: f64, want: f64| (got - want).abs() <= want * 0.001 + 0.001;
    assert!(near(lat.min, 1.0), "{lat:?}");
    assert!(near(lat.p50, 500.0), "{lat:?}");
    assert!(near(lat.p90, 900.0), "{lat:?}");
    assert!(near(lat.p99, 990.0), "{lat:?}");
    assert!(near(lat.p99_9, 999.0), "{lat:?}");
    assert!(near(lat.max, 1000.0), "{lat:?}");
    assert!(near(lat.mean, 500.5), "{lat:?}");
    for v in [lat.min, lat.mean, lat.p50, lat.p99, lat.max] {
        assert_eq!(v, round3(v), "3 decimals at most: {v}");
    }
    let lag = s.totals.lag_ms.as_ref().unwrap();
    assert!(near(lag.max, 1.0), "lag is µs like latency: {lag:?}");
}

#[test]
fn round_trips_through_json() {
    let k = keys();
    let mut rec = Recorder::new(k.len());
    rec.record(3, Outcome::Committed, 1234, None, 0);
    let server = vec![ServerDelta {
        target: "instance:b/db".into(),
        dbname: "db".into(),
        xact_commit_delta: 1,
        xact_rollback_delta: 0,
        client_committed: 1,
        restarted: true,
        cut_in_flight: 0,
        readings: None,
    }];
    let mut s = Summary::build(&run(false), &plan(), &k, &rec, server);
    s.incidents = vec![crate::results::Incident {
        t_s: 2.5,
        instance: "b".into(),
        kind: crate::results::IncidentKind::OomKill,
        count: 1,
        detail: "oom_kill 0 -> 1".into(),
    }];
    let back: Summary = serde_json::from_str(&s.to_json().unwrap()).unwrap();
    assert_eq!(back, s);
    assert_eq!(
        back.by_target_and_type[0]
            .stats
            .latency_ms
            .as_ref()
            .unwrap()
            .max,
        1.234
    );
}

#[test]
fn type_rules_use_the_measured_window_of_every_target() {
    let mut k = keys();
    // The second segment is a ramp: its slow transactions must not count.
    k.segments[1].measured = false;
    let mut rec = Recorder::new(k.len());
    // Type a: 95 fast on one target, 5 slow on the other: p90 is fast when merged.
    for _ in 0..95 {
        rec.record(k.key(0, 0, 0), Outcome::Committed, 1_000, None, 0);
    }
    for _ in 0..5 {
        rec.record(k.key(0, 1, 0), Outcome::Committed, 9_000_000, None, 0);
    }
    for _ in 0..100 {
        rec.record(k.key(1, 0, 0), Outcome::Committed, 9_000_000, None, 0);
    }
    // Type b: 3 of 103 completed (2.9 %) against 4 %, and 30 s against 20 s.
    for _ in 0..3 {
        rec.record(k.key(0, 1, 1), Outcome::Committed, 30_000_000, None, 0);
    }
    let mut facts = run(false);
    facts.type_rules = vec![
        TypeRule {
            limit_unverified: false,
            txn_type: "a".into(),
            p90_limit: Some(Duration::from_secs(5)),
            min_share_pct: None,
        },
        TypeRule {
            limit_unverified: false,
            txn_type: "b".into(),
            p90_limit: Some(Duration::from_secs(20)),
            min_share_pct: Some(4.0),
        },
    ];
    let s = Summary::build(&facts, &plan(), &k, &rec, Vec::new());
    let [a, b] = &s.type_rules[..] else {
        panic!("{:?}", s.type_rules)
    };
    assert_eq!(
        (a.p90_ms, a.exceeded, a.below_minimum),
        (Some(1.0), false, false)
    );
    assert_eq!((a.share_pct, b.share_pct), (Some(97.09), Some(2.91)));
    assert!(b.exceeded && b.below_minimum, "{b:?}");
    assert_eq!(
        s.isolation,
        Some(IsolationLevels::All("read committed".into()))
    );
    let json = s.to_json().unwrap();
    assert!(json.contains("\"isolation\": \"read committed\""), "{json}");
    assert!(json.contains("\"p90_limit_ms\": 20000.0"), "{json}");
}

#[test]
fn summaries_written_before_type_rules_and_isolation_still_read() {
    let k = keys();
    let s = Summary::build(
        &run(false),
        &plan(),
        &k,
        &Recorder::new(k.len()),
        Vec::new(),
    );
    let mut value: serde_json::Value = serde_json::from_str(&s.to_json().unwrap()).unwrap();
    let obj = value.as_object_mut().unwrap();
    for key in ["type_rules", "isolation", "tpm", "mix", "ratio_rules"] {
        obj.remove(key);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(SUMMARY_FILE), value.to_string()).unwrap();
    let back = Summary::read(dir.path()).unwrap();
    assert!(back.type_rules.is_empty() && back.isolation.is_none() && back.tpm.is_empty());
    assert!(back.mix.is_empty() && back.ratio_rules.is_empty());
}

#[test]
fn summaries_written_before_retried_txns_still_read() {
    let k = keys();
    let mut rec = Recorder::new(k.len());
    rec.record(k.key(0, 0, 0), Outcome::Committed, 2_000, None, 2);
    let s = Summary::build(&run(false), &plan(), &k, &rec, Vec::new());
    assert_eq!((s.totals.retried, s.totals.retried_txns), (2, 1));
    let text = s.to_json().unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["totals"]
        .as_object_mut()
        .unwrap()
        .remove("retried_txns");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(SUMMARY_FILE), value.to_string()).unwrap();
    let back = Summary::read(dir.path()).unwrap();
    assert_eq!((back.totals.retried, back.totals.retried_txns), (2, 0));
}

#[test]
fn empty_window_has_zero_tps() {
    assert_eq!(tps(10, Duration::ZERO), 0.0);
    assert_eq!(tps(1, Duration::from_secs(3)), 0.333);
}
