//! The terminal's texts, built from the driver's and loaders' numbers: the same lines the
//! progress and polling code printed before they became events.

use std::time::Duration;

use super::*;
use crate::driver::poll::{LiveHeadline, Poller};
use crate::driver::progress::line;
use crate::event::Per;
use crate::metrics::{ErrorClass, KeySpace, Outcome, Recorder};

#[test]
fn shows_rate_latency_and_failures() {
    let mut r = Recorder::new(1);
    for _ in 0..10 {
        r.record(0, Outcome::Committed, 2000, None, 0);
    }
    r.record(0, Outcome::Failed(ErrorClass::Deadlock), 0, None, 1);
    let keys = one_type_keys();
    let l = progress_line(&line(
        Duration::from_secs(10),
        Duration::from_secs(5),
        &r,
        &keys,
        None,
    ));
    assert_eq!(
        l,
        "progress: 10.0 s, 2.0 tps, lat 2.000 ms p95 2.000 ms, 1 failed, 1 retried"
    );
    let notpm = LiveHeadline {
        label: "NOTPM".into(),
        txn: 0,
        per: Per::Minute,
    };
    let l = progress_line(&line(
        Duration::from_secs(10),
        Duration::from_secs(5),
        &r,
        &keys,
        Some(&notpm),
    ));
    assert!(
        l.starts_with("progress: 10.0 s, 2.0 tps, NOTPM 120, lat"),
        "{l}"
    );
}

fn one_type_keys() -> KeySpace {
    KeySpace {
        segments: vec![crate::config::timeline::Segment {
            kind: crate::config::timeline::SegmentKind::Phase,
            phase: 0,
            iteration: 1,
            label: "run".into(),
            measured: true,
            start: Duration::ZERO,
            end: Duration::from_secs(10),
        }],
        targets: vec![crate::metrics::TargetKey {
            label: "t".into(),
            group: 0,
            set: "1".into(),
        }],
        groups: vec!["g".into()],
        txn_types: vec!["new_order".into()],
        txn_roles: vec!["oltp".into()],
        txn_emulated: Vec::new(),
    }
}

#[test]
fn block_has_type_group_and_aggregate_lines_within_100_columns() {
    let keys = crate::results::intervals::tests::two_phase_keys();
    let mut rec = Recorder::new(keys.len());
    for _ in 0..30 {
        rec.record(keys.key(1, 0, 0), Outcome::Committed, 1_000, None, 0);
    }
    for _ in 0..10 {
        rec.record(keys.key(1, 1, 1), Outcome::Committed, 3_000, None, 0);
    }
    rec.record(
        keys.key(1, 1, 1),
        Outcome::Failed(ErrorClass::Deadlock),
        0,
        None,
        0,
    );
    let mut p = Poller {
        shares: vec![None, Some(vec![100.0])],
        headline: None,
    };
    let b = poll_block(&p.block(&keys, &rec, Duration::from_secs(10), 1));
    assert!(b.contains("Txn Rate") && b.contains("Pass Count"), "{b}");
    assert!(
        b.lines().any(|l| l.starts_with("a ") && l.contains("3.00")),
        "{b}"
    );
    assert!(b.contains("Target % :"), "{b}");
    assert!(
        b.ends_with("Iteration 1 Phase p2 Aggregate Txn Rate: 4.00\n"),
        "{b}"
    );
    assert!(b.lines().all(|l| l.chars().count() <= 100), "{b}");
    assert!(!b.contains("TPM"), "no headline without one: {b}");
    let other_phase = poll_block(&p.block(&keys, &rec, Duration::from_secs(10), 0));
    assert!(!other_phase.contains("Target % :"), "{other_phase}");

    p.headline = Some(LiveHeadline {
        label: "NOTPM".into(),
        txn: 0,
        per: Per::Minute,
    });
    let b = poll_block(&p.block(&keys, &rec, Duration::from_secs(10), 1));
    // 30 and 10 committed in 10 s: 180 and 240 per minute; the failure does not count.
    assert!(b.contains("\nNOTPM: 180.0  total TPM: 240.0\n"), "{b}");
    assert!(b.ends_with("Aggregate Txn Rate: 4.00\n"), "{b}");
}

