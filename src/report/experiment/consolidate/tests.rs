//! The consolidation page from a file built in code: schemes `1/1/M` and `M/M/M` at 0 % and
//! 40 %, two databases (one named to break the page if not escaped), two periods. `M/M/M`
//! at 40 % has only a failed run; `1/1/M` at 40 % had an OOM kill.

use std::collections::BTreeMap;

use super::super::tests::{file, run};
use super::super::{html, page, write, RunSamples};
use super::memory::per_second;
use crate::results::experiment::consolidate::{
    ConsolidateAnalysis, ConsolidateRequest, ConsolidateRow, ConsolidateRun, InstanceLayout,
    PeriodRate, RunIncident, SchemeLayout, VmLayout, VmUsage, OVERCOMMIT_KEY, SCHEME_KEY,
};
use crate::results::experiment::{self as exp, ExperimentFile, ExperimentKind, Point, RunStatus};

/// The second database's name: markup that must reach the page escaped.
const DB2: &str = "db<2>";
const GIB: u64 = 1 << 30;

fn vm(name: &str, memory: u64, instances: &[(&str, &[&str])]) -> VmLayout {
    VmLayout {
        name: name.into(),
        cgroup: format!("cons/{name}"),
        cpus: Some(1.5),
        memory_bytes: memory,
        instances: instances
            .iter()
            .map(|(n, dbs)| InstanceLayout {
                name: (*n).into(),
                shared_buffers: "256MB".into(),
                databases: dbs.iter().map(|d| d.to_string()).collect(),
            })
            .collect(),
    }
}

fn request() -> ConsolidateRequest {
    ConsolidateRequest {
        databases: 2,
        periods: 2,
        period: "10m".into(),
        ramp_up: "1m".into(),
        high: 30,
        low: 2,
        overcommit: vec![0, 40],
        balloon: true,
        host_group: "cons".into(),
        cpus: Some(1.5),
        memory: "1GB".into(),
        shared_buffers: "25%".into(),
        working_set: Some("700MB".into()),
        working_set_bytes: Some(700 << 20),
        schemes: vec![
            SchemeLayout {
                scheme: "1/1/M".into(),
                mem_config_bytes: 2 * GIB,
                vms: vec![vm("vm1", 2 * GIB, &[("cons-11m-1", &["db1", DB2])])],
            },
            SchemeLayout {
                scheme: "M/M/M".into(),
                mem_config_bytes: 2 * GIB,
                vms: vec![
                    vm("vm1", GIB, &[("cons-mmm-1", &["db1"])]),
                    vm("vm2", GIB, &[("cons-mmm-2", &[DB2])]),
                ],
            },
        ],
        guests: None,
    }
}

fn periods(rates: &[(f64, f64)]) -> Vec<PeriodRate> {
    rates
        .iter()
        .enumerate()
        .map(|(i, (a, b))| PeriodRate {
            period: format!("period-{}", i + 1),
            duration_s: 600.0,
            by_database: BTreeMap::from([("db1".into(), *a), (DB2.into(), *b)]),
            sum: a + b,
        })
        .collect()
}

fn vm_usage(vm: &str, instance: &str, oom: u64) -> VmUsage {
    VmUsage {
        vm: vm.into(),
        source: format!("instance:{instance}"),
        cpu_seconds: Some(600.0),
        peak_usage_bytes: Some(900 << 20),
        peak_cache_bytes: Some(300 << 20),
        major_faults: Some(1234),
        oom_kills: Some(oom),
        refaults: Some(77),
        limit_hits: Some(5),
    }
}

