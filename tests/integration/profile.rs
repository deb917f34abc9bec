//! CPU profiles (issue 29) on real runs: a profiled tpcb run on a managed instance (perf over
//! the measured window only, postgres's own functions in the profile, percentages that add
//! up, a flame graph in report.html that headless Chromium renders), a DSN target on this host
//! found through its postmaster, `compare` of profiles, `tidebench overhead` on a native and a
//! quarter-CPU instance, and the bad inputs: perf absent, a rate of 0, a perf that fails to record.

use std::path::Path;

use tidebench::instance::InstanceOptions;
use tidebench::results::profile::{ProfileFile, ProfiledSubject};

use crate::support::{self, ok, output_text as text, run_tidebench as tb};

fn profile(dir: &Path) -> ProfileFile {
    ProfileFile::read(dir)
        .unwrap_or_else(|e| panic!("profile.json: {e}"))
        .expect("profile.json exists")
}

fn subject<'a>(p: &'a ProfileFile, name: &str) -> &'a ProfiledSubject {
    p.subject(name)
        .unwrap_or_else(|| panic!("no subject {name} in {:?}", p.subjects))
}

fn has_total(s: &ProfiledSubject, function: &str) -> bool {
    s.top_total.iter().any(|f| f.function == function)
}

/// The split adds up to 100 %, and so do the self shares when every function fits the list.
fn assert_adds_up(s: &ProfiledSubject) {
    let split = s.split.kernel + s.split.postgres + s.split.libc + s.split.other;
    assert!(
        (split - 100.0).abs() < 0.1,
        "split {:?} of {}",
        s.split,
        s.name
    );
    let listed: f64 = s.top_self.iter().map(|f| f.pct).sum();
    let counted: u64 = s.top_self.iter().map(|f| f.samples).sum();
    // Each share is rounded to 2 decimals: the sum may drift by half a unit per function.
    let drift = 0.005 * s.top_self.len() as f64 + 1e-9;
    assert!(counted <= s.samples, "{counted} of {} samples", s.samples);
    assert!(
        listed <= 100.0 + drift,
        "{listed} % of {} over {} functions",
        s.name,
        s.top_self.len()
    );
    if s.top_self.len() < tidebench::profile::fold::TOP_FUNCTIONS {
        assert_eq!(counted, s.samples, "every sample of {} is listed", s.name);
    }
}

#[test]
fn a_profiled_run_samples_the_measured_window_of_each_instance() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "p1");
    support::prepare_tpcb(&home, "instance:p1");
    let out = home.path().join("profiled");
    // 3 s of ramp-up and 2 of ramp-down around 2 measured seconds: a profile that kept the
    // ramps would hold about three times the samples the window can.
    ok(tb(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "-c",
            "2",
            "-T",
            "2s",
            "--ramp-up",
            "3s",
            "--ramp-down",
            "2s",
            "-P",
            "0",
            "--target",
            "instance:p1",
            "--profile",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let p = profile(&out);
    assert_eq!(p.window_s, (3.0, 5.0), "the measured window only");
    assert_eq!(
        (p.hz, p.scope.as_str(), p.call_graph.as_str()),
        (99, "instances", "fp")
    );
    let pg = subject(&p, "p1");
    assert_eq!(pg.kind, "instance");
    assert_eq!(pg.pid, inst.pid());
    let bound = f64::from(p.hz) * 2.0 * f64::from(p.cpus);
    assert!(
        (pg.samples as f64) <= bound * 1.05,
        "{} samples in 2 s at {} Hz on {} CPUs: the ramps were sampled",
        pg.samples,
        p.hz,
        p.cpus
    );
    assert!(
        pg.samples as f64 >= f64::from(p.hz) * 2.0 * 0.1,
        "a busy instance gives samples: {}",
        pg.samples
    );
    assert!(has_total(pg, "PostgresMain"), "{:?}", pg.top_total);
    assert!(
        ["PortalRun", "standard_ExecutorRun", "exec_execute_message"]
            .iter()
            .any(|f| has_total(pg, f)),
        "the executor is on the stacks: {:?}",
        pg.top_total
    );
    assert!(
        pg.split.postgres > 0.0 && pg.split.kernel > 0.0,
        "{:?}",
        pg.split
    );
    assert_adds_up(pg);
    let driver = subject(&p, "driver");
    assert!(driver.samples > 0 && driver.pid.is_some());
    assert_adds_up(driver);
    let folded = std::fs::read_to_string(out.join(&pg.folded)).unwrap();
    let folded_samples: u64 = folded
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        folded_samples, pg.samples,
        "the folded stacks hold every sample"
    );
    assert!(
        !out.join("profile/.perf").exists(),
        "perf's own files are removed"
    );

    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    let section = &page[page.find(">Where the time goes</h2>").expect("the section")..];
    assert!(
        section.contains("<h3>instance p1</h3>"),
        "a part per instance"
    );
    assert!(
        section.contains("<th>DSO</th>"),
        "the Cybertec study's columns"
    );
    let flame = &section[section.find("<svg").expect("a flame graph")..];
    assert!(
        flame.contains("PostgresMain"),
        "the flame graph has postgres's frames"
    );
    assert!(!page.contains("<script"), "the page stays script-free");
    if let Some(dom) = render_in_chromium(&out.join("report.html")) {
        assert!(
            dom.contains("PostgresMain"),
            "Chromium renders the flame graph"
        );
    }

    // The same server behind a DSN: found through the backend's parent, the postmaster.
    let dsn = inst.dsn("tidebench");
    let by_dsn = home.path().join("by-dsn");
    ok(tb(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "-c",
            "1",
            "-T",
            "1s",
            "-P",
            "0",
            "--target",
            &dsn,
            "--profile",
            "--profile-hz",
            "199",
            "--out",
            by_dsn.to_str().unwrap(),
        ],
    ));
    let p2 = profile(&by_dsn);
    let server = p2
        .subjects
        .iter()
        .find(|s| s.kind == "server")
        .unwrap_or_else(|| panic!("the DSN's server is profiled: {:?}", p2));
    assert_eq!((server.pid, p2.hz), (inst.pid(), 199));
    assert!(server.samples > 0);

    // compare puts the two runs' profiles side by side.
    let o = ok(tb(
        &home,
        &["compare", out.to_str().unwrap(), by_dsn.to_str().unwrap()],
    ));
    let said = text(&o);
    assert!(
        said.contains("where the time goes, instance p1 vs server"),
        "{said}"
    );
    assert!(
        said.contains("(kernel)") && said.contains("change"),
        "{said}"
    );
}

