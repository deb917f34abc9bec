//! The experiment page from files built in code: a two-key sweep with a failed run and a
//! point without any complete run, and a density series 1..3.

use std::collections::BTreeMap;

use super::*;
use crate::results::experiment::{
    Analysis, CurvePoint, DensityAnalysis, DensityStep, HeadlineValue, Request, RunRecord,
    SeriesAnalysis, Varied, SCHEMA_VERSION,
};

/// The value of `mode` that tries to inject a script into the page.
pub(crate) const EVIL: &str = "<script>alert(1)</script>";

pub(crate) fn run(dir: &str, repeat: u32, tps: Option<f64>) -> RunRecord {
    RunRecord {
        status: if tps.is_some() {
            RunStatus::Complete
        } else {
            RunStatus::Pending
        },
        complete: tps.is_some(),
        tps,
        ..RunRecord::pending(dir, repeat)
    }
}

pub(crate) fn point(values: &[(&str, &str)], runs: Vec<RunRecord>) -> Point {
    let mut t: Vec<f64> = runs
        .iter()
        .filter(|r| r.status == RunStatus::Complete)
        .filter_map(|r| r.tps)
        .collect();
    t.sort_by(f64::total_cmp);
    let median = match t.len() {
        0 => None,
        n if n % 2 == 1 => Some(t[n / 2]),
        n => Some((t[n / 2 - 1] + t[n / 2]) / 2.0),
    };
    Point {
        values: values
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        runs,
        median,
        min: t.first().copied(),
        max: t.last().copied(),
        headline_median: None,
    }
}

pub(crate) fn file(kind: ExperimentKind, varied: &[&str], points: Vec<Point>) -> ExperimentFile {
    ExperimentFile {
        schema_version: SCHEMA_VERSION,
        tidebench_version: "0.1.0".into(),
        kind,
        request: Request {
            source: "preset tpcb".into(),
            base_text: "[run]\nduration = \"10s\"\n".into(),
            flags: vec!["--duration".into(), "10s".into()],
            vary: Vec::new(),
            repeat: 2,
            point_duration: None,
            cpus: None,
            memory: None,
            consolidate: None,
            knee: None,
        },
        varied: varied.iter().map(|s| s.to_string()).collect(),
        repeat: 2,
        started_at: "2025-01-01T00:00:00Z".into(),
        updated_at: "2025-01-01T01:00:00Z".into(),
        complete: false,
        points,
        analysis: Analysis::default(),
    }
}

/// clients 1, 2, 4, 8 × mode simple and [`EVIL`], two repeats. In `simple`, clients=4 has a
/// failed and a pending run (no complete one); in [`EVIL`] repeat 2 of clients=2 failed.
pub(crate) fn sweep() -> ExperimentFile {
    let mut points = Vec::new();
    for mode in ["simple", EVIL] {
        for c in [1, 2, 4, 8] {
            let dir = |r: u32| format!("c{c}-{}-r{r}", if mode == "simple" { "s" } else { "e" });
            let base = 100.0 * f64::from(c).min(4.0) * if mode == "simple" { 1.0 } else { 0.5 };
            let mut runs = vec![
                run(&dir(1), 1, Some(base)),
                run(&dir(2), 2, Some(base + 10.0)),
            ];
            if mode == "simple" && c == 4 {
                runs[0].status = RunStatus::Failed;
                runs[0].complete = false;
                runs[0].tps = None;
                runs[0].error = Some("target t1 down: <connection refused>".into());
                runs[1] = run(&dir(2), 2, None);
            }
            if mode == EVIL && c == 2 {
                runs[1].status = RunStatus::Failed;
                runs[1].complete = false;
                runs[1].tps = None;
                runs[1].error = Some("out of memory".into());
            }
            if runs[0].tps.is_some() {
                runs[0].headline = Some(HeadlineValue {
                    label: "tpsB".into(),
                    value: base,
                    unit: "per second".into(),
                });
            }
            points.push(point(&[("mode", mode), ("clients", &c.to_string())], runs));
        }
    }
    let mut f = file(ExperimentKind::Sweep, &["mode", "clients"], points);
    f.request.vary = vec![
        Varied {
            key: "mode".into(),
            values: vec!["simple".into(), EVIL.into()],
        },
        Varied {
            key: "clients".into(),
            values: vec!["1".into(), "2".into(), "4".into(), "8".into()],
        },
    ];
    for (mode, saturation) in [("simple", Some(4.0)), (EVIL, None)] {
        f.analysis.series.push(SeriesAnalysis {
            x: "clients".into(),
            fixed: BTreeMap::from([("mode".to_string(), mode.to_string())]),
            curve: Vec::new(),
            peak: Some(CurvePoint { x: 8.0, tps: 405.0 }),
            slope: Some(105.0),
            linear_until: Some(2.0),
            saturation,
            rules: vec!["linear: within 10% of the line <through> the origin".into()],
            summary: format!("Scales linearly up to 2 clients in {mode}."),
        });
    }
    f.analysis.notes = vec!["key `mode` is not a number: one series per value".into()];
    f
}

