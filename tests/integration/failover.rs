//! Fail-over (issue 54): a primary and its standby made by `tidebench instance start
//! --standby-of [--sync]`, a tpcb run on `instance:a,b`: the primary is killed, the standby
//! promoted a second later, and the clients, which look for the primary again on every
//! reconnect, go on there. The run's own records say when. The promoted server's
//! `pgbench_history` is the referee for the commits: with a synchronous standby it holds
//! every transaction the clients saw commit; with an asynchronous one, what it lacks is
//! among the commits the run counted as lost in the old primary's WAL.

use crate::support::{self, ok, output_text as text, run_tidebench as tb, summary};

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Two clients at a steady rate far below the machine's, so the rate before the event is
/// the one the run returns to.
fn run_file(a: &str, b: &str, seconds: u32, events: &str) -> String {
    format!(
        "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
         txn_timeout = \"2s\"\nrate = 100\n\
         [[group]]\nname = \"A\"\nworkload = \"tpcb\"\nscale = 1\n\
         target = \"instance:{a},{b}\"\n\
         [[phase]]\nname = \"only\"\nduration = \"{seconds}s\"\nshares = {{ A = 100 }}\n\
         {events}"
    )
}

/// A primary that waits for its WAL to be flushed on commit (the test settings turn
/// `synchronous_commit` off, which would neither wait for a standby nor keep an answered
/// commit in the primary's WAL).
fn primary(home: &support::TempHome, name: &str) -> tidebench::instance::Instance {
    support::start_with(
        home,
        name,
        tidebench::instance::InstanceOptions {
            settings: vec![("synchronous_commit".into(), "on".into())],
            ..Default::default()
        },
    )
}

