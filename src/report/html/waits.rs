//! "Wait profiles" (issue 41): per group, where its sessions' time went as the wait sampler saw
//! it (`summary.json`'s `waits`): the measured window and each segment of the timeline (so a
//! phase with a lock stands out), one column per class, and who waited on whom.

use std::fmt::Write as _;

use crate::results::waits::{GroupWaits, Share, DRIVER_CLASSES};

use super::markup::{chart_to, esc, note_to, table_to};
use crate::report::charts::{self, Series};
use crate::report::load::RunData;

pub fn wait_profiles(d: &RunData, p: &mut String) {
    let Some(w) = &d.summary.waits else {
        note_to(
            p,
            "No wait samples: run with --sample-waits N (10 a second unless turned off) to see \
             what each group's sessions waited on.",
        );
        return;
    };
    let _ = writeln!(
        p,
        "<p>pg_stat_activity read {} times a second, {} rounds over the measured window. \
         Shares of the sessions seen; the driver's share is Client + IdleInTransaction + Idle \
         (the server waiting for tidebench).</p>",
        w.per_second, w.rounds
    );
    for g in &w.groups {
        group_table(g, d, p);
    }
    for db in &w.statements {
        statements_table(db, p);
    }
    if w.locks.is_empty() {
        note_to(p, "No session of the run waited on a lock while sampled.");
        return;
    }
    p.push_str("<h3>Locks: who waited on whom (measured window)</h3>\n");
    let rows: Vec<Vec<String>> = w
        .locks
        .iter()
        .map(|l| vec![l.group.clone(), l.blocked_by.clone(), l.samples.to_string()])
        .collect();
    table_to(p, &["group", "waited on", "samples"], &rows);
}

/// The chart over time, then one row for the measured window and one per segment, a column
/// per class.
fn group_table(g: &GroupWaits, d: &RunData, p: &mut String) {
    let _ = writeln!(
        p,
        "<h3>Group {}: driver's share {:.0}%</h3>",
        esc(&g.group),
        g.driver_share * 100.0
    );
    let mut classes: Vec<&str> = g.classes.iter().map(|c| c.class.as_str()).collect();
    for c in g.by_phase.iter().flat_map(|x| &x.classes) {
        if !classes.contains(&c.class.as_str()) {
            classes.push(&c.class);
        }
    }
    over_time(g, &classes, d, p);
    let row = |label: String, samples: u64, shares: &[Share]| {
        let mut r = vec![label, samples.to_string()];
        r.extend(classes.iter().map(|c| {
            shares
                .iter()
                .find(|s| s.class == *c)
                .map_or_else(String::new, |s| format!("{:.1}%", s.share * 100.0))
        }));
        r
    };
    let mut rows = vec![row("measured window".into(), g.samples, &g.classes)];
    for x in &g.by_phase {
        let label = format!(
            "{} (iteration {}){}",
            x.label,
            x.iteration,
            if x.measured { "" } else { ", not measured" }
        );
        rows.push(row(label, x.samples, &x.classes));
    }
    let mut head = vec!["segment", "samples"];
    let named: Vec<String> = classes
        .iter()
        .map(|c| match DRIVER_CLASSES.contains(c) {
            true => format!("{c} (driver)"),
            false => c.to_string(),
        })
        .collect();
    head.extend(named.iter().map(String::as_str));
    table_to(p, &head, &rows);
    let top: Vec<String> = g
        .top_events
        .iter()
        .filter(|e| !e.event.is_empty())
        .map(|e| format!("{}/{} {:.1}%", e.class, e.event, e.share * 100.0))
        .collect();
    if !top.is_empty() {
        let _ = writeln!(p, "<p>Top wait events: {}</p>", esc(&top.join(", ")));
    }
    type_table(g, &classes, p);
}