fn density() -> ExperimentFile {
    let points = (1..=3)
        .map(|n| {
            let runs = (1..=2)
                .map(|r| {
                    let total =
                        90.0 * f64::from(n) * (1.0 - f64::from(n - 1) * 0.035) + f64::from(r);
                    let mut rec = run(&format!("n{n}-r{r}"), r, Some(total));
                    rec.per_instance_tps = vec![90.0; n as usize];
                    rec.host_cpu_percent = Some(30.0 * f64::from(n));
                    rec
                })
                .collect();
            point(&[("instances", &n.to_string())], runs)
        })
        .collect();
    let mut f = file(ExperimentKind::Density, &["instances"], points);
    f.complete = true;
    f.analysis.density = Some(DensityAnalysis {
        single_median: Some(90.0),
        steps: (1..=3u32)
            .map(|n| DensityStep {
                instances: n,
                total_tps: Some(90.0 * f64::from(n) * (1.0 - f64::from(n - 1) * 0.035)),
                per_instance_tps: vec![90.0; n as usize],
                ideal: Some(90.0 * f64::from(n)),
                percent_of_ideal: Some(100.0 - f64::from(n - 1) * 3.5),
                host_cpu_percent: Some(30.0 * f64::from(n)),
            })
            .collect(),
        summary: "3 instances reach 93% of the ideal.".into(),
    });
    f
}

#[test]
fn sweep_page_has_charts_analysis_and_every_run() {
    let page = html(&sweep());
    assert_eq!(page.matches("<svg").count(), 2, "one chart per series");
    assert!(
        page.contains("incomplete: 13 of 16 runs done (2 failed)"),
        "{page}"
    );
    assert!(page.contains("tps vs clients (mode=simple)"), "{page}");
    assert!(page.contains("Scales linearly up to 2 clients in simple."));
    assert!(page.contains("<li>linear: within 10% of the line &lt;through&gt; the origin</li>"));
    assert!(
        page.contains("<td>saturation</td><td>clients = 4</td>"),
        "{page}"
    );
    assert!(page.contains("no saturation within the series"));
    assert!(page.contains("105.00 tps per unit of clients"));
    assert!(page.contains("405.0 tps at clients = 8"));
    assert!(
        page.contains("key `mode` is not a number"),
        "analysis notes"
    );
    assert!(
        page.contains("failed: target t1 down: &lt;connection refused&gt;"),
        "{page}"
    );
    assert!(page.contains("tpsB 100.0 (per second)"));
    let run_rows = page.matches("<td>1</td><td").count() + page.matches("<td>2</td><td").count();
    assert!(run_rows >= 16, "a row per run: {page}");
}

