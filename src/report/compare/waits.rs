//! The wait profiles of compared runs side by side (issue 41): per group of the baseline, each
//! class's share of its sessions' samples on every side (the driver's classes as one
//! `driver`), and the change against the baseline in percentage points. This is how a VM's
//! extra IO or lock waits show beside the native run's. A side that is a dir of runs is read
//! from its first run.

use std::path::{Path, PathBuf};

use super::runs::aligned;
use crate::results::read::ResultsDir;
use crate::results::waits::{GroupWaits, WaitsSummary};

fn first_waits(dir: &Path) -> Option<WaitsSummary> {
    let runs = super::runs::runs_in(dir).ok()?;
    ResultsDir::open(runs.first()?).ok()?.into_summary().waits
}

/// The terminal table; empty when the baseline has no wait profile.
pub fn table(dirs: &[PathBuf]) -> String {
    let sides: Vec<Option<WaitsSummary>> = dirs.iter().map(|d| first_waits(d)).collect();
    match sides.first() {
        Some(Some(base)) => rows_for(base, &sides),
        _ => String::new(),
    }
}

fn rows_for(base: &WaitsSummary, sides: &[Option<WaitsSummary>]) -> String {
    let mut out = String::new();
    for g in base.groups.iter().filter(|g| g.samples > 0) {
        let profiles: Vec<Vec<(String, f64)>> = sides
            .iter()
            .map(|s| {
                s.as_ref()
                    .and_then(|w| w.groups.iter().find(|o| o.group == g.group))
                    .map_or_else(Vec::new, GroupWaits::headline)
            })
            .collect();
        let mut classes: Vec<&str> = Vec::new();
        for (c, _) in profiles.iter().flatten() {
            if !classes.contains(&c.as_str()) {
                classes.push(c);
            }
        }
        let mut rows = vec![{
            let mut head = vec![format!("waits of group {}", g.group)];
            for i in 0..sides.len() {
                head.push(format!("[{}]", i + 1));
                if i > 0 {
                    head.push("change".into());
                }
            }
            head
        }];
        let share = |p: &[(String, f64)], c: &str| {
            p.iter().find(|(x, _)| x == c).map_or(0.0, |(_, s)| *s) * 100.0
        };
        for c in classes {
            let mut row = vec![c.to_string()];
            for (i, p) in profiles.iter().enumerate() {
                if p.is_empty() {
                    row.push("-".into());
                    if i > 0 {
                        row.push(String::new());
                    }
                    continue;
                }
                row.push(format!("{:.1}%", share(p, c)));
                if i > 0 {
                    row.push(format!("{:+.1} pp", share(p, c) - share(&profiles[0], c)));
                }
            }
            rows.push(row);
        }
        out.push_str(&aligned(&rows));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::waits::Share;

    fn waits(cpu: u64, lock: u64, idle: u64) -> WaitsSummary {
        let n = cpu + lock + idle;
        let s = |class: &str, k: u64| Share {
            class: class.into(),
            event: String::new(),
            samples: k,
            share: k as f64 / n as f64,
        };
        WaitsSummary {
            per_second: 10,
            rounds: 10,
            groups: vec![GroupWaits {
                group: "a".into(),
                samples: n,
                classes: vec![s("CPU", cpu), s("Lock", lock), s("Idle", idle)],
                driver_share: idle as f64 / n as f64,
                top_events: Vec::new(),
                by_phase: Vec::new(),
                by_type: Vec::new(),
                over_time: None,
            }],
            locks: Vec::new(),
            statements: Vec::new(),
        }
    }

    #[test]
    fn classes_side_by_side_with_the_change_in_points() {
        let base = waits(60, 20, 20);
        let text = rows_for(&base, &[Some(base.clone()), Some(waits(40, 50, 10))]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("waits of group a"), "{text}");
        assert!(
            lines.iter().any(|l| l.starts_with("Lock")
                && l.contains("20.0%")
                && l.contains("50.0%")
                && l.contains("+30.0 pp")),
            "{text}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("driver") && l.contains("-10.0 pp")),
            "{text}"
        );
    }
}