/// A row and its point: `rates` None is a point whose only run failed.
fn row_and_point(
    scheme: &str,
    rate: u32,
    rates: Option<&[(f64, f64)]>,
    vms: Vec<VmUsage>,
) -> (ConsolidateRow, Point) {
    let dir = format!("{}-{rate}-r1", scheme.replace('/', ""));
    let mut rec = run(&dir, 1, rates.map(|_| 1.0));
    let host_limit = if rate == 0 { 2 * GIB } else { 1228 << 20 };
    let mut row = ConsolidateRow {
        covers_working_sets: Some(rate < 40),
        ..ConsolidateRow::empty(scheme, rate, host_limit)
    };
    match rates {
        Some(r) => {
            let ps = periods(r);
            let mean = ps.iter().map(|p| p.sum).sum::<f64>() / ps.len() as f64;
            let mut c = ConsolidateRun {
                host_limit_bytes: Some(row.host_limit_bytes),
                balloon_bytes: (rate > 0).then_some(2 * GIB - row.host_limit_bytes),
                unit: "NOTPM".into(),
                periods: ps.clone(),
                vms,
                incidents: Vec::new(),
                restarted_under_limit: None,
                ..ConsolidateRun::default()
            };
            if rate > 0 && scheme == "1/1/M" {
                c.incidents.push(RunIncident {
                    t_s: 75.0,
                    vm: "vm1".into(),
                    kind: "oom_kill".into(),
                    detail: "1 process(es) of vm1 killed by the OOM killer".into(),
                });
            }
            row.oom_kills = c.vms.iter().filter_map(|v| v.oom_kills).sum();
            row.incidents = c.incidents.len();
            row.run = Some(dir.clone());
            row.periods = ps;
            row.mean = Some(mean);
            row.relative = Some(mean / 1000.0);
            row.cov = Some(if rate == 0 { 0.0 } else { 0.202 });
            row.cpu_seconds = Some(1200.0);
            row.cpus_used = Some(1.0);
            row.productivity = Some(mean);
            row.runs = 1;
            rec.consolidation = Some(c);
        }
        None => {
            rec.status = RunStatus::Failed;
            rec.error = Some("instance cons-mmm-2 did not start".into());
        }
    }
    let point = Point {
        values: BTreeMap::from([
            (SCHEME_KEY.into(), scheme.into()),
            (OVERCOMMIT_KEY.into(), rate.to_string()),
        ]),
        runs: vec![rec],
        median: None,
        min: None,
        max: None,
        headline_median: None,
    };
    (row, point)
}

fn consolidate() -> ExperimentFile {
    let base: &[(f64, f64)] = &[(900.0, 100.0), (100.0, 900.0)];
    let over: &[(f64, f64)] = &[(700.0, 100.0), (100.0, 500.0)];
    let one = |oom| vec![vm_usage("vm1", "cons-11m-1", oom)];
    let two = || {
        vec![
            vm_usage("vm1", "cons-mmm-1", 0),
            vm_usage("vm2", "cons-mmm-2", 0),
        ]
    };
    let (rows, points): (Vec<_>, Vec<_>) = [
        row_and_point("1/1/M", 0, Some(base), one(0)),
        row_and_point("1/1/M", 40, Some(over), one(1)),
        row_and_point("M/M/M", 0, Some(base), two()),
        row_and_point("M/M/M", 40, None, Vec::new()),
    ]
    .into_iter()
    .unzip();
    let mut f = file(
        ExperimentKind::Consolidate,
        &[SCHEME_KEY, OVERCOMMIT_KEY],
        points,
    );
    f.repeat = 1;
    f.request.consolidate = Some(request());
    f.analysis.consolidate = Some(ConsolidateAnalysis {
        unit: "NOTPM".into(),
        rows,
        rules: vec!["relative: mean over the scheme's <0 %> mean.".into()],
        summary: "1/1/M: 1000 NOTPM at 0 %, 70 % of it at 40 % overcommitment.".into(),
        max_real_rate: Some(31.6),
    });
    f
}

/// `system.csv` of one VM (its instance as source): memory rising, faults, one OOM kill.
fn system_csv(instances: &[&str]) -> String {
    let mut s = String::from("t_s,source,metric,value\n");
    for inst in instances {
        for t in 0..10 {
            let t = f64::from(t) * 10.0;
            let src = format!("instance:{inst}");
            let _ = std::fmt::Write::write_fmt(
                &mut s,
                format_args!(
                    "{t},{src},mem_usage_bytes,{}\n{t},{src},mem_cache_bytes,{}\n{t},{src},major_faults,{}\n{t},{src},oom_events,{}\n",
                    (500.0 + t * 4.0) * 1048576.0,
                    200.0 * 1048576.0,
                    t * t,
                    if t >= 80.0 { 1 } else { 0 }
                ),
            );
        }
    }
    s
}

/// A text element of plotters' SVG holding exactly `s`.
fn text(s: &str) -> String {
    format!(">\n{s}\n</text>")
}

fn samples(instances: &[&str]) -> RunSamples {
    RunSamples {
        system: crate::results::read::parse_system(&system_csv(instances)).unwrap(),
        edges: vec![60.0],
    }
}

/// Every run's samples, as a dir with every system.csv would give them.
fn page_with_samples(f: &ExperimentFile) -> String {
    page(f, &|_| false, &|run: &str| {
        Ok(match run {
            r if r.starts_with("11M") => samples(&["cons-11m-1"]),
            _ => samples(&["cons-mmm-1", "cons-mmm-2"]),
        })
    })
}

