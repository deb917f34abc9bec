//! Events in a run (issue 53): a run file schedules a kill of a real local instance and its
//! restart; the run goes on, and its own records agree: the steps in `events.csv` and
//! summary.json, the first commit after the event, the recovery and the down window. Bad
//! events are refused before anything starts (exit 2, naming the fix).

use crate::support::{self, ok, output_text as text, run_tidebench as tb, summary};

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A steady rate, far below what the machine can do, so the rate before an event is the rate
/// the run is back to after it (an unthrottled rate on a shared machine varies by more than
/// the 10 % that recovery allows).
fn run_file(instance: &str) -> String {
    format!(
        "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
         txn_timeout = \"1s\"\nrate = 500\n\
         [[group]]\nname = \"A\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"{instance}\"\n\
         [[phase]]\nname = \"only\"\nduration = \"10s\"\nshares = {{ A = 100 }}\n"
    )
}

/// Writes the run file `name` on `instance` with `events` after the common settings, prepares
/// it and runs it into `res/`: the run's output and its results dir.
fn prepare_and_run(
    home: &support::TempHome,
    name: &str,
    instance: &str,
    events: &str,
) -> (std::process::Output, std::path::PathBuf) {
    run_with(home, name, &format!("{}{events}", run_file(instance)))
}

/// Writes the run file `name` holding `text`, prepares it and runs it into `res/`.
fn run_with(
    home: &support::TempHome,
    name: &str,
    text: &str,
) -> (std::process::Output, std::path::PathBuf) {
    let cfg_path = home.path().join(name);
    std::fs::write(&cfg_path, text).unwrap();
    let cfg = cfg_path.to_str().unwrap();
    ok(tb(home, &["prepare", cfg]));
    let out = home.path().join("res");
    let o = tb(home, &["run", cfg, "--out", out.to_str().unwrap()]);
    (o, out)
}

