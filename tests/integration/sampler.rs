//! Samplers beside a real run: `system.csv` from a managed instance (with a cgroup when this
//! host allows one) and from a DSN target, `--prometheus` scraped mid-run, and the client's
//! count still equal to the server's `xact_commit` delta with sampling on.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tidebench::instance::InstanceOptions;
use tidebench::results::system::{self, SystemRow};

use crate::support::{self, output_text as text, run_tidebench as tb};

fn rows(dir: &Path) -> Vec<SystemRow> {
    system::read(dir)
        .unwrap_or_else(|e| panic!("system.csv: {e}"))
        .expect("system.csv exists")
}

fn values<'a>(rows: &'a [SystemRow], source: &'a str, metric: &'a str) -> Vec<f64> {
    rows.iter()
        .filter(|r| r.source == source && r.metric == metric)
        .map(|r| r.value)
        .collect()
}

fn has_source(rows: &[SystemRow], prefix: &str) -> bool {
    rows.iter().any(|r| r.source.starts_with(prefix))
}

/// One plain HTTP/1.1 GET; the body, or None when nothing listens yet.
fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    reply.starts_with("HTTP/1.1 200").then_some(reply)
}

/// A committed-transactions line with a count above zero.
fn committed_line(metrics: &str) -> Option<&str> {
    metrics.lines().find(|l| {
        l.starts_with("tidebench_transactions_total{")
            && l.contains("outcome=\"committed\"")
            && l.rsplit(' ').next().and_then(|n| n.parse::<u64>().ok()) > Some(0)
    })
}