#[test]
fn a_per_second_headline_shows_per_group_and_emulated_types_have_no_share() {
    // Two groups, one target each; b is issued by the workload's emulator and is the headline.
    let mut keys = crate::results::intervals::tests::two_phase_keys();
    keys.groups = vec!["A".into(), "B".into()];
    keys.targets[1].group = 1;
    keys.txn_types.push("c".into());
    keys.txn_emulated = vec![false, true, false];
    let mut rec = Recorder::new(keys.len());
    let mut commit = |target, txn, n| {
        for _ in 0..n {
            rec.record(keys.key(1, target, txn), Outcome::Committed, 1_000, None, 0);
        }
    };
    commit(0, 0, 30);
    commit(1, 2, 10);
    commit(0, 1, 4);
    commit(1, 1, 6);
    let tpsv = LiveHeadline {
        label: "tpsV".into(),
        txn: 1,
        per: Per::Second,
    };
    let p = Poller {
        shares: vec![None, None],
        headline: Some(tpsv.clone()),
    };
    let window = Duration::from_secs(10);
    let block = p.block(&keys, &rec, window, 1);
    let pcts: Vec<Option<f64>> = block.types.iter().map(|t| t.pct).collect();
    assert_eq!(pcts, [Some(75.0), None, Some(25.0)], "b is outside the mix");
    let by_group: Vec<Option<f64>> = block.groups.iter().map(|g| g.headline).collect();
    // 4 and 6 Trade-Results in 10 s: 0.4 and 0.6 per second, 1.0 together.
    assert_eq!(by_group, [Some(0.4), Some(0.6)]);
    let text = poll_block(&block);
    let row = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("{start}: {text}"))
            .to_string()
    };
    assert!(row("b ").contains("emulated"), "{text}");
    assert!(row("a ").contains("75.00"), "{text}");
    let groups = row("tpsV     :");
    assert!(groups.contains("0.40") && groups.contains("0.60"), "{text}");
    assert!(text.contains("\ntpsV: 1.00  total TPS: 5.00\n"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let l = progress_line(&line(
        Duration::from_secs(20),
        window,
        &rec,
        &keys,
        Some(&tpsv),
    ));
    assert!(l.contains(", tpsV 1.00, lat"), "{l}");
}

#[test]
fn plain_line_reports_rate_and_eta() {
    let progress = |done, total, elapsed| LoadProgress {
        what: "pgbench_accounts".into(),
        done,
        total,
        elapsed,
    };
    let l = load_line(&progress(500, 1000, Duration::from_secs(5)));
    assert_eq!(
        l,
        "loading pgbench_accounts: 500/1000 rows (50%), 100 rows/s, ETA 5 s"
    );
    assert!(load_line(&progress(0, 10, Duration::ZERO)).ends_with("ETA unknown"));
}

#[test]
fn load_summary_lists_steps_in_order() {
    let s = LoadSummary {
        what: "pgbench scale 2".into(),
        target: "tb".into(),
        rows: 200_012,
        elapsed: Duration::from_millis(3_500),
        steps: vec![
            ("copy".into(), Duration::from_secs(2)),
            ("vacuum".into(), Duration::from_millis(1_250)),
            ("primary keys".into(), Duration::from_millis(250)),
        ],
    };
    assert_eq!(
        load_summary(&s),
        "prepared pgbench scale 2 in target 'tb': 200012 rows in 3.50 s \
         (copy 2.00 s, vacuum 1.25 s, primary keys 0.25 s)"
    );
}

#[test]
fn run_description_reads_as_before() {
    let d = RunDescription {
        name: "tpcb".into(),
        groups: 2,
        targets: 3,
        phases: 4,
        iterations: 1,
        shared_clients: Some(8),
        threads: 2,
        duration: Duration::from_secs(60),
        transactions: None,
        connect: Duration::ZERO,
    };
    assert!(
        describe(&d).starts_with(
            "running tpcb: 2 group(s), 3 target(s), 4 phase(s) x 1 iteration(s), 8 shared clients, 2 threads, "
        ),
        "{}",
        describe(&d)
    );
    let d = RunDescription {
        shared_clients: None,
        ..d
    };
    assert!(describe(&d).contains(", clients per group and phase, "));
    let d = RunDescription {
        transactions: Some(50),
        ..d
    };
    assert!(describe(&d).ends_with(", 2 threads, 50 transactions per client"));
}

#[test]
fn the_market_backlog_shows_on_the_progress_line_and_in_the_polling_block() {
    let backlog = EmulatedBacklog {
        due: 3,
        lag_ms: 12.4,
        waiting: 40,
        abandoned: 1,
    };
    let line = ProgressLine {
        elapsed: Duration::from_secs(5),
        window: Duration::from_secs(5),
        tps: 10.0,
        headline: None,
        latency: None,
        lag_ms: None,
        failed: 0,
        retried: 0,
        retried_txns: 0,
        backlog: Some(backlog),
        running: Vec::new(),
        running_more: 0,
    };
    assert!(
        progress_line(&line).ends_with(", market 3 due (lag 12 ms)"),
        "{}",
        progress_line(&line)
    );
    let idle = ProgressLine {
        backlog: Some(EmulatedBacklog::default()),
        ..line
    };
    assert!(progress_line(&idle).ends_with(", market 0 due"));
    let long = ProgressLine {
        backlog: None,
        running: vec![("full_scan".into(), 12.34), ("load".into(), 4.06)],
        running_more: 2,
        ..idle
    };
    assert!(
        progress_line(&long).ends_with(", running: full_scan 12.3 s, load 4.1 s (+2 more)"),
        "{}",
        progress_line(&long)
    );
    let block = PollBlock {
        iteration: 1,
        phase: "p1".into(),
        window: Duration::from_secs(5),
        types: Vec::new(),
        groups: Vec::new(),
        headline: None,
        aggregate_rate: 0.0,
        backlog: Some(backlog),
    };
    assert!(poll_block(&block)
        .contains("Market: 3 due (oldest 12 ms late), 40 waiting for their time, 1 abandoned"));
}

#[test]
fn a_round_of_incidents_is_one_line_per_instance() {
    let incident = |instance: &str, kind: IncidentKind, count: u64, detail: &str| Incident {
        t_s: 4.25,
        instance: instance.into(),
        kind,
        count,
        detail: detail.into(),
    };
    let lines = incident_lines(&[
        incident("vm1", IncidentKind::OomKill, 1, "oom_kill 0 -> 1"),
        incident(
            "vm1",
            IncidentKind::BackendKilled,
            1,
            "server process (PID 7) was terminated by signal 9: Killed",
        ),
        incident("vm1", IncidentKind::CrashRestart, 1, "reinitialized"),
        incident("vm2", IncidentKind::OomKill, 3, "oom_kill 2 -> 5"),
    ]);
    assert_eq!(
        lines,
        vec![
            "instance 'vm1' at 4.2 s: 1 OOM kill, 1 server process killed, 1 crash restart \
             (server process (PID 7) was terminated by signal 9: Killed)"
                .to_string(),
            "instance 'vm2' at 4.2 s: 3 OOM kills (oom_kill 2 -> 5)".to_string(),
        ]
    );
}

#[test]
fn verbose_errors_name_the_type_and_count_tries() {
    use crate::event::TryError;
    let got = TryError::Got {
        client: 2,
        txn_type: "new_order".into(),
        command: Some(4),
        text: "ERROR:  could not serialize access due to concurrent update".into(),
    };
    assert_eq!(
        try_error_line(&got),
        "client 2 got an error in \"new_order\" command 4: \
         ERROR:  could not serialize access due to concurrent update"
    );
    let next = TryError::Next {
        client: 2,
        try_no: 3,
        max_tries: 3,
        again: false,
        limit_used: None,
    };
    assert_eq!(
        try_error_line(&next),
        "client 2 fails the transaction (try 3/3)"
    );
}
