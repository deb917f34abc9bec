//! The consolidation page's two figures: each database's rate per traffic period stacked,
//! grouped by scheme then rate (the study's Figures 11–12), and each scheme's mean relative
//! to its own 0 % baseline against the overcommitment rate (Figures 13–14). A (scheme, rate)
//! without a complete run is an empty slot or a gap, never a value.

use std::fmt::Write as _;

use crate::report::charts::{self, Bar, BarGroup, Series, Stroke, XyLine};
use crate::report::html::markup::{chart_to, esc, note_to, table_to};
use crate::results::experiment::consolidate::{ConsolidateAnalysis, ConsolidateRow};

/// More bars than this in one chart and each scheme gets its own (same y scale).
const BARS_PER_CHART: usize = 48;

/// "period-2" as "2": the bar's own label under the rate's.
fn period_label(name: &str) -> &str {
    name.strip_prefix("period-").unwrap_or(name)
}

/// Sorts `db2` before `db10`: by the text before the trailing digits, then their value.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let head = s.trim_end_matches(|c: char| c.is_ascii_digit());
        (
            head.to_string(),
            s[head.len()..].parse::<u64>().ok(),
            s.to_string(),
        )
    };
    split(a).cmp(&split(b))
}

/// Every database named in the rows' periods, in natural order.
fn databases(a: &ConsolidateAnalysis) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in a.rows.iter().flat_map(|r| &r.periods) {
        for db in p.by_database.keys() {
            if !out.contains(db) {
                out.push(db.clone());
            }
        }
    }
    out.sort_by(|a, b| natural(a, b));
    out
}

/// The rows of `scheme`, by rate.
fn rows_of<'a>(a: &'a ConsolidateAnalysis, scheme: &str) -> Vec<&'a ConsolidateRow> {
    let mut rows: Vec<&ConsolidateRow> = a.rows.iter().filter(|r| r.scheme == scheme).collect();
    rows.sort_by_key(|r| r.overcommit);
    rows
}

fn group(row: &ConsolidateRow, dbs: &[String]) -> BarGroup {
    BarGroup {
        outer: row.scheme.clone(),
        inner: format!("{} %", row.overcommit),
        bars: row
            .periods
            .iter()
            .map(|p| Bar {
                label: period_label(&p.period).to_string(),
                values: dbs
                    .iter()
                    .map(|d| p.by_database.get(d).copied().unwrap_or(f64::NAN))
                    .collect(),
            })
            .collect(),
    }
}

/// Figures 11–12 and the numbers behind them.
pub(super) fn periods_to(p: &mut String, a: &ConsolidateAnalysis, schemes: &[String]) {
    let _ = writeln!(p, "<h2>{} per database and period</h2>", esc(&a.unit));
    let dbs = databases(a);
    let by_scheme: Vec<(&String, Vec<BarGroup>)> = schemes
        .iter()
        .map(|s| (s, rows_of(a, s).iter().map(|r| group(r, &dbs)).collect()))
        .collect();
    let bars: usize = by_scheme
        .iter()
        .flat_map(|(_, gs)| gs.iter().map(|g| g.bars.len().max(1)))
        .sum();
    let tallest = a
        .rows
        .iter()
        .flat_map(|r| &r.periods)
        .map(|p| {
            p.by_database
                .values()
                .filter(|v| v.is_finite())
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    let x_label = "scheme, overcommit rate, traffic period";
    let y_label = format!("{} (stacked)", a.unit);
    if bars <= BARS_PER_CHART {
        let all: Vec<BarGroup> = by_scheme.into_iter().flat_map(|(_, gs)| gs).collect();
        let title = format!("{} per period, each database stacked", a.unit);
        chart_to(
            p,
            charts::stacked_bars(&title, x_label, &y_label, &dbs, &all, tallest),
        );
    } else {
        for (scheme, gs) in by_scheme {
            let title = format!("{} per period, scheme {scheme}", a.unit);
            chart_to(
                p,
                charts::stacked_bars(&title, x_label, &y_label, &dbs, &gs, tallest),
            );
        }
    }
    note_to(
        p,
        &format!(
            "One bar per measured traffic period of the row's run (the median one over the repeats); each database's {} over the period stacked.",
            a.unit
        ),
    );
    let missing: Vec<String> = a
        .rows
        .iter()
        .filter(|r| r.periods.is_empty())
        .map(|r| format!("{} at {} %", r.scheme, r.overcommit))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(
            p,
            "<p class=\"flag\">No complete run for {} (an empty slot marked ×; not drawn as a value).</p>",
            esc(&missing.join(", "))
        );
    }
    let mut head: Vec<&str> = vec!["scheme", "overcommit", "period", "seconds"];
    head.extend(dbs.iter().map(String::as_str));
    head.push("sum");
    let rows: Vec<Vec<String>> = a
        .rows
        .iter()
        .flat_map(|r| r.periods.iter().map(move |per| (r, per)))
        .map(|(r, per)| {
            let mut row = vec![
                r.scheme.clone(),
                format!("{} %", r.overcommit),
                per.period.clone(),
                format!("{:.0}", per.duration_s),
            ];
            row.extend(dbs.iter().map(|d| {
                per.by_database
                    .get(d)
                    .map_or("-".into(), |v| format!("{v:.1}"))
            }));
            row.push(format!("{:.1}", per.sum));
            row
        })
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(
            p,
            "<details><summary>{} per database and period, in numbers</summary>",
            esc(&a.unit)
        );
        table_to(p, &head, &rows);
        p.push_str("</details>\n");
    }
}

