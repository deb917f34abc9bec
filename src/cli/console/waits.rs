//! The end summary's wait lines (issue 41): per group, its largest wait classes over the
//! measured window, the driver's classes said as one, and who blocked it.

use crate::results::waits::WaitsSummary;

/// Classes shown per group; the rest are in `summary.json`.
const SHOWN: usize = 4;

/// `top waits a: CPU 62%, Lock 20%, driver 15% (1200 samples)`, one line per group, then
/// `locks: a waited on other:psql 40 samples` for the three largest pairs.
pub fn wait_lines(w: &WaitsSummary) -> Vec<String> {
    let mut out = Vec::new();
    for g in &w.groups {
        if g.samples == 0 {
            continue;
        }
        let classes: Vec<String> = g
            .headline()
            .into_iter()
            .filter(|(_, share)| *share >= 0.005)
            .take(SHOWN)
            .map(|(c, share)| format!("{c} {:.0}%", share * 100.0))
            .collect();
        out.push(format!(
            "top waits {}: {} ({} samples)",
            g.group,
            classes.join(", "),
            g.samples
        ));
    }
    for l in w.locks.iter().take(3) {
        out.push(format!(
            "locks: {} waited on {}: {} samples",
            l.group, l.blocked_by, l.samples
        ));
    }
    for d in &w.statements {
        if let Some(t) = d.top.first() {
            out.push(format!(
                "top statement on {}: {} calls, {:.1} ms in all, {:.3} ms each: {}",
                d.database,
                t.calls,
                t.total_ms,
                t.mean_ms,
                one_line(&t.query, 60)
            ));
        }
    }
    out
}

/// `query` on one line, cut to `most` characters.
fn one_line(query: &str, most: usize) -> String {
    let flat: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(most) {
        Some((i, _)) => format!("{}...", &flat[..i]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::waits::{GroupWaits, LockWait, Share};

    fn share(class: &str, samples: u64, share: f64) -> Share {
        Share {
            class: class.into(),
            event: String::new(),
            samples,
            share,
        }
    }

    #[test]
    fn one_line_per_group_with_the_driver_as_one_class() {
        let w = WaitsSummary {
            per_second: 10,
            rounds: 100,
            groups: vec![GroupWaits {
                group: "a".into(),
                samples: 100,
                classes: vec![
                    share("CPU", 62, 0.62),
                    share("Lock", 20, 0.2),
                    share("Idle", 10, 0.1),
                    share("IdleInTransaction", 5, 0.05),
                    share("IO", 3, 0.03),
                ],
                driver_share: 0.15,
                top_events: Vec::new(),
                by_phase: Vec::new(),
                by_type: Vec::new(),
                over_time: None,
            }],
            locks: vec![LockWait {
                group: "a".into(),
                blocked_by: "other:psql".into(),
                samples: 20,
            }],
            statements: Vec::new(),
        };
        assert_eq!(
            wait_lines(&w),
            [
                "top waits a: CPU 62%, Lock 20%, driver 15%, IO 3% (100 samples)",
                "locks: a waited on other:psql: 20 samples"
            ]
        );
    }
}
