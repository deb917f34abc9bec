//! The decision rule pinned at its edges on figures of known spread, the `--fail-on` grammar,
//! and the whole path (figures read from results dirs that the synthetic writer makes, judged,
//! written as JSON, JUnit and Markdown).

use super::super::figures::{self, Figures};
use super::super::verdict_out;
use super::*;

/// Five runs around `centre`, spread ±1 %.
fn five(centre: f64) -> Vec<f64> {
    [1.0, 0.995, 1.005, 0.99, 1.01]
        .iter()
        .map(|f| f * centre)
        .collect()
}

#[test]
fn a_fall_past_the_threshold_and_outside_the_spread_regressed() {
    let j = judge_one(&five(1000.0), &five(950.0), -3.0);
    assert_eq!(j.decision, Decision::Regressed, "{j:?}");
    let (lo, hi) = j.interval.unwrap();
    assert!(lo <= 0.95 && (0.95..1.0).contains(&hi), "{j:?}");
    // Where a rise is worse (latency) a fall is no regression: within a +10 % threshold, an
    // improvement past it.
    assert_eq!(
        judge_one(&five(1000.0), &five(950.0), 10.0).decision,
        Decision::WithinNoise,
        "5 % is inside a +10 % threshold"
    );
    assert_eq!(
        judge_one(&five(1000.0), &five(850.0), 10.0).decision,
        Decision::Improved
    );
}

#[test]
fn a_change_smaller_than_the_threshold_is_within_noise_however_sure() {
    // 2 % down with 1 % spread: a real change, but not past -3 %.
    let j = judge_one(&five(1000.0), &five(980.0), -3.0);
    assert!(
        j.interval.unwrap().1 < 1.0,
        "the interval excludes 1: {j:?}"
    );
    assert_eq!(j.decision, Decision::WithinNoise);
    // Exactly at the threshold counts as past it.
    let at = judge_one(&[100.0; 3], &[97.0; 3], -3.0);
    assert_eq!(at.decision, Decision::Regressed, "{at:?}");
}

#[test]
fn a_change_the_spread_can_explain_is_within_noise() {
    // Medians 10 % apart, but each side's runs spread across the other's.
    let base = [100.0, 60.0, 140.0, 80.0, 120.0];
    let other = [90.0, 55.0, 130.0, 70.0, 125.0];
    let j = judge_one(&base, &other, -3.0);
    assert!(j.ratio.unwrap() < 0.97, "{j:?}");
    let (lo, hi) = j.interval.unwrap();
    assert!(lo < 1.0 && hi > 1.0, "{j:?}");
    assert_eq!(j.decision, Decision::WithinNoise);
}

#[test]
fn identical_sides_are_within_noise_and_fewer_than_three_runs_are_never_judged() {
    let j = judge_one(&five(500.0), &five(500.0), -3.0);
    assert_eq!(j.decision, Decision::WithinNoise);
    assert_eq!(j.ratio, Some(1.0));
    for (a, b) in [(vec![100.0], vec![10.0]), (five(100.0), vec![10.0, 11.0])] {
        let j = judge_one(&a, &b, -3.0);
        assert_eq!(j.decision, Decision::NotJudged, "{j:?}");
        assert!(j.interval.is_none() && j.ratio.is_some());
        assert!(j.note.as_deref().unwrap().contains("3 runs"), "{j:?}");
    }
    let zero = judge_one(&[0.0; 3], &[1.0; 3], -3.0);
    assert_eq!(zero.decision, Decision::NotJudged);
}

#[test]
fn the_interval_is_the_same_every_time() {
    let a = judge_one(&five(100.0), &five(97.0), -3.0);
    let b = judge_one(&five(100.0), &five(97.0), -3.0);
    assert_eq!(a.interval, b.interval);
}

