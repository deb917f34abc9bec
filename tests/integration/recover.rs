//! Issue 15 items 3 and 4 against real instances: a driver killed with SIGKILL leaves a
//! `.partial` dir that `tidebench report` rebuilds (summary marked incomplete, totals equal
//! to the intervals on disk), and a disk that fills mid-run stops the run at once with the
//! file and the free space named, the totals printed, exit 2 and the dir left `.partial`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::support::{self, output_text as text, run_tidebench as tb};

/// A 60 s tpcb run with 1 s intervals into `out`, its output piped.
fn start_run(home: &support::TempHome, target: &str, out: &Path) -> Child {
    support::spawn_tidebench(
        home,
        &[
            "run",
            "--workload",
            "tpcb",
            "--target",
            target,
            "-c",
            "2",
            "-T",
            "60",
            "--interval",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ],
    )
}

/// Kills the run if a test fails before it ended (so the tmpfs can be unmounted).
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Committed transactions of the measured rows of `intervals.csv`, over its whole intervals:
/// a SIGKILL can land while an interval's lines are being written, or between its lines and
/// their histograms in `latency.hlog` (one entry per row, written after the rows), and
/// `report` leaves such a damaged last interval out (its note says so). So a row is on disk
/// when its line is complete (every field, and the newline after it) and the log holds its
/// entry, and an interval counts only if each of its rows is on disk.
fn committed_in_intervals(dir: &Path) -> u64 {
    let csv = std::fs::read_to_string(dir.join("intervals.csv")).unwrap();
    let log = std::fs::read_to_string(dir.join("latency.hlog")).unwrap();
    let entries = log
        .split_inclusive('\n')
        .filter(|l| l.starts_with("Tag=") && l.ends_with('\n'))
        .count();
    let mut lines: Vec<&str> = csv.split_inclusive('\n').collect();
    let header: Vec<&str> = lines.remove(0).trim_end().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (measured, committed) = (col("measured"), col("committed"));
    let whole = |l: &str| l.ends_with('\n') && l.trim_end().split(',').count() == header.len();
    let on_disk = |i: usize, l: &str| whole(l) && i < entries;
    // An interval is named by its first field (its start); a line cut before its first comma
    // names none.
    let start = |l: &str| l.split_once(',').map(|(s, _)| s.to_string());
    let damaged: std::collections::HashSet<String> = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| !on_disk(*i, l))
        .filter_map(|(_, l)| start(l))
        .collect();
    lines
        .iter()
        .enumerate()
        .filter(|(i, l)| on_disk(*i, l) && !start(l).is_some_and(|s| damaged.contains(&s)))
        .map(|(_, l)| l.trim_end().split(',').collect::<Vec<_>>())
        .filter(|f| f[measured] == "true")
        .map(|f| f[committed].parse::<u64>().unwrap())
        .sum()
}

#[test]
fn a_killed_driver_is_recovered_by_report() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "hrkill");
    support::prepare_tpcb(&home, "instance:hrkill");
    let out = home.path().join("res-kill");
    let mut run = Running(Some(start_run(&home, "instance:hrkill", &out)));
    let staging = support::partial(&out);
    // Kill it once its own clock has recorded 3 s, however slow its setup was.
    support::wait_run_clock(run.0.as_mut().unwrap(), &out, 3.0);
    let mut child = run.0.take().unwrap();
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();

    assert!(!out.exists(), "a killed run has no final dir");
    assert!(!staging.join("summary.json").exists());
    assert!(staging.join("runtime.toml").is_file());
    let o = tb(&home, &["report", staging.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("rebuilt it from"), "{}", text(&o));

    let s = support::summary(&staging);
    assert_eq!(s["complete"], false);
    let why = s["failure"].as_str().unwrap();
    assert!(why.contains("(killed"), "{why}");
    let committed = s["totals"]["committed"].as_u64().unwrap();
    assert!(committed > 0, "{s}");
    assert_eq!(committed, committed_in_intervals(&staging));
    assert!(s["duration_s"].as_f64().unwrap() >= 2.0, "{s}");
    let page = std::fs::read_to_string(staging.join("report.html")).unwrap();
    assert!(
        page.contains("(killed"),
        "the page says why it is incomplete"
    );
    assert!(!out.exists(), "the recovered dir keeps its .partial name");
    // A second report reads the rebuilt summary as it is.
    let o = tb(&home, &["report", staging.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("rebuilt it from"), "{}", text(&o));
}

/// A small tmpfs mounted for one test, unmounted however the test ends.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `None` (with the reason printed) where mounting is not permitted.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755")])
            .arg("tmpfs")
            .arg(dir)
            .output();
        match o {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => {
                let why = format!("mount said: {}", String::from_utf8_lossy(&o.stderr).trim());
                support::skip("the full-disk test", "a tmpfs (mount, as root)", &why);
                None
            }
            Err(e) => {
                let why = format!("cannot run mount: {e}");
                support::skip("the full-disk test", "a tmpfs (mount, as root)", &why);
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let umount = |lazy: bool| {
            let mut c = Command::new("umount");
            if lazy {
                c.arg("-l");
            }
            c.arg(&self.0).status().is_ok_and(|s| s.success())
        };
        if !umount(false) && !umount(true) {
            eprintln!("warning: could not unmount {}", self.0.display());
        }
    }
}

/// Writes zeros to `path` until the file system is full.
fn fill(path: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    while f.write_all(&[0u8]).is_ok() {}
}

#[test]
fn a_full_disk_stops_the_run_and_keeps_the_partial() {
    let home = support::temp_home();
    let Some(disk) = Tmpfs::mount(&home.path().join("small-disk"), "2M") else {
        return;
    };
    let _inst = support::start_instance(&home, "hrfull");
    support::prepare_tpcb(&home, "instance:hrfull");
    let out = disk.0.join("res-full");
    let mut run = Running(Some(start_run(&home, "instance:hrfull", &out)));
    let staging = support::partial(&out);
    // Fill the disk once the run's own clock has recorded 2 s, however slow its setup was.
    support::wait_run_clock(run.0.as_mut().unwrap(), &out, 2.0);
    let filler = disk.0.join("filler");
    fill(&filler);
    let filled = Instant::now();
    let child = run.0.take().unwrap();
    let o = child.wait_with_output().unwrap();
    let took = filled.elapsed();
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    // It stopped when an append failed (a few intervals fill the files' last pages), not at
    // the end of the 60 s.
    assert!(
        took < Duration::from_secs(40),
        "stopped {took:?} after the disk filled: {all}"
    );
    assert!(all.contains("free on its file system"), "{all}");
    assert!(all.contains("stopping the clients"), "{all}");
    assert!(all.contains("totals held in memory"), "{all}");
    assert!(
        !out.exists(),
        "nothing is presented as a complete result: {all}"
    );
    assert!(staging.is_dir());
    let leftovers: Vec<_> = std::fs::read_dir(&staging)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");

    // With room again, `report` draws what the .partial holds, marked incomplete.
    std::fs::remove_file(&filler).unwrap();
    let o = tb(&home, &["report", staging.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&staging);
    assert_eq!(s["complete"], false, "{s}");
    assert!(s["totals"]["committed"].as_u64().unwrap() > 0, "{s}");
    assert!(staging.join("report.html").is_file());
}