/// The DOM Chromium made of `page`, or `None` (with a note) where Chromium is absent.
fn render_in_chromium(page: &Path) -> Option<String> {
    if !Path::new("/usr/bin/chromium").exists() {
        support::skip(
            "the flame graph's rendering",
            "Chromium",
            "/usr/bin/chromium is not installed",
        );
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let o = std::process::Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn overhead_compares_a_native_and_a_limited_instance() {
    let Some(home) = support::home_with_cgroups("overhead's 0.5-CPU side") else {
        return;
    };
    support::start_instance(&home, "native");
    // A quarter CPU, not the Cybertec study's half: the tests' debug-build driver, sharing 2 cores with
    // another test, can hold the native side near half a CPU's worth of tpcb (a 0.95 ratio was
    // seen once), and this test is about the command, not the size of the gap.
    let limited = InstanceOptions {
        cpus: Some(0.25),
        ..InstanceOptions::default()
    };
    support::start_with(&home, "limited", limited);
    let out = home.path().join("overhead");
    let o = ok(tb(
        &home,
        &[
            "overhead",
            "--native",
            "instance:native",
            "--virtual",
            "instance:limited",
            "-s",
            "1",
            "-c",
            "4",
            "-T",
            "3s",
            "-P",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let said = text(&o);
    // The verdict names the study it reproduces, not an internal number (issue 43).
    assert!(
        said.contains("overhead (Cybertec, PostgreSQL virtualization revisited):"),
        "{said}"
    );
    let ratio: f64 = said
        .split("virtual/native ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("a ratio: {said}"));
    assert!(
        ratio > 0.0 && ratio < 0.9,
        "a quarter CPU is slower: {ratio}\n{said}"
    );
    assert!(
        said.contains("where the time goes, instance native vs instance limited"),
        "{said}"
    );
    assert!(out.join("compare.html").is_file());
    let runs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("summary.json").is_file())
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for run in &runs {
        let p = profile(run);
        let side = p.subjects.iter().find(|s| s.kind == "instance").unwrap();
        assert!(side.samples > 0, "{run:?}");
        let page = std::fs::read_to_string(run.join("report.html")).unwrap();
        assert!(page.contains(&format!("<h3>instance {}</h3>", side.name)));
        let runtime = std::fs::read_to_string(run.join("runtime.toml")).unwrap();
        assert!(
            runtime.contains("synchronous_commit") && runtime.contains("tpcb"),
            "the Cybertec study's run: {runtime}"
        );
    }
}

#[test]
fn perf_missing_or_failing_and_a_zero_rate_are_named() {
    let home = support::temp_home();
    let out = home.path().join("never");
    let o = support::tidebench(&home)
        .env("PATH", "/nonexistent")
        .args([
            "run",
            "-S",
            "-T",
            "1s",
            "--profile",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("apt-get install linux-perf"),
        "{}",
        text(&o)
    );
    assert!(
        !out.exists() && !support::partial(&out).exists(),
        "nothing written"
    );

    let o = tb(
        &home,
        &["run", "-S", "-T", "1s", "--profile", "--profile-hz", "0"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("profile-hz 0 is out of range"),
        "{}",
        text(&o)
    );

    // A perf that answers --version but cannot record: the run goes on, and says so.
    support::start_instance(&home, "p2");
    support::prepare_tpcb(&home, "instance:p2");
    let fake = home.path().join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    let script = "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'perf version 0.0'; exit 0; }\n\
                  echo 'perf_event_open: Operation not permitted' >&2; exit 1\n";
    std::fs::write(fake.join("perf"), script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake.join("perf"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let failed = home.path().join("failed-profile");
    let o = support::tidebench(&home)
        .env("PATH", path)
        .args([
            "run",
            "-w",
            "tpcb",
            "-T",
            "1s",
            "-P",
            "0",
            "--target",
            "instance:p2",
            "--profile",
            "--out",
            failed.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("perf could not start"), "{}", text(&o));
    let p = profile(&failed);
    assert!(p.subjects.is_empty());
    assert!(
        p.missing[0].contains("Operation not permitted"),
        "perf's own words: {:?}",
        p.missing
    );
    let page = std::fs::read_to_string(failed.join("report.html")).unwrap();
    assert!(
        page.contains("Missing: perf could not start"),
        "the report says what is missing"
    );
}