#[test]
fn fail_on_reads_metric_sign_and_scope() {
    let t: Threshold = "tps:-3%".parse().unwrap();
    assert_eq!((t.selector.as_str(), t.pct), ("tps", 3.0));
    let t: Threshold = "type:new_order:p99:+5%".parse().unwrap();
    assert_eq!((t.selector.as_str(), t.pct), ("type:new_order:p99", 5.0));
    assert_eq!("p95:10%".parse::<Threshold>().unwrap().pct, 10.0);
    let sign = "tps:+3%".parse::<Threshold>().unwrap_err();
    assert!(sign.to_string().contains("tps:-5%"), "{sign}");
    let name = "qps:-3%".parse::<Threshold>().unwrap_err();
    assert!(
        name.to_string().contains("choose from headline, tps"),
        "{name}"
    );
    for bad in [
        "tps",
        "tps:-3",
        "tps:x%",
        "tps:0%",
        "set:a:tps:-3%",
        "type::tps:-3%",
    ] {
        let e = bad.parse::<Threshold>().unwrap_err();
        assert!(matches!(e, ThresholdError::Form(_)), "{bad}: {e}");
    }
}

#[test]
fn the_most_specific_threshold_wins() {
    let base = Figures {
        name: "a".into(),
        runs: 3,
        values: vec![
            ("tps".into(), vec![100.0; 3]),
            ("type:x:tps".into(), vec![100.0; 3]),
            ("type:y:tps".into(), vec![100.0; 3]),
        ],
        headline: None,
        servers: Vec::new(),
    };
    let mut other = base.clone();
    for (_, v) in &mut other.values {
        *v = vec![96.0; 3];
    }
    let mut base = base;
    base.values.push(("p95".into(), vec![1.0; 3]));
    other.values.push(("p95".into(), vec![2.0; 3]));
    let t = ["tps:-5%", "type:y:tps:-3%"].map(|s| s.parse::<Threshold>().unwrap());
    let judged = judge(&[base.clone(), other.clone()], &t);
    let said: Vec<(&str, Decision, f64)> = judged
        .iter()
        .map(|j| (j.metric.as_str(), j.decision, j.threshold_pct))
        .collect();
    assert_eq!(
        said,
        [
            ("tps", Decision::WithinNoise, -5.0),
            ("type:x:tps", Decision::WithinNoise, -5.0),
            ("type:y:tps", Decision::Regressed, -3.0),
            // Doubled, but no --fail-on names it: described only.
            ("p95", Decision::NotJudged, 10.0),
        ]
    );
    assert!(regressed(&judged));
    // Without --fail-on every figure is judged at its default.
    let all = judge(&[base, other], &[]);
    let p95 = all.iter().find(|j| j.metric == "p95").unwrap();
    assert_eq!(p95.decision, Decision::Regressed);
}

/// A small synthetic run whose transaction counts scale with `samples`.
fn synthetic(dir: &std::path::Path, samples: u32) {
    let shape = crate::results::synthetic::Shape {
        groups: 2,
        txn_types: 2,
        phases: 2,
        phase_secs: 10,
        interval_secs: 5,
        samples_per_row: samples,
        sample_secs: 5,
    };
    crate::results::synthetic::generate(dir, &shape, &crate::workload::Registry).unwrap();
}

