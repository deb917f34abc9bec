//! The end-of-run lines about the workload's own measures: its headline (TPC-C's NOTPM,
//! tpce's tpsE or tpsV) with the isolation it ran at, the headline per group and phase when
//! the run has several of either (as the TPC-V kit prints tpsV), and the verdicts on the
//! workload's expected ratios between types.

use std::fmt::Write as _;

use crate::results::{IsolationLevels, Per, RatioCheck, Summary, Verdict};

use super::{wrap, WIDTH};

/// Phases per line of the per-phase table, beside the group column and the window column.
const PHASES_PER_LINE: usize = 7;

/// The workload's headline rate with all committed transactions in the same unit and the
/// isolation, if the workload has a headline.
pub(super) fn headline_line(s: &Summary) -> Option<String> {
    let h = s.headline.as_ref()?;
    // The workload's headline (TPC-C's NOTPM), beside all types in its unit, and the
    // isolation level it was measured at (a TPC-C result is read with it).
    let total_per_minute: f64 = s.tpm.values().sum();
    let mut line = match h.per {
        Per::Minute => format!(
            "{}: {:.1}  total TPM: {total_per_minute:.1}",
            h.label, h.per_minute
        ),
        Per::Second => format!(
            "{}: {:.2}  total TPS: {:.2}",
            h.label,
            h.value(),
            total_per_minute / 60.0
        ),
    };
    match &s.isolation {
        Some(IsolationLevels::All(level)) => {
            let _ = write!(line, "  isolation: {level}");
        }
        // Levels differing per group would overrun one line: they get lines of their own.
        Some(per_group) => {
            let _ = write!(line, "\n{}", wrap("isolation: ", &per_group.describe()));
        }
        None => {}
    }
    Some(line)
}

/// The headline per group (rows, plus "all") and measured phase (columns, plus the whole
/// measured window), wrapped to stay within the width; `None` without a headline or when the
/// run has one group and one measured phase (the headline line says it all).
pub(super) fn by_group_and_phase(s: &Summary) -> Option<String> {
    let h = s.headline.as_ref()?;
    let phases: Vec<_> = s.phases.iter().filter(|p| p.measured).collect();
    if s.groups.len() < 2 && phases.len() < 2 {
        return None;
    }
    let num = |v: Option<f64>| {
        v.map_or("-".to_string(), |v| match h.per {
            Per::Minute => format!("{v:.1}"),
            Per::Second => format!("{v:.2}"),
        })
    };
    // Columns: (heading, value of group g or of all groups for None).
    type Cell<'a> = Box<dyn Fn(Option<usize>) -> Option<f64> + 'a>;
    let mut columns: Vec<(String, Cell)> = Vec::new();
    for ph in &phases {
        columns.push((
            format!("i{} {}", ph.iteration, ph.phase),
            Box::new(move |g: Option<usize>| match g {
                Some(g) => ph.groups.get(g).and_then(|x| x.headline),
                None => ph.headline,
            }),
        ));
    }
    columns.push((
        "measured".into(),
        Box::new(|g: Option<usize>| match g {
            Some(g) => s.groups.get(g).and_then(|x| x.headline),
            None => Some(h.value()),
        }),
    ));
    let mut out = String::new();
    let _ = writeln!(out, "{} by group and phase:", h.label);
    let rows: Vec<(String, Option<usize>)> = s
        .groups
        .iter()
        .enumerate()
        .map(|(g, x)| (x.group.clone(), Some(g)))
        .chain([("all".to_string(), None)])
        .collect();
    for chunk in columns.chunks(PHASES_PER_LINE + 1) {
        let mut head = format!("{:<10}", "group");
        for (name, _) in chunk {
            let name: String = name.chars().take(10).collect();
            let _ = write!(head, " {name:>10}");
        }
        let _ = writeln!(out, "{}", head.trim_end());
        for (name, g) in &rows {
            let name: String = name.chars().take(10).collect();
            let mut line = format!("{name:<10}");
            for (_, cell) in chunk {
                let _ = write!(line, " {:>10}", num(cell(*g)));
            }
            let _ = writeln!(out, "{line}");
        }
    }
    debug_assert!(out.lines().all(|l| l.chars().count() <= WIDTH));
    Some(out)
}

