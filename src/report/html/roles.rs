//! The per-role table of `report.html`'s glance: transactions, throughput and latency of each
//! role the run's types ran on (`oltp`, `dss`, ...), from `summary.json`'s `by_role`. Shown
//! only when the run has more than one role: with one, it would repeat the totals.

use std::fmt::Write as _;

use super::markup::esc;
use crate::results::RoleStats;

/// The HTML table; `None` for runs with fewer than two roles.
pub fn table(roles: &[RoleStats]) -> Option<String> {
    if roles.len() < 2 {
        return None;
    }
    let mut p = String::from("<table><tr>");
    for h in [
        "role",
        "committed",
        "failed",
        "tps",
        "p50 (ms)",
        "p95 (ms)",
        "p99 (ms)",
    ] {
        let _ = write!(p, "<th>{h}</th>");
    }
    p.push_str("</tr>\n");
    for r in roles {
        let s = &r.stats;
        let lat = s.latency_ms.as_ref();
        let ms = |pick: fn(&crate::results::LatencyStats) -> f64| {
            lat.map_or("-".into(), |l| format!("{:.3}", pick(l)))
        };
        let _ = writeln!(
            p,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.role),
            s.committed,
            s.failed,
            s.tps,
            ms(|l| l.p50),
            ms(|l| l.p95),
            ms(|l| l.p99),
        );
    }
    p.push_str("</table>\n");
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{FailedByClass, Stats};

    fn role(name: &str, committed: u64) -> RoleStats {
        RoleStats {
            role: name.into(),
            stats: Stats {
                committed,
                expected_rollback: 0,
                failed: 0,
                retried: 0,
                retried_txns: 0,
                total: committed,
                tps: committed as f64 / 10.0,
                failed_by_class: FailedByClass::default(),
                latency_ms: None,
                lag_ms: None,
            },
        }
    }

    #[test]
    fn one_row_per_role_and_none_for_a_single_role() {
        assert_eq!(table(&[role("oltp", 5)]), None);
        let html = table(&[role("oltp", 50), role("dss", 3)]).unwrap();
        assert_eq!(html.matches("<tr><td>").count(), 2, "{html}");
        assert!(html.contains("<td>dss</td><td>3</td><td>0</td><td>0.3</td><td>-</td>"));
    }
}
