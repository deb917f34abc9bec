//! Wait profiles (issue 41): the run's sessions sampled in `pg_stat_activity`. A script that
//! sleeps inside an open transaction shows the driver's share; a lock held by a session of
//! another application for the whole run (not one phase: the stretch is left) shows
//! as `Lock`, and the lock summary names it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{self, output_text as text};

fn run_script(home: &support::TempHome, out: &Path, file: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "run",
        "-T",
        "2s",
        "-P",
        "0",
        "--sample",
        "0",
        "--sample-waits",
        "20",
        "-c",
        "2",
        "-f",
        file,
        "--target",
        "instance:w",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = support::run_tidebench(home, &args);
    assert!(o.status.success(), "{}", text(&o));
    text(&o)
}

/// The summary's one group's waits.
fn only_group(s: &serde_json::Value) -> &serde_json::Value {
    let groups = s["waits"]["groups"].as_array().expect("waits.groups");
    assert_eq!(groups.len(), 1, "only the run's sessions count: {}", s["waits"]);
    &groups[0]
}

#[test]
fn a_sleep_inside_a_transaction_is_the_drivers_share() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "w");
    let file = support::script_file(
        &home,
        "sleepy.sql",
        "BEGIN;\nSELECT 1;\n\\sleep 50 ms\nSELECT 2;\nCOMMIT;\n",
    );
    let out = home.path().join("res");
    let said = run_script(&home, &out, &file, &[]);
    let s = support::summary(&out);
    assert!(s["waits"]["rounds"].as_u64().unwrap() > 0, "{}", s["waits"]);
    let g = only_group(&s);
    assert!(g["samples"].as_u64().unwrap() > 0, "{g}");
    assert!(g["driver_share"].as_f64().unwrap() >= 0.8, "{g}");
    assert_eq!(g["classes"][0]["class"], "IdleInTransaction", "{g}");
    assert_eq!(g["top_events"][0]["event"], "ClientRead", "{g}");
    assert!(said.contains("top waits "), "{said}");
    let csv = std::fs::read_to_string(out.join("waits.csv")).unwrap();
    assert!(csv.starts_with("segment,label,iteration,measured,group,set,class,event,samples\n"));
    assert!(csv.contains(",IdleInTransaction,ClientRead,"), "{csv}");
    for d in s["server"].as_array().unwrap() {
        support::assert_server_agrees(d, 0);
    }
}

/// A psql session named `blocker` that holds row 1 of `locked` until dropped.
struct Blocker(std::process::Child);

impl Blocker {
    fn hold(inst: &tidebench::instance::Instance) -> Blocker {
        let mut child = Command::new(inst.bin_dir().join("psql"))
            .arg(format!("{} application_name=blocker", inst.dsn("tidebench")))
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.as_mut().unwrap();
        stdin
            .write_all(b"BEGIN;\nSELECT * FROM locked WHERE id = 1 FOR UPDATE;\n")
            .unwrap();
        stdin.flush().unwrap();
        // Held once the session sits idle in its transaction (a state, not a time).
        let held = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'blocker' \
                    AND state = 'idle in transaction'";
        for _ in 0..100 {
            if support::psql(inst, "tidebench", held).trim() == "1" {
                return Blocker(child);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the blocker never took its lock");
    }
}

impl Drop for Blocker {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

#[test]
fn a_lock_held_by_another_session_shows_as_lock_and_names_the_blocker() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "w");
    support::psql(
        &inst,
        "tidebench",
        "CREATE TABLE locked (id int PRIMARY KEY, n int); INSERT INTO locked VALUES (1, 0)",
    );
    let file = support::script_file(
        &home,
        "blocked.sql",
        "UPDATE locked SET n = n + 1 WHERE id = 1;\n",
    );
    let out = home.path().join("res");
    let said = {
        let _blocker = Blocker::hold(&inst);
        run_script(&home, &out, &file, &[])
    };
    let s = support::summary(&out);
    let g = only_group(&s);
    assert_eq!(g["classes"][0]["class"], "Lock", "{g}");
    assert!(g["classes"][0]["share"].as_f64().unwrap() >= 0.8, "{g}");
    // The first client waits on the blocker; the second queues behind the first (it waits
    // for the row's tuple lock, which the first holds): its own group.
    let locks = s["waits"]["locks"].as_array().unwrap();
    let mut by: Vec<&str> = locks
        .iter()
        .map(|l| l["blocked_by"].as_str().unwrap())
        .collect();
    by.sort();
    assert_eq!(by, ["other:blocker", "script"], "{locks:?}");
    assert!(locks.iter().all(|l| l["group"] == "script"), "{locks:?}");
    assert!(said.contains("waited on other:blocker"), "{said}");
    let csv = std::fs::read_to_string(out.join("locks.csv")).unwrap();
    assert!(csv.contains(",other:blocker,"), "{csv}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("Wait profiles</h2>"), "report.html has the section");
    assert!(page.contains("<td>script</td><td>other:blocker</td>"), "and the lock table");
}