/// Runs `cfg` into `home/res`; its results dir, summary and what it printed.
fn run(
    home: &support::TempHome,
    cfg: &std::path::Path,
) -> (std::path::PathBuf, serde_json::Value, String) {
    let out = home.path().join("res");
    let o = tb(
        home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = summary(&out);
    (out, s, text(&o))
}

/// The summary's per-host server check.
fn per_host(s: &serde_json::Value) -> Vec<&serde_json::Value> {
    s["hosts"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// A run's `(step, outcome)` pairs of event `k`.
fn steps(s: &serde_json::Value, k: usize) -> Vec<(String, String)> {
    s["events"][k]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["step"].as_str().unwrap().to_string(),
                s["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The history rows on the promoted `standby` against the clients' commits: every commit a
/// client saw is on the new primary or among the `lost` ones, and the new primary holds at
/// most a few more (a commit whose answer never reached its client, at most one per client,
/// and commits just after the run's end). Returns the rows.
fn commits_agree(home: &support::TempHome, standby: &str, s: &serde_json::Value, lost: i64) -> i64 {
    let fb = tidebench::instance::find(&home.home, standby).expect("the instance");
    assert_eq!(
        support::psql(&fb, "postgres", "SELECT pg_is_in_recovery()"),
        "f"
    );
    let rows = support::num(&fb, "SELECT count(*) FROM pgbench_history") as i64;
    let committed = support::committed_over_run(s);
    assert!(committed > 0, "{s}");
    let cut = s["totals"]["failed"].as_i64().unwrap_or(0) + 2;
    eprintln!("history rows {rows}, lost {lost}, clients' commits {committed}");
    assert!(
        committed <= rows + lost && rows <= committed + cut,
        "history rows {rows}, lost {lost}, clients' commits {committed} (+{cut} unknown)"
    );
    rows
}

#[test]
fn a_failed_primary_and_its_promoted_synchronous_standby_lose_no_commit() {
    let home = support::temp_home();
    let primary = primary(&home, "fa");
    let cfg = home.path().join("failover.toml");
    // The form: the primary killed at t, its standby promoted at t + 1 s.
    let events = "[[event]]\nat = \"2s\"\naction = \"fail\"\ntarget = \"fa\"\n\
                  [[event]]\nat = \"3s\"\naction = \"promote\"\ntarget = \"fb\"\n";
    std::fs::write(&cfg, run_file("fa", "fb", 8, events)).unwrap();
    // No standby yet: refused before anything starts, naming the command that makes one.
    let o = tb(&home, &["run", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("tidebench instance start fb --standby-of fa"),
        "{}",
        text(&o)
    );
    // The standby takes the primary's settings.
    ok(tb(
        &home,
        &["instance", "start", "fb", "--standby-of", "fa", "--sync"],
    ));
    let status = text(&ok(tb(&home, &["instance", "status"])));
    assert!(status.contains("standby of fa (sync)"), "{status}");
    let names = support::psql(&primary, "postgres", "SHOW synchronous_standby_names");
    assert!(
        names.starts_with("ANY 1") && names.contains("fb"),
        "{names}"
    );
    support::prepare_tpcb(&home, "instance:fa,fb");

    let (out, s, said) = run(&home, &cfg);
    assert_eq!(steps(&s, 0), vec![("fail".into(), "ok".into())], "{s}");
    assert_eq!(steps(&s, 1), vec![("promote".into(), "ok".into())], "{s}");
    let e = &s["events"][0];
    let t = f(&e["steps"][0]["started_s"]);
    let promote = &s["events"][1]["steps"][0];
    let promote = (f(&promote["started_s"]), f(&promote["ended_s"]));
    assert!(t >= 2.0 && promote.0 >= 3.0, "on the run's clock: {s}");

    // The first commit after the kill is on the promoted standby: the old primary is dead,
    // and the standby took no writes before its promotion began.
    let all = &e["recovery"][0];
    let first = t + f(&all["first_commit_s"]);
    assert!(
        first >= promote.0,
        "first commit {first} before {promote:?}: {e}"
    );
    assert!(all["recovered_s"].as_f64().is_some(), "recovered: {e}");
    // Nothing commits between the kill and the promotion a second later: the first whole
    // second after the event is below full rate, so not all of them are at it.
    let share = f(&all["full_rate_share"]);
    assert!((0.0..1.0).contains(&share), "{e}");
    assert!(all["reconnects"].as_u64().unwrap() > 0, "{e}");
    let status = text(&ok(tb(&home, &["instance", "status"])));
    assert!(
        status.contains("primary (promoted, was standby of fa)"),
        "{status}"
    );

    // Nothing the clients saw commit is lost: each tpcb transaction adds one history row, and
    // the promoted server holds at least as many rows as commits the clients counted.
    let lost = s["events"][1]["lost_commits"]
        .as_i64()
        .unwrap_or_else(|| panic!("lost commits counted: {s}"));
    let rows = commits_agree(&home, "fb", &s, 0);
    assert!(lost >= 0 && rows > 0, "{s}");
    // And per host: the clients' commits on the old primary before the kill, counted by its
    // WAL (its statistics died with it), and on the new primary after, by its own counters.
    let hosts = per_host(&s);
    assert_eq!(hosts.len(), 2, "{s}");
    let (fa, fb) = (hosts[0], hosts[1]);
    assert_eq!(
        (fa["host"].as_str(), fa["source"].as_str()),
        (Some("fa"), Some("wal")),
        "{fa}"
    );
    assert_eq!(
        (fb["host"].as_str(), fb["source"].as_str()),
        (Some("fb"), Some("pg_stat_database")),
        "{fb}"
    );
    for h in [fa, fb] {
        assert_eq!(h["agrees"], true, "{h}");
        assert!(h["client_committed"].as_i64().unwrap() > 0, "{h}");
    }
    assert_eq!(
        fa["client_committed"].as_i64().unwrap() + fb["client_committed"].as_i64().unwrap(),
        support::committed_over_run(&s),
        "every commit landed on one host: {s}"
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("Commits per host"), "the report's table");
    for line in said.lines().filter(|l| l.contains("server: host ")) {
        eprintln!("{line}");
    }
    assert!(
        said.contains("host fa of instance:fa,fb") && said.contains("commits in its WAL"),
        "{said}"
    );
    // Before the kill, the primary's lag to its standby was sampled.
    let rows = tidebench::results::system::read(&out)
        .expect("system.csv")
        .expect("sampled");
    let lag: Vec<f64> = rows
        .iter()
        .filter(|r| r.metric == "replication_lag_bytes" && r.t_s < t)
        .map(|r| r.value)
        .collect();
    assert!(!lag.is_empty() && lag.iter().all(|b| *b >= 0.0), "{lag:?}");
    let csv = std::fs::read_to_string(out.join("events.csv")).unwrap();
    assert!(csv.contains(",promote,fb,promote,"), "{csv}");
}

/// The asynchronous test's instances, declared in its run file: the primary with the test
/// settings but `synchronous_commit` on (see [`primary`]), the standby after it.
const DECLARED: &str = "[[instance]]\nname = \"ga\"\n\
    settings = { autovacuum = false, shared_buffers = \"128MB\", fsync = false, \
    full_page_writes = false, max_connections = 100, synchronous_commit = \"on\" }\n\
    [[instance]]\nname = \"gb\"\nstandby_of = \"ga\"\n";

#[test]
fn an_asynchronous_standby_reports_the_commits_its_failover_lost() {
    let home = support::temp_home();
    let cfg = home.path().join("failover.toml");
    let refused = |file: String| {
        std::fs::write(&cfg, file).unwrap();
        let o = tb(&home, &["run", cfg.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        text(&o)
    };
    // Refused before anything starts, with the fix: a promote of a primary, and a declared
    // standby whose primary is neither declared nor in the home.
    let promote = "[[event]]\nat = \"2s\"\naction = \"promote\"\ntarget = \"gb\"\n";
    let file = |events: &str| format!("{}{DECLARED}", run_file("ga", "gb", 7, events));
    let said = refused(file(&promote.replace("gb", "ga")));
    assert!(said.contains("'ga' is not a standby"), "{said}");
    assert!(said.contains("--standby-of ga"), "{said}");
    let lone = file(promote)
        .replace("instance:ga,gb", "instance:gb")
        .replace(
            DECLARED,
            "[[instance]]\nname = \"gb\"\nstandby_of = \"ga\"\n",
        );
    let said = refused(lone);
    assert!(
        said.contains("its primary 'ga' is neither declared in the run file nor"),
        "{said}"
    );
    assert!(said.contains("tidebench instance start ga"), "{said}");
    let none = tidebench::instance::list(&home.home).unwrap_or_default();
    assert!(none.is_empty(), "the refused runs made no instance");

    // `prepare` makes both from the run file, the standby copied from the loaded primary.
    std::fs::write(&cfg, file("")).unwrap();
    ok(tb(&home, &["prepare", cfg.to_str().unwrap()]));
    let status = text(&ok(tb(&home, &["instance", "status"])));
    assert!(status.contains("standby of ga (async)"), "{status}");
    // Now the standby's primary is in the home but not in this run: no client would follow.
    let said = refused(run_file("ga", "gb", 7, promote).replace("instance:ga,gb", "instance:gb"));
    assert!(
        said.contains("its primary 'ga' is not in the run"),
        "{said}"
    );
    assert!(said.contains("instance:ga,gb"), "{said}");

    // The standby stops streaming a while before the kill (an empty `primary_conninfo`, read
    // at a reload), so the primary commits what it never receives: the one-step form then
    // kills the primary and promotes the standby a second later.
    let cut_off = "[[event]]\nat = \"1s\"\naction = \"sql\"\ntarget = \"gb\"\n\
                   sql = \"ALTER SYSTEM SET primary_conninfo = ''\"\n\
                   [[event]]\nat = \"1200ms\"\naction = \"sql\"\ntarget = \"gb\"\n\
                   sql = \"SELECT pg_reload_conf()\"\n";
    let failover = "[[event]]\nat = \"3s\"\naction = \"failover\"\ntarget = \"ga\"\n\
                    standby = \"gb\"\npromote_after = \"1s\"\n";
    std::fs::write(&cfg, file(&format!("{cut_off}{failover}"))).unwrap();
    let (_, s, _) = run(&home, &cfg);
    for k in 0..2 {
        assert_eq!(steps(&s, k), vec![("sql".into(), "ok".into())], "{s}");
    }
    assert_eq!(
        steps(&s, 2),
        vec![
            ("fail".into(), "ok".into()),
            ("promote".into(), "ok".into())
        ],
        "{s}"
    );
    // Counted from the old primary's WAL; the new primary's history rows plus those account
    // for every commit the clients saw (the rows alone fall short when the standby missed some).
    let lost = s["events"][2]["lost_commits"]
        .as_i64()
        .unwrap_or_else(|| panic!("lost commits counted: {s}"));
    commits_agree(&home, "gb", &s, lost);
    // Each host agrees: the lost commits are in the old primary's WAL, where the clients
    // saw them commit.
    let hosts = per_host(&s);
    assert_eq!(hosts.len(), 2, "{s}");
    assert!(hosts.iter().all(|h| h["agrees"] == true), "{s}");
    let detail = s["events"][2]["steps"][1]["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{lost} commits on the old primary")),
        "{detail}"
    );
}
