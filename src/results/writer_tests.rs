use super::*;

#[test]
fn names_sort_by_utc_time() {
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_317_300);
    assert_eq!(dir_name(at, "tpcb"), "20261122T031500Z-tpcb");
    assert!(default_dir("select-only").starts_with("results"));
}

#[test]
fn staging_sits_beside_the_final_dir() {
    assert_eq!(
        staging_dir(Path::new("r/run1/")).unwrap(),
        Path::new("r/run1.partial")
    );
    assert_eq!(
        staging_dir(Path::new("run1")).unwrap(),
        Path::new("run1.partial")
    );
    assert!(matches!(
        staging_dir(Path::new("/")),
        Err(ResultsError::BadPath(_))
    ));
}

#[test]
fn refuses_an_existing_dir_with_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let err = ResultsWriter::create(tmp.path(), SystemTime::now())
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("choose another --out or remove it"),
        "{err}"
    );
    let left = tmp.path().join("run.partial");
    fs::create_dir(&left).unwrap();
    let err = ResultsWriter::create(&tmp.path().join("run"), SystemTime::now())
        .err()
        .unwrap();
    assert!(matches!(err, ResultsError::LeftOver(_)), "{err}");
}

/// A full disk (here /dev/full, which fails every write with ENOSPC) fails the writer at
/// the first interval, with the file and the free space named; `finish` then leaves the
/// dir `.partial` with an incomplete summary and returns the totals.
#[test]
fn a_full_disk_fails_the_writer_and_finish_keeps_the_partial() {
    // /dev/full is on every Linux system, the only one tidebench runs on.
    let full = OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let keys = crate::results::intervals::tests::two_phase_keys();
    let mut writer = ResultsWriter::create(&run, SystemTime::now()).unwrap();
    writer.intervals = BufWriter::new(full);
    let mut rec = Recorder::new(keys.len());
    rec.record(
        keys.key(0, 0, 0),
        crate::metrics::Outcome::Committed,
        900,
        None,
        0,
    );
    let second = Duration::from_secs(1);
    let err = writer
        .write_interval(Duration::ZERO, second, &keys, &rec)
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("intervals.csv") && msg.contains("free on its file system"),
        "{msg}"
    );
    assert!(
        matches!(&err, ResultsError::Write(w) if w.is_disk_full()),
        "{err:?}"
    );
    assert!(writer.failed().is_some());
    assert!(writer.write_interval(second, second, &keys, &rec).is_err());

    let plan = crate::results::summary::tests::plan();
    let facts = crate::results::summary::tests::two_phase_facts();
    let summary = Summary::build(&facts, &plan, &keys, &rec, Vec::new());
    let runtime = RuntimeInfo::new(plan, Default::default(), Vec::new());
    let staging = writer.staging_path().to_path_buf();
    let err = writer.finish(&runtime, &summary).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("totals held in memory: 1 committed"), "{msg}");
    assert!(msg.contains("left .partial"), "{msg}");
    assert!(!run.exists() && staging.is_dir());
    let kept = Summary::read(&staging).unwrap();
    assert!(!kept.complete);
    assert!(kept.failure.unwrap().contains("could not be written"));
    assert!(!staging.join(WRITER_PID_FILE).exists());
}

#[test]
fn a_live_runs_dir_is_in_use_not_left_over() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let writer = ResultsWriter::create(&run, SystemTime::now()).unwrap();
    // This test binary's name is not tidebench's: only the pid file's shape is checked
    // here; a dead writer's dir reads as left over.
    let pid: u32 = fs::read_to_string(writer.staging_path().join(WRITER_PID_FILE))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(pid, std::process::id());
    fs::write(writer.staging_path().join(WRITER_PID_FILE), "999999999\n").unwrap();
    let err = ResultsWriter::ensure_free(&run).unwrap_err();
    assert!(matches!(err, ResultsError::LeftOver(_)), "{err}");
}
