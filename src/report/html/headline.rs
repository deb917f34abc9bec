//! The headline's part of the "Throughput" section: the workload's headline over time in its
//! own unit, stacked by group (tpsV is the sum of every group's Trade-Results per second), and
//! a table of the headline per group and measured phase, as `summary.json` states it.

use crate::report::charts::{self, keep_top, Combine, Series, TOP};
use crate::report::load::RunData;
use crate::results::{HeadlineRate, Per, Summary};

use super::markup::{chart_to, ms, note_to, steps, table_to};

/// The unit's words for an axis: "Trade-Results per second" reads from the type's name.
fn unit(h: &HeadlineRate) -> String {
    let per = match h.per {
        Per::Minute => "minute",
        Per::Second => "second",
    };
    format!("{} committed per {per}", h.txn_type)
}

/// The headline over time by group; nothing without a headline or interval rows.
pub(super) fn chart(d: &RunData, p: &mut String) {
    let Some(h) = &d.summary.headline else {
        return;
    };
    if d.buckets.is_empty() || d.headline_by_group.is_empty() {
        return;
    }
    let x: Vec<f64> = d
        .buckets
        .iter()
        .flat_map(|b| steps(b, 0.0).map(|(x, _)| x))
        .collect();
    let layers: Vec<Series> = d
        .groups
        .iter()
        .zip(&d.headline_by_group)
        .map(|(g, counts)| Series {
            name: g.clone(),
            points: d
                .buckets
                .iter()
                .zip(counts)
                .flat_map(|(b, n)| steps(b, h.per.rate(*n, b.length_s.max(0.001))))
                .collect(),
        })
        .collect();
    let layers = keep_top(layers, TOP, Combine::Sum);
    chart_to(
        p,
        charts::stacked_time_marked(
            &format!("{} by group", h.label),
            &format!("{} ({})", h.label, unit(h)),
            &x,
            &layers,
            &d.phase_edges(),
            &super::incidents::run_marks(&d.summary),
        ),
    );
}

/// The table of the headline per group (rows, then "all") and measured phase (columns, then
/// the whole measured window); `None` without a headline.
pub(super) fn table(s: &Summary) -> Option<String> {
    let h = s.headline.as_ref()?;
    let phases: Vec<_> = s.phases.iter().filter(|ph| ph.measured).collect();
    let num = |v: Option<f64>| {
        v.map_or("-".to_string(), |v| match h.per {
            Per::Minute => format!("{v:.1}"),
            Per::Second => format!("{v:.2}"),
        })
    };
    let mut head = vec![format!("{} by group", h.label)];
    head.extend(
        phases
            .iter()
            .map(|ph| format!("i{} {}", ph.iteration, ph.phase)),
    );
    head.push("measured window".into());
    let mut rows: Vec<Vec<String>> = s
        .groups
        .iter()
        .enumerate()
        .map(|(g, group)| {
            let mut row = vec![group.group.clone()];
            row.extend(
                phases
                    .iter()
                    .map(|ph| num(ph.groups.get(g).and_then(|x| x.headline))),
            );
            row.push(num(group.headline));
            row
        })
        .collect();
    let mut all = vec!["all groups".to_string()];
    all.extend(phases.iter().map(|ph| num(ph.headline)));
    all.push(num(Some(h.value())));
    rows.push(all);
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut p = String::new();
    table_to(&mut p, &head, &rows);
    note_to(
        &mut p,
        &format!(
            "{}: {} over each phase's seconds (the whole measured window in the last column); \
             the groups add up to the all-groups row.",
            h.label,
            unit(h)
        ),
    );
    interference_to(&mut p, s);
    super::curve::curve_to(&mut p, s);
    freshness_to(&mut p, s);
    Some(p)
}

/// How fresh a hot standby's reads were, per phase, or why that is n/a (see
/// `results::freshness`); nothing for a run of one group.
fn freshness_to(p: &mut String, s: &Summary) {
    let Some(f) = &s.freshness else {
        return;
    };
    if let Some(why) = &f.not_applicable {
        note_to(p, &format!("Freshness: n/a ({why})."));
        return;
    }
    let rows: Vec<Vec<String>> = f
        .phases
        .iter()
        .map(|x| {
            vec![
                format!("{} (of {})", x.standby, x.primary),
                x.readers.join(", "),
                x.phase.clone(),
                ms(x.p50_ms),
                ms(x.p95_ms),
                ms(x.max_ms),
                format!("{}", x.samples),
                format!("{}", x.unseen),
            ]
        })
        .collect();
    let head = [
        "standby",
        "read by",
        "phase",
        "freshness p50 (ms)",
        "p95 (ms)",
        "max (ms)",
        "samples",
        "not seen by the end",
    ];
    table_to(p, &head, &rows);
    note_to(
        p,
        "Freshness: how long after a commit on the primary a query on its hot standby could \
         see it, sampled ten times a second: the primary's WAL insert position, then the \
         standby asked every 2 ms until it had replayed up to it.",
    );
}