#[test]
fn samples_a_managed_instance_and_serves_prometheus() {
    let home = support::temp_home();
    let with_cgroup = support::cgroups_writable();
    let opts = InstanceOptions {
        cpus: with_cgroup.then_some(1.0),
        ..InstanceOptions::default()
    };
    let _inst = support::start_with(&home, "smp", opts);
    support::prepare_tpcb(&home, "instance:smp");
    let out = home.path().join("res-smp");
    let port = support::free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = support::tidebench(&home)
        .args([
            "run",
            "-w",
            "tpcb",
            "--target",
            "instance:smp",
            "-c",
            "2",
            "-T",
            "3",
            "--interval",
            "1s",
            "--seed",
            "5",
            "--prometheus",
            &addr,
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tidebench run");

    // Scrape while the run goes on, until a committed count shows.
    let mut seen = None;
    let mut page = String::new();
    while seen.is_none() {
        if let Some(m) = scrape(port) {
            seen = committed_line(&m).map(str::to_string);
            page = m;
        }
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let o = child.wait_with_output().expect("wait for tidebench run");
    assert!(o.status.success(), "run failed: {}", text(&o));
    let line = seen.unwrap_or_else(|| panic!("no committed counter scraped; {}", text(&o)));
    assert!(line.contains("type=\"tpcb\""), "{line}");
    // The wait sampler (on by default) serves its counts beside them (issue 41).
    assert!(
        page.contains("# TYPE tidebench_wait_samples_total counter"),
        "{page}"
    );

    let rows = rows(&out);
    assert!(has_source(&rows, "device:"), "device rows");
    assert!(!values(&rows, "host", "cpu_user_pct").is_empty());
    assert!(!values(&rows, "host", "mem_used_bytes").is_empty());
    assert!(!values(&rows, "db:instance:smp/tidebench", "xact_commit").is_empty());
    assert!(!values(&rows, "server:instance:smp/tidebench", "wal_bytes").is_empty());
    assert!(!values(&rows, "sampler", "round_ms").is_empty());
    let cpu = values(&rows, "instance:smp", "cpu_seconds");
    assert!(cpu.len() >= 3, "one cpu_seconds row per round: {cpu:?}");
    assert!(
        cpu.windows(2).all(|w| w[1] >= w[0]),
        "cumulative CPU never goes down: {cpu:?}"
    );
    assert!(
        cpu[cpu.len() - 1] - cpu[0] > 0.0,
        "the instance used CPU: {cpu:?}"
    );
    assert!(!values(&rows, "instance:smp", "rss_bytes").is_empty());
    if with_cgroup {
        assert!(!values(&rows, "instance:smp", "mem_usage_bytes").is_empty());
        assert!(!values(&rows, "instance:smp", "oom_events").is_empty());
    }
    let runtime = std::fs::read_to_string(out.join("runtime.toml")).unwrap();
    assert!(runtime.contains("[[devices]]") && runtime.contains("instance = \"smp\""));

    // Sampling reads counters from another database: the exact agreement still holds.
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let committed = s["totals"]["committed"].as_i64().unwrap();
    assert!(committed > 0);
    assert_eq!(
        s["server"][0]["xact_commit_delta"].as_i64(),
        Some(support::committed_over_run(&s)),
        "client count must equal the server's delta with sampling on: {s}"
    );
}

#[test]
fn samples_a_dsn_target_without_instance_rows() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "smpdsn");
    let dsn = inst.dsn("tidebench");
    support::prepare_tpcb(&home, &dsn);
    let out = home.path().join("res-smpdsn");
    let o = tb(
        &home,
        &[
            "run",
            "-S",
            "--target",
            &dsn,
            "-c",
            "1",
            "-T",
            "2",
            "--sample",
            "500ms",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "run failed: {}", text(&o));
    let rows = rows(&out);
    assert!(
        !has_source(&rows, "instance:"),
        "no managed instance behind a DSN"
    );
    assert!(has_source(&rows, "db:") && has_source(&rows, "server:"));
    assert!(!values(&rows, "host", "load1").is_empty());
    let rounds = values(&rows, "sampler", "round_ms").len();
    assert!(rounds >= 4, "500 ms rounds over 2 s: {rounds}");
}

#[test]
fn sample_zero_writes_no_system_csv() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "smpoff");
    support::prepare_tpcb(&home, "instance:smpoff");
    let out = home.path().join("res-smpoff");
    let o = tb(
        &home,
        &[
            "run",
            "-S",
            "--target",
            "instance:smpoff",
            "-T",
            "1",
            "--sample",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "run failed: {}", text(&o));
    assert!(system::read(&out).unwrap().is_none());
}

/// The last sampling round is taken at the stop, while the run's clients disconnect and a few
/// ms after a regular round: its rates were computed over that sliver (CPU at several hundred
/// percent, disk reads jumping) and its memory summed while backends exited (shared memory
/// counted again and again). Every sample, the last included, must stay in range.
#[test]
fn the_last_sample_of_a_run_is_in_range() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "smplast");
    support::prepare_tpcb(&home, "instance:smplast");
    let out = home.path().join("res-smplast");
    let o = tb(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "--target",
            "instance:smplast",
            "-c",
            "8",
            "-T",
            "3",
            "--sample",
            "500ms",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "run failed: {}", text(&o));
    let rows = rows(&out);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let cpu = values(&rows, "instance:smplast", "cpu_pct");
    assert!(cpu.len() >= 4, "500 ms rounds over 3 s: {cpu:?}");
    assert!(
        cpu.iter().all(|p| *p <= 100.0 * cores),
        "an instance cannot use more than {cores} cores: {cpu:?}"
    );
    // The cause, not only the symptom: no rate over less than half a sampling period.
    let mut rounds: Vec<f64> = rows.iter().map(|r| r.t_s).collect();
    rounds.dedup();
    for pair in rounds.windows(2) {
        let rates: Vec<&SystemRow> = rows
            .iter()
            .filter(|r| r.t_s == pair[1])
            .filter(|r| r.metric.ends_with("_pct") || r.metric.ends_with("_per_s"))
            .collect();
        assert!(
            pair[1] - pair[0] >= 0.25 || rates.is_empty(),
            "rates over {:.3} s at t = {}: {rates:?}",
            pair[1] - pair[0],
            pair[1]
        );
    }
    let mut rss = values(&rows, "instance:smplast", "rss_bytes");
    let last = *rss.last().expect("rss_bytes rows");
    rss.sort_by(f64::total_cmp);
    let median = rss[rss.len() / 2];
    assert!(
        last <= 2.0 * median,
        "last rss {last} is more than twice the median {median}: {rss:?}"
    );
    let t_last = rows.iter().map(|r| r.t_s).fold(0.0, f64::max);
    let last_reads: Vec<f64> = rows
        .iter()
        .filter(|r| r.t_s == t_last && r.metric == "read_bytes_per_s")
        .map(|r| r.value)
        .collect();
    let peak_before = rows
        .iter()
        .filter(|r| r.t_s < t_last && r.metric == "read_bytes_per_s")
        .map(|r| r.value)
        .fold(0.0, f64::max);
    assert!(
        last_reads.iter().all(|v| *v <= peak_before.max(1e6)),
        "the last round's disk reads jump: {last_reads:?} after a peak of {peak_before}"
    );
}