#[test]
fn layout_traffic_rates_and_the_emulation_are_stated() {
    let page = html(&consolidate());
    assert!(page.contains("<h2>Layout</h2>"), "{page}");
    assert!(
        page.contains(
            "Not modelled: a guest kernel, ballooning between guests, hypervisor swapping."
        ),
        "{page}"
    );
    assert!(page.contains("scheme 4 (the vPostgres database balloon)"));
    assert!(
        page.contains("<td>M/M/M</td><td>2 GiB</td><td>vm1</td><td>cons/vm1</td><td>1.5</td><td>1 GiB</td><td>cons-mmm-1</td><td>256MB</td><td>db1</td>"),
        "{page}"
    );
    assert!(page.contains("<td>db1, db&lt;2&gt;</td>"), "{page}");
    assert!(page.contains(
        "2 periods of 10m (ramp 1m); in each, one database has 30 clients and the others 2"
    ));
    assert!(page.contains("<td>balloon</td><td>yes: a locked balloon"));
    // Both schemes have MEM_config 2 GiB: one MEM_avail column.
    assert!(
        page.contains("<th>MEM_avail of 2 GiB (1/1/M, M/M/M)</th>"),
        "{page}"
    );
    assert!(
        page.contains("<tr><td>40 %</td><td>1228 MiB</td></tr>"),
        "{page}"
    );
}

#[test]
fn stacked_bars_have_a_rect_per_database_and_period() {
    let f = consolidate();
    let page = html(&f);
    let svg_of = |title: &str| {
        let at = page
            .find(title)
            .unwrap_or_else(|| panic!("no {title}:\n{page}"));
        let start = page[..at].rfind("<svg").unwrap();
        let end = at + page[at..].find("</svg>").unwrap();
        page[start..end].to_string()
    };
    let bars = svg_of("NOTPM per period, each database stacked");
    // Two filled colours (one per database): 3 complete rows × 2 periods each, plus the
    // legend's swatch.
    for colour in ["#0072B2", "#E69F00"] {
        let fill = format!("fill=\"{colour}\"");
        assert_eq!(bars.matches(&fill).count(), 6 + 1, "{colour}:\n{bars}");
    }
    assert!(
        bars.contains(&text("40 %")) && bars.contains(&text("M/M/M")),
        "{bars}"
    );
    assert!(
        bars.contains("db&lt;2&gt;") && !bars.contains("db<2>"),
        "{bars}"
    );
    assert!(
        page.contains("No complete run for M/M/M at 40 % (an empty slot marked ×"),
        "{page}"
    );
    // The numbers behind the bars.
    assert!(
        page.contains("<td>1/1/M</td><td>40 %</td><td>period-2</td><td>600</td><td>100.0</td><td>500.0</td><td>600.0</td>"),
        "{page}"
    );
}

#[test]
fn relative_curve_has_a_line_per_scheme_and_a_gap_not_a_value() {
    let page = html(&consolidate());
    let at = page.find("NOTPM relative to the scheme").unwrap();
    let svg = &page[page[..at].rfind("<svg").unwrap()..at + page[at..].find("</svg>").unwrap()];
    assert!(
        svg.contains(&text("1/1/M")) && svg.contains(&text("M/M/M")),
        "{svg}"
    );
    assert!(svg.contains("baseline (1.0)"));
    assert!(!svg.contains("NaN"));
    assert!(
        page.contains("No relative value for M/M/M at 40 %"),
        "{page}"
    );
}

#[test]
fn analysis_table_rules_and_summary() {
    let page = html(&consolidate());
    assert!(page.contains("<th>mean NOTPM</th>") && page.contains("<th>NOTPM per CPU</th>"));
    assert!(
        page.contains("<tr><td>1/1/M</td><td>40 %</td><td>1228 MiB</td><td>700.0</td><td>0.700</td><td>20.2</td><td>1200.0</td><td>1.00</td><td>700.0</td><td>1</td><td>1</td><td>no</td><td>1</td></tr>"),
        "{page}"
    );
    assert!(
        page.contains("<tr><td>M/M/M</td><td>40 %</td><td>1228 MiB</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>0</td><td>0</td><td>no</td><td>0</td></tr>"),
        "{page}"
    );
    assert!(
        page.contains("<li>relative: mean over the scheme's &lt;0 %&gt; mean.</li>"),
        "{page}"
    );
    assert!(page.contains("70 % of it at 40 % overcommitment."));
}

#[test]
fn memory_charts_per_vm_with_oom_marks_and_incidents() {
    let f = consolidate();
    let page = page_with_samples(&f);
    assert!(page.contains("<h2>Memory over time per VM</h2>"));
    // 1/1/M: one VM twice; M/M/M at 0 %: two VMs. Memory and faults chart each.
    assert_eq!(page.matches(" memory\n</text>").count(), 4, "{page}");
    assert_eq!(page.matches(" faults\n</text>").count(), 4, "{page}");
    assert!(page.contains("OOM kill"), "{page}");
    assert!(
        page.contains("<td>75.0</td><td>vm1</td><td>oom_kill</td><td>1 process(es) of vm1 killed by the OOM killer</td>"),
        "{page}"
    );
    assert!(page.contains("host group limit as read: 1228 MiB; balloon locked: 820 MiB."));
    assert!(
        page.contains("<h3>M/M/M at 40 % overcommitment</h3>\n<p class=\"flag\">No complete run"),
        "{page}"
    );
    assert!(!page.contains("NaN"));
}

