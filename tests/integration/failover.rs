//! Fail-over (issue 54): a primary and its synchronous standby made by `tidebench instance
//! start --standby-of --sync`, a tpcb run on `instance:a,b` with a `failover` event: the
//! primary is killed, the standby promoted a second later, and the clients, which look for
//! the primary again on every reconnect, go on there. The run's own records say when; the
//! promoted server's `pgbench_history` holds every transaction the clients saw commit.

use crate::support::{self, ok, output_text as text, run_tidebench as tb, summary};

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Two clients at a steady rate far below the machine's, so the rate before the event is
/// the one the run returns to.
const RUN: &str = "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
    txn_timeout = \"2s\"\nrate = 100\n\
    [[group]]\nname = \"A\"\nworkload = \"tpcb\"\nscale = 1\ntarget = \"instance:fa,fb\"\n\
    [[phase]]\nname = \"only\"\nduration = \"8s\"\nshares = { A = 100 }\n\
    [[event]]\nat = \"2s\"\naction = \"failover\"\ntarget = \"fa\"\nstandby = \"fb\"\n\
    promote_after = \"1s\"\n";

#[test]
fn a_failover_promotes_the_synchronous_standby_and_loses_no_commit() {
    let home = support::temp_home();
    // The test settings turn synchronous_commit off, which would not wait for the standby.
    let primary = support::start_with(
        &home,
        "fa",
        tidebench::instance::InstanceOptions {
            settings: vec![("synchronous_commit".into(), "on".into())],
            ..Default::default()
        },
    );
    let cfg = home.path().join("failover.toml");
    std::fs::write(&cfg, RUN).unwrap();
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

    let out = home.path().join("res");
    let o = tb(
        &home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = summary(&out);
    let e = &s["events"][0];
    let steps = e["steps"].as_array().expect("steps");
    let names: Vec<(&str, &str)> = steps
        .iter()
        .map(|s| (s["step"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(names, vec![("fail", "ok"), ("promote", "ok")], "{e}");
    let t = f(&steps[0]["started_s"]);
    let promote = (f(&steps[1]["started_s"]), f(&steps[1]["ended_s"]));
    assert!(t >= 2.0 && promote.0 >= 3.0, "on the run's clock: {e}");

    // The first commit after the kill is on the promoted standby: the old primary is dead,
    // and the standby took no writes before its promotion began.
    let all = &e["recovery"][0];
    let first = t + f(&all["first_commit_s"]);
    assert!(
        first >= promote.0,
        "first commit {first} before {promote:?}: {e}"
    );
    assert!(all["recovered_s"].as_f64().is_some(), "recovered: {e}");
    assert!(all["reconnects"].as_u64().unwrap() > 0, "{e}");
    let fb = instance_named(&home, "fb");
    assert_eq!(
        support::psql(&fb, "postgres", "SELECT pg_is_in_recovery()"),
        "f"
    );
    let status = text(&ok(tb(&home, &["instance", "status"])));
    assert!(
        status.contains("primary (promoted, was standby of fa)"),
        "{status}"
    );

    // Nothing the clients saw commit is lost: each tpcb transaction adds one history row, and
    // the promoted server holds at least as many rows as commits the clients counted. It may
    // hold more: a commit the standby had flushed when the primary died, whose answer never
    // reached its client (at most one per client), and commits just after the run's end.
    let rows = support::num(&fb, "SELECT count(*) FROM pgbench_history") as i64;
    let committed = support::committed_over_run(&s);
    assert!(committed > 0, "{s}");
    let cut = s["totals"]["failed"].as_i64().unwrap_or(0) + 2;
    assert!(
        rows >= committed && rows <= committed + cut,
        "history rows {rows}, clients' commits {committed} (+{cut} unknown)"
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
    assert!(csv.contains(",failover,fa,promote,"), "{csv}");
}

/// The instance `name` of the test home.
fn instance_named(home: &support::TempHome, name: &str) -> tidebench::instance::Instance {
    tidebench::instance::find(&home.home, name).expect("the instance")
}