#[test]
fn a_killed_instance_restarts_on_schedule_and_the_run_accounts_its_recovery() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "eva");
    let (o, out) = prepare_and_run(
        &home,
        "kill.toml",
        "eva",
        "[[event]]\nat = \"2s\"\naction = \"fail\"\ntarget = \"eva\"\nrestart_after = \"2s\"\n",
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("event 1: at 2s: fail eva, restarted after 2s"),
        "{}",
        text(&o)
    );
    let s = summary(&out);
    let e = &s["events"][0];
    let steps = e["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2, "{e}");
    assert_eq!(
        (&steps[0]["step"], &steps[0]["outcome"]),
        (&"fail".into(), &"ok".into()),
        "{e}"
    );
    assert_eq!(
        (&steps[1]["step"], &steps[1]["outcome"]),
        (&"restart".into(), &"ok".into()),
        "{e}"
    );
    let t = f(&steps[0]["started_s"]);
    let restart = (f(&steps[1]["started_s"]), f(&steps[1]["ended_s"]));
    // On the run's clock: each step no earlier than scheduled (the restart 2 s after the
    // event's time, 2 s).
    assert!(t >= 2.0 && restart.0 >= 4.0, "{e}");
    let all = &e["recovery"][0];
    assert_eq!(all["scope"], "all");
    // The first commit after the kill comes once the restart began, and at most 2 s (the
    // reconnection backoff) after the server took connections again.
    let first = t + f(&all["first_commit_s"]);
    assert!(
        first >= restart.0 - 0.05,
        "first commit {first} before the restart {restart:?}: {e}"
    );
    assert!(
        first <= restart.1 + 2.0 + 0.05,
        "first commit {first} late: {e}"
    );
    let back = f(&all["recovered_s"]);
    assert!(t + back >= first - 0.05, "{e}");
    assert!(
        all["failed"].as_u64().unwrap() > 0 || all["reconnects"].as_u64().unwrap() > 0,
        "{e}"
    );
    // The down window the clients saw is the same gap.
    let down = s["down_windows"].as_array().expect("a down window");
    let w = down
        .iter()
        .find(|w| f(&w["from_s"]) >= t - 0.05)
        .unwrap_or_else(|| panic!("no window after {t}: {down:?}"));
    let to = f(&w["to_s"]);
    assert!(f(&w["from_s"]) <= restart.0, "{w}");
    // It ends when the last lost session is back: after the restart began, and at most one
    // reconnection backoff (2 s) after the server took connections again. Each client waits
    // out its own backoff, so the window may end after the first commit, which the first
    // session back makes.
    assert!(
        to >= restart.0 - 0.05 && to <= restart.1 + 2.0 + 0.1,
        "window {w}, restart {restart:?}, first commit {first}"
    );
    assert!(
        all["reconnects"].as_u64().unwrap() >= w["sessions_lost"].as_u64().unwrap(),
        "the sessions lost in the window are the event's reconnects: {e} {w}"
    );
    // The run went on: commits after the restart, and events.csv says the same two steps.
    assert!(s["totals"]["committed"].as_u64().unwrap() > 0, "{s}");
    let csv = std::fs::read_to_string(out.join("events.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(
        rows[1].starts_with("1,2.000,fail,eva,fail,") && rows[1].contains(",ok,"),
        "{csv}"
    );
    assert!(
        rows[2].starts_with("1,2.000,fail,eva,restart,") && rows[2].contains(",ok,"),
        "{csv}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("<h3>Events</h3>") && page.contains("Dashed purple"),
        "report"
    );
    // The time down is the window's.
    let down_s = f(&all["down_s"]);
    assert!(
        (down_s - (to - f(&w["from_s"]))).abs() <= 0.1,
        "down {down_s}: {w}"
    );
    // compare lines the run up with itself event by event, from the same account.
    let dir = out.to_str().unwrap();
    let o = ok(tb(&home, &["compare", dir, dir, "--format", "json"]));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("compare's JSON");
    let r = &j["recoveries"][0];
    assert_eq!(
        (&r["event"], &r["scope"]),
        (&1.into(), &"all".into()),
        "{j}"
    );
    for side in [0, 1] {
        let c = &r["sides"][side];
        assert_eq!(c["first_commit_s"], all["first_commit_s"], "{j}");
        assert_eq!(c["recovered_s"], all["recovered_s"], "{j}");
        assert_eq!(c["down_s"], all["down_s"], "{j}");
        assert_eq!(c["failed"].as_f64(), all["failed"].as_f64(), "{j}");
    }
    let o = ok(tb(&home, &["compare", dir, dir]));
    assert!(
        text(&o).contains("recoveries, event by event:"),
        "{}",
        text(&o)
    );
}

#[test]
fn bad_events_are_refused_before_anything_starts() {
    let home = support::temp_home();
    let cases = [
        (
            "at = \"1s\"\naction = \"fail\"\ntarget = \"nope\"\n",
            "unknown target 'nope'",
        ),
        (
            "at = \"30s\"\naction = \"fail\"\ntarget = \"eva\"\n",
            "past the run's end",
        ),
        (
            "at = \"1s\"\naction = \"melt\"\ntarget = \"eva\"\n",
            "unknown action 'melt'",
        ),
        (
            "at = \"1s\"\naction = \"freeze\"\ntarget = \"eva\"\n",
            "needs `for`",
        ),
        (
            "phase = \"peak\"\naction = \"fail\"\ntarget = \"eva\"\n",
            "phase 'peak'",
        ),
    ];
    for (event, says) in cases {
        let cfg_path = home.path().join("bad.toml");
        std::fs::write(&cfg_path, format!("{}[[event]]\n{event}", run_file("eva"))).unwrap();
        let o = tb(&home, &["run", cfg_path.to_str().unwrap(), "--dry-run"]);
        assert_eq!(o.status.code(), Some(2), "{event}: {}", text(&o));
        assert!(text(&o).contains(says), "{event}: {}", text(&o));
        assert!(
            text(&o).contains("bad.toml:"),
            "names the file and line: {}",
            text(&o)
        );
    }
    // A well-formed event on an instance this home does not have: refused before the run
    // starts anything (the dry run shows it in the plan).
    let cfg_path = home.path().join("good.toml");
    std::fs::write(
        &cfg_path,
        format!("{}[[event]]\nphase = \"only\"\nat = \"1s\"\naction = \"sql\"\ntarget = \"eva\"\nsql = \"CHECKPOINT\"\n", run_file("eva")),
    )
    .unwrap();
    let o = ok(tb(&home, &["run", cfg_path.to_str().unwrap(), "--dry-run"]));
    assert!(
        text(&o).contains("event 1: at 1s: sql on eva/postgres: CHECKPOINT"),
        "{}",
        text(&o)
    );
    let o = tb(&home, &["run", cfg_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no managed instance 'eva'"),
        "{}",
        text(&o)
    );
    assert!(
        !home.path().join("instances").join("eva").exists(),
        "nothing was created"
    );
    // A VM the run declares: its balloon cannot give it more than it boots with, and its CPUs
    // do not change while it runs. Refused before it boots.
    let vm = "[[instance]]\nname = \"v\"\nhypervisor = \"qemu\"\nmemory = \"512MiB\"\n";
    for (resize, says) in [
        (
            "memory = \"1GiB\"",
            "its balloon can only take memory away; give at most 512MiB",
        ),
        ("cpus = 1.0", "a VM's CPUs cannot change while it runs"),
    ] {
        std::fs::write(
            &cfg_path,
            format!(
                "{}{vm}[[event]]\nat = \"1s\"\naction = \"resize\"\ntarget = \"v\"\n{resize}\n",
                run_file("v")
            ),
        )
        .unwrap();
        let o = tb(&home, &["run", cfg_path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
        assert!(!home.path().join("instances").join("v").exists());
    }
}

#[test]
fn a_freeze_is_thawed_on_schedule_and_a_statement_is_timed() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "eva");
    let (o, out) = prepare_and_run(
        &home,
        "freeze.toml",
        "eva",
        "[[event]]\nat = \"2s\"\naction = \"freeze\"\ntarget = \"eva\"\nfor = \"1s\"\n\
         [[event]]\nat = \"5s\"\naction = \"sql\"\ntarget = \"eva\"\nsql = \"CHECKPOINT\"\n",
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = summary(&out);
    let freeze = &s["events"][0];
    let steps: Vec<(&str, &str)> = freeze["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["step"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(steps, vec![("freeze", "ok"), ("thaw", "ok")], "{freeze}");
    let t = f(&freeze["steps"][0]["started_s"]);
    let thawed = f(&freeze["steps"][1]["started_s"]);
    // Thawed no earlier than the event's time plus its length (2 s + 1 s).
    assert!(t >= 2.0 && thawed >= 3.0, "{freeze}");
    // Nothing commits while the server is stopped: the first commit after it is after the thaw.
    let all = &freeze["recovery"][0];
    assert!(t + f(&all["first_commit_s"]) >= thawed - 0.05, "{freeze}");
    assert!(all["recovered_s"].is_number(), "{freeze}");
    let sql = &s["events"][1];
    assert_eq!(sql["steps"][0]["outcome"], "ok", "{sql}");
    assert!(sql["steps"][0]["ended_s"].is_number(), "{sql}");
    // The server is running and answering after the run.
    assert_eq!(support::psql(&inst, "postgres", "SELECT 1").trim(), "1");
}

/// Whether `stress-ng` is on PATH (the noise event's tool).
fn has_stress_ng() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("stress-ng").is_file()))
}

/// The steps of the event with `action` in summary.json, as (step, outcome, detail).
fn steps_of(s: &serde_json::Value, action: &str) -> Vec<(String, String, String)> {
    let e = s["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["action"] == action)
        .unwrap_or_else(|| panic!("no {action} event: {s}"));
    e["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|st| {
            let field = |k: &str| st[k].as_str().unwrap_or_default().to_string();
            (field("step"), field("outcome"), field("detail"))
        })
        .collect()
}

#[test]
fn a_resize_is_recorded_and_undone() {
    let test = "resize events";
    let Some(home) = support::home_with_cgroups(test) else {
        return;
    };
    // Cgroups are per host: a name of this test's own.
    let name = format!("evr{}", std::process::id());
    let opts = tidebench::instance::InstanceOptions {
        cpus: Some(1.0),
        ..Default::default()
    };
    let inst = support::start_with(&home, &name, opts);
    let cg = inst
        .cgroup_paths()
        .expect("an instance with cpus has a cgroup");
    let (quota_file, full, half) = match cg.version {
        tidebench::instance::CgroupVersion::V1 => {
            (cg.cpu.join("cpu.cfs_quota_us"), "100000", "50000")
        }
        tidebench::instance::CgroupVersion::V2 => {
            (cg.cpu.join("cpu.max"), "100000 100000", "50000 100000")
        }
    };
    let quota = || {
        std::fs::read_to_string(&quota_file)
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(quota(), full);
    // The server itself reads its quota while the resize holds (it stays until the run's end).
    let (o, out) = prepare_and_run(
        &home,
        "resize.toml",
        &name,
        &format!(
            "[[event]]\nat = \"1s\"\naction = \"resize\"\ntarget = \"{name}\"\ncpus = 0.5\n\
             [[event]]\nat = \"3s\"\naction = \"sql\"\ntarget = \"{name}\"\n\
             sql = \"SELECT pg_read_file('{}')\"\n",
            quota_file.display()
        ),
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = summary(&out);
    let resize = steps_of(&s, "resize");
    let said: Vec<(&str, &str)> = resize
        .iter()
        .map(|(st, outcome, _)| (st.as_str(), outcome.as_str()))
        .collect();
    assert_eq!(said, [("resize", "ok"), ("restore", "ok")], "{resize:?}");
    assert!(resize[0].2.contains("cpus=0.5"), "{resize:?}");
    assert!(resize[1].2.contains("cpus=1"), "{resize:?}");
    let sql = steps_of(&s, "sql");
    assert_eq!(sql[0].1, "ok", "{sql:?}");
    assert!(
        sql[0].2.ends_with(&format!(": {half}")),
        "the server saw half a CPU: {sql:?}"
    );
    // Undone at the run's end, and the instance's own record untouched.
    assert_eq!(quota(), full);
    let again = tidebench::instance::find(&home.home, &name).unwrap();
    assert_eq!(again.limits(), (Some(1.0), None));

    let csv = std::fs::read_to_string(out.join("events.csv")).unwrap();
    let steps: Vec<(&str, &str)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[4], f[7])
        })
        .collect();
    for step in ["resize", "restore", "sql"] {
        assert!(steps.contains(&(step, "ok")), "{step} in {csv}");
    }
    assert_eq!(steps.len(), 3, "{csv}");
}

