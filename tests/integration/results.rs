//! Results dirs written through `ResultsWriter` and read back the way `report` and users'
//! tools will; the server samplers against a real PostgreSQL.

use crate::support::{self, run_tidebench as tb};
use std::time::{Duration, SystemTime};

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use tidebench::config::{RawRun, RunPlan, TargetSpec, WorkloadName};
use tidebench::metrics::{ErrorClass, KeySpace, Outcome, Recorder, TargetKey};
use tidebench::results::{
    self, HostFacts, ResultsWriter, RunFacts, RuntimeInfo, ServerDelta, Summary,
};

const DSN_WITH_PASSWORD: &str = "postgresql://u:SECRETPW@127.0.0.1/db";

fn plan() -> RunPlan {
    let raw = RawRun {
        workload: Some(WorkloadName::new("tpcb")),
        target: Some(DSN_WITH_PASSWORD.into()),
        clients: Some(2),
        duration: Some("3s".into()),
        rate: Some(100.0),
        max_tries: Some(3),
        interval: Some("1s".into()),
        seed: Some(7),
        ..RawRun::default()
    };
    let src = tidebench::config::groups::Source {
        file: "t",
        text: "",
    };
    tidebench::config::validate_run(&src, raw, 1, 1, &tidebench::workload::Registry).unwrap()
}

fn keys() -> KeySpace {
    KeySpace {
        segments: tidebench::config::timeline::segments(&plan()),
        targets: vec![TargetKey {
            label: TargetSpec::Dsn(DSN_WITH_PASSWORD.into()).redacted(),
            group: 0,
            set: "1".into(),
        }],
        groups: vec!["tpcb".into()],
        txn_types: vec!["tpcb".into(), "select".into()],
        txn_roles: vec!["oltp".into(), "oltp".into()],
        txn_emulated: Vec::new(),
    }
}

/// Writes three 1 s intervals: interval i has 10*(i+1) commits of tpcb, one expected rollback,
/// and (in the last one) one failed select. Returns the final dir and the total recorder.
fn write_run(out: &std::path::Path, complete: bool) -> (std::path::PathBuf, Recorder) {
    let keys = keys();
    let start = SystemTime::now();
    let mut writer = ResultsWriter::create(out, start).unwrap();
    assert!(writer.staging_path().is_dir());
    let mut total = Recorder::new(keys.len());
    for i in 0..3u64 {
        let mut rec = Recorder::new(keys.len());
        for n in 0..10 * (i + 1) {
            rec.record(
                keys.key(0, 0, 0),
                Outcome::Committed,
                1_000 + n * 100,
                Some(50),
                0,
            );
        }
        rec.record(
            keys.key(0, 0, 0),
            Outcome::ExpectedRollback,
            900,
            Some(50),
            0,
        );
        if i == 2 {
            rec.record(
                keys.key(0, 0, 1),
                Outcome::Failed(ErrorClass::Deadlock),
                0,
                None,
                2,
            );
        }
        writer
            .write_interval(Duration::from_secs(i), Duration::from_secs(1), &keys, &rec)
            .unwrap();
        total.merge(&rec);
    }
    let run = RunFacts {
        workload: "tpcb".into(),
        started_at: start,
        elapsed: Duration::from_secs(3),
        complete,
        rate_limited: true,
        type_rules: Vec::new(),
        headline: None,
        ratio_rules: Vec::new(),
    };
    let server = vec![ServerDelta {
        target: keys.targets[0].label.clone(),
        dbname: "db".into(),
        xact_commit_delta: 63,
        xact_rollback_delta: 4,
        client_committed: 63,
        restarted: false,
        cut_in_flight: 0,
        readings: None,
    }];
    let run_plan = plan();
    let summary = Summary::build(&run, &run_plan, &keys, &total, server);
    let runtime = RuntimeInfo::new(run_plan, HostFacts::collect(), Vec::new());
    let staging = writer.staging_path().to_path_buf();
    let dir = writer.finish(&runtime, &summary).unwrap();
    assert!(
        !staging.exists(),
        "the .partial dir is renamed away by finish"
    );
    (dir, total)
}

