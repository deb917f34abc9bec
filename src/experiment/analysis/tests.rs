//! Synthetic curves and density series for the analysis rules.

use std::collections::BTreeMap;

use super::*;
use crate::results::experiment::{CurvePoint, HeadlineValue, SeriesAnalysis};

fn run(tps: f64) -> RunRecord {
    RunRecord {
        status: RunStatus::Complete,
        complete: true,
        tps: Some(tps),
        ..RunRecord::pending("run", 1)
    }
}

fn interrupted(tps: f64) -> RunRecord {
    RunRecord {
        status: RunStatus::Interrupted,
        complete: false,
        ..run(tps)
    }
}

fn failed() -> RunRecord {
    RunRecord {
        status: RunStatus::Failed,
        complete: false,
        tps: None,
        error: Some("target down".into()),
        ..run(0.0)
    }
}

fn point(values: &[(&str, &str)], runs: Vec<RunRecord>) -> Point {
    Point {
        values: values
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        runs,
        median: None,
        min: None,
        max: None,
        headline_median: None,
    }
}

/// One point per (clients, tps), each with a single complete run.
fn clients_curve(curve: &[(u32, f64)]) -> Vec<Point> {
    curve
        .iter()
        .map(|(x, tps)| point(&[("clients", &x.to_string())], vec![run(*tps)]))
        .collect()
}

fn one_series(points: &[Point]) -> SeriesAnalysis {
    let analysis = sweep(&["clients".to_string()], points);
    assert_eq!(analysis.series.len(), 1, "{analysis:?}");
    analysis.series.into_iter().next().unwrap()
}

#[test]
fn linear_then_flat_finds_the_knee_and_saturation() {
    let points = clients_curve(&[
        (1, 1000.0),
        (2, 2000.0),
        (4, 4000.0),
        (8, 7900.0),
        (16, 9000.0),
        (32, 9200.0),
        (64, 9100.0),
    ]);
    let s = one_series(&points);
    assert_eq!(s.x, "clients");
    assert!(s.fixed.is_empty());
    assert_eq!(s.curve.len(), 7);
    assert_eq!(
        s.peak,
        Some(CurvePoint {
            x: 32.0,
            tps: 9200.0
        })
    );
    assert_eq!(s.slope, Some(1000.0));
    assert_eq!(s.linear_until, Some(8.0));
    // 8 → 16 still rises 14 %; nothing after 16 beats 9,000 by more than 5 %.
    assert_eq!(s.saturation, Some(16.0));
    assert_eq!(
        s.summary,
        "peak 9,200 tps at clients=32; linear (within 10 %) up to clients=8 at 1,000 tps per \
         client; saturates at clients=16."
    );
    assert!(s.rules.iter().any(|r| r.contains("within 10 %")));
    assert!(s.rules.iter().any(|r| r.contains("more than 5 %")));
    assert!(s.rules.iter().any(|r| r.contains("through the origin")));
}

#[test]
fn linear_then_falling_saturates_at_the_peak() {
    let points = clients_curve(&[
        (1, 1000.0),
        (2, 2000.0),
        (4, 4000.0),
        (8, 6000.0),
        (16, 7000.0),
        (32, 5000.0),
    ]);
    let s = one_series(&points);
    assert_eq!(
        s.peak,
        Some(CurvePoint {
            x: 16.0,
            tps: 7000.0
        })
    );
    assert_eq!(s.linear_until, Some(4.0));
    assert_eq!(s.saturation, Some(16.0));
    assert!(
        s.summary.ends_with(
            "saturates at clients=16; falls to 5,000 tps at clients=32 (-29 % from the peak)."
        ),
        "{}",
        s.summary
    );
}

#[test]
fn a_plateau_before_the_peak_saturates_before_it() {
    // 6,800 → 7,000 is +2.9 %: the curve is flat from 8 on, though its peak is at 16.
    let points = clients_curve(&[
        (1, 1000.0),
        (4, 4000.0),
        (8, 6800.0),
        (16, 7000.0),
        (32, 5000.0),
    ]);
    let s = one_series(&points);
    assert_eq!(s.peak.map(|p| p.x), Some(16.0));
    assert_eq!(s.saturation, Some(8.0));
}

