//! report.html and compare on real runs: a small elastic run (2 groups, 2 phases of 2 s) on a
//! managed instance writes report.html; `tidebench report DIR` rewrites it; the page is
//! self-contained and has its sections in order; headless Chromium renders it; `compare` of
//! two runs gives the first as the 1.00 baseline.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{self, ok};

const SECTIONS: [&str; 13] = [
    "Run at a glance",
    "Throughput",
    "Achieved vs configured share",
    "Latency",
    "Response-time limits and mix",
    "CPU",
    "Where the time goes",
    "Wait profiles",
    "Memory",
    "Disk IO",
    "Checkpoints and buffers",
    "Connection pooler",
    "Failures",
];

const CHROMIUM: &str = "/usr/bin/chromium";

fn tb(home: &support::TempHome, args: &[&str]) -> Output {
    ok(support::tidebench(home)
        .args(args)
        .output()
        .expect("the tidebench binary runs"))
}

fn headings(page: &str) -> Vec<String> {
    page.split("<h2")
        .skip(1)
        .filter_map(|rest| {
            let open = rest.find('>')? + 1;
            let close = rest.find("</h2>")?;
            Some(rest[open..close].to_string())
        })
        .collect()
}

/// Width and height attributes of every `<svg` tag.
fn svg_sizes(page: &str) -> Vec<(f64, f64)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let key = format!(" {name}=\"");
        tag.find(&key)
            .and_then(|i| {
                let rest = &tag[i + key.len()..];
                rest[..rest.find('"')?].parse().ok()
            })
            .unwrap_or(0.0)
    };
    page.split("<svg")
        .skip(1)
        .map(|rest| {
            let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
            (attr(tag, "width"), attr(tag, "height"))
        })
        .collect()
}

fn assert_self_contained(page: &str) {
    assert!(!page.contains("<script"), "no scripts");
    let without_ns = page.replace("http://www.w3.org/2000/svg", "");
    assert!(
        !without_ns.contains("http://") && !without_ns.contains("https://"),
        "nothing fetched"
    );
    assert!(!page.contains("@import") && !page.contains("url("));
}

fn run(home: &support::TempHome, cfg: &Path, out: &Path) {
    tb(
        home,
        &["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
}

#[test]
fn report_html_after_a_run_regenerates_renders_and_compares() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "rep");
    let cfg = home.path().join("rep.toml");
    std::fs::write(
        &cfg,
        "clients = 2\nseed = 3\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
         [[group]]\nname = \"A\"\nworkload = \"tpcb\"\nscale = 1\ninstance = \"rep\"\n\
         [[group]]\nname = \"B\"\nworkload = \"select-only\"\nscale = 1\ninstance = \"rep\"\n\
         [[phase]]\nduration = \"2s\"\nshares = { A = 30, B = 70 }\n\
         [[phase]]\nduration = \"2s\"\nshares = { A = 70, B = 30 }\n",
    )
    .unwrap();
    tb(&home, &["prepare", cfg.to_str().unwrap()]);
    let first = home.path().join("first");
    run(&home, &cfg, &first);

    // Written at the end of the run.
    let report = first.join("report.html");
    let page = std::fs::read_to_string(&report).expect("the run wrote report.html");
    assert_eq!(headings(&page), SECTIONS, "sections in order");
    let sizes = svg_sizes(&page);
    assert!(sizes.len() >= 6, "{} charts", sizes.len());
    assert!(sizes.iter().all(|(w, h)| *w > 0.0 && *h > 0.0), "{sizes:?}");
    assert_self_contained(&page);
    for text in [
        "Throughput by group",
        "Latency p99",
        "configured %",
        "achieved %",
    ] {
        assert!(page.contains(text), "{text}");
    }

    // `report DIR` rewrites it and prints its path.
    std::fs::remove_file(&report).unwrap();
    let o = tb(&home, &["report", first.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        report.display().to_string()
    );
    assert_eq!(
        headings(&std::fs::read_to_string(&report).unwrap()),
        SECTIONS
    );
    // --by still prints a table.
    let o = tb(&home, &["report", first.to_str().unwrap(), "--by", "group"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("p95_ms"));
    // --by role: every type of these workloads runs on the oltp role.
    let o = tb(
        &home,
        &["report", first.to_str().unwrap(), "--by", "role,group"],
    );
    let by_role = String::from_utf8_lossy(&o.stdout).to_string();
    let rows: Vec<&str> = by_role.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{by_role}");
    assert!(
        rows.iter().all(|l| l.trim_start().starts_with("oltp")),
        "{by_role}"
    );

    render_in_chromium(&report, sizes.len());

    let second = home.path().join("second");
    run(&home, &cfg, &second);
    let html_out = home.path().join("cmp.html");
    let o = tb(
        &home,
        &[
            "compare",
            first.to_str().unwrap(),
            second.to_str().unwrap(),
            "--html",
            html_out.to_str().unwrap(),
        ],
    );
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    let tps_line = table
        .lines()
        .find(|l| l.starts_with("throughput"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = tps_line.split_whitespace().collect();
    assert_eq!(cells[3], "1.00", "the baseline's ratio: {table}");
    assert!(cells[5].parse::<f64>().unwrap() > 0.0, "{table}");
    let cmp = std::fs::read_to_string(&html_out).unwrap();
    assert!(cmp.contains("<table") && cmp.contains("1.00"));
    assert_self_contained(&cmp);
}

/// Opens the page in headless Chromium: it must exit 0 and its DOM must hold every chart.
fn render_in_chromium(report: &Path, charts: usize) {
    if !Path::new(CHROMIUM).exists() {
        support::skip(
            "the browser check of report.html",
            "Chromium",
            &format!("{CHROMIUM} is not installed"),
        );
        return;
    }
    let profile = tempfile::tempdir().unwrap();
    let shot: PathBuf = profile.path().join("shot.png");
    let base = [
        "--headless".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        format!("--user-data-dir={}", profile.path().display()),
    ];
    let url = format!("file://{}", report.display());
    let o = Command::new(CHROMIUM)
        .args(&base)
        .args(["--dump-dom", &url])
        .output()
        .expect("chromium runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        dom.matches("<svg").count(),
        charts,
        "every chart is in the DOM"
    );
    assert_eq!(headings(&dom), SECTIONS);
    let o = Command::new(CHROMIUM)
        .args(&base)
        .args([
            format!("--screenshot={}", shot.display()),
            "--window-size=1100,1400".into(),
            url,
        ])
        .output()
        .expect("chromium runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(size > 10_000, "a screenshot with content ({size} bytes)");
}
