//! An OOM kill provoked on purpose (issue 15, item 5; issue 14's OOM check): a managed instance
//! whose memory limit (96 MiB) is far below its shared_buffers (256 MB), on a host without
//! swap, so the shared buffers a select-only load fills from a scale-10 table (about 150 MB)
//! cannot be reclaimed. The kernel's OOM killer takes backends, the postmaster reinitializes
//! (crash recovery) and the run goes on: `summary.json` says so with times, the console warns,
//! traffic resumes after the first incident, and the statistics session reads the restarted
//! server again. The same, one level up: a sweep whose first point OOMs records the incidents
//! with that point, flags it on its page, and goes on to a clean second point.

use std::path::Path;

use tidebench::instance::{self, InstanceOptions};

use crate::support::{self, output_text as text, run_tidebench as tb};

/// The limit that OOMs: well below the buffers the load touches, above tidebench's minimum.
const SMALL_MEMORY: u64 = 96 << 20;

/// (interval start, committed) of every row of `intervals.csv`.
fn committed_by_interval(dir: &Path) -> Vec<(f64, u64)> {
    let text = std::fs::read_to_string(dir.join("intervals.csv")).expect("read intervals.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (start, committed) = (col("interval_start_s"), col("committed"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[start].parse().unwrap(), f[committed].parse().unwrap())
        })
        .collect()
}

/// Starts instance `name` with a roomy limit and 256 MB of shared_buffers and loads
/// select-only at scale 10 into it (the load itself would be OOM-killed under the small
/// limit); returns its target.
fn loaded_instance(home: &support::TempHome, name: &str) -> String {
    let big = InstanceOptions {
        memory: Some(1 << 30),
        settings: vec![("shared_buffers".into(), "256MB".into())],
        ..InstanceOptions::default()
    };
    support::start_with(home, name, big);
    let target = format!("instance:{name}");
    let o = tb(
        home,
        &[
            "prepare",
            "-w",
            "select-only",
            "-s",
            "10",
            "--target",
            &target,
        ],
    );
    assert!(o.status.success(), "prepare failed: {}", text(&o));
    target
}