/// One line per expected ratio with its verdict, and the reason on the next when there is one.
pub(super) fn ratio_lines(ratios: &[RatioCheck]) -> String {
    let mut out = String::new();
    for r in ratios {
        let _ = writeln!(
            out,
            "ratio {}: {} (expected {}) {}",
            r.name(),
            r.ratio.map_or("-".to_string(), |x| format!("{x:.4}")),
            r.band(),
            r.verdict.name()
        );
        if let Some(why) = &r.reason {
            let word = if r.verdict == Verdict::Fail {
                "missed"
            } else {
                "not judged"
            };
            let _ = writeln!(out, "  {word}: {why}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::HeadlineRate;

    fn tpsv_summary() -> Summary {
        let mut s = super::super::tests::tpcc_summary();
        s.headline = Some(HeadlineRate {
            label: "tpsV".into(),
            txn_type: "trade_result".into(),
            per: Per::Second,
            per_minute: 741.0,
            per_second: Some(12.35),
        });
        s.tpm = [
            ("trade_result".to_string(), 741.0),
            ("trade_order".into(), 759.0),
        ]
        .into();
        s.type_rules.clear();
        s
    }

    #[test]
    fn a_per_second_headline_reads_with_two_decimals_and_total_tps() {
        let line = headline_line(&tpsv_summary()).unwrap();
        assert_eq!(
            line,
            "tpsV: 12.35  total TPS: 25.00  isolation: read committed"
        );
    }

    #[test]
    fn the_headline_per_group_and_phase_adds_up_by_row_and_wraps() {
        let mut s = tpsv_summary();
        assert!(
            s.phases.len() == 2 && s.groups.len() == 1,
            "the fixture's shape"
        );
        for (i, ph) in s.phases.iter_mut().enumerate() {
            ph.headline = Some(10.0 + i as f64);
            ph.groups[0].headline = Some(10.0 + i as f64);
        }
        s.groups[0].headline = Some(12.35);
        let table = by_group_and_phase(&s).unwrap();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "tpsV by group and phase:");
        assert!(
            lines[1].contains("i1 p1") && lines[1].ends_with("measured"),
            "{table}"
        );
        assert!(lines[2].starts_with("A ") && lines[2].ends_with("10.00      11.00      12.35"));
        assert!(
            lines[3].starts_with("all ") && lines[3].ends_with("12.35"),
            "{table}"
        );
        // Twelve phases wrap into two blocks of columns within the width.
        let one = s.phases[0].clone();
        s.phases = (0..12).map(|_| one.clone()).collect();
        let wide = by_group_and_phase(&s).unwrap();
        assert_eq!(wide.lines().filter(|l| l.starts_with("group")).count(), 2);
        assert!(wide.lines().all(|l| l.chars().count() <= WIDTH), "{wide}");
        s.phases.truncate(1);
        assert_eq!(
            by_group_and_phase(&s),
            None,
            "one group, one phase: the line says it"
        );
    }

    #[test]
    fn ratios_print_their_verdict_and_why() {
        let rule = crate::results::RatioRule {
            numerator: "trade_result".into(),
            denominator: "trade_order".into(),
            expected: 0.99,
            tolerance_pct: 5.0,
            settle: std::time::Duration::from_secs(1800),
        };
        let hour = std::time::Duration::from_secs(3600);
        let judge = |n| crate::results::ratios::judge(&rule, n, 1000, hour);
        let text = ratio_lines(&[judge(990), judge(500)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "ratio trade_result / trade_order: 0.9900 (expected 0.99 ± 5 %) pass"
        );
        assert!(
            lines[1].ends_with("0.5000 (expected 0.99 ± 5 %) FAIL"),
            "{text}"
        );
        assert!(lines[2].starts_with("  missed: below 0.9405"), "{text}");
        assert_eq!(lines.len(), 3);
    }
}
