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
    assert_eq!(
        groups.len(),
        1,
        "only the run's sessions count: {}",
        s["waits"]
    );
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
        // Owned at once, so that `Drop` waits for it whatever happens below.
        let mut blocker = Blocker(
            Command::new(inst.bin_dir().join("psql"))
                .arg(format!(
                    "{} application_name=blocker",
                    inst.dsn("tidebench")
                ))
                .args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let stdin = blocker.0.stdin.as_mut().unwrap();
        stdin
            .write_all(b"BEGIN;\nSELECT * FROM locked WHERE id = 1 FOR UPDATE;\n")
            .unwrap();
        stdin.flush().unwrap();
        // Held once the session sits idle in its transaction (a state, not a time).
        let held = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'blocker' \
                    AND state = 'idle in transaction'";
        for _ in 0..100 {
            if support::psql(inst, "tidebench", held).trim() == "1" {
                return blocker;
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
    assert!(
        page.contains("Wait profiles</h2>"),
        "report.html has the section"
    );
    assert!(
        page.contains("<td>script</td><td>other:blocker</td>"),
        "and the lock table"
    );
}

/// The check: a lock held during one phase shows as `Lock` in that phase only. Both
/// groups use one database; group B takes row 1 for 300 ms per transaction in phase p2 only (its p1 mix runs a plain SELECT),
/// so group A's one client can wait on it only in p2: p1 has no `Lock` sample at all (exact:
/// a p2 transaction starts at the edge or later on the driver's clock, whose zero comes after
/// the sampler's, and a read that straddles the edge is left out), p2 has them, and the lock
/// summary names B.
#[test]
fn a_lock_taken_in_one_phase_shows_in_that_phase_only() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "w");
    support::psql(
        &inst,
        "tidebench",
        "CREATE TABLE locked (id int PRIMARY KEY, n int); INSERT INTO locked VALUES (1, 0)",
    );
    std::fs::create_dir_all(home.path().join("sql")).unwrap();
    for (name, body) in [
        ("upd.sql", "UPDATE locked SET n = n + 1 WHERE id = 1;\n"),
        ("calm.sql", "SELECT 1;\n"),
        (
            "hold.sql",
            "BEGIN;\nSELECT n FROM locked WHERE id = 1 FOR UPDATE;\n\\sleep 300 ms\nCOMMIT;\n",
        ),
    ] {
        support::script_file(&home, &format!("sql/{name}"), body);
    }
    let cfg = "mode = \"independent\"\nprogress = \"0\"\npoll = \"0\"\nsample = \"0\"\nsample_waits = 20\n\
        [[group]]\nname = \"A\"\nworkload = \"script\"\nfile = [\"sql/upd.sql\"]\ntarget = \"instance:w/tidebench\"\n\
        [[group]]\nname = \"B\"\nworkload = \"script\"\nfile = [\"sql/calm.sql\", \"sql/hold.sql\"]\ntarget = \"instance:w/tidebench\"\n\
        [[phase]]\nname = \"p1\"\nduration = \"2s\"\nclients = { A = 1, B = 1 }\nmix = { upd = 1, calm = 1, hold = 0 }\n\
        [[phase]]\nname = \"p2\"\nduration = \"2s\"\nclients = { A = 1, B = 1 }\nmix = { upd = 1, calm = 0, hold = 1 }\n";
    let cfg_path = home.path().join("phased.toml");
    std::fs::write(&cfg_path, cfg).unwrap();
    let out = home.path().join("res");
    let o = support::run_tidebench(
        &home,
        &[
            "run",
            cfg_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    let groups = s["waits"]["groups"].as_array().unwrap();
    let a = groups.iter().find(|g| g["group"] == "A").expect("group A");
    let lock_in = |phase: &str| {
        let p = a["by_phase"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["label"] == phase)
            .unwrap_or_else(|| panic!("{phase} in {a}"));
        let samples = p["samples"].as_u64().unwrap();
        let lock = p["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["class"] == "Lock")
            .map_or(0, |c| c["samples"].as_u64().unwrap());
        (lock, samples)
    };
    // Over time, by whole seconds of the run: none of p1's two has a Lock sample.
    let o = &a["over_time"];
    assert_eq!(o["bucket_s"], 1, "{a}");
    let lock = o["classes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == "Lock")
        .expect("a Lock class");
    let buckets = o["buckets"].as_array().unwrap();
    let locked: Vec<usize> = (0..buckets.len())
        .filter(|k| buckets[*k][lock].as_u64().unwrap() > 0)
        .collect();
    assert!(!locked.is_empty() && locked[0] >= 2, "{o}");
    let (p1_lock, p1_samples) = lock_in("p1");
    assert!(p1_samples > 0, "{a}");
    assert_eq!(p1_lock, 0, "no lock in p1: {a}");
    let (p2_lock, p2_samples) = lock_in("p2");
    assert!(p2_lock * 2 > p2_samples, "mostly Lock in p2: {a}");
    // B may wait on A's update now and then too; A waits on B only.
    let a_locks: Vec<&serde_json::Value> = s["waits"]["locks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["group"] == "A")
        .collect();
    assert_eq!(a_locks.len(), 1, "{}", s["waits"]);
    assert_eq!(a_locks[0]["blocked_by"], "B", "{}", s["waits"]);
    // Per transaction type, told by the sessions' queries: A's one type holds its samples and
    // its Lock; B's `hold` (its texts are its own) mostly sleeps inside its transaction.
    let by_type = |g: &serde_json::Value, t: &str| {
        g["by_type"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["type"] == t)
            .unwrap_or_else(|| panic!("{t} in {g}"))
            .clone()
    };
    let upd = by_type(a, "upd");
    // All but the odd sample: a session read before its first query has no text to tell.
    let (upd_n, a_n) = (
        upd["samples"].as_u64().unwrap(),
        a["samples"].as_u64().unwrap(),
    );
    assert!(upd_n <= a_n && upd_n * 20 >= a_n * 19, "{a}");
    assert!(
        upd["classes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["class"] == "Lock"),
        "{a}"
    );
    let b = groups.iter().find(|g| g["group"] == "B").expect("group B");
    let hold = by_type(b, "hold");
    assert_eq!(hold["classes"][0]["class"], "IdleInTransaction", "{b}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("<td>upd</td>"),
        "report.html's table per type"
    );
    assert!(
        page.contains("Group A: wait profile over the run"),
        "and the profile stacked over time"
    );
}

/// The check on statements: managed instances load `pg_stat_statements`; over a tpcb
/// run its top statement by total time is the accounts update, called once per transaction
/// (the window is the whole run, so the snapshots come before the first client and after the
/// last: exact but for transactions cut in flight or committed just after the end).
#[test]
fn the_top_statement_of_tpcb_is_the_accounts_update_once_per_transaction() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "w");
    support::prepare_tpcb(&home, "instance:w");
    let out = home.path().join("res");
    let o = support::run_tidebench(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "-c",
            "1",
            "-T",
            "2s",
            "-P",
            "0",
            "--sample",
            "0",
            "--target",
            "instance:w",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    let dbs = s["waits"]["statements"]
        .as_array()
        .expect("waits.statements");
    assert_eq!(dbs.len(), 1, "{dbs:?}");
    assert_eq!(dbs[0]["database"], "tidebench");
    let top = &dbs[0]["top"][0];
    assert!(
        top["query"]
            .as_str()
            .unwrap()
            .starts_with("UPDATE pgbench_accounts"),
        "{}",
        dbs[0]
    );
    let committed = s["totals"]["committed"].as_i64().unwrap();
    let slack = s["cut_in_flight"].as_i64().unwrap_or(0)
        + s["committed_after_end"].as_i64().unwrap_or(0)
        + s["totals"]["failed"].as_i64().unwrap();
    let calls = top["calls"].as_i64().unwrap();
    assert!(
        (committed..=committed + slack).contains(&calls),
        "calls {calls} vs committed {committed} (+{slack})"
    );
    // pgbench's built-in tpcb alone: its texts (BEGIN; and END; included) are its own, so
    // its sessions count under it (a session setting up, under `unknown`, is rare).
    let g = only_group(&s);
    let t = &g["by_type"][0];
    assert_eq!(t["type"], "tpcb", "{g}");
    assert!(
        t["samples"].as_u64().unwrap() * 2 > g["samples"].as_u64().unwrap(),
        "{g}"
    );
    assert!(
        text(&o).contains("top statement on tidebench: "),
        "{}",
        text(&o)
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("Top statements on tidebench"),
        "report.html lists them"
    );
}