#[test]
fn noisy_line_stays_linear_without_saturation() {
    let wobble = [1.03, 0.97, 1.02, 0.97, 1.03];
    let xs = [1u32, 2, 4, 8, 16];
    let curve: Vec<(u32, f64)> = xs
        .iter()
        .zip(wobble)
        .map(|(x, w)| (*x, 1000.0 * f64::from(*x) * w))
        .collect();
    let s = one_series(&clients_curve(&curve));
    assert_eq!(s.linear_until, Some(16.0));
    assert_eq!(s.saturation, None);
    assert_eq!(s.peak.map(|p| p.x), Some(16.0));
    // 16,480 after 7,760.
    assert!(
        s.summary
            .ends_with("no saturation within the series (still +112 % at the last step)."),
        "{}",
        s.summary
    );
}

#[test]
fn a_dip_then_a_rise_is_not_saturation() {
    // 290 is a dip: 320 beats it by 10 %. 300 is beaten by 320 (+6.7 %). 320 holds.
    let s = one_series(&clients_curve(&[
        (1, 100.0),
        (2, 200.0),
        (3, 300.0),
        (4, 290.0),
        (5, 320.0),
        (6, 322.0),
    ]));
    assert_eq!(s.saturation, Some(5.0));
    assert_eq!(s.linear_until, Some(3.0));
}

#[test]
fn still_rising_at_the_end_has_no_saturation() {
    let s = one_series(&clients_curve(&[
        (1, 1000.0),
        (2, 2000.0),
        (3, 3000.0),
        (4, 3500.0),
        (5, 3800.0),
    ]));
    assert_eq!(s.saturation, None);
    assert_eq!(s.linear_until, Some(3.0));
    assert_eq!(
        s.summary,
        "peak 3,800 tps at clients=5; linear (within 10 %) up to clients=3 at 1,000 tps per \
         client; no saturation within the series (still +9 % at the last step)."
    );
}

#[test]
fn a_point_without_complete_runs_is_left_out() {
    let mut points = clients_curve(&[(1, 1000.0), (2, 2000.0), (8, 2100.0)]);
    // Its interrupted run measured a high rate over a short window: it must not count.
    let incomplete = RunRecord {
        complete: false,
        ..run(50_000.0)
    };
    points.insert(
        2,
        point(
            &[("clients", "4")],
            vec![interrupted(90_000.0), failed(), incomplete],
        ),
    );
    let analysis = sweep(&["clients".to_string()], &points);
    let s = &analysis.series[0];
    assert_eq!(s.curve, vec![(1.0, 1000.0), (2.0, 2000.0), (8.0, 2100.0)]);
    assert_eq!(
        s.peak,
        Some(CurvePoint {
            x: 8.0,
            tps: 2100.0
        })
    );
    assert_eq!(s.linear_until, Some(2.0));
    assert_eq!(s.saturation, Some(2.0));
    assert!(
        analysis
            .notes
            .iter()
            .any(|n| n.contains("clients=4 has no complete run")),
        "{:?}",
        analysis.notes
    );

    summarize_points(&mut points);
    assert_eq!(points[2].median, None);
    assert_eq!(points[2].min, None);
    assert_eq!(points[2].max, None);
    assert_eq!(points[1].median, Some(2000.0));
}

#[test]
fn incomplete_runs_do_not_move_a_median() {
    let mut points = vec![point(
        &[("clients", "4")],
        vec![run(100.0), interrupted(10.0), run(300.0), failed()],
    )];
    summarize_points(&mut points);
    assert_eq!(points[0].median, Some(200.0));
    assert_eq!(points[0].min, Some(100.0));
    assert_eq!(points[0].max, Some(300.0));
}

#[test]
fn even_counts_take_the_mean_of_the_middle_two() {
    let headline = |value: f64| HeadlineValue {
        label: "NOTPM".into(),
        value,
        unit: "per minute".into(),
    };
    let runs = [10.0, 40.0, 20.0, 30.0]
        .iter()
        .map(|t| RunRecord {
            headline: Some(headline(t * 60.0)),
            ..run(*t)
        })
        .collect();
    let mut points = vec![
        point(&[("clients", "1")], runs),
        point(&[("clients", "2")], vec![run(7.0)]),
        point(&[("clients", "3")], Vec::new()),
    ];
    summarize_points(&mut points);
    assert_eq!(points[0].median, Some(25.0));
    assert_eq!(points[0].min, Some(10.0));
    assert_eq!(points[0].max, Some(40.0));
    assert_eq!(points[0].headline_median, Some(1500.0));
    assert_eq!(points[1].median, Some(7.0));
    assert_eq!(points[1].headline_median, None);
    assert_eq!(points[2].median, None);
    assert_eq!(median(&[3.0, 1.0]), Some(2.0));
    assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
    assert_eq!(median(&[]), None);
}

