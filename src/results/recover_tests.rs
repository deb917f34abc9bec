use std::fs;
use std::time::{Duration, SystemTime};

use super::*;
use crate::metrics::{ErrorClass, Outcome};
use crate::results::{HostFacts, ResultsWriter, RunStart, INTERVALS_FILE};

/// A run over `two_phase_keys` with 5 s intervals killed after `intervals` of them: its
/// `.partial` dir as the writer left it (the writer dropped, never finished), and the
/// committed count it wrote.
fn killed_run(root: &Path, intervals: u64) -> (std::path::PathBuf, u64) {
    let keys = crate::results::intervals::tests::two_phase_keys();
    let mut plan = crate::results::summary::tests::plan();
    plan.interval = Duration::from_secs(5);
    let started = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let mut facts = crate::results::summary::tests::two_phase_facts();
    facts.started_at = started;
    let mut writer = ResultsWriter::create(&root.join("run"), started).unwrap();
    let runtime = RuntimeInfo::new(plan, HostFacts::default(), Vec::new());
    writer
        .record_start(&runtime, &RunStart::new(&facts, &keys))
        .unwrap();
    let mut committed = 0;
    for i in 0..intervals {
        let mut rec = Recorder::new(keys.len());
        let segment = usize::from(i >= 2);
        for n in 0..=i {
            rec.record(
                keys.key(segment, 0, 0),
                Outcome::Committed,
                1_000 * (n + 1),
                None,
                // The first transaction of each interval took three tries.
                if n == 0 { 2 } else { 0 },
            );
            committed += 1;
        }
        rec.record(
            keys.key(segment, 1, 1),
            Outcome::Failed(ErrorClass::Timeout),
            0,
            None,
            0,
        );
        writer
            .write_interval(
                Duration::from_secs(5 * i),
                Duration::from_secs(5),
                &keys,
                &rec,
            )
            .unwrap();
    }
    let staging = writer.staging_path().to_path_buf();
    drop(writer);
    // The killed writer's pid names no live process.
    fs::write(staging.join(WRITER_PID_FILE), "999999999\n").unwrap();
    (staging, committed)
}

#[test]
fn rebuilds_an_incomplete_summary_from_the_intervals() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, committed) = killed_run(tmp.path(), 3);
    assert!(!dir.join(SUMMARY_FILE).exists());
    let got = recover(&dir).unwrap();
    let s = Summary::read(&dir).unwrap();
    assert_eq!(s, got.summary);
    assert!(!s.complete);
    assert_eq!(s.totals.committed, committed);
    assert_eq!(s.totals.failed, 3);
    assert_eq!(s.totals.failed_by_class.timeout, 3);
    assert_eq!((s.totals.retried, s.totals.retried_txns), (6, 3));
    assert_eq!(s.elapsed_s, 15.0);
    assert_eq!(s.duration_s, 15.0, "p1 whole and 5 s of p2");
    assert_eq!(s.started_at, "2023-11-14T22:13:20Z");
    let why = s.failure.as_deref().unwrap();
    assert!(why.contains("(killed") && why.contains("15.0 s"), "{why}");
    assert_eq!(s.phases.len(), 2);
    assert!(s.totals.latency_ms.as_ref().unwrap().max >= 3.0);
    assert_eq!((got.rows, got.dropped), (6, 0));
    assert!(!dir.join(WRITER_PID_FILE).exists());
}

#[test]
fn a_half_written_interval_is_left_out_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, committed) = killed_run(tmp.path(), 3);
    // The process died while appending a fourth interval: one row of it whole, one cut.
    let csv = dir.join(INTERVALS_FILE);
    let text = fs::read_to_string(&csv).unwrap();
    let last = text
        .lines()
        .rev()
        .nth(1)
        .unwrap()
        .replacen("10.000", "15.000", 1);
    fs::write(&csv, format!("{text}{last}\n15.000,5.000,1,p2,tr")).unwrap();
    let got = recover(&dir).unwrap();
    assert_eq!(got.summary.totals.committed, committed);
    assert_eq!(got.dropped, 2);
    // Or it died between the files: the csv rows of the fourth interval whole, its
    // histograms not yet written; the three intervals before it count.
    fs::write(&csv, format!("{text}{last}\n")).unwrap();
    fs::remove_file(dir.join(SUMMARY_FILE)).unwrap();
    let got = recover(&dir).unwrap();
    assert_eq!(got.summary.totals.committed, committed);
    assert_eq!(got.dropped, 1);
    let why = got.summary.failure.unwrap();
    assert!(why.contains("the last interval was left out"), "{why}");
    // Or mid-way through the third interval's histograms: that interval goes, whole.
    fs::write(&csv, &text).unwrap();
    let hlog = dir.join(crate::results::HLOG_FILE);
    let log = fs::read_to_string(&hlog).unwrap();
    let cut = log.trim_end().rsplit_once('\n').unwrap().0;
    fs::write(&hlog, format!("{cut}\n")).unwrap();
    let got = recover(&dir).unwrap();
    assert_eq!(got.summary.totals.committed, committed - 3);
    assert_eq!((got.rows, got.dropped), (4, 2));
    assert_eq!(got.summary.elapsed_s, 10.0);
}

#[test]
fn refuses_a_dir_without_its_start() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = killed_run(tmp.path(), 1);
    fs::remove_file(dir.join(crate::results::START_FILE)).unwrap();
    let err = recover(&dir).unwrap_err();
    assert!(matches!(err, ResultsError::Unrecoverable(_)), "{err}");
    assert!(err.to_string().contains("report --by"), "{err}");
    assert!(!dir.join(SUMMARY_FILE).exists());
}