/// What the other groups cost the group running the headline's type, one row per phase it
/// ran beside them (see `results::interference`); nothing without such a pair.
fn interference_to(p: &mut String, s: &Summary) {
    let Some(first) = s.interference.first() else {
        return;
    };
    let (label, txn) = (&first.label, &first.txn_type);
    let ratio = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.3}"));
    let rows: Vec<Vec<String>> = s
        .interference
        .iter()
        .map(|i| {
            vec![
                format!("{} ({})", i.group, i.clients),
                i.neighbours_text(),
                format!("{} → {}", i.alone.phase, i.beside.phase),
                format!(
                    "{} → {}",
                    i.rate(i.alone.headline),
                    i.rate(i.beside.headline)
                ),
                ratio(i.ratio),
                format!("{} → {}", ms(i.alone.p95_ms), ms(i.beside.p95_ms)),
                ratio(i.p95_ratio),
            ]
        })
        .collect();
    let head = [
        "group (clients)".to_string(),
        "beside".into(),
        "phases".into(),
        label.clone(),
        format!("{label} ratio"),
        format!("{txn} p95 (ms)"),
        "p95 ratio".into(),
    ];
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table_to(p, &head, &rows);
    note_to(
        p,
        &format!(
            "What the other groups cost a group running {txn}: its {label} and {txn}'s p95 in a \
             phase where it ran alone against one where it ran beside them with the same \
             clients; a ratio is beside over alone. Beside: the other groups' clients and \
             what they committed in that phase."
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Outcome, Recorder};
    use crate::results::{Headline, RunFacts};

    /// Two groups (one target each) over two 10 s phases; type b is the headline.
    fn summary(headline: Option<Headline>) -> Summary {
        let mut keys = crate::results::intervals::tests::two_phase_keys();
        keys.groups = vec!["A".into(), "B".into()];
        keys.targets[1].group = 1;
        let mut rec = Recorder::new(keys.len());
        let mut commit = |segment, target, n| {
            for _ in 0..n {
                rec.record(
                    keys.key(segment, target, 1),
                    Outcome::Committed,
                    1_000,
                    None,
                    0,
                );
            }
        };
        commit(0, 0, 10);
        commit(0, 1, 30);
        commit(1, 0, 20);
        commit(1, 1, 40);
        let mut plan = crate::results::summary::tests::plan();
        let mut b = plan.groups[0].clone();
        b.name = "B".into();
        plan.groups[0].name = "A".into();
        plan.groups.push(b);
        for ph in &mut plan.phases {
            let mut g = ph.groups[0].clone();
            g.share = 50.0;
            ph.groups[0].share = 50.0;
            ph.groups.push(g);
        }
        let facts = RunFacts {
            headline,
            ..crate::results::summary::tests::two_phase_facts()
        };
        Summary::build(&facts, &plan, &keys, &rec, Vec::new())
    }

    #[test]
    fn the_table_holds_the_headline_per_group_and_phase() {
        let tpsv = Headline::per_second("tpsE", "b")
            .over_many("tpsV")
            .for_databases(2);
        let s = summary(Some(tpsv));
        let h = s.headline.as_ref().unwrap();
        // 100 committed over the 20 s measured window.
        assert_eq!((h.label.as_str(), h.value()), ("tpsV", 5.0));
        let html = table(&s).unwrap();
        assert!(
            html.contains("<tr><th>tpsV by group</th><th>i1 p1</th><th>i1 p2</th><th>measured window</th></tr>"),
            "{html}"
        );
        // A: 10 then 20 in 10 s phases, 30 in 20 s; B: 30, 40, 70.
        assert!(
            html.contains("<tr><td>A</td><td>1.00</td><td>2.00</td><td>1.50</td></tr>"),
            "{html}"
        );
        assert!(
            html.contains("<tr><td>B</td><td>3.00</td><td>4.00</td><td>3.50</td></tr>"),
            "{html}"
        );
        assert!(
            html.contains("<tr><td>all groups</td><td>4.00</td><td>6.00</td><td>5.00</td></tr>"),
            "{html}"
        );
        assert!(html.contains("b committed per second"), "{html}");
        let json = s.to_json().unwrap();
        assert!(
            json.contains("\"headline\": 3.5"),
            "per group in summary.json: {json}"
        );
    }

    #[test]
    fn per_minute_headlines_keep_their_unit_and_no_headline_no_table() {
        let s = summary(Some(Headline::per_minute("NOTPM", "b")));
        let html = table(&s).unwrap();
        // A's 30 in the 20 s window: 90 per minute.
        assert!(
            html.contains("<tr><td>A</td><td>60.0</td><td>120.0</td><td>90.0</td></tr>"),
            "{html}"
        );
        assert_eq!(table(&summary(None)), None);
    }
}