/// The rows of a results CSV (`intervals.csv`, `system.csv`) as maps from column to field.
fn csv_rows(path: &std::path::Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("a header")
        .split(',')
        .map(String::from)
        .collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

/// A CPU noise event of one core beside an unthrottled tenant: the noise group's CPU, as the
/// run sampled it from its cgroup, is the asked core ±10 % and appears only between the
/// noise's start and its end; the tenant's rate is lower inside that window than in every
/// second before it. The noise group outweighs everything else on the host and its quota caps
/// it (see `instance::noise`), so it gets its core on a busy machine too, and it takes that
/// core from the tenant whatever else runs. Every bound comes from the steps the run recorded.
#[test]
fn cpu_noise_takes_its_size_only_in_its_window_and_the_tenant_slows_then() {
    let test = "CPU noise's size and the tenant's dip";
    let Some(home) = support::home_with_cgroups(test) else {
        return;
    };
    if !has_stress_ng() {
        support::skip(test, "stress-ng", "not on PATH");
        return;
    }
    let _inst = support::start_instance(&home, "evn");
    let (o, out) = run_with(
        &home,
        "noise.toml",
        "clients = 4\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\nsample = \"500ms\"\n\
         txn_timeout = \"2s\"\n\
         [[group]]\nname = \"A\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"evn\"\n\
         [[phase]]\nname = \"only\"\nduration = \"7s\"\nshares = { A = 100 }\n\
         [[event]]\nat = \"3s\"\naction = \"noise\"\nnoise = \"cpu\"\ncpus = 1\nfor = \"3s\"\n",
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = summary(&out);
    let noise = steps_of(&s, "noise");
    let said: Vec<(&str, &str)> = noise
        .iter()
        .map(|(st, outcome, _)| (st.as_str(), outcome.as_str()))
        .collect();
    assert_eq!(said, [("noise", "ok"), ("quiet", "ok")], "{noise:?}");
    let (how, group) = noise[0].2.split_once(" in ").expect("the noise group");
    assert_eq!(how, "stress-ng --cpu 1", "{noise:?}");
    assert!(
        !std::path::Path::new(group).exists(),
        "the noise group {group} is removed"
    );
    let e = s["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["action"] == "noise")
        .expect("the noise event");
    let step = |k: usize, field: &str| f(&e["steps"][k][field]);
    // The window: from the noise's start to its end, as the run recorded them.
    let (began, running, quieting, quiet) = (
        step(0, "started_s"),
        step(0, "ended_s"),
        step(1, "started_s"),
        step(1, "ended_s"),
    );
    assert!(began >= 3.0 && quieting >= 6.0, "{e}");

    // The noise group's CPU, sampled: only inside the window, and one core ±10 % there. A
    // round reads the group within its `round_ms` of its `t_s`.
    let system = csv_rows(&out.join("system.csv"));
    let value = |r: &std::collections::HashMap<String, String>| -> (f64, f64) {
        (r["t_s"].parse().unwrap(), r["value"].parse().unwrap())
    };
    let round_s: std::collections::HashMap<String, f64> = system
        .iter()
        .filter(|r| r["source"] == "sampler" && r["metric"] == "round_ms")
        .map(|r| (r["t_s"].clone(), value(r).1 / 1e3))
        .collect();
    let cpu: Vec<(f64, f64, f64)> = system
        .iter()
        .filter(|r| r["source"] == "noise:1" && r["metric"] == "cpu_seconds")
        .map(|r| {
            let (t, v) = value(r);
            (t, t + round_s[&r["t_s"]], v)
        })
        .collect();
    for (t, read_by, _) in &cpu {
        assert!(
            *read_by >= began && *t <= quiet,
            "a noise sample at {t} s, outside {began}-{quiet}: {cpu:?}"
        );
    }
    let inside: Vec<&(f64, f64, f64)> = cpu
        .iter()
        .filter(|(t, read_by, _)| *t >= running && *read_by <= quieting)
        .collect();
    let (first, last) = (inside.first().unwrap(), inside.last().unwrap());
    assert!(last.0 - first.0 >= 1.5, "too few samples inside: {cpu:?}");
    let cores = (last.2 - first.2) / (last.0 - first.0);
    assert!(
        (cores - 1.0).abs() <= 0.1,
        "the noise used {cores:.3} cores, not 1 ±10 %: {cpu:?}"
    );
    eprintln!(
        "CPU noise: {cores:.3} cores from {:.1} to {:.1} s (window {began:.2}-{quiet:.2} s)",
        first.0, last.0
    );

    // The tenant's commits per second: lower inside the window than in any second before it.
    let rate: Vec<(f64, f64, f64)> = csv_rows(&out.join("intervals.csv"))
        .iter()
        .map(|r| {
            let (start, len): (f64, f64) = (
                r["interval_start_s"].parse().unwrap(),
                r["interval_length_s"].parse().unwrap(),
            );
            let committed: f64 = r["committed"].parse().unwrap();
            (start, start + len, committed / len)
        })
        .collect();
    // The first second holds the clients' start.
    let before: Vec<f64> = rate
        .iter()
        .filter(|(from, to, _)| *from >= 1.0 && *to <= began)
        .map(|r| r.2)
        .collect();
    let during: Vec<f64> = rate
        .iter()
        .filter(|(from, to, _)| *from >= running && *to <= quieting)
        .map(|r| r.2)
        .collect();
    assert!(before.len() >= 2 && during.len() >= 2, "{rate:?}");
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (was, then) = (mean(&before), mean(&during));
    assert!(
        then <= 0.8 * was,
        "the tenant's rate fell from {was:.0}/s to only {then:.0}/s: {rate:?}"
    );
    assert!(
        before.iter().all(|r| *r > then),
        "a second before the noise was as slow as the noise's window ({then:.0}/s): {rate:?}"
    );
    eprintln!("the tenant: {was:.0}/s before the noise, {then:.0}/s during it");
    // The run's report draws the noise beside the instance.
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("noise 1"), "report");
}
