//! Targets that stop answering (issue 15, items 1 and 2): a stopped server (SIGSTOP of its
//! postmaster and backends) turns into `timeout` failures and a down window while the other
//! target runs on, and the run ends on time; a row lock held by another session is cut at the
//! end; Ctrl-C during a hang ends the run without waiting for the lock.

use std::process::Command;
use std::time::Duration;

use tidebench::instance::Instance;

use crate::support::{self, ok, output_text as text, run_tidebench as tb, summary};

/// Stops a server's postmaster and every backend; continues them when dropped, so a failing
/// test never leaves a frozen server behind.
struct Frozen(u32);

impl Frozen {
    fn freeze(inst: &Instance) -> Frozen {
        let pid = inst.pid().expect("the server runs");
        signal_tree(pid, "-STOP");
        Frozen(pid)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal_tree(self.0, "-CONT");
    }
}

fn signal_tree(pid: u32, sig: &str) {
    let _ = Command::new("pkill")
        .args([sig, "-P", &pid.to_string()])
        .status();
    let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
}

fn rows_for<'a>(s: &'a serde_json::Value, target_part: &str) -> Vec<&'a serde_json::Value> {
    s["by_target_and_type"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["target"].as_str().unwrap().contains(target_part))
        .collect()
}

fn sum(rows: &[&serde_json::Value], f: impl Fn(&serde_json::Value) -> u64) -> u64 {
    rows.iter().map(|r| f(r)).sum()
}

#[test]
fn a_stopped_server_times_out_its_share_while_the_other_runs_and_the_run_ends_on_time() {
    let home = support::temp_home();
    let _a = support::start_instance(&home, "fa");
    let b = support::start_instance(&home, "fb");
    let cfg =
        "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\ntxn_timeout = \"1s\"\n\
        [[group]]\nname = \"A\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"fa\"\n\
        [[group]]\nname = \"B\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"fb\"\n\
        [[phase]]\nduration = \"8s\"\nshares = { A = 50, B = 50 }\n";
    let cfg_path = home.path().join("stop.toml");
    std::fs::write(&cfg_path, cfg).unwrap();
    ok(tb(&home, &["prepare", cfg_path.to_str().unwrap()]));
    let out = home.path().join("res");
    let mut child = support::spawn_tidebench(
        &home,
        &[
            "run",
            cfg_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    // Freeze B once the run's own clock has recorded 2 s (A keeps committing, so its rows
    // advance that clock), however slow the setup was beside other tests.
    support::wait_run_clock(&mut child, &out, 2.0);
    let frozen = Frozen::freeze(&b);
    let mut status = None;
    support::poll_until("end of the run while a server was stopped", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    drop(frozen);
    let o = child.wait_with_output().unwrap();
    assert!(status.unwrap().success(), "{}", text(&o));
    let s = summary(&out);
    assert_eq!(s["complete"], true);
    assert_eq!(
        s["duration_s"].as_f64(),
        Some(8.0),
        "the window is the duration"
    );
    // Ended on time by the run's own account: no overrun past the window.
    assert!(s.get("overrun_s").is_none(), "{s}");
    let a = rows_for(&s, "fa");
    let b_rows = rows_for(&s, "fb");
    assert!(sum(&a, |r| r["committed"].as_u64().unwrap()) > 100, "{s}");
    let timeouts = sum(&b_rows, |r| {
        r["failed_by_class"]["timeout"].as_u64().unwrap()
    });
    assert!(timeouts > 0, "B's tries timed out: {s}");
    let down = s["down_windows"].as_array().expect("down windows");
    assert!(
        down.iter()
            .any(|w| w["target"].as_str().unwrap().contains("fb")),
        "{down:?}"
    );
    // A's count is still checked; B's server did not answer in time, so it is left out.
    let servers = s["server"].as_array().unwrap();
    let a_row = servers
        .iter()
        .find(|d| d["target"].as_str().unwrap().contains("fa"))
        .unwrap_or_else(|| panic!("{servers:?}"));
    support::assert_server_agrees(a_row, 0);
    assert!(
        text(&o).contains("did not answer"),
        "the skipped check is said: {}",
        text(&o)
    );
}

#[test]
fn a_held_lock_is_cut_at_the_end_and_ctrl_c_during_a_hang_is_quick() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "flock");
    ok(tb(
        &home,
        &[
            "prepare",
            "-w",
            "tpcb",
            "--target",
            "instance:flock",
            "-s",
            "1",
        ],
    ));
    // Every tpcb transaction updates the one branch: hold it for far longer than the runs, and
    // start them once the server says the lock is granted.
    let holder = {
        let inst = inst.clone();
        std::thread::spawn(move || {
            inst.psql(
                "tidebench",
                "BEGIN; LOCK pgbench_branches IN EXCLUSIVE MODE; SELECT pg_sleep(600); COMMIT;",
            )
        })
    };
    support::poll_until("lock held by the other session", || {
        support::lock_held(&inst, "tidebench", "pgbench_branches", "ExclusiveLock")
    });
    let out = home.path().join("res-lock");
    let o = tb(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "--target",
            "instance:flock",
            "-c",
            "2",
            "-T",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    // The run ended while the lock was still held: it did not wait for the holder.
    assert!(
        !holder.is_finished(),
        "the holder ended first: {}",
        text(&o)
    );
    let s = summary(&out);
    assert_eq!(s["duration_s"].as_f64(), Some(3.0));
    assert_eq!(s["cut_in_flight"].as_u64(), Some(2), "{s}");
    assert!(s.get("overrun_s").is_none(), "{s}");

    // Ctrl-C while every client waits on the lock.
    let out = home.path().join("res-int");
    let mut child = support::spawn_tidebench(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "--target",
            "instance:flock",
            "-c",
            "2",
            "-T",
            "60",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    // Ctrl-C once the server says both clients wait on the lock.
    support::wait_until(&mut child, "both clients waiting on the lock", || {
        support::lock_waiters(&inst) >= 2
    });
    let (o, stopped_in) = support::interrupt(child);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    // It stopped during the hang: the lock is still held, and well within the stop's own
    // budget (the cut of in-flight work), not at the 60 s end.
    assert!(
        !holder.is_finished(),
        "stopped in {stopped_in:?} only after the lock went"
    );
    assert!(
        stopped_in < Duration::from_secs(30),
        "stopped in {stopped_in:?}"
    );
    let s = summary(&out);
    assert_eq!(s["complete"], false);
    support::psql(
        &inst,
        "postgres",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()",
    );
    let _ = holder.join();
}
