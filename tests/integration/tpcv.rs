//! TPC-V on tpce (issue 12): two groups of one set each, every set an `oltp` and a `dss`
//! database on their own instances, shares shifting between two phases. The decision-support
//! types reach only the `dss` databases and the rest only the `oltp` ones (the servers agree
//! with the client per database); each set's market closes its loop (every Trade-Result
//! completes a trade of that database, Market-Feeds come one per ten Trade-Results); the group
//! shares hold per phase; `check` passes on all four databases. A second run is preset `hci`'s
//! on this load (issue 54): each `oltp` server gets a synchronous standby, group A's primary
//! dies mid-window and its standby is promoted; the clients follow it. A third run loses the
//! server that then holds A's `oltp` database: the other set goes on, the run ends on time,
//! the dead set's market work is reported.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tidebench::instance::Instance;

use crate::support::{self, ok, psql, run_tidebench as tb, summary};

const CUSTOMERS: u32 = 1_000;

/// The run file: groups A and B, A's oltp database on `o`, the other three on `d`.
fn run_file(home: &support::TempHome, o: &str, d: &str, phase: &str) -> std::path::PathBuf {
    let cfg = home.path().join("tpcv.toml");
    let group = |name: &str| {
        let o = if name == "A" { o } else { d };
        format!(
            "[[group]]\nname = \"{name}\"\nworkload = \"tpce\"\nscale = {CUSTOMERS}\n\
             trade_days = 1\n[[group.set]]\noltp = \"instance:{o}/{n}_oltp\"\n\
             dss = \"instance:{d}/{n}_dss\"\n",
            n = name.to_lowercase()
        )
    };
    std::fs::write(
        &cfg,
        format!(
            "clients = 4\nseed = 9\nprogress = \"5s\"\npoll = \"0\"\ninterval = \"5s\"\n\
             {}{}\
             [[phase]]\nduration = \"{phase}\"\nshares = {{ A = 30, B = 70 }}\n\
             [[phase]]\nduration = \"{phase}\"\nshares = {{ A = 70, B = 30 }}\n",
            group("A"),
            group("B")
        ),
    )
    .unwrap();
    cfg
}

fn rows_of<'a>(s: &'a Value, txn: &str) -> Vec<&'a Value> {
    s["by_target_and_type"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["txn_type"] == txn)
        .collect()
}

fn committed(s: &Value, txn: &str, target: &str) -> u64 {
    rows_of(s, txn)
        .iter()
        .filter(|r| r["target"] == target)
        .map(|r| r["committed"].as_u64().unwrap())
        .sum()
}