#[test]
fn results_dirs_judged_and_written_for_a_ci() {
    let tmp = tempfile::tempdir().unwrap();
    let side = |name: &str, samples: &[u32]| {
        let d = tmp.path().join(name);
        for (i, s) in samples.iter().enumerate() {
            synthetic(&d.join(format!("r{i}")), *s);
        }
        d
    };
    let base = side("base", &[200, 202, 198]);
    let slower = side("slower", &[180, 182, 178]);
    let same = side("same", &[201, 199, 200]);
    let sides = figures::read_sides(&[base.clone(), slower, same]).unwrap();
    let keys: Vec<&str> = sides[0].values.iter().map(|(k, _)| k.as_str()).collect();
    for k in [
        "tps",
        "p95",
        "cpu",
        "client_cpu",
        "type:txn1:p99",
        "group:G01:tps",
    ] {
        assert!(keys.contains(&k), "{k} in {keys:?}");
    }
    let t = ["tps:-3%".parse::<Threshold>().unwrap()];
    let judged = judge(&sides, &t);
    let tps = |side: usize| {
        judged
            .iter()
            .find(|j| j.metric == "tps" && j.side == side)
            .unwrap()
    };
    assert_eq!(tps(1).decision, Decision::Regressed, "{:?}", tps(1));
    assert_eq!(tps(2).decision, Decision::WithinNoise, "{:?}", tps(2));
    assert!(regressed(&judged));

    let json: serde_json::Value =
        serde_json::from_str(&verdict_out::json(&sides, &judged, &[]).unwrap()).unwrap();
    let first = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "tps" && m["side"] == 1)
        .unwrap();
    assert_eq!(first["verdict"], "regressed");
    let interval = first["interval"].as_array().unwrap();
    let ratio = first["ratio"].as_f64().unwrap();
    assert!(interval[0].as_f64().unwrap() <= ratio && ratio <= interval[1].as_f64().unwrap());
    assert_eq!(json["regressed"], true);
    // tps:-3% judges every throughput figure: each type's and each group's too, each named with
    // its ratio and interval in every format; client_cpu is described.
    let record = |key: &str| {
        json["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == key && m["side"] == 1)
            .cloned()
            .unwrap_or_else(|| panic!("{key} in {json}"))
    };
    for key in ["type:txn1:tps", "group:G01:tps"] {
        let m = record(key);
        assert_eq!(m["verdict"], "regressed", "{m}");
        assert!(m["ratio"].is_f64() && m["interval"][1].is_f64(), "{m}");
    }
    assert_eq!(record("client_cpu")["verdict"], "not judged");
    // The server each side measured is in every format: what an A/B of builds judged.
    assert_eq!(json["sides"][1]["servers"][0], "15.8 (synthetic)", "{json}");

    let xml = verdict_out::junit(&sides, &judged);
    let cases = xml.matches("<testcase ").count();
    assert_eq!(cases, judged.len(), "{xml}");
    let failing = xml
        .lines()
        .find(|l| l.contains("<failure"))
        .unwrap_or_else(|| panic!("{xml}"));
    assert!(
        failing.contains("name=\"tps\"") && failing.contains("ratio 0.9"),
        "{failing}"
    );
    let group = xml
        .lines()
        .find(|l| l.contains("name=\"group:G01:tps\"") && l.contains("<failure"))
        .unwrap_or_else(|| panic!("{xml}"));
    // The ratio and its interval: `0.900 [0.890–0.910]`.
    assert!(
        group.contains(" [0.") && group.contains("threshold -3%"),
        "{group}"
    );
    assert!(
        xml.contains("<property name=\"baseline_server\" value=\"PostgreSQL 15.8 (synthetic)\"/>"),
        "{xml}"
    );
    let md = verdict_out::markdown(&sides, &judged);
    assert!(
        md.contains("| tps | 2 |") && md.contains("**regressed**"),
        "{md}"
    );
    assert!(md.contains("3 run(s), PostgreSQL 15.8 (synthetic)"), "{md}");
    assert!(md.contains("| type:txn1:tps | 2 |"), "{md}");
    let table = verdict_out::text(&sides, &judged);
    assert!(
        table.contains("[2] ") && table.contains("PostgreSQL 15.8"),
        "{table}"
    );

    // One run a side: described, never judged, nothing regressed.
    let single = figures::read_sides(&[base.join("r0"), tmp.path().join("slower/r0")]).unwrap();
    let judged = judge(&single, &t);
    assert!(judged.iter().all(|j| j.decision == Decision::NotJudged));
    assert!(!regressed(&judged));
    assert!(verdict_out::text(&single, &judged).contains("needs 3 runs a side"));
}