#[test]
fn results_dir_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("nested").join("run1");
    let (dir, total) = write_run(&out, true);
    assert_eq!(dir, out);

    // summary.json
    let summary = Summary::read(&dir).unwrap();
    assert_eq!(summary.schema_version, results::SCHEMA_VERSION);
    assert!(summary.complete);
    let t = &summary.totals;
    assert_eq!(
        (t.committed, t.expected_rollback, t.failed, t.retried),
        (60, 3, 1, 2)
    );
    assert_eq!(t.total, t.committed + t.expected_rollback + t.failed);
    assert_eq!(t.tps, 21.0);
    assert!(t.lag_ms.is_some(), "rate-limited runs report lag");
    assert_eq!(summary.by_target_and_type.len(), 2);
    assert_eq!(summary.server[0].xact_commit_delta, 63);

    // intervals.csv
    let csv = std::fs::read_to_string(dir.join(results::INTERVALS_FILE)).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(results::intervals::HEADER));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4, "3 tpcb rows and 1 select row:\n{csv}");
    let counts: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[8], r[9])).collect();
    assert_eq!(
        counts,
        [
            ("0.000", "tpcb", "11"),
            ("1.000", "tpcb", "21"),
            ("2.000", "tpcb", "31"),
            ("2.000", "select", "1")
        ]
    );

    // latency.hlog: standard interval log, one decodable histogram per CSV row.
    let log = std::fs::read(dir.join(results::HLOG_FILE)).unwrap();
    let entries: Vec<_> = IntervalLogIterator::new(&log)
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(matches!(entries[0], LogEntry::StartTime(_)));
    assert!(matches!(entries[1], LogEntry::BaseTime(_)));
    let intervals: Vec<_> = entries
        .iter()
        .filter_map(|e| match e {
            LogEntry::Interval(h) => Some(h),
            _ => None,
        })
        .collect();
    assert_eq!(intervals.len(), 4);
    assert_eq!(intervals[1].start_timestamp(), Duration::from_secs(1));
    let decoded = results::hlog::read(&dir).unwrap();
    let lens: Vec<u64> = decoded.iter().map(|e| e.histogram.len()).collect();
    assert_eq!(
        lens,
        [11, 21, 31, 0],
        "latency counts committed and expected rollbacks"
    );
    let tag = decoded[0].tag.as_deref().unwrap();
    assert_eq!(tag, "i1/run/tpcb/1/tpcb");
    let all = total.total().latency.unwrap();
    assert_eq!(
        decoded.iter().map(|e| e.histogram.len()).sum::<u64>(),
        all.len()
    );

    // runtime.toml: TOML, the plan with its seed, and never the password.
    let text = std::fs::read_to_string(dir.join(results::RUNTIME_FILE)).unwrap();
    assert!(!text.contains("SECRETPW"), "{text}");
    let value: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(value["schema_version"].as_integer(), Some(1));
    assert_eq!(value["plan"]["seed"].as_integer(), Some(7));
    assert!(value["plan"]["groups"][0]["sets"][0]["oltp"]
        .as_str()
        .unwrap()
        .contains("u:********@"));
    assert_eq!(RuntimeInfo::read(&dir).unwrap().plan.seed, 7);
    for file in [
        results::SUMMARY_FILE,
        results::INTERVALS_FILE,
        results::HLOG_FILE,
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(!text.contains("SECRETPW"), "{file} holds the password");
    }
}

#[test]
fn interrupted_run_still_finishes() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = write_run(&tmp.path().join("cut"), false);
    let summary = Summary::read(&dir).unwrap();
    assert!(!summary.complete);
    assert_eq!(summary.totals.total, 64);
}

#[test]
fn existing_dir_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("taken");
    std::fs::create_dir(&out).unwrap();
    let err = ResultsWriter::create(&out, SystemTime::now())
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("choose another --out or remove it"),
        "{err}"
    );
    assert!(!tmp.path().join("taken.partial").exists());
}