#[test]
fn missing_samples_leave_a_note_not_a_broken_page() {
    let f = consolidate();
    let page = page(&f, &|_| false, &|run: &str| {
        if run.starts_with("11M") {
            Err(format!("{run} has no system.csv (the run had no samplers)"))
        } else {
            // Samples of other instances only.
            Ok(samples(&["someone-else"]))
        }
    });
    assert!(
        page.contains("Memory series not read: 11M-0-r1 has no system.csv"),
        "{page}"
    );
    assert!(page.contains("vm2: no samples of instance:cons-mmm-2 in system.csv."));
    assert!(page.contains("<h2>Points and runs</h2>") && page.ends_with("</html>\n"));
    // The page without a dir says so once per row with a run.
    let page = html(&f);
    assert_eq!(
        page.matches("Memory series not read: the page was made from experiment.json alone")
            .count(),
        3
    );
}

#[test]
fn a_file_without_analysis_or_layout_still_renders() {
    let mut f = consolidate();
    f.analysis.consolidate = None;
    f.request.consolidate = None;
    let page = html(&f);
    assert!(page.contains("holds no consolidation layout"), "{page}");
    assert!(page.contains("No consolidation analysis in the file yet"));
    assert!(page.ends_with("</html>\n"));
}

#[test]
fn write_reads_each_runs_system_csv_from_the_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let f = consolidate();
    exp::write(dir, &f).unwrap();
    // 1/1/M at 0 % has its results and samples; at 40 % its results but no system.csv;
    // M/M/M at 0 % no dir at all.
    for run in ["11M-0-r1", "11M-40-r1"] {
        std::fs::create_dir_all(dir.join(run)).unwrap();
        crate::results::read::tests::write_dir(&dir.join(run));
    }
    std::fs::write(dir.join("11M-0-r1/system.csv"), system_csv(&["cons-11m-1"])).unwrap();
    let page = std::fs::read_to_string(write(dir).unwrap()).unwrap();
    assert_eq!(page.matches(&text("vm1 memory")).count(), 1, "{page}");
    assert!(
        page.contains("Memory series not read: 11M-40-r1 has no system.csv"),
        "{page}"
    );
    assert!(
        page.contains("Memory series not read: cannot read"),
        "{page}"
    );
}

#[test]
fn counters_become_rates() {
    assert_eq!(
        per_second(&[(0.0, 0.0), (10.0, 50.0), (10.0, 60.0), (20.0, 40.0)]),
        vec![(10.0, 5.0), (20.0, 0.0)]
    );
}

/// `TIDEBENCH_PAGE_OUT=/tmp/cpage.html cargo test --lib render_for_a_look` writes the page
/// with samples, for a person to look at.
#[test]
fn render_for_a_look() {
    if let Ok(path) = std::env::var("TIDEBENCH_PAGE_OUT") {
        std::fs::write(path, page_with_samples(&consolidate())).unwrap();
    }
}

#[test]
fn compare_of_two_consolidations_is_by_scheme_and_rate_in_their_unit() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let base = consolidate();
    let mut other = consolidate();
    if let Some(an) = &mut other.analysis.consolidate {
        an.rows[1].mean = Some(770.0);
    }
    exp::write(&a, &base).unwrap();
    exp::write(&b, &other).unwrap();
    let t = crate::report::compare::experiment::compare_table(&[a.clone(), b.clone()]).unwrap();
    let row = |label: &str| -> Vec<String> {
        t.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label}:\n{t}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert!(
        t.contains("[1] mean NOTPM") && t.contains("[2] mean NOTPM"),
        "{t}"
    );
    assert_eq!(
        row("scheme=1/1/M overcommit=40"),
        [
            "scheme=1/1/M",
            "overcommit=40",
            "700.0",
            "1.00x",
            "770.0",
            "1.10x"
        ],
        "{t}"
    );
    assert_eq!(
        row("scheme=M/M/M overcommit=40"),
        ["scheme=M/M/M", "overcommit=40", "-", "-", "-", "-"],
        "{t}"
    );
    // Another unit (tps of another workload) is refused, naming both.
    if let Some(an) = &mut other.analysis.consolidate {
        an.unit = "tps".into();
    }
    exp::write(&b, &other).unwrap();
    let e = crate::report::compare::experiment::compare_table(&[a, b]).unwrap_err();
    assert!(e.contains("(in NOTPM)") && e.contains("(in tps)"), "{e}");
}