#[test]
fn a_point_without_a_complete_run_is_marked_not_drawn() {
    let page = html(&sweep());
    assert!(
        page.contains("No complete run at clients = 4 (marked ×"),
        "{page}"
    );
    // Only the simple series lacks a point; the evil one's clients=2 has one complete run.
    assert_eq!(page.matches("No complete run at").count(), 1, "{page}");
    assert!(!page.contains("NaN"));
}

#[test]
fn every_string_from_the_file_is_escaped() {
    let page = html(&sweep());
    assert!(!page.contains(EVIL), "raw script in the page");
    assert!(!page.to_lowercase().contains("<script"), "no script at all");
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    for fetch in ["src=", "href=\"http", "@import", "url("] {
        assert!(!page.contains(fetch), "fetches nothing: {fetch}");
    }
}

#[test]
fn density_page_has_ideal_percent_and_steps() {
    let page = html(&density());
    assert_eq!(page.matches("<svg").count(), 2, "{page}");
    assert!(page.contains("Total throughput vs instances"));
    assert!(page.contains("Percent of ideal vs instances"));
    assert!(
        page.contains("ideal (n × single)"),
        "the legend names the ideal"
    );
    assert!(
        page.contains("<td>3</td><td>251.1</td><td>90.0, 90.0, 90.0</td><td>270.0</td><td>93.0</td><td>90.0</td>"),
        "{page}"
    );
    assert!(page.contains("3 instances reach 93% of the ideal."));
    assert!(page.contains("<td>complete</td>") && page.contains(">complete<"));
    assert!(!page.contains("No complete run"));
}

#[test]
fn write_links_only_the_reports_that_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let f = sweep();
    exp::write(dir, &f).unwrap();
    std::fs::create_dir_all(dir.join("c1-s-r1")).unwrap();
    std::fs::write(dir.join("c1-s-r1").join(html::REPORT_FILE), "x").unwrap();
    std::fs::create_dir_all(dir.join("c2-s-r1")).unwrap();
    let path = write(dir).unwrap();
    assert_eq!(path, dir.join(exp::PAGE));
    assert!(!dir.join(format!("{}.tmp", exp::PAGE)).exists());
    let page = std::fs::read_to_string(&path).unwrap();
    assert!(
        page.contains("<a href=\"c1-s-r1/report.html\">c1-s-r1</a>"),
        "{page}"
    );
    assert_eq!(page.matches("<a href=").count(), 1, "{page}");
    assert!(page.contains("<td>c2-s-r1</td>"));
}

#[test]
fn a_run_dir_leading_out_gets_no_link() {
    let tmp = tempfile::tempdir().unwrap();
    let inner = tmp.path().join("exp");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(tmp.path().join(html::REPORT_FILE), "x").unwrap();
    assert!(!has_report(&inner, ".."));
    assert!(!has_report(&inner, tmp.path().to_str().unwrap()));
}

#[test]
fn write_names_a_dir_that_is_no_experiment() {
    let tmp = tempfile::tempdir().unwrap();
    let e = write(tmp.path()).unwrap_err();
    assert!(e.contains("not an experiment dir"), "{e}");
}

#[test]
fn hrefs_encode_what_would_cut_them() {
    assert_eq!(href("a b#1?/report.html"), "a%20b%231%3F/report.html");
    assert_eq!(num(2.0), "2");
    assert_eq!(num(0.25), "0.25");
}

#[test]
fn runs_with_incidents_are_flagged_with_their_counts() {
    let mut f = sweep();
    assert!(!html(&f).contains("had incidents"), "none yet");
    let r = &mut f.points[0].runs[0];
    r.incidents = BTreeMap::from([("crash_restart".into(), 1), ("oom_kill".into(), 3)]);
    let dir = r.dir.clone();
    let page = html(&f);
    assert!(
        page.contains(&format!("1 run(s) had incidents (OOM kills, killed backends, crash restarts or a server gone): {dir}.")),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"flag\">crash_restart ×1, oom_kill ×3</td>"),
        "{page}"
    );
}