#[test]
fn a_grid_of_two_keys_gives_one_series_per_other_value() {
    // protocol varies fastest, so the series are seen interleaved.
    let mut points = Vec::new();
    for (clients, simple, extended) in
        [(1, 1000.0, 800.0), (2, 2000.0, 1500.0), (4, 2050.0, 1560.0)]
    {
        let c = clients.to_string();
        points.push(point(
            &[("clients", &c), ("protocol", "simple")],
            vec![run(simple)],
        ));
        points.push(point(
            &[("clients", &c), ("protocol", "extended")],
            vec![run(extended)],
        ));
    }
    let varied = ["clients".to_string(), "protocol".to_string()];
    let analysis = sweep(&varied, &points);
    assert_eq!(analysis.series.len(), 2);
    let (simple, extended) = (&analysis.series[0], &analysis.series[1]);
    assert_eq!(simple.x, "clients");
    assert_eq!(
        simple.fixed,
        BTreeMap::from([("protocol".into(), "simple".into())])
    );
    assert_eq!(extended.fixed["protocol"], "extended");
    assert_eq!(
        simple.curve,
        vec![(1.0, 1000.0), (2.0, 2000.0), (4.0, 2050.0)]
    );
    assert_eq!(
        extended.curve,
        vec![(1.0, 800.0), (2.0, 1500.0), (4.0, 1560.0)]
    );
    assert_eq!(simple.saturation, Some(2.0));
    // 1,500 is 6 % under the line of 1,600: still linear.
    assert_eq!(extended.linear_until, Some(2.0));
    assert_eq!(extended.saturation, Some(2.0));
}

#[test]
fn the_last_numeric_key_is_on_x() {
    let points = vec![
        point(&[("clients", "1"), ("scale", "10")], vec![run(100.0)]),
        point(&[("clients", "1"), ("scale", "100")], vec![run(90.0)]),
        point(&[("clients", "2"), ("scale", "10")], vec![run(200.0)]),
        point(&[("clients", "2"), ("scale", "100")], vec![run(170.0)]),
    ];
    let analysis = sweep(&["clients".to_string(), "scale".to_string()], &points);
    assert_eq!(analysis.series.len(), 2);
    assert_eq!(analysis.series[0].x, "scale");
    assert_eq!(analysis.series[0].fixed["clients"], "1");
    assert_eq!(analysis.series[0].curve, vec![(10.0, 100.0), (100.0, 90.0)]);
}

#[test]
fn a_sweep_without_a_numeric_key_has_no_series() {
    let points = vec![
        point(&[("protocol", "simple")], vec![run(100.0)]),
        point(&[("protocol", "prepared")], vec![run(120.0)]),
    ];
    let analysis = sweep(&["protocol".to_string()], &points);
    assert!(analysis.series.is_empty());
    assert_eq!(
        analysis.notes,
        vec!["protocol is not numeric: no curve analysis"]
    );

    // One value that is not a number makes the whole key not numeric.
    let points = vec![
        point(&[("clients", "16")], vec![run(100.0)]),
        point(&[("clients", "max")], vec![run(120.0)]),
    ];
    let analysis = sweep(&["clients".to_string()], &points);
    assert!(analysis.series.is_empty());
    assert_eq!(
        analysis.notes,
        vec!["clients is not numeric: no curve analysis"]
    );
}

#[test]
fn a_series_of_one_point_has_a_peak_and_a_note() {
    let points = vec![
        point(&[("clients", "1")], vec![run(1000.0)]),
        point(&[("clients", "2")], vec![failed()]),
    ];
    let analysis = sweep(&["clients".to_string()], &points);
    let s = &analysis.series[0];
    assert_eq!(s.curve, vec![(1.0, 1000.0)]);
    assert_eq!(
        s.peak,
        Some(CurvePoint {
            x: 1.0,
            tps: 1000.0
        })
    );
    assert_eq!((s.slope, s.linear_until, s.saturation), (None, None, None));
    assert!(analysis.notes.iter().any(|n| n.contains("a curve needs 2")));
}

