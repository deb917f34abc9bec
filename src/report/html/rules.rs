//! The "Response-time limits and mix" tables of `report.html`: per transaction type, the 90th
//! percentile against the workload's limit and the share of the mix against its minimum, as
//! `summary.json`'s `type_rules` holds them (a missed limit or minimum is a flagged cell); the
//! types the workload's emulator issued, with counts and rates but no share (`mix`); and the
//! workload's expected ratios between types with their verdicts (`ratio_rules`).

use std::fmt::Write as _;

use super::markup::esc;
use crate::results::{RatioCheck, RuleCheck, TypeShare, Verdict};

/// What the numbers count, under the table.
pub const NOTE: &str = "p90 over the measured window, every target merged; mix % counts \
    committed and expected-rollback transactions of the types listed (failed ones did not \
    complete). Flagged cells miss the specification's limit or minimum.";

/// A limit in ms as the spec writes it: "5 s", or "250 ms" below a whole second.
pub fn limit_text(ms: f64) -> String {
    if ms >= 1000.0 && ms % 1000.0 == 0.0 {
        format!("{} s", ms / 1000.0)
    } else {
        format!("{ms} ms")
    }
}

/// The HTML table; `None` when there are no rules.
pub fn table(rules: &[RuleCheck]) -> Option<String> {
    if rules.is_empty() {
        return None;
    }
    let mut p = String::from("<table><tr>");
    for h in ["type", "p90 (ms)", "p90 limit", "mix %", "mix minimum"] {
        let _ = write!(p, "<th>{h}</th>");
    }
    p.push_str("</tr>\n");
    let td = |flag: bool| if flag { "<td class=\"flag\">" } else { "<td>" };
    for r in rules {
        let p90 = r.p90_ms.map_or("-".into(), |v| format!("{v:.3}"));
        let limit = r.p90_limit_ms.map_or("-".into(), |l| {
            let word = if r.exceeded { "EXCEEDS" } else { "&le;" };
            let mark = if r.limit_unverified { "?" } else { "" };
            format!("{word} {}{mark}", esc(&limit_text(l)))
        });
        let minimum = r.min_share_pct.map_or("-".into(), |m| {
            let word = if r.below_minimum { "below" } else { "&ge;" };
            format!("{word} {m} %")
        });
        let (late, short) = (td(r.exceeded), td(r.below_minimum));
        // A type the workload's emulator issues is outside the mix.
        let share = r
            .share_pct
            .map_or_else(|| "emulated".to_string(), |s| format!("{s:.2}"));
        let _ = writeln!(
            p,
            "<tr><td>{}</td>{late}{p90}</td>{late}{limit}</td>{short}{share}</td>{short}{minimum}</td></tr>",
            esc(&r.txn_type),
        );
    }
    p.push_str("</table>\n");
    if rules.iter().any(|r| r.limit_unverified) {
        let _ = writeln!(p, "<p>{}</p>", esc(crate::results::rules::UNVERIFIED_NOTE));
    }
    Some(p)
}

/// Under the ratios table.
pub const RATIO_NOTE: &str = "Ratios over the measured window: the first type's committed \
    transactions per completed (committed and expected-rollback) transaction of the second. \
    The tolerance is the workload's choice where its specification states none; a ratio below \
    its band is not judged when the window is too short for work still pending to settle.";

/// The emulated types' counts and rates; `None` when no type of the run was emulated.
pub fn emulated_table(mix: &[TypeShare]) -> Option<String> {
    let rows: Vec<&TypeShare> = crate::results::mix::emulated(mix).collect();
    if rows.is_empty() {
        return None;
    }
    let mut p = String::from(
        "<table><tr><th>issued by the workload's emulator (outside the mix)</th>\
         <th>completed</th><th>per second</th></tr>\n",
    );
    for t in rows {
        let _ = writeln!(
            p,
            "<tr><td>{}</td><td>{}</td><td>{:.3}</td></tr>",
            esc(&t.txn_type),
            t.completed,
            t.tps
        );
    }
    p.push_str("</table>\n");
    Some(p)
}