#[test]
fn an_oom_kill_is_recorded_and_the_run_goes_on() {
    let Some(home) = support::home_with_cgroups("an OOM kill") else {
        return;
    };
    // Cgroups are per host: a name of this test's own, unique to the process.
    let name = format!("oomt{}", std::process::id());
    let target = loaded_instance(&home, &name);
    let small = InstanceOptions {
        memory: Some(SMALL_MEMORY),
        ..InstanceOptions::default()
    };
    let (inst, _) = instance::reconfigure(&home.home, &name, &small)
        .unwrap_or_else(|e| panic!("lowering the memory limit failed: {e}"));
    let postmaster = inst.pid().expect("the server runs");
    // Protected as PostgreSQL's docs advise where the kernel lets tidebench lower the score;
    // either way every child of the postmaster is the OOM killer's choice before it.
    // None once the process is gone (a child may exit while it is looked at).
    let score = |pid: &str| -> Option<i32> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).ok()?;
        text.trim().parse().ok()
    };
    let pm = postmaster.to_string();
    let pm_score = score(&pm).expect("the postmaster's oom_score_adj");
    if tidebench::instance::can_lower_oom_scores() {
        assert_eq!(pm_score, -1000, "the postmaster's oom_score_adj");
    }
    let children = std::fs::read_to_string(format!("/proc/{pm}/task/{pm}/children")).unwrap();
    assert!(!children.trim().is_empty());
    // A child just forked has the postmaster's score until its first act writes its own
    // (PG_OOM_ADJUST_FILE): on a busy machine it can be read before that, so each child is
    // waited for, and one that exited meanwhile is passed over.
    for child in children.split_whitespace() {
        support::poll_until(
            &format!("child {child} of the postmaster scored above it"),
            || score(child).is_none_or(|s| s > pm_score),
        );
    }
    let out = home.path().join("res-oom");
    let out_arg = out.to_string_lossy().to_string();
    let o = tb(
        &home,
        &[
            "run",
            "-w",
            "select-only",
            "-c",
            "8",
            "-T",
            "10s",
            "--interval",
            "1s",
            "--target",
            &target,
            "--out",
            &out_arg,
        ],
    );
    let console = text(&o);
    // Failed transactions do not fail a run: it is complete, exit 0.
    assert!(o.status.success(), "run failed: {console}");
    let s = support::summary(&out);
    assert_eq!(s["complete"], true, "{console}");
    let incidents = s["incidents"]
        .as_array()
        .unwrap_or_else(|| panic!("no incidents in summary.json: {console}"));
    let of_kind = |kind: &str| -> Vec<&serde_json::Value> {
        incidents.iter().filter(|i| i["kind"] == kind).collect()
    };
    let ooms = of_kind("oom_kill");
    let restarts = of_kind("crash_restart");
    assert!(!ooms.is_empty(), "no oom_kill incident: {incidents:?}");
    assert!(
        !restarts.is_empty(),
        "no crash_restart incident: {incidents:?}"
    );
    assert!(!of_kind("backend_killed").is_empty(), "{incidents:?}");
    // Nothing to replay after the clean restart: crash recovery itself never ran out.
    assert!(of_kind("server_down").is_empty(), "{incidents:?}");
    for i in incidents {
        assert_eq!(i["instance"], name.as_str(), "{i}");
        assert!(i["count"].as_u64().unwrap() >= 1, "{i}");
        assert!(!i["detail"].as_str().unwrap().is_empty(), "{i}");
    }
    let first = ooms[0]["t_s"].as_f64().unwrap();
    assert!(first > 0.0 && first <= 11.0, "{first}");
    // The console said it as it happened, and again in the summary.
    assert!(
        console.contains(&format!("warning: instance '{name}' at ")),
        "{console}"
    );
    assert!(
        console.contains(&format!("incidents: instance '{name}': ")),
        "{console}"
    );
    // Traffic resumed: a whole interval after the first incident committed transactions.
    let rows = committed_by_interval(&out);
    assert!(
        rows.iter()
            .any(|(start, n)| *start >= first + 1.0 && *n > 0),
        "nothing committed after the first incident at {first} s: {rows:?}"
    );
    // The statistics session reconnected: the server is read after the first restart, and its
    // delta is there, marked as covering a restart.
    let restart = restarts[0]["t_s"].as_f64().unwrap();
    let system = tidebench::results::system::read(&out).unwrap().unwrap();
    assert!(
        system
            .iter()
            .any(|r| r.source.starts_with("db:") && r.metric == "xact_commit" && r.t_s > restart),
        "the server's counters were not read after the restart at {restart} s"
    );
    let server = s["server"].as_array().unwrap();
    assert_eq!(server.len(), 1, "the restarted server's delta is kept: {s}");
    assert_eq!(server[0]["restarted"], true, "{}", server[0]);
    assert!(
        console.contains("the server restarted during the run"),
        "{console}"
    );
    // Memory metrics of the cgroup, and the postmaster survived every OOM kill.
    for metric in ["oom_events", "mem_refaults", "mem_limit_hits"] {
        assert!(
            system.iter().any(|r| r.metric == metric),
            "no {metric} in system.csv"
        );
    }
    let after = instance::find(&home.home, &name).unwrap().pid();
    assert_eq!(after, Some(postmaster), "the postmaster was replaced");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("<h3>Incidents</h3>") && page.contains("oom_kill"));
}

/// Issue 14's check at the experiment's level: a point whose VM is too small for its shared
/// buffers is OOM-killed, its record and the page say so, and the series goes on to the next
/// point, which runs clean.
#[test]
fn an_oom_killed_point_is_recorded_and_the_experiment_goes_on() {
    let Some(home) = support::home_with_cgroups("an OOM kill") else {
        return;
    };
    let name = format!("oomx{}", std::process::id());
    let target = loaded_instance(&home, &name);
    let out = home.path().join("sweep-oom");
    let out_arg = out.to_string_lossy().to_string();
    let o = tb(
        &home,
        &[
            "sweep",
            "-S",
            "--scale",
            "10",
            "-c",
            "8",
            "-T",
            "6s",
            "--target",
            &target,
            "--vary",
            "instance.memory=96MB,1GB",
            "--out",
            &out_arg,
        ],
    );
    let console = text(&o);
    assert!(o.status.success(), "the sweep failed: {console}");
    let e = support::experiment(&out);
    assert_eq!(e["complete"], true, "{console}");
    let runs: Vec<&serde_json::Value> = e["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["runs"].as_array().unwrap())
        .collect();
    assert_eq!(runs.len(), 2);
    let (small, roomy) = (runs[0], runs[1]);
    assert!(
        small["incidents"]["oom_kill"].as_u64().unwrap_or(0) >= 1,
        "the 96MB point's record has no OOM kill: {small}"
    );
    assert!(
        small["incidents"]["crash_restart"].as_u64().unwrap_or(0) >= 1,
        "{small}"
    );
    assert!(
        roomy.get("incidents").is_none(),
        "the 1GB point had incidents: {roomy}"
    );
    assert!(roomy["tps"].as_f64().unwrap() > 0.0, "{roomy}");
    assert!(console.contains("complete with incidents ("), "{console}");
    let page = std::fs::read_to_string(out.join("experiment.html")).unwrap();
    assert!(
        page.contains("1 run(s) had incidents"),
        "the page does not flag it"
    );
}