/// The server's own counters see exactly the transactions a session ran in the window, when
/// read the documented way: from another database, settled, sessions closed first.
#[test]
fn server_counters_match_client_transactions() {
    use tidebench::sampler::server::{self, ServerFacts};
    use tidebench::target::ResolvedTarget;

    let home = crate::support::temp_home();
    let inst = crate::support::start_instance(&home, "stats");
    tidebench::instance::ensure_database(&inst, "tidebench").unwrap();
    let target = ResolvedTarget {
        label: "instance:stats/tidebench".into(),
        params: inst.connect_params("tidebench"),
        notes: Vec::new(),
        choice: Default::default(),
        follow: Vec::new(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let stats = target
            .connect_tokio_to(server::stats_dbname("tidebench"))
            .await
            .unwrap();
        let facts = ServerFacts::collect(&stats, &target.label).await.unwrap();
        assert!(facts.server_version.starts_with("15"), "{facts:?}");
        assert_eq!(
            facts.settings.get("shared_buffers").map(String::as_str),
            Some("128MB")
        );
        assert_eq!(facts.settings.get("fsync").map(String::as_str), Some("off"));
        assert_eq!(
            facts.settings.len(),
            server::SETTINGS.len(),
            "PostgreSQL 15 has them all: {facts:?}"
        );

        // The session is opened before the start read: PostgreSQL counts its startup as a
        // commit, published when the session first goes idle, so the settled read includes it.
        let settle = Duration::from_secs(15);
        let work = target.connect_tokio().await.unwrap();
        let before = server::settled_xact_counters(&stats, "tidebench", settle)
            .await
            .unwrap();
        for _ in 0..25 {
            work.batch_execute("BEGIN; SELECT 1; COMMIT").await.unwrap();
        }
        for _ in 0..3 {
            work.batch_execute("BEGIN; SELECT 1; ROLLBACK")
                .await
                .unwrap();
        }
        drop(work);
        let after = server::settled_xact_counters(&stats, "tidebench", settle)
            .await
            .unwrap();
        let delta = after.delta_since(before, &target.label, "tidebench");
        assert_eq!(
            (delta.xact_commit_delta, delta.xact_rollback_delta),
            (25, 3),
            "{delta:?}"
        );

        // Sessions opened inside the window add one commit each (documented in sampler::server).
        for _ in 0..3 {
            drop(target.connect_tokio().await.unwrap());
        }
        let later = server::settled_xact_counters(&stats, "tidebench", settle)
            .await
            .unwrap();
        assert_eq!(later.delta_since(after, "", "").xact_commit_delta, 3);

        let err = server::read_xact_counters(&stats, "nosuchdb")
            .await
            .unwrap_err();
        assert!(err.contains("not in pg_stat_database"), "{err}");
    });
}

/// Two runs started at once without --out get two results dirs (the second second-stamped
/// name gets `-2`), and a run aimed at a live run's dir is told it is in use, not left over.
#[test]
fn simultaneous_runs_get_their_own_dirs_and_a_live_dir_is_in_use() {
    let home = support::temp_home();
    support::start_instance(&home, "default");
    let run = |extra: &[&str]| {
        support::tidebench(&home)
            .current_dir(home.path())
            .args(["run", "-w", "probe", "-c", "1", "-P", "0", "--sample", "0"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start a run")
    };
    let (a, b) = (run(&["-T", "2"]), run(&["-T", "2"]));
    for child in [a, b] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", support::output_text(&o));
    }
    let dirs: Vec<_> = std::fs::read_dir(home.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    assert!(
        dirs.iter().all(|d| d.join("summary.json").is_file()),
        "{dirs:?}"
    );

    let out = home.path().join("live");
    // A long run, stopped by Ctrl-C once the second was refused: it is live throughout.
    let mut long = run(&["-T", "600", "--out", out.to_str().unwrap()]);
    let staging = home.path().join("live.partial");
    support::wait_until(&mut long, "the first run's writer.pid", || {
        staging.join("writer.pid").is_file()
    });
    let o = tb(
        &home,
        &[
            "run",
            "-w",
            "probe",
            "-T",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        support::output_text(&o).contains("is being written by a running tidebench"),
        "{}",
        support::output_text(&o)
    );
    let (o, _) = support::interrupt(long);
    assert_eq!(o.status.code(), Some(130), "{}", support::output_text(&o));
    assert!(
        !out.join("writer.pid").exists(),
        "a finished dir names no writer"
    );
}
