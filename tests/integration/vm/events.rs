//! Events on vm1's guest (issue 53), riding in `vm`'s test so no guest boots for them: a
//! freeze and a balloon resize in one run, then a power-off (`fail`: QMP `quit`) in the last
//! run of the guest's life, after which the instance is down and is destroyed.

use super::alive;
use crate::support::{self, output_text as text, run_tidebench as tb};
use tidebench::instance;

/// A tpcb run of `duration` on vm1 (prepared by the test) with `events` after it, into
/// `res-NAME`.
fn run_with_events(
    home: &support::TempHome,
    name: &str,
    duration: &str,
    events: &str,
) -> (std::process::Output, std::path::PathBuf) {
    let cfg = home.path().join(format!("{name}.toml"));
    std::fs::write(
        &cfg,
        format!(
            "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\nsample = \"1s\"\n\
             [[group]]\nname = \"A\"\nworkload = \"tpcb\"\nscale = 1\ntarget = \"instance:vm1/tidebench\"\n\
             [[phase]]\nname = \"only\"\nduration = \"{duration}\"\nshares = {{ A = 100 }}\n{events}"
        ),
    )
    .unwrap();
    let out = home.path().join(format!("res-{name}"));
    let o = tb(
        home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    (o, out)
}

/// Events on the guest (issue 53), in one 12 s run: a freeze first (QMP `stop` at 1 s, `cont`
/// 2 s later), then its memory squeezed through the balloon for the rest of the run. The
/// squeeze is small (64MiB) and comes after the thaw, so nothing stops the guest while it gives
/// its pages: an emulated guest gives them slowly (64MiB took it 1.3 s on a busy host, 128MiB
/// 7.8 s with a freeze inside), and the `balloon` step must end in the run, 8 s after it began.
/// Everything is judged from what the run recorded: the steps, no commit while the guest was
/// stopped, the guest's memory series in system.csv. Resizes a VM cannot take are refused
/// before anything starts.
pub(super) fn events_on_the_guest(home: &support::TempHome) {
    let resize = "[[event]]\nat = \"4s\"\naction = \"resize\"\ntarget = \"vm1\"\n";
    for (bad, says) in [
        (
            "memory = \"1GiB\"\n",
            "its balloon can only take memory away",
        ),
        ("cpus = 1.0\n", "a VM's CPUs cannot change while it runs"),
    ] {
        let (o, out) = run_with_events(home, "refused", "12s", &format!("{resize}{bad}"));
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains(says), "{bad}: {}", text(&o));
        assert!(!out.exists(), "nothing started: {}", out.display());
    }
    let (o, out) = run_with_events(
        home,
        "events",
        "12s",
        &format!(
            "[[event]]\nat = \"1s\"\naction = \"freeze\"\ntarget = \"vm1\"\nfor = \"2s\"\n\
             {resize}memory = \"448MiB\"\n"
        ),
    );
    assert!(o.status.success(), "run with events: {}", text(&o));
    let s = support::summary(&out);
    let steps = |k: usize| -> Vec<(String, String, f64, Option<f64>)> {
        s["events"][k]["steps"]
            .as_array()
            .unwrap_or_else(|| panic!("event {k}: {}", s["events"]))
            .iter()
            .map(|st| {
                (
                    st["step"].as_str().unwrap_or_default().to_string(),
                    st["outcome"].as_str().unwrap_or_default().to_string(),
                    st["started_s"].as_f64().unwrap(),
                    st["ended_s"].as_f64(),
                )
            })
            .collect()
    };
    let names = |st: &[(String, String, f64, Option<f64>)]| -> Vec<(String, String)> {
        st.iter().map(|(n, o, ..)| (n.clone(), o.clone())).collect()
    };
    let pair = |n: &str| (n.to_string(), "ok".to_string());
    // The resize gives the balloon its target; `balloon` is the guest getting there; the run's
    // end gives the guest its RAM back.
    let resized = steps(1);
    assert_eq!(
        names(&resized),
        vec![pair("resize"), pair("balloon"), pair("restore")],
        "{}",
        s["events"][1]
    );
    let frozen = steps(0);
    assert_eq!(
        names(&frozen),
        vec![pair("freeze"), pair("thaw")],
        "{}",
        s["events"][0]
    );
    let csv = std::fs::read_to_string(out.join("events.csv")).unwrap();
    for said in ["QMP stop", "QMP cont", "balloon target 448MiB"] {
        assert!(csv.contains(said), "{said}: {csv}");
    }
    // Nothing begun after the guest stopped commits before it goes on.
    let (t, thawed) = (frozen[0].2, frozen[1].2);
    assert!(t >= 1.0 && thawed >= 3.0, "{}", s["events"][0]);
    let all = &s["events"][0]["recovery"][0];
    let first = all["first_commit_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("commits after the thaw: {all}"));
    assert!(
        t + first >= thawed - 0.05,
        "first commit at {first} s: {all}"
    );

    // The guest's memory series: all its RAM in every sample before the resize, the new size in
    // the first sample taken once the guest had it.
    let system = std::fs::read_to_string(out.join("system.csv")).unwrap();
    let series: Vec<(f64, f64)> = system
        .lines()
        .filter(|l| l.contains(",instance:vm1,guest_memory_bytes,"))
        .filter_map(|l| {
            let (t, rest) = l.split_once(',')?;
            Some((t.parse().ok()?, rest.rsplit(',').next()?.parse().ok()?))
        })
        .collect();
    let (from, had) = (resized[0].2, resized[1].3.expect("the balloon got there"));
    let ram = (512u64 << 20) as f64;
    let squeezed = (448u64 << 20) as f64;
    assert!(
        series
            .iter()
            .filter(|(t, _)| *t < from)
            .all(|(_, m)| *m == ram),
        "{series:?}"
    );
    let after = series
        .iter()
        .find(|(t, _)| *t >= had)
        .unwrap_or_else(|| panic!("no sample after {had} s: {series:?}"));
    assert!(
        (after.1 - squeezed).abs() <= squeezed / 100.0,
        "the first sample after the guest had it, {after:?}: {series:?}"
    );
    let changed = series.iter().find(|(t, m)| *t >= from && *m != ram);
    eprintln!(
        "events on the guest: resize at {from:.2} s, the guest had it at {had:.2} s, the \
         memory series changed at {changed:?}; freeze {t:.2} s, thaw {thawed:.2} s, first \
         commit begun after the freeze {:.2} s after it",
        first
    );
}

/// The guest powered off mid-run (issue 53's `fail` on a VM: QMP `quit`), in a 5 s run: the
/// run goes on to its end and records the step, the target's down window still open at the
/// end, and no commit and no recovery after the event; afterwards QEMU `qemu` is gone, the
/// instance is seen as down, and `destroy` removes it. A guest so ended does not come back
/// without a new boot, so this is the guest's last run.
pub(super) fn power_off_on_the_guest(home: &support::TempHome, qemu: u32) {
    let took = std::time::Instant::now();
    let (o, out) = run_with_events(
        home,
        "power-off",
        "5s",
        "[[event]]\nat = \"2s\"\naction = \"fail\"\ntarget = \"vm1\"\n",
    );
    assert!(o.status.success(), "run with a power-off: {}", text(&o));
    let s = support::summary(&out);
    let e = &s["events"][0];
    let steps = e["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 1, "{e}");
    assert_eq!(
        (&steps[0]["step"], &steps[0]["outcome"]),
        (&"fail".into(), &"ok".into()),
        "{e}"
    );
    assert_eq!(
        steps[0]["detail"],
        format!("QMP quit: QEMU {qemu} ended").as_str(),
        "{e}"
    );
    let t = steps[0]["started_s"].as_f64().expect("started_s");
    assert!(t >= 2.0, "{e}");
    // The run kept its clock: the whole window measured, and the clients done with it on time.
    assert_eq!(s["duration_s"].as_f64(), Some(5.0), "{s}");
    assert_eq!(s["complete"], true, "{s}");
    assert!(s["overrun_s"].is_null(), "{s}");
    // The clients lost the guest at the event and never had it back.
    let down = s["down_windows"].as_array().expect("a down window");
    assert_eq!(down.len(), 1, "{down:?}");
    let from = down[0]["from_s"].as_f64().expect("from_s");
    assert!(from >= t - 0.05, "{down:?}, event at {t}");
    assert!(down[0]["to_s"].is_null(), "still down at the end: {down:?}");
    let all = &e["recovery"][0];
    assert_eq!(all["scope"], "all", "{e}");
    assert!(all["first_commit_s"].is_null(), "no commit after it: {all}");
    assert!(all["recovered_s"].is_null(), "not recovered: {all}");
    let down_s = all["down_s"].as_f64().expect("down_s");
    assert!(
        (down_s - (5.0 - from)).abs() <= 0.1,
        "down to the end: {all}"
    );
    let csv = std::fs::read_to_string(out.join("events.csv")).unwrap();
    let row = csv.lines().nth(1).unwrap_or_default();
    assert!(
        row.starts_with("1,2.000,fail,vm1,fail,") && row.contains(",ok,QMP quit"),
        "{csv}"
    );
    // Afterwards: no QEMU, the instance down, and destroyed cleanly.
    assert!(!alive(qemu), "QEMU {qemu} ended");
    assert!(!instance::status(&home.home, "vm1").unwrap().running);
    let o = tb(home, &["instance", "stop", "vm1"]);
    assert!(
        o.status.success() && text(&o).contains("'vm1' was not running"),
        "{}",
        text(&o)
    );
    let o = tb(home, &["instance", "destroy", "vm1"]);
    assert!(o.status.success(), "destroy: {}", text(&o));
    assert!(!home.path().join("instances").join("vm1").exists());
    eprintln!(
        "power-off on the guest: QMP quit at {t:.2} s, the clients' down window from {from:.2} \
         s to the end ({down_s:.1} s); the run, stop and destroy took {:.1} s",
        took.elapsed().as_secs_f64()
    );
}
