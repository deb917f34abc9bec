//! The run's own events in the report (`summary.json`'s `events`, issue 53): under
//! "Failures", a table of the steps each event took and one of the recovery around it, all
//! transactions and each group, and the commits a promotion lost; their times are the dashed purple verticals on every chart
//! over the run (see `incidents::run_marks`).

use super::markup::{note_to, table_to};
use crate::results::disruptions::EventAccount;
use crate::results::{HostAgreement, HostSource};

fn secs(v: Option<f64>, absent: &str) -> String {
    v.map_or_else(|| absent.to_string(), |v| format!("{v:.1}"))
}

/// The "Events" part of the failures section; nothing for a run without events.
pub fn events_to(all: &[EventAccount], p: &mut String) {
    if all.is_empty() {
        return;
    }
    p.push_str("<h3>Events</h3>\n");
    let steps: Vec<Vec<String>> = all
        .iter()
        .enumerate()
        .flat_map(|(k, e)| {
            e.steps.iter().map(move |s| {
                vec![
                    (k + 1).to_string(),
                    e.description.clone(),
                    s.step.clone(),
                    format!("{:.1}", s.started_s),
                    secs(s.ended_s, "-"),
                    s.outcome.name().to_string(),
                    s.detail.clone(),
                ]
            })
        })
        .collect();
    table_to(
        p,
        &[
            "event",
            "what",
            "step",
            "began (s)",
            "done (s)",
            "outcome",
            "detail",
        ],
        &steps,
    );
    for (k, e) in all.iter().enumerate() {
        if let Some(n) = e.lost_commits {
            note_to(
                p,
                &format!(
                    "Event {}: {n} commits lost at the promotion: commit records in the old primary's WAL past the point where the promoted standby's timeline begins (a commit whose answer never reached its client is among them).",
                    k + 1
                ),
            );
        }
    }
    let recovery: Vec<Vec<String>> = all
        .iter()
        .enumerate()
        .flat_map(|(k, e)| {
            e.recovery.iter().map(move |r| {
                vec![
                    (k + 1).to_string(),
                    r.scope.clone(),
                    format!("{:.1}", r.rate_before),
                    secs(r.first_commit_s, "none"),
                    secs(r.recovered_s, "not recovered"),
                    r.failed.to_string(),
                    r.reconnects.to_string(),
                    secs(r.down_s, "-"),
                    r.full_rate_share
                        .map_or_else(|| "-".into(), |f| format!("{:.0}%", f * 100.0)),
                ]
            })
        })
        .collect();
    if recovery.is_empty() {
        return;
    }
    table_to(
        p,
        &[
            "event",
            "scope",
            "commits/s before",
            "first commit after (s)",
            "back to 90% after (s)",
            "failed",
            "reconnects",
            "down (s)",
            "at full rate after",
        ],
        &recovery,
    );
    note_to(
        p,
        "Recovery is timed from the event's first step, from the per-transaction log in 0.1 s steps: the rate before is over the 10 s before it; back to 90% is the start of the first 1 s window, from the first commit on, whose commit rate is at least 90% of that again. Down is the time at least one of the scope's targets was down, as its clients saw it, in the windows that opened from the event to the recovery. At full rate after: of the whole seconds from the event to the run's end, the share whose commit rate is at least 90% of the rate before.",
    );
}

/// The server check per host of a target over a primary and its standbys (issue 54): one
/// row per server, its own count beside the commits and sessions the clients had there.
pub fn hosts_to(all: &[HostAgreement], p: &mut String) {
    if all.is_empty() {
        return;
    }
    p.push_str("<h3>Commits per host</h3>\n");
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|h| {
            vec![
                h.target.clone(),
                h.host.clone(),
                match h.source {
                    HostSource::PgStatDatabase => "pg_stat_database".into(),
                    HostSource::Wal => "WAL".into(),
                },
                h.server_commits
                    .map_or_else(|| "-".into(), |n| n.to_string()),
                h.client_committed.to_string(),
                h.client_sessions.to_string(),
                h.unknown.to_string(),
                match h.agrees {
                    Some(true) if h.beside > 0 => format!("agrees (+{} beside)", h.beside),
                    Some(true) => "agrees".into(),
                    Some(false) => "DISAGREES".into(),
                    None if h.server_commits.is_some() => {
                        format!("not decided: {}", h.note.as_deref().unwrap_or("-"))
                    }
                    None => format!("not compared: {}", h.note.as_deref().unwrap_or("-")),
                },
            ]
        })
        .collect();
    table_to(
        p,
        &[
            "target",
            "host",
            "counted in",
            "server's commits",
            "clients' commits",
            "clients' sessions",
            "unknown fate",
            "",
        ],
        &rows,
    );
    note_to(
        p,
        "Each server of a target over a primary and its standbys, counted from the run's start: a live one's xact_commit on the database (each session is one commit there), a server that died in the run by the commit records in its WAL from the position it had at the start (transactions that wrote, in any database; sessions leave none). It agrees when its count is what the clients saw land there, or up to the tries of unknown fate more (a session that broke or was given up mid-transaction).",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::disruptions::{EventStep, StepOutcome};

    #[test]
    fn a_promotion_says_the_commits_it_lost_in_the_table_and_on_the_terminal() {
        let e = EventAccount {
            at_s: 3.0,
            action: "promote".into(),
            target: "b".into(),
            description: "promote standby b".into(),
            steps: vec![EventStep {
                step: "promote".into(),
                started_s: 3.0,
                ended_s: Some(3.2),
                outcome: StepOutcome::Ok,
                detail: "pg_ctl promote".into(),
            }],
            recovery: Vec::new(),
            lost_commits: Some(7),
        };
        let mut p = String::new();
        events_to(std::slice::from_ref(&e), &mut p);
        assert!(
            p.contains("Event 1: 7 commits lost at the promotion"),
            "{p}"
        );
        assert!(e.line(0).contains("7 commits lost at the promotion"));
        let counted_none = EventAccount {
            lost_commits: None,
            ..e
        };
        let mut p = String::new();
        events_to(&[counted_none], &mut p);
        assert!(!p.contains("commits lost"), "{p}");
    }
}