/// The ratios with their verdicts (a failed one flagged); `None` when there are none.
pub fn ratios_table(ratios: &[RatioCheck]) -> Option<String> {
    if ratios.is_empty() {
        return None;
    }
    let mut p = String::from("<table><tr>");
    for h in ["ratio", "counts", "achieved", "expected", "verdict"] {
        let _ = write!(p, "<th>{h}</th>");
    }
    p.push_str("</tr>\n");
    for r in ratios {
        let td = if r.verdict == Verdict::Fail {
            "<td class=\"flag\">"
        } else {
            "<td>"
        };
        let verdict = match &r.reason {
            Some(why) => format!("{}: {}", r.verdict.name(), why),
            None => r.verdict.name().to_string(),
        };
        let _ = writeln!(
            p,
            "<tr><td>{}</td><td>{} / {}</td>{td}{}</td><td>{}</td>{td}{}</td></tr>",
            esc(&r.name()),
            r.numerator_count,
            r.denominator_count,
            r.ratio.map_or("-".into(), |x| format!("{x:.4}")),
            esc(&r.band()),
            esc(&verdict),
        );
    }
    p.push_str("</table>\n");
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, exceeded: bool, below: bool) -> RuleCheck {
        RuleCheck {
            txn_type: name.into(),
            p90_ms: Some(if exceeded { 6000.0 } else { 12.5 }),
            p90_limit_ms: Some(5000.0),
            exceeded,
            share_pct: Some(if below { 2.5 } else { 45.0 }),
            min_share_pct: Some(43.0),
            below_minimum: below,
            limit_unverified: false,
        }
    }

    #[test]
    fn unverified_limits_are_marked_and_explained() {
        let mut r = check("trade_status", false, false);
        assert!(!table(&[r.clone()]).unwrap().contains('?'));
        r.limit_unverified = true;
        let html = table(&[r]).unwrap();
        assert!(html.contains("5 s?"), "{html}");
        assert!(html.contains("not verified"), "{html}");
    }

    #[test]
    fn missed_limits_and_minimums_are_flagged_cells() {
        let html = table(&[
            check("new_order", false, false),
            check("delivery", true, true),
        ])
        .unwrap();
        let rows: Vec<&str> = html.lines().filter(|l| l.starts_with("<tr><td>")).collect();
        assert_eq!(rows.len(), 2, "{html}");
        assert!(
            !rows[0].contains("flag") && rows[0].contains("&le; 5 s"),
            "{html}"
        );
        assert!(rows[0].contains("&ge; 43 %"), "{html}");
        assert_eq!(rows[1].matches("class=\"flag\"").count(), 4, "{html}");
        assert!(
            rows[1].contains("EXCEEDS 5 s") && rows[1].contains("below 43 %"),
            "{html}"
        );
        assert_eq!(table(&[]), None);
    }

    #[test]
    fn emulated_types_show_apart_and_ratios_show_their_verdicts() {
        let mut r = check("trade_result", false, false);
        r.share_pct = None;
        let html = table(&[r]).unwrap();
        assert!(html.contains("<td>emulated</td>"), "{html}");

        let share = |name: &str, emulated: bool| TypeShare {
            txn_type: name.into(),
            emulated,
            completed: 120,
            tps: 2.0,
            share_pct: (!emulated).then_some(100.0),
        };
        assert_eq!(emulated_table(&[share("trade_order", false)]), None);
        let html =
            emulated_table(&[share("trade_order", false), share("market_feed", true)]).unwrap();
        assert_eq!(html.matches("<tr><td>").count(), 1, "{html}");
        assert!(html.contains("<tr><td>market_feed</td><td>120</td><td>2.000</td></tr>"));

        let rule = crate::results::RatioRule {
            numerator: "trade_result".into(),
            denominator: "trade_order".into(),
            expected: 0.99,
            tolerance_pct: 5.0,
            settle: std::time::Duration::from_secs(1800),
        };
        let judge = |n, secs| {
            crate::results::ratios::judge(&rule, n, 1000, std::time::Duration::from_secs(secs))
        };
        let html = ratios_table(&[judge(990, 3600), judge(500, 3600), judge(500, 60)]).unwrap();
        let rows: Vec<&str> = html.lines().filter(|l| l.starts_with("<tr><td>")).collect();
        assert!(
            rows[0].contains("<td>990 / 1000</td><td>0.9900</td>")
                && rows[0].ends_with("<td>pass</td></tr>")
        );
        assert_eq!(rows[1].matches("class=\"flag\"").count(), 2, "{html}");
        assert!(rows[1].contains("FAIL: below 0.9405"), "{html}");
        assert!(rows[2].contains("unverified: below the band") && !rows[2].contains("flag"));
        assert!(rows[0].contains("0.99 ± 5 %"), "{html}");
        assert_eq!(ratios_table(&[]), None);
    }

    #[test]
    fn limits_read_as_the_spec_writes_them() {
        assert_eq!(limit_text(5000.0), "5 s");
        assert_eq!(limit_text(20000.0), "20 s");
        assert_eq!(limit_text(250.0), "250 ms");
        assert_eq!(limit_text(1500.0), "1500 ms");
    }
}