#[test]
fn a_first_x_of_zero_uses_the_line_through_the_first_two_points() {
    let s = one_series(&clients_curve(&[
        (0, 100.0),
        (1, 1100.0),
        (2, 2100.0),
        (3, 2500.0),
    ]));
    assert_eq!(s.slope, Some(1000.0));
    // Line at 3 is 3,100; 2,500 is 19 % under it.
    assert_eq!(s.linear_until, Some(2.0));
    assert!(
        s.rules.iter().any(|r| r.contains("first two points")),
        "{:?}",
        s.rules
    );
}

fn density_point(n: u32, runs: Vec<RunRecord>) -> Point {
    point(&[("instances", &n.to_string())], runs)
}

fn density_run(per_instance: &[f64], cpu: f64) -> RunRecord {
    RunRecord {
        per_instance_tps: per_instance.to_vec(),
        host_cpu_percent: Some(cpu),
        ..run(per_instance.iter().sum())
    }
}

#[test]
fn density_measures_each_step_against_the_ideal() {
    let points = vec![
        density_point(
            1,
            vec![density_run(&[990.0], 40.0), density_run(&[1010.0], 50.0)],
        ),
        density_point(
            2,
            vec![
                density_run(&[940.0, 960.0], 70.0),
                density_run(&[950.0, 950.0], 72.0),
                density_run(&[960.0, 940.0], 74.0),
                interrupted(5000.0),
            ],
        ),
        density_point(3, vec![density_run(&[900.0, 880.0, 870.0], 90.0)]),
        density_point(4, vec![density_run(&[900.0, 900.0, 900.0, 900.0], 97.0)]),
    ];
    let analysis = density(&points);
    assert!(analysis.notes.is_empty(), "{:?}", analysis.notes);
    let d = analysis.density.unwrap();
    assert_eq!(d.single_median, Some(1000.0));
    assert_eq!(d.steps.len(), 4);
    let two = &d.steps[1];
    assert_eq!(two.instances, 2);
    assert_eq!(two.total_tps, Some(1900.0));
    assert_eq!(two.per_instance_tps, vec![950.0, 950.0]);
    assert_eq!(two.ideal, Some(2000.0));
    assert_eq!(two.percent_of_ideal, Some(95.0));
    assert_eq!(two.host_cpu_percent, Some(72.0));
    // 2,650 of 3,000.
    assert_eq!(d.steps[2].percent_of_ideal, Some(88.3));
    assert_eq!(d.steps[3].percent_of_ideal, Some(90.0));
    assert_eq!(
        d.summary,
        "at 4 instances: 3,600 tps, 90.0 % of the ideal 4 × 1,000 tps; host CPU 97 %"
    );
}

#[test]
fn density_without_a_complete_single_step_has_no_ideal() {
    let points = vec![
        density_point(2, vec![density_run(&[900.0, 900.0], 60.0)]),
        density_point(1, vec![interrupted(1000.0)]),
    ];
    let analysis = density(&points);
    let d = analysis.density.unwrap();
    assert_eq!(d.single_median, None);
    assert_eq!(
        d.steps.iter().map(|s| s.instances).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(d.steps[0].total_tps, None);
    assert_eq!(d.steps[1].total_tps, Some(1800.0));
    assert_eq!(d.steps[1].ideal, None);
    assert_eq!(d.steps[1].percent_of_ideal, None);
    assert!(analysis
        .notes
        .iter()
        .any(|n| n.contains("1-instance step has no complete run")));
    assert_eq!(
        d.summary,
        "at 2 instances: 1,800 tps (no ideal: the 1-instance step has no complete run); host CPU 60 %"
    );
}

#[test]
fn tps_read_with_thousands_separators() {
    assert_eq!(fmt_tps(12_340.0), "12,340");
    assert_eq!(fmt_tps(1_234_567.4), "1,234,567");
    assert_eq!(fmt_tps(999.6), "1,000");
    assert_eq!(fmt_tps(100.0), "100");
    assert_eq!(fmt_tps(12.34), "12.3");
}

#[test]
fn size_values_are_a_curve_in_mib() {
    let points: Vec<Point> = [("128MB", 100.0), ("512MB", 380.0), ("1GB", 400.0)]
        .iter()
        .map(|(v, tps)| point(&[("instance.set.shared_buffers", v)], vec![run(*tps)]))
        .collect();
    let a = sweep(&["instance.set.shared_buffers".to_string()], &points);
    let s = &a.series[0];
    assert_eq!(s.curve, [(128.0, 100.0), (512.0, 380.0), (1024.0, 400.0)]);
    assert!(s.rules[0].contains("MiB"), "{:?}", s.rules);
}