fn count(inst: &Instance, db: &str, sql: &str) -> u64 {
    psql(inst, db, sql)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Trades of this run (ids from the load's first run-time id on) that reached the market:
/// market orders and triggered limit orders (a SBMT history row), and those completed.
fn run_trades(inst: &Instance, db: &str) -> (u64, u64) {
    let from = "(SELECT first_trade_id FROM tpce_meta)";
    let sent = count(
        inst,
        db,
        &format!(
            "SELECT count(DISTINCT th_t_id) FROM trade_history \
             WHERE th_st_id = 'SBMT' AND th_t_id >= {from}"
        ),
    );
    let done = count(
        inst,
        db,
        &format!("SELECT count(*) FROM trade WHERE t_st_id = 'CMPT' AND t_id >= {from}"),
    );
    (sent, done)
}

/// `--hypervisor qemu` on preset tpcv (issue 40): every set's oltp and dss instance is a QEMU
/// guest of whole vCPUs, as `prepare --dry-run` plans it (booting sixteen guests is a host's
/// job, not a test's: a VM instance's own test boots one).
#[test]
fn the_tpcv_preset_on_vms_declares_a_guest_per_database() {
    let home = support::temp_home();
    let o = tb(
        &home,
        &[
            "prepare",
            "--preset",
            "tpcv",
            "--sets",
            "2",
            "--hypervisor",
            "qemu",
            "--accel",
            "tcg",
            "--dry-run",
        ],
    );
    let said = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let starts: Vec<&str> = said.lines().filter(|l| l.contains("would start")).collect();
    assert_eq!(starts.len(), 16, "4 groups x 2 sets x oltp and dss: {said}");
    for line in &starts {
        assert!(line.contains("(a qemu guest: "), "{line}");
        assert!(line.contains("accelerator tcg"), "{line}");
        let vcpus = line
            .split("guest: ")
            .nth(1)
            .and_then(|r| r.split(' ').next());
        let whole = vcpus.and_then(|v| v.parse::<u32>().ok());
        assert!(whole.is_some_and(|v| v >= 1), "whole vCPUs: {line}");
    }
    let plain = tb(&home, &["prepare", "--preset", "tpcv", "--dry-run"]);
    let plain = String::from_utf8_lossy(&plain.stdout).to_string();
    assert!(
        !plain.contains("guest"),
        "without --hypervisor, control groups: {plain}"
    );
    // The file a user copies says the same.
    let shown = tb(
        &home,
        &["presets", "--show", "tpcv", "--hypervisor", "qemu"],
    );
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    assert_eq!(shown.matches("hypervisor = \"qemu\"").count(), 8, "{shown}");
}

/// One load of four databases serves both runs (issue 49's sixth pass: the load is the
/// longer part of each): a healthy run first, checked claim by claim, then a run that loses
/// group A's `oltp` server. Group A's `oltp` database is alone on `tka`, everything else on
/// `tkb`, so the kill takes only A's set.
#[test]
fn two_groups_route_by_role_close_their_markets_and_a_dead_oltp_server_stops_only_its_set() {
    let home = support::temp_home();
    let a = support::start_instance(&home, "tka");
    let b = support::start_instance(&home, "tkb");
    // 15 s phases: each group still draws thousands of cards per phase (a full deck lasts
    // about 20 ms), so the shares hold to the per mille, and each market sees its hundreds of
    // orders.
    let cfg = run_file(&home, "tka", "tkb", "15s");
    ok(tb(&home, &["prepare", cfg.to_str().unwrap()]));
    each_group_routes_by_role_and_closes_its_loop(&home, &cfg, &a, &b);
    let promoted = hci_fails_over_a_primary_to_its_standby(&home, &a, &b);
    a_dead_oltp_server_stops_only_its_set(&home, &promoted);
}

/// The healthy run: routing by role, the servers' counts, the report's first screen, each
/// market's loop, the group shares per phase, and `check` on all four databases after.
fn each_group_routes_by_role_and_closes_its_loop(
    home: &support::TempHome,
    cfg: &Path,
    o: &Instance,
    d: &Instance,
) {
    let out = home.path().join("res");
    ok(tb(
        home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    ));
    let s = summary(&out);

    // Routing: the dss types only on dss databases, every other type only on oltp ones.
    for r in s["by_target_and_type"].as_array().unwrap() {
        let dss_type = r["txn_type"] == "trade_lookup" || r["txn_type"] == "trade_update";
        let on_dss = r["target"].as_str().unwrap().ends_with("_dss");
        assert_eq!(dss_type, on_dss, "{r}");
        assert_eq!(r["role"] == "dss", on_dss, "{r}");
    }
    // Four databases, each agreeing with the client's count.
    let server = s["server"].as_array().unwrap();
    assert_eq!(server.len(), 4, "{server:?}");
    for db in server {
        support::assert_server_agrees(db, 0);
        assert!(db["client_committed"].as_u64().unwrap() > 0, "{db}");
    }
    // The routing default is written where the run is described.
    let runtime = std::fs::read_to_string(out.join("runtime.toml")).unwrap();
    assert!(
        runtime.contains("dss_types = [\"trade_lookup\", \"trade_update\"]"),
        "{runtime}"
    );
    // The report's first screen (issue 43): called by the run file, each server named with
    // its group and role, isolation per transaction type as tpce begins each.
    assert!(
        runtime.contains("isolation = \"serializable\""),
        "{runtime}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("<h1>tidebench report: tpcv ("), "{page}");
    assert!(page.contains("<td>tpce (run file "), "{page}");
    // Both instances have the test's settings: one row names both.
    for name in [
        "instance tka (A oltp)",
        "instance tkb (A dss, B dss, B oltp)",
    ] {
        assert!(page.contains(name), "{name}: {page}");
    }
    assert!(
        page.contains(
            "repeatable read: trade_order, trade_update, market_feed; serializable: trade_result"
        ),
        "{page}"
    );

    for (g, inst) in [("a", "tka"), ("b", "tkb")] {
        let oltp = format!("instance:{inst}/{g}_oltp");
        let tr = committed(&s, "trade_result", &oltp);
        let mf = committed(&s, "market_feed", &oltp);
        let to = committed(&s, "trade_order", &oltp);
        assert!(to > 50 && tr > 50, "group {g}: {to} orders, {tr} results");
        // Every Trade-Result completed one of this database's run-time trades, and all but
        // those still on their way at the end (at most ~5 s of them) were completed. A
        // Trade-Result in flight at the end may commit just after it (or during its cut),
        // outside the window the summary counts: that many more trades may be complete.
        let on = if g == "a" { o } else { d };
        let (sent, done) = run_trades(on, &format!("{g}_oltp"));
        let after_end = s["committed_after_end"].as_u64().unwrap_or(0)
            + s["cut_in_flight"].as_u64().unwrap_or(0);
        assert!(
            done >= tr && done - tr <= after_end,
            "group {g}: {done} trades complete, {tr} Trade-Results counted, {after_end} at the end"
        );
        assert!(
            tr as f64 >= sent as f64 * 0.9 && tr <= sent,
            "group {g}: {tr} results of {sent} orders sent"
        );
        // Two ticker entries per Trade-Result, twenty per Market-Feed.
        assert!(
            mf <= tr / 10 && mf + 2 >= tr / 10,
            "group {g}: {mf} feeds for {tr} results"
        );
        // Trade-Cleanup ran once before the customers; nothing was left to cancel.
        assert_eq!(committed(&s, "trade_cleanup", &oltp), 1, "group {g}");
        // No market work ever reached the dss copy.
        let dss_db = format!("{g}_dss");
        let (sent_dss, _) = run_trades(d, &dss_db);
        assert_eq!(sent_dss, 0, "group {g}");
    }

    // The group shares of the drawn transactions hold per phase (30/70 then 70/30).
    for (p, want_a) in s["phases"].as_array().unwrap().iter().zip([30.0, 70.0]) {
        let groups = p["groups"].as_array().unwrap_or_else(|| panic!("{p}"));
        let a = groups.iter().find(|g| g["group"] == "A").unwrap();
        let got = a["achieved_share"].as_f64().unwrap();
        assert!((got - want_a).abs() <= 1.0, "phase {p}");
    }

    // The data is consistent everywhere after the run.
    for (inst, db) in [
        ("tka", "a_oltp"),
        ("tkb", "b_oltp"),
        ("tkb", "a_dss"),
        ("tkb", "b_dss"),
    ] {
        let target = format!("instance:{inst}/{db}");
        let out = ok(tb(
            home,
            &["check", "--workload", "tpce", "--target", &target],
        ));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("consistency conditions hold"),
            "{target}"
        );
    }
}

/// Kills the postmaster behind `inst` (SIGKILL: no shutdown, its backends follow).
fn kill_server(inst: &Instance) {
    let pid = inst.pid().expect("the server runs");
    // SAFETY: plain kill(2) on a process this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
}

/// The last run, on the same load: the server holding A's `oltp` database (the standby the
/// HCI run promoted) is killed mid-run; B goes on, the run ends on time, and the market work
/// A's set left is reported.
fn a_dead_oltp_server_stops_only_its_set(home: &support::TempHome, a: &Instance) {
    let name = a.name.clone();
    let cfg = run_file(home, &name, "tkb", "10s");
    let out = home.path().join("res-killed");
    let started = Instant::now();
    let mut child = support::tidebench(home)
        .args(["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill A's server in phase 1, once the run's own clock has recorded its first 5 s
    // interval, however slow the setup was.
    support::wait_run_clock(&mut child, &out, 5.0);
    kill_server(a);
    let done = child.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(done.status.success(), "{}", support::output_text(&done));
    // On time as the run measures it: the measured window is the two phases, and the
    // clients ended within a second of its end (no overrun). The wall clock only guards
    // against a hang: the work after the run (a dead server's check is given 3 s) stretches
    // on a busy machine (CI took 35.8 s once beside two OOM tests).
    assert!(took < Duration::from_secs(90), "took {took:?}");
    let s = summary(&out);
    assert_eq!(s["duration_s"].as_f64(), Some(20.0), "{s}");
    assert!(s.get("overrun_s").is_none(), "{s}");
    // Group B's market went on through both phases; A's stopped with its server.
    let b_results = committed(&s, "trade_result", "instance:tkb/b_oltp");
    let a_oltp = format!("instance:{name}/a_oltp");
    let a_results = committed(&s, "trade_result", &a_oltp);
    assert!(
        b_results > 2 * a_results.max(1),
        "A {a_results}, B {b_results}"
    );
    let failed_a: u64 = rows_of(&s, "trade_order")
        .iter()
        .filter(|r| r["target"] == a_oltp.as_str())
        .map(|r| r["failed"].as_u64().unwrap())
        .sum();
    assert!(failed_a > 0, "A's orders failed once its server was gone");
    emulator_backlog_is_reported(&s, &out);
}

/// The run's end reports each set's market work left over.
fn emulator_backlog_is_reported(s: &Value, out: &Path) {
    let sets = s["emulators"].as_array().unwrap_or_else(|| panic!("{s}"));
    assert_eq!(sets.len(), 2, "{sets:?}");
    let a = sets.iter().find(|e| e["group"] == "A").unwrap();
    let pending = a["pending_at_end"].as_u64().unwrap();
    assert!(pending > 0, "A's market still held work: {a}");
    let console = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(console.contains("pending_at_end"));
}

/// Preset `hci`'s run file on this load (`tidebench presets --show hci` makes the same
/// tables for its own instances, checked here): every `oltp` server with a synchronous standby
/// declared after it, the `oltp` targets over both, A's primary failed in the second phase
/// (3 s into it, as the preset's kill is halfway through its phase) and its standby promoted
/// a second later.
fn hci_run_file(home: &support::TempHome, phase: &str) -> std::path::PathBuf {
    let cfg = home.path().join("hci.toml");
    let standby = |p: &str| {
        format!(
            "\n# its synchronous standby, of the same size\n[[instance]]\nname = \"{p}-standby\"\n\
             standby_of = \"{p}\"\nsync = true\n"
        )
    };
    let events = "[[event]]\nphase = \"p2\"\nat = \"3s\"\naction = \"fail\"\ntarget = \"tka\"\n\n\
                  [[event]]\nphase = \"p2\"\nat = \"4s\"\naction = \"promote\"\n\
                  target = \"tka-standby\"\n";
    let base = std::fs::read_to_string(run_file(home, "tka", "tkb", phase)).unwrap();
    let text = base
        .replace("instance:tka/a_oltp", "instance:tka,tka-standby/a_oltp")
        .replace("instance:tkb/b_oltp", "instance:tkb,tkb-standby/b_oltp");
    std::fs::write(
        &cfg,
        format!("{text}{}{}\n{events}", standby("tka"), standby("tkb")),
    )
    .unwrap();
    // The preset writes the same forms for its own instances.
    let shown = tb(home, &["presets", "--show", "hci"]);
    let shown = String::from_utf8_lossy(&shown.stdout).to_string();
    let forms = [
        standby("tpcv-a1-oltp"),
        "oltp = \"instance:tpcv-a1-oltp,tpcv-a1-oltp-standby/a1_oltp\"".into(),
        // Its phases are 12 minutes: the kill halfway through p6, the promotion 1 s after.
        events
            .replace("p2", "p6")
            .replace("tka", "tpcv-a1-oltp")
            .replace("\"3s\"", "\"6m\"")
            .replace("\"4s\"", "\"6m 1s\""),
    ];
    for form in forms {
        assert!(shown.contains(&form), "{form} in {shown}");
    }
    cfg
}

/// The HCI run: the standbys made from the loaded primaries (the preset's instances commit
/// synchronously, as a server does by default; the test settings turn that off), A's primary
/// killed, its standby promoted, and A's clients on it after; the recovery per group and the
/// share at full rate in summary.json, the report's marked chart and recovery table, and each
/// host's own count against the clients'. Returns the promoted standby.
fn hci_fails_over_a_primary_to_its_standby(
    home: &support::TempHome,
    a: &Instance,
    b: &Instance,
) -> Instance {
    for inst in [a, b] {
        psql(inst, "postgres", "ALTER SYSTEM SET synchronous_commit = on");
        psql(inst, "postgres", "SELECT pg_reload_conf()");
    }
    // Phases of 8 s: the kill at 11 s leaves the promoted standby 4 s of the run to take A's
    // clients on a busy machine.
    let cfg = hci_run_file(home, "8s");
    let out = home.path().join("res-hci");
    let started = Instant::now();
    ok(tb(
        home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    ));
    eprintln!("the HCI run took {:?}", started.elapsed());
    let s = summary(&out);
    let events = s["events"].as_array().unwrap_or_else(|| panic!("{s}"));
    let steps: Vec<(&str, &str)> = events
        .iter()
        .flat_map(|e| e["steps"].as_array().unwrap())
        .map(|s| (s["step"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(steps, vec![("fail", "ok"), ("promote", "ok")], "{s}");
    // The recovery around the kill, for the run and each group, with the share at full rate.
    let recovery = events[0]["recovery"].as_array().unwrap();
    for r in recovery {
        eprintln!("recovery: {r}");
    }
    let scopes: Vec<&str> = recovery
        .iter()
        .map(|r| r["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["all", "A", "B"], "{s}");
    for r in recovery {
        let share = r["full_rate_share"]
            .as_f64()
            .unwrap_or_else(|| panic!("{r}"));
        assert!((0.0..=1.0).contains(&share), "{r}");
    }
    let a_rec = &recovery[1];
    assert!(a_rec["first_commit_s"].as_f64().is_some(), "{a_rec}");
    assert!(a_rec["reconnects"].as_u64().unwrap() > 0, "{a_rec}");
    // A's clients landed on the promoted standby: it took their commits, and its own count
    // agrees; the live servers all agree.
    let hosts = s["hosts"].as_array().unwrap_or_else(|| panic!("{s}"));
    for h in hosts {
        eprintln!("{} {}: {h}", h["host"], h["source"]);
    }
    let host = |name: &str| {
        hosts
            .iter()
            .find(|h| h["host"] == name)
            .unwrap_or_else(|| panic!("{name}: {s}"))
    };
    let promoted = host("tka-standby");
    assert!(
        promoted["client_committed"].as_i64().unwrap() > 0,
        "{promoted}"
    );
    for name in ["tka-standby", "tkb", "tkb-standby"] {
        let h = host(name);
        assert_eq!(h["source"], "pg_stat_database", "{h}");
        assert_eq!(h["agrees"], true, "{h}");
    }
    // The dead primary is counted in its WAL, which holds the transactions that wrote: never
    // more than the clients saw commit there (and those of unknown fate), and short of them
    // by tpce's read-only ones.
    let dead = host("tka");
    assert_eq!(dead["source"], "wal", "{dead}");
    let in_wal = dead["server_commits"]
        .as_i64()
        .unwrap_or_else(|| panic!("{dead}"));
    let bound = dead["client_committed"].as_i64().unwrap() + dead["unknown"].as_i64().unwrap();
    assert!(in_wal > 0 && in_wal <= bound, "{dead}");
    let standby = tidebench::instance::find(&home.home, "tka-standby").unwrap();
    assert_eq!(
        psql(&standby, "postgres", "SELECT pg_is_in_recovery()"),
        "f"
    );
    let (sent, _) = run_trades(&standby, "a_oltp");
    assert!(sent > 0, "A's market went on on the promoted standby");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for part in [
        "Dashed purple verticals",
        "<h3>Events</h3>",
        "back to 90% after (s)",
        "at full rate after",
        "<h3>Commits per host</h3>",
    ] {
        assert!(page.contains(part), "{part}");
    }
    assert!(
        page.to_lowercase().contains("#7828aa"),
        "the event's mark on a chart"
    );
    standby
}
