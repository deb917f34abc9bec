//! Experiments on real instances with short points: a repeated sweep (medians per point), a
//! grid of two keys killed after its first run and resumed, a changed command refused, a
//! server setting varied with the instance restarted between points, and a density series
//! whose instances held their control-group limits.

use std::time::{Duration, Instant};

use serde_json::Value;
use tidebench::instance;

use crate::support::{self, ok, output_text, run_tidebench as tb};

fn runs(e: &Value) -> Vec<&Value> {
    e["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["runs"].as_array().unwrap())
        .collect()
}

fn complete_runs(e: &Value) -> usize {
    runs(e).iter().filter(|r| r["status"] == "complete").count()
}

#[test]
fn sweep_repeats_the_series_and_reports_medians() {
    let home = support::temp_home();
    support::start_instance(&home, "default");
    let out = home.path().join("sweep");
    let o = ok(tb(
        &home,
        &[
            "sweep",
            "-S",
            "--scale",
            "1",
            "--vary",
            "clients=1,2",
            "--repeat",
            "2",
            "-T",
            "2s",
            "-P",
            "0",
            "--sample",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let said = output_text(&o);
    // The data was loaded once, by the first point.
    assert_eq!(said.matches("preparing select-only").count(), 1, "{said}");
    assert!(said.contains("point 2/2 clients=2 repeat 2/2"), "{said}");
    let e = support::experiment(&out);
    assert_eq!(e["kind"], "sweep");
    assert_eq!(e["complete"], true);
    assert_eq!(complete_runs(&e), 4);
    // The whole series ran once, then again: repeat 1 of both points before repeat 2.
    let order: Vec<String> = runs(&e)
        .iter()
        .map(|r| r["dir"].as_str().unwrap().into())
        .collect();
    assert_eq!(
        order,
        [
            "01-clients=1-r1",
            "01-clients=1-r2",
            "02-clients=2-r1",
            "02-clients=2-r2"
        ]
    );
    let started = |d: &str| {
        support::summary(&out.join(d))["started_at"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(started("02-clients=2-r1") <= started("01-clients=1-r2"));
    for p in e["points"].as_array().unwrap() {
        let tps: Vec<f64> = p["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tps"].as_f64().unwrap())
            .collect();
        let median = p["median"].as_f64().unwrap();
        assert!((median - (tps[0] + tps[1]) / 2.0).abs() < 1e-6, "{p}");
        assert_eq!(p["min"].as_f64().unwrap(), tps[0].min(tps[1]));
        assert!(median > 0.0);
        for r in p["runs"].as_array().unwrap() {
            let s = support::summary(&out.join(r["dir"].as_str().unwrap()));
            assert_eq!(s["complete"], true);
            assert_eq!(s["totals"]["tps"].as_f64(), r["tps"].as_f64());
        }
    }
    let series = &e["analysis"]["series"][0];
    assert_eq!(series["x"], "clients");
    assert_eq!(series["curve"].as_array().unwrap().len(), 2);
    assert!(series["peak"]["tps"].as_f64().unwrap() > 0.0, "{series}");
    let page = std::fs::read_to_string(out.join("experiment.html")).unwrap();
    assert!(page.contains("<svg") && page.contains("01-clients=1-r1/report.html"));
    // `report` rewrites the page; `compare` reads experiment dirs point by point.
    std::fs::remove_file(out.join("experiment.html")).unwrap();
    ok(tb(&home, &["report", out.to_str().unwrap()]));
    assert!(out.join("experiment.html").is_file());
    let o = ok(tb(
        &home,
        &["compare", out.to_str().unwrap(), out.to_str().unwrap()],
    ));
    assert!(output_text(&o).contains("1.00x"), "{}", output_text(&o));
}

/// A grid of two keys, killed once its first run is complete, resumed with the same command:
/// only the remaining runs are made. Another command on the same dir is refused.
#[test]
fn killed_grid_resumes_with_only_the_remaining_runs() {
    let home = support::temp_home();
    support::start_instance(&home, "default");
    let out = home.path().join("grid");
    let out_s = out.to_str().unwrap().to_string();
    let args = [
        "sweep",
        "-S",
        "--scale",
        "1",
        "--vary",
        "protocol=simple,prepared",
        "--vary",
        "clients=1,2",
        "-T",
        "3s",
        "-P",
        "0",
        "--sample",
        "0",
        "--out",
        &out_s,
    ];
    let mut child = support::tidebench(&home)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the sweep");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let done =
            out.join("experiment.json").is_file() && complete_runs(&support::experiment(&out)) >= 1;
        if done {
            break;
        }
        assert!(Instant::now() < deadline, "the first run did not complete");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sweep ended before it was killed: {status}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let first = support::summary(&out.join("01-protocol=simple_clients=1-r1"));
    let killed = support::experiment(&out);
    assert_eq!(killed["complete"], false);
    assert!(
        complete_runs(&killed) < 4,
        "killed too late to test a resume"
    );

    let changed = tb(
        &home,
        &[
            "sweep",
            "-S",
            "--scale",
            "1",
            "--vary",
            "clients=1,2",
            "--out",
            &out_s,
        ],
    );
    assert_eq!(changed.status.code(), Some(2), "{}", output_text(&changed));
    assert!(
        output_text(&changed).contains("--vary: was"),
        "{}",
        output_text(&changed)
    );

    let o = ok(tb(&home, &args));
    let said = output_text(&o);
    let kept = complete_runs(&killed);
    assert!(
        said.contains(&format!(
            "resuming {out_s}: {kept} of 4 runs already complete"
        )),
        "{said}"
    );
    assert_eq!(said.matches("== point").count(), 2 * (4 - kept), "{said}");
    let e = support::experiment(&out);
    assert_eq!(e["complete"], true);
    assert_eq!(complete_runs(&e), 4);
    // The first run was kept, not made again.
    let again = support::summary(&out.join("01-protocol=simple_clients=1-r1"));
    assert_eq!(first["started_at"], again["started_at"]);
    let series = e["analysis"]["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "one curve per protocol");
    assert_eq!(series[1]["fixed"]["protocol"], "prepared");
}

#[test]
fn a_server_setting_sweep_restarts_the_instance_per_point() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "default");
    let out = home.path().join("settings");
    ok(tb(
        &home,
        &[
            "sweep",
            "-S",
            "--scale",
            "1",
            "-c",
            "1",
            "--vary",
            "instance.set.work_mem=3MB,5MB",
            "-T",
            "1s",
            "-P",
            "0",
            "--sample",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    for (dir, value) in [
        ("01-instance.set.work_mem=3MB-r1", "3MB"),
        ("02-instance.set.work_mem=5MB-r1", "5MB"),
    ] {
        let runtime = std::fs::read_to_string(out.join(dir).join("runtime.toml")).unwrap();
        assert!(
            runtime.contains(&format!("work_mem = \"{value}\"")),
            "{dir}: {runtime}"
        );
    }
    assert_eq!(support::psql(&inst, "postgres", "SHOW work_mem"), "5MB");
    // The test settings the instance was made with stay.
    assert_eq!(support::psql(&inst, "postgres", "SHOW fsync"), "off");
}

#[test]
fn density_runs_n_limited_instances_at_once_against_the_ideal() {
    let Some(home) = support::home_with_cgroups("density") else {
        return;
    };
    let prefix = format!("dn{}", std::process::id());
    let out = home.path().join("density");
    ok(tb(
        &home,
        &[
            "density",
            "-S",
            "--scale",
            "1",
            "-c",
            "1",
            "--instances",
            "1..2",
            "--cpus",
            "0.5",
            "--memory",
            "256MB",
            "-T",
            "2s",
            "-P",
            "0",
            "--instance-prefix",
            &prefix,
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let e = support::experiment(&out);
    assert_eq!(e["kind"], "density");
    assert_eq!(complete_runs(&e), 2);
    let step2 = &e["analysis"]["density"]["steps"][1];
    assert_eq!(step2["instances"], 2);
    let total = step2["total_tps"].as_f64().unwrap();
    let single = e["analysis"]["density"]["single_median"].as_f64().unwrap();
    assert!(
        (step2["ideal"].as_f64().unwrap() - 2.0 * single).abs() < 1e-6,
        "{step2}"
    );
    let pct = step2["percent_of_ideal"].as_f64().unwrap();
    assert!(
        (pct - 100.0 * total / (2.0 * single)).abs() < 0.1,
        "{step2}"
    );
    let per: Vec<f64> = step2["per_instance_tps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(per.len(), 2);
    assert!(per.iter().all(|t| *t > 0.0), "both instances ran: {per:?}");
    assert!(
        (per.iter().sum::<f64>() - total).abs() / total < 0.01,
        "{per:?} vs {total}"
    );
    assert!(step2["host_cpu_percent"].as_f64().is_some(), "{step2}");
    // Step 2 ran both instances, each in its own control group with the limits asked for.
    let s = support::summary(&out.join("02-instances=2-r1"));
    assert_eq!(s["groups"].as_array().unwrap().len(), 2);
    for i in 1..=2 {
        let name = format!("{prefix}-{i}");
        let inst = instance::find(&home.home, &name).unwrap();
        assert_eq!(inst.limits(), (Some(0.5), Some(256 << 20)));
        let cg = inst.cgroup_paths().expect("limits make a cgroup");
        let pid = inst.pid().expect("running").to_string();
        for d in cg.dirs() {
            let procs = std::fs::read_to_string(d.join("cgroup.procs")).unwrap();
            assert!(
                procs.lines().any(|l| l == pid),
                "{name}'s postmaster in {d:?}"
            );
        }
        let limit = cg
            .dirs()
            .iter()
            .find_map(|d| {
                ["memory.limit_in_bytes", "memory.max"]
                    .iter()
                    .find_map(|f| std::fs::read_to_string(d.join(f)).ok())
            })
            .expect("a memory limit file");
        assert_eq!(limit.trim(), (256u64 << 20).to_string(), "{name}");
    }
}
