//! Synthetic working-set curves: a clean knee, a flat curve, the study's dip, a falling curve,
//! a curve that never bends, too few points and points without a complete run.

use super::*;
use crate::results::experiment::{HeadlineValue, RunRecord, RunStatus};

/// (x MiB, y) points with x = 512, 1024, ... MiB.
fn curve(ys: &[f64]) -> Vec<(f64, f64)> {
    ys.iter()
        .enumerate()
        .map(|(i, y)| (512.0 * (i + 1) as f64, *y))
        .collect()
}

#[test]
fn a_clean_knee_is_where_the_curve_stops_rising() {
    // Scaled: y_n 0, .57, .97, 1, 1, 1 against x_n 0, .2, .4, ...: highest above the
    // diagonal at the third point.
    let c = curve(&[300.0, 700.0, 980.0, 1000.0, 1000.0, 1000.0]);
    assert_eq!(kneedle(&c), Ok(1536.0));
    assert!(dips(&c).is_empty());
}

#[test]
fn a_flat_curve_has_no_knee_and_fits_in_the_smallest_size() {
    let c = curve(&[1000.0, 990.0, 1005.0, 1002.0]);
    match kneedle(&c) {
        Err(NoKnee::Flat { spread }) => assert!(spread < FLAT_TOLERANCE, "{spread}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_dip_after_the_knee_is_named_and_does_not_move_it() {
    // As the study's Figure 7: a dip near 2 GB, full throughput on either side.
    let c = curve(&[400.0, 800.0, 1000.0, 850.0, 1000.0, 1000.0]);
    assert_eq!(kneedle(&c), Ok(1536.0));
    let d = dips(&c);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0, 2048.0);
    assert!((d[0].1 - 0.15).abs() < 1e-9, "{d:?}");
}

#[test]
fn a_dip_cannot_be_the_knee() {
    // The raw curve is highest above the diagonal nowhere near the dip; the running maximum
    // keeps the dip's point on the plateau before it, so the knee stays at a real rise.
    let c = curve(&[400.0, 800.0, 700.0, 1000.0, 1000.0]);
    assert_eq!(kneedle(&c), Ok(1024.0));
    assert_eq!(dips(&c), vec![(1536.0, 0.125)]);
}

#[test]
fn a_falling_curve_has_no_knee() {
    let c = curve(&[1000.0, 900.0, 800.0]);
    match kneedle(&c) {
        Err(NoKnee::Falling { drop }) => assert!((drop - 0.2).abs() < 1e-9),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_straight_or_convex_curve_has_no_knee_within_the_range() {
    assert_eq!(
        kneedle(&curve(&[100.0, 200.0, 300.0, 400.0])),
        Err(NoKnee::NoBend { bend: 0.0 })
    );
    assert!(matches!(
        kneedle(&curve(&[100.0, 110.0, 150.0, 400.0])),
        Err(NoKnee::NoBend { .. })
    ));
}

#[test]
fn fewer_than_three_points_have_no_knee() {
    assert_eq!(kneedle(&[]), Err(NoKnee::TooFewPoints(0)));
    assert_eq!(
        kneedle(&curve(&[100.0, 1000.0])),
        Err(NoKnee::TooFewPoints(2))
    );
}

// ---- the analysis over points ----

fn run(tps: Option<f64>, notpm: Option<f64>) -> RunRecord {
    RunRecord {
        status: if tps.is_some() {
            RunStatus::Complete
        } else {
            RunStatus::Failed
        },
        complete: tps.is_some(),
        tps,
        headline: notpm.map(|v| HeadlineValue {
            label: "NOTPM".into(),
            value: v,
            unit: "per minute".into(),
        }),
        error: tps.is_none().then(|| "OOM".into()),
        ..RunRecord::pending("run", 1)
    }
}

/// A point of memory `m` MiB with shared_buffers `sb` MiB and one run.
fn point(m: u32, sb: u32, r: RunRecord) -> Point {
    Point {
        values: [
            (KNEE_MEMORY_KEY.to_string(), format!("{m}MB")),
            (KNEE_SHARED_BUFFERS_KEY.to_string(), format!("{sb}MB")),
        ]
        .into_iter()
        .collect(),
        runs: vec![r],
        median: None,
        min: None,
        max: None,
        headline_median: None,
    }
}

fn keep(mode: KneeMode, kept: &str) -> KneeRequest {
    KneeRequest {
        mode,
        kept: kept.into(),
    }
}

#[test]
fn the_headline_is_normalized_to_the_best_point_and_the_knee_is_the_vm_working_set() {
    let points: Vec<Point> = [
        (1280, 3000.0),
        (1536, 7000.0),
        (1792, 9800.0),
        (2048, 10000.0),
    ]
    .iter()
    .map(|(m, notpm)| point(*m, 1024, run(Some(notpm / 60.0), Some(*notpm))))
    .collect();
    let a = analyse(&keep(KneeMode::KeepSharedBuffers, "1GB"), &points);
    let k = a.knee.expect("a knee analysis");
    assert_eq!(k.metric, "NOTPM");
    assert_eq!(k.x, KNEE_MEMORY_KEY);
    assert_eq!(k.curve.len(), 4);
    let top = k.curve.iter().map(|p| p.normalized).fold(0.0, f64::max);
    assert_eq!(top, 1.0);
    assert_eq!(k.curve[0].normalized, 0.3);
    assert_eq!(k.best.unwrap().x_mib, 2048.0);
    assert_eq!(k.knee_mib, Some(1792.0));
    assert!(k.no_knee.is_none());
    assert!(
        k.summary
            .starts_with("VM memory working set ≈ 1792 MiB (shared_buffers kept at 1GB)"),
        "{}",
        k.summary
    );
    assert!(k.method.iter().any(|m| m.contains("Kneedle")));
    assert!(a.notes.is_empty(), "{:?}", a.notes);
}

#[test]
fn keep_difference_reads_shared_buffers_and_names_the_vm_it_needs() {
    let points: Vec<Point> = [(352, 0.0), (608, 700.0), (864, 990.0), (1120, 1000.0)]
        .iter()
        .enumerate()
        .map(|(i, (sb, tps))| {
            // The first point's run failed: it is left out, three remain.
            let r = if i == 0 {
                run(None, None)
            } else {
                run(Some(*tps), None)
            };
            point(sb + 352, *sb, r)
        })
        .collect();
    let a = analyse(&keep(KneeMode::KeepDifference, "352MB"), &points);
    let k = a.knee.unwrap();
    assert_eq!(k.metric, "tps");
    assert_eq!(k.x, KNEE_SHARED_BUFFERS_KEY);
    assert_eq!(
        k.curve.iter().map(|p| p.x_mib).collect::<Vec<_>>(),
        [608.0, 864.0, 1120.0]
    );
    assert_eq!(k.knee_mib, Some(864.0));
    assert!(
        k.summary.contains("shared-buffers working set ≈ 864 MiB")
            && k.summary.contains("the VM needs about 1216 MiB"),
        "{}",
        k.summary
    );
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("shared_buffers 352 MiB has no complete run")),
        "{:?}",
        a.notes
    );
}

#[test]
fn missing_points_leaving_too_few_say_why_there_is_no_knee() {
    let points = vec![
        point(160, 64, run(Some(100.0), None)),
        point(256, 64, run(None, None)),
        point(384, 64, run(Some(120.0), None)),
    ];
    let a = analyse(&keep(KneeMode::KeepSharedBuffers, "64MB"), &points);
    let k = a.knee.unwrap();
    assert_eq!(k.knee_mib, None);
    assert_eq!(k.curve.len(), 2);
    assert!(
        k.no_knee.as_deref().unwrap().contains("a knee needs 3"),
        "{:?}",
        k.no_knee
    );
    assert!(k.summary.starts_with("no knee"), "{}", k.summary);
}

#[test]
fn a_flat_series_reports_the_smallest_size_as_the_bound() {
    let points = vec![
        point(160, 64, run(Some(1000.0), None)),
        point(256, 64, run(Some(1010.0), None)),
        point(384, 64, run(Some(995.0), None)),
    ];
    let k = analyse(&keep(KneeMode::KeepSharedBuffers, "64MB"), &points)
        .knee
        .unwrap();
    assert_eq!(k.knee_mib, None);
    assert!(
        k.no_knee.as_deref().unwrap().contains("flat"),
        "{:?}",
        k.no_knee
    );
    assert!(
        k.summary.starts_with("VM memory working set ≤ 160 MiB"),
        "{}",
        k.summary
    );
    assert_eq!(k.best.unwrap().x_mib, 256.0);
}

#[test]
fn the_dip_is_a_note() {
    let points: Vec<Point> = [(1024, 400.0), (1536, 1000.0), (2048, 800.0), (2560, 1000.0)]
        .iter()
        .map(|(m, tps)| point(*m, 512, run(Some(*tps), None)))
        .collect();
    let a = analyse(&keep(KneeMode::KeepSharedBuffers, "512MB"), &points);
    assert_eq!(a.knee.unwrap().knee_mib, Some(1536.0));
    assert!(
        a.notes
            .iter()
            .any(|n| n.starts_with("a dip at VM memory 2048 MiB: 20 % below")),
        "{:?}",
        a.notes
    );
}

#[test]
fn a_falling_series_is_bounded_by_the_smallest_size_without_dip_notes() {
    let points = vec![
        point(160, 64, run(Some(1000.0), None)),
        point(256, 64, run(Some(990.0), None)),
        point(384, 64, run(Some(900.0), None)),
    ];
    let a = analyse(&keep(KneeMode::KeepSharedBuffers, "64MB"), &points);
    let k = a.knee.unwrap();
    assert_eq!(k.knee_mib, None);
    assert_eq!(
        k.summary,
        "VM memory working set ≤ 160 MiB, the smallest size (shared_buffers kept at 64MB): no \
         knee, throughput does not rise with VM memory (the best is at the smallest size; \
         larger sizes lose up to 10 %); best 1,000 tps at 160 MiB."
    );
    assert!(
        k.no_knee
            .as_deref()
            .unwrap()
            .ends_with("fits in the smallest VM memory, 160 MiB (as the study read its Figure 9)"),
        "{:?}",
        k.no_knee
    );
    assert!(a.notes.is_empty(), "the reason says it: {:?}", a.notes);
}
