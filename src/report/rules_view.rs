//! The "Response-time limits and mix" table of `report.html`: per transaction type, the 90th
//! percentile against the workload's limit and the share of the mix against its minimum, as
//! `summary.json`'s `type_rules` holds them; a missed limit or minimum is a flagged cell.

use std::fmt::Write as _;

use super::html::esc;
use crate::results::RuleCheck;

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
        let _ = writeln!(
            p,
            "<tr><td>{}</td>{late}{p90}</td>{late}{limit}</td>{short}{:.2}</td>{short}{minimum}</td></tr>",
            esc(&r.txn_type),
            r.share_pct,
        );
    }
    p.push_str("</table>\n");
    if rules.iter().any(|r| r.limit_unverified) {
        let _ = writeln!(p, "<p>{}</p>", esc(crate::results::rules::UNVERIFIED_NOTE));
    }
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
            share_pct: if below { 2.5 } else { 45.0 },
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
    fn limits_read_as_the_spec_writes_them() {
        assert_eq!(limit_text(5000.0), "5 s");
        assert_eq!(limit_text(20000.0), "20 s");
        assert_eq!(limit_text(250.0), "250 ms");
        assert_eq!(limit_text(1500.0), "1500 ms");
    }
}
