//! `tidebench compare` of experiment dirs: point by point, each dir's median tps and its
//! ratio to the first dir (the baseline). Points are matched by their values (`clients=16
//! scale=10`), so two sweeps over the same keys compare even when their grids differ; a
//! point one side lacks shows "-". Consolidation experiments compare each (scheme, rate)'s
//! mean in the workload's unit (NOTPM) from their analysis, not tps.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::runs::aligned;
use crate::results::experiment::consolidate::{OVERCOMMIT_KEY, SCHEME_KEY};
use crate::results::experiment::{self as exp, ExperimentFile, ExperimentKind, Point};

/// The compared figure's name and a point's value: median tps, or for a consolidation the
/// analysis' mean of the point's (scheme, rate) in its unit.
fn metric(f: &ExperimentFile) -> String {
    match (&f.kind, &f.analysis.consolidate) {
        (ExperimentKind::Consolidate, Some(a)) => format!("mean {}", a.unit),
        _ => "median tps".into(),
    }
}

fn value(f: &ExperimentFile, pt: &Point) -> Option<f64> {
    if f.kind != ExperimentKind::Consolidate {
        return pt.median;
    }
    let rows = &f.analysis.consolidate.as_ref()?.rows;
    let rate: u32 = pt.values.get(OVERCOMMIT_KEY)?.parse().ok()?;
    let scheme = pt.values.get(SCHEME_KEY)?;
    rows.iter()
        .find(|r| &r.scheme == scheme && r.overcommit == rate)?
        .mean
}