/// Figures 13–14: one line per scheme, gaps where a rate has no value.
pub(super) fn relative_to(p: &mut String, a: &ConsolidateAnalysis, schemes: &[String]) {
    p.push_str("<h2>Relative to each scheme's baseline</h2>\n");
    let mut rates: Vec<u32> = a.rows.iter().map(|r| r.overcommit).collect();
    rates.sort_unstable();
    rates.dedup();
    let mut lines: Vec<XyLine> = schemes
        .iter()
        .map(|s| XyLine {
            series: Series {
                name: s.clone(),
                points: rates
                    .iter()
                    .map(|rate| {
                        let y = a
                            .rows
                            .iter()
                            .find(|r| r.scheme == *s && r.overcommit == *rate)
                            .and_then(|r| r.relative)
                            .unwrap_or(f64::NAN);
                        (f64::from(*rate), y)
                    })
                    .collect(),
            },
            stroke: Stroke::Bold,
        })
        .collect();
    if let (Some(lo), Some(hi)) = (rates.first(), rates.last()) {
        lines.push(XyLine {
            series: Series {
                name: "baseline (1.0)".into(),
                points: vec![(f64::from(*lo), 1.0), (f64::from(*hi), 1.0)],
            },
            stroke: Stroke::Dashed,
        });
    }
    // A cross where no scheme has a value at all; a scheme's own gap breaks its line.
    let nowhere: Vec<f64> = rates
        .iter()
        .filter(|rate| {
            !a.rows
                .iter()
                .any(|r| r.overcommit == **rate && r.relative.is_some())
        })
        .map(|r| f64::from(*r))
        .collect();
    chart_to(
        p,
        charts::xy_band(
            &format!("{} relative to the scheme's 0 % baseline", a.unit),
            "memory overcommitment (%)",
            &format!("relative {} (1.0 = baseline)", a.unit),
            &lines,
            &[],
            &nowhere,
        ),
    );
    let gaps: Vec<String> = a
        .rows
        .iter()
        .filter(|r| r.relative.is_none())
        .map(|r| format!("{} at {} %", r.scheme, r.overcommit))
        .collect();
    if gaps.is_empty() {
        note_to(
            p,
            "Each scheme's mean over its own mean at 0 % overcommitment (Figures 13–14 of the study).",
        );
    } else {
        let _ = writeln!(
            p,
            "<p class=\"flag\">No relative value for {} (no complete run there or at the scheme's 0 %): a gap in its line, not interpolated.</p>",
            esc(&gaps.join(", "))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn databases_sort_naturally_and_periods_lose_their_prefix() {
        let mut v = vec!["db10", "db2", "db1", "a"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["a", "db1", "db2", "db10"]);
        assert_eq!(period_label("period-3"), "3");
        assert_eq!(period_label("busy"), "busy");
    }
}