/// The group's classes stacked over the run (ramps included) as shares of each bucket's
/// samples, the phase edges and incidents marked; a step per segment for a summary without
/// buckets (written before they were).
fn over_time(g: &GroupWaits, classes: &[&str], d: &RunData, p: &mut String) {
    let mut x: Vec<f64> = Vec::new();
    let mut layers: Vec<Series> = classes
        .iter()
        .map(|c| Series {
            name: c.to_string(),
            points: Vec::new(),
        })
        .collect();
    if let Some(o) = &g.over_time {
        for (k, counts) in o.buckets.iter().enumerate() {
            let total: u64 = counts.iter().sum();
            if total == 0 {
                continue;
            }
            let start = (k as u32 * o.bucket_s) as f64;
            let edges = [start, start + f64::from(o.bucket_s)];
            x.extend(edges);
            for (layer, c) in layers.iter_mut().zip(classes) {
                let n = o
                    .classes
                    .iter()
                    .position(|x| x == c)
                    .and_then(|i| counts.get(i).copied())
                    .unwrap_or(0);
                let share = n as f64 * 100.0 / total as f64;
                layer.points.extend(edges.map(|t| (t, share)));
            }
        }
    }
    let phases = if g.over_time.is_some() {
        &[][..]
    } else {
        &g.by_phase[..]
    };
    for ph in phases {
        let Some(seg) = d.summary.phases.get(ph.segment) else {
            continue;
        };
        let edges = [seg.start_s, seg.start_s + seg.duration_s];
        x.extend(edges);
        for (layer, c) in layers.iter_mut().zip(classes) {
            let share = ph
                .classes
                .iter()
                .find(|s| s.class == *c)
                .map_or(0.0, |s| s.share * 100.0);
            layer.points.extend(edges.map(|t| (t, share)));
        }
    }
    if x.is_empty() {
        return;
    }
    chart_to(
        p,
        charts::stacked_time_marked(
            &format!("Group {}: wait profile over the run", g.group),
            "% of sessions sampled",
            &x,
            &layers,
            &d.phase_edges(),
            &super::incidents::run_marks(&d.summary),
        ),
    );
}

/// Where each transaction type's time went (measured window), a column per class: the type
/// is told by the session's query (`unknown` when it names none or several).
fn type_table(g: &GroupWaits, classes: &[&str], p: &mut String) {
    if g.by_type.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = g
        .by_type
        .iter()
        .map(|t| {
            let mut r = vec![t.txn_type.clone(), t.samples.to_string()];
            r.extend(classes.iter().map(|c| {
                t.classes
                    .iter()
                    .find(|s| s.class == *c)
                    .map_or_else(String::new, |s| format!("{:.1}%", s.share * 100.0))
            }));
            r.push(format!("{:.1}%", t.driver_share * 100.0));
            r
        })
        .collect();
    let mut head = vec!["type", "samples"];
    head.extend(classes.iter().copied());
    head.push("driver");
    let _ = writeln!(
        p,
        "<p>Per transaction type (measured window; a session's type is told by its query):</p>"
    );
    table_to(p, &head, &rows);
}

/// A database's top statements over the measured window (`pg_stat_statements`).
fn statements_table(db: &crate::results::waits::DbStatements, p: &mut String) {
    let _ = writeln!(
        p,
        "<h3>Top statements on {} ({} ran)</h3>",
        esc(&db.database),
        db.statements
    );
    let rows: Vec<Vec<String>> = db
        .top
        .iter()
        .map(|t| {
            vec![
                t.query.clone(),
                t.calls.to_string(),
                format!("{:.1}", t.total_ms),
                format!("{:.3}", t.mean_ms),
                t.rows.to_string(),
                t.shared_blks_hit.to_string(),
                t.shared_blks_read.to_string(),
                t.shared_blks_dirtied.to_string(),
                t.wal_bytes.to_string(),
            ]
        })
        .collect();
    table_to(
        p,
        &[
            "statement",
            "calls",
            "total ms",
            "mean ms",
            "rows",
            "blocks hit",
            "blocks read",
            "blocks dirtied",
            "WAL bytes",
        ],
        &rows,
    );
}