/// The terminal table comparing `dirs` (experiment dirs; the first is the baseline). Refuses
/// dirs of different kinds or varied keys: their points do not correspond.
pub fn compare_table(dirs: &[PathBuf]) -> Result<String, String> {
    if dirs.len() < 2 {
        return Err("compare needs two or more experiment dirs; the first is the baseline".into());
    }
    let files = dirs
        .iter()
        .map(|d| exp::read(d).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let base = &files[0];
    for (dir, f) in dirs.iter().zip(&files).skip(1) {
        check_comparable((&dirs[0], base), (dir, f))?;
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = vec!["point".to_string()];
    for (i, f) in files.iter().enumerate() {
        head.push(format!("[{}] {}", i + 1, metric(f)));
        head.push("ratio".into());
    }
    rows.push(head);
    for pt in &base.points {
        let mut row = vec![pt.label(&base.varied)];
        let base_value = value(base, pt);
        for f in &files {
            let v = f
                .points
                .iter()
                .find(|q| q.values == pt.values)
                .and_then(|q| value(f, q));
            row.push(v.map_or("-".into(), |m| format!("{m:.1}")));
            row.push(match (v, base_value) {
                (Some(m), Some(b)) if b != 0.0 => format!("{:.2}x", m / b),
                _ => "-".into(),
            });
        }
        rows.push(row);
    }
    let mut out = String::new();
    for (i, (dir, f)) in dirs.iter().zip(&files).enumerate() {
        let role = if i == 0 { ", baseline" } else { "" };
        let _ = writeln!(
            out,
            "[{}] {} ({} over {}, repeat {}, {}{role})",
            i + 1,
            dir.display(),
            f.kind.name(),
            f.varied.join(", "),
            f.repeat,
            if f.complete { "complete" } else { "incomplete" }
        );
    }
    out.push_str(&aligned(&rows));
    for (i, f) in files.iter().enumerate().skip(1) {
        let extra: Vec<String> = f
            .points
            .iter()
            .filter(|q| !base.points.iter().any(|pt| pt.values == q.values))
            .map(|q| q.label(&f.varied))
            .collect();
        if !extra.is_empty() {
            let _ = writeln!(
                out,
                "[{}] also has points the baseline lacks: {}",
                i + 1,
                extra.join("; ")
            );
        }
    }
    Ok(out)
}

/// Same kind and the same varied keys (in any order), or an error naming both and the fix.
fn check_comparable(
    (base_dir, base): (&PathBuf, &ExperimentFile),
    (dir, f): (&PathBuf, &ExperimentFile),
) -> Result<(), String> {
    if f.kind != base.kind {
        return Err(format!(
            "cannot compare {} (a {}) with {} (a {}): compare experiments of the same kind, or their runs' results dirs one by one",
            base_dir.display(),
            base.kind.name(),
            dir.display(),
            f.kind.name()
        ));
    }
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    if sorted(&f.varied) != sorted(&base.varied) {
        return Err(format!(
            "cannot compare {} (varies {}) with {} (varies {}): compare experiments that vary the same keys, or their runs' results dirs one by one",
            base_dir.display(),
            base.varied.join(", "),
            dir.display(),
            f.varied.join(", ")
        ));
    }
    if let (Some(a), Some(b)) = (&base.analysis.consolidate, &f.analysis.consolidate) {
        if a.unit != b.unit {
            return Err(format!(
                "cannot compare {} (in {}) with {} (in {}): compare consolidations of the same workload",
                base_dir.display(),
                a.unit,
                dir.display(),
                b.unit
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::experiment::tests::{file, point, run};
    use crate::results::experiment::ExperimentKind;

    /// An experiment dir varying `clients` with the given (clients, tps of each repeat).
    fn dir_with(
        root: &std::path::Path,
        name: &str,
        kind: ExperimentKind,
        pts: &[(&str, &[f64])],
    ) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let points = pts
            .iter()
            .map(|(c, tps)| {
                let runs = tps
                    .iter()
                    .enumerate()
                    .map(|(i, t)| run(&format!("c{c}-r{i}"), i as u32 + 1, Some(*t)))
                    .collect();
                point(&[("clients", c)], runs)
            })
            .collect();
        exp::write(&dir, &file(kind, &["clients"], points)).unwrap();
        dir
    }

    fn row<'a>(table: &'a str, point: &str) -> Vec<&'a str> {
        table
            .lines()
            .find(|l| l.starts_with(point))
            .unwrap_or_else(|| panic!("no row {point}:\n{table}"))
            .split_whitespace()
            .collect()
    }

    #[test]
    fn ratios_to_the_baseline_point_by_point() {
        let tmp = tempfile::tempdir().unwrap();
        let sweep = ExperimentKind::Sweep;
        let a = dir_with(
            tmp.path(),
            "a",
            sweep,
            &[("1", &[100.0, 110.0]), ("2", &[200.0]), ("4", &[400.0])],
        );
        let b = dir_with(
            tmp.path(),
            "b",
            sweep,
            &[("1", &[97.0, 107.0]), ("4", &[500.0]), ("8", &[1.0])],
        );
        let t = compare_table(&[a.clone(), b.clone()]).unwrap();
        assert!(
            t.starts_with(&format!("[1] {} (sweep over clients", a.display())),
            "{t}"
        );
        assert!(t.contains(&format!("[2] {} (sweep", b.display())), "{t}");
        assert!(
            row(&t, "point")
                == ["point", "[1]", "median", "tps", "ratio", "[2]", "median", "tps", "ratio"],
            "{t}"
        );
        assert_eq!(
            row(&t, "clients=1"),
            ["clients=1", "105.0", "1.00x", "102.0", "0.97x"]
        );
        assert_eq!(
            row(&t, "clients=2"),
            ["clients=2", "200.0", "1.00x", "-", "-"]
        );
        assert_eq!(
            row(&t, "clients=4"),
            ["clients=4", "400.0", "1.00x", "500.0", "1.25x"]
        );
        assert!(
            t.contains("[2] also has points the baseline lacks: clients=8"),
            "{t}"
        );
    }

    #[test]
    fn a_point_without_a_median_shows_a_dash() {
        let tmp = tempfile::tempdir().unwrap();
        let sweep = ExperimentKind::Sweep;
        let a = dir_with(tmp.path(), "a", sweep, &[("1", &[]), ("2", &[200.0])]);
        let b = dir_with(tmp.path(), "b", sweep, &[("1", &[100.0]), ("2", &[180.0])]);
        let t = compare_table(&[a, b]).unwrap();
        assert_eq!(
            row(&t, "clients=1"),
            ["clients=1", "-", "-", "100.0", "-"],
            "{t}"
        );
        assert_eq!(
            row(&t, "clients=2"),
            ["clients=2", "200.0", "1.00x", "180.0", "0.90x"]
        );
    }

    #[test]
    fn refuses_other_kinds_and_other_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let a = dir_with(tmp.path(), "a", ExperimentKind::Sweep, &[("1", &[1.0])]);
        let d = dir_with(tmp.path(), "d", ExperimentKind::Density, &[("1", &[1.0])]);
        let e = compare_table(&[a.clone(), d]).unwrap_err();
        assert!(
            e.contains("(a sweep)") && e.contains("(a density)") && e.contains("same kind"),
            "{e}"
        );
        let other = tmp.path().join("o");
        std::fs::create_dir_all(&other).unwrap();
        let mut f = file(
            ExperimentKind::Sweep,
            &["scale"],
            vec![point(&[("scale", "1")], vec![])],
        );
        f.points[0].runs.push(run("s1", 1, Some(1.0)));
        exp::write(&other, &f).unwrap();
        let e = compare_table(&[a.clone(), other]).unwrap_err();
        assert!(
            e.contains("varies clients") && e.contains("varies scale") && e.contains("same keys"),
            "{e}"
        );
        let e = compare_table(std::slice::from_ref(&a)).unwrap_err();
        assert!(e.contains("two or more"), "{e}");
        let e = compare_table(&[a, tmp.path().join("none")]).unwrap_err();
        assert!(e.contains("not an experiment dir"), "{e}");
    }
}
