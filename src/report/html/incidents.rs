//! The managed instances' incidents in the report (`summary.json`'s `incidents`): a line per
//! instance and a table with their times under "Failures", and their times as red verticals on
//! the charts over time. A run whose instances were OOM-killed shows it where its throughput
//! dips, not only in `system.csv`.

use std::fmt::Write as _;

use super::markup::{esc, note_to, table_to};
use crate::results::down::{AbortedClient, DownWindow};
use crate::results::errors::ErrorEntry;
use crate::results::incidents::per_instance;
use crate::results::Incident;

/// Rows of the incidents table at most; the rest are counted (all are in summary.json).
const MAX_ROWS: usize = 200;

/// Says what the red verticals are, under the charts that have them.
pub const INCIDENT_NOTE: &str =
    "Red verticals are incidents of the managed instances (OOM kills, server processes killed, crash restarts, server stops; see Failures).";
/// Says what the dashed purple verticals are.
pub const EVENT_NOTE: &str = "Dashed purple verticals are the run's own events (see Events).";

/// What a chart over the run marks: its incidents and its events.
pub fn run_marks(s: &crate::results::Summary) -> crate::report::charts::Marks {
    crate::report::charts::Marks {
        incidents: incident_times(&s.incidents),
        events: s.events.iter().map(|e| e.started_s()).collect(),
    }
}

/// The notes under a chart with `marks`.
pub fn marks_note(marks: &crate::report::charts::Marks) -> Option<String> {
    let mut notes = Vec::new();
    if !marks.incidents.is_empty() {
        notes.push(INCIDENT_NOTE);
    }
    if !marks.events.is_empty() {
        notes.push(EVENT_NOTE);
    }
    (!notes.is_empty()).then(|| notes.join(" "))
}

/// The times of the run's incidents, each once, in order.
pub fn incident_times(all: &[Incident]) -> Vec<f64> {
    let mut at: Vec<f64> = all.iter().map(|i| i.t_s).collect();
    at.sort_by(f64::total_cmp);
    at.dedup();
    at
}

/// The "Down windows" part of the failures section: when each target was down for its
/// clients (summary.json's `down_windows`).
pub fn down_windows_to(all: &[DownWindow], p: &mut String) {
    p.push_str("<h3>Down windows</h3>\n");
    if all.is_empty() {
        note_to(p, "Every target answered its clients for the whole run.");
        return;
    }
    let rows: Vec<Vec<String>> = all
        .iter()
        .take(MAX_ROWS)
        .map(|w| {
            vec![
                w.target.clone(),
                format!("{:.1}", w.from_s),
                w.to_s
                    .map_or_else(|| "(end)".to_string(), |t| format!("{t:.1}")),
                w.sessions_lost.to_string(),
            ]
        })
        .collect();
    table_to(p, &["target", "from (s)", "to (s)", "sessions lost"], &rows);
    note_to(
        p,
        "From the first client that lost its session to the target (the server went away, or a try timed out) to the last that had it back: up to a reconnection backoff (2 s) longer than the server's own outage. Its transactions failed meanwhile; the server's count covers only what reached it.",
    );
}

/// Every kind of error the run met (summary.json's `errors`), each with its count and first
/// error in full; nothing when there was none.
pub fn errors_to(all: &[ErrorEntry], p: &mut String) {
    if all.is_empty() {
        return;
    }
    p.push_str("<h3>Errors by kind</h3>\n");
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|e| {
            vec![
                e.kind(),
                e.count.to_string(),
                format!("{:.1}", e.first_at_s),
                e.place(),
                e.text().replace('\n', " | "),
            ]
        })
        .collect();
    table_to(
        p,
        &["kind", "count", "first at (s)", "first in", "first error"],
        &rows,
    );
    note_to(
        p,
        "A kind is an error class and a SQLSTATE; the count covers the whole run (ramps and retried tries included). Commands are counted from 0, as in pgbench's abort line.",
    );
}

/// The clients an error ended (summary.json's `aborted_clients`); nothing when none was.
pub fn aborted_clients_to(all: &[AbortedClient], p: &mut String) {
    if all.is_empty() {
        return;
    }
    p.push_str("<h3>Aborted clients</h3>\n");
    let rows: Vec<Vec<String>> = all
        .iter()
        .take(MAX_ROWS)
        .map(|a| {
            vec![
                a.client.to_string(),
                format!("{:.1}", a.at_s),
                a.message.clone(),
            ]
        })
        .collect();
    table_to(p, &["client", "at (s)", "error"], &rows);
    note_to(
        p,
        "A script's runtime error ends its client, as in pgbench, and so does an error no retry helps (class other) unless the run goes on after errors (--continue-on-error); its failed transaction is counted under other, and the other clients went on (unless --exit-on-abort stopped the run).",
    );
}

/// The "Incidents" part of the failures section.
pub fn incidents_to(all: &[Incident], p: &mut String) {
    p.push_str("<h3>Incidents</h3>\n");
    if all.is_empty() {
        note_to(
            p,
            "No incident was recorded: no OOM kill, no server process killed, no crash restart, no server stop (watched on managed instances while sampling).",
        );
        return;
    }
    for i in per_instance(all) {
        let _ = writeln!(
            p,
            "<p class=\"flag\">instance {}: {}, between {:.1} s and {:.1} s</p>",
            esc(&i.instance),
            esc(&i.counts_text()),
            i.first_s,
            i.last_s
        );
    }
    let rows: Vec<Vec<String>> = all
        .iter()
        .take(MAX_ROWS)
        .map(|i| {
            vec![
                format!("{:.1}", i.t_s),
                i.instance.clone(),
                i.kind.name().to_string(),
                i.count.to_string(),
                i.detail.clone(),
            ]
        })
        .collect();
    table_to(p, &["t (s)", "instance", "kind", "count", "detail"], &rows);
    if all.len() > MAX_ROWS {
        note_to(
            p,
            &format!(
                "{} more incidents are in summary.json ('incidents').",
                all.len() - MAX_ROWS
            ),
        );
    }
    note_to(
        p,
        "Seen by the sampler once per round (t is the round's time): an OOM kill from the cgroup's counter, killed server processes and crash-recovery restarts from server.log, a server stop from its postmaster's process. A crash restart ends every session and resets the server's statistics.",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::IncidentKind;

    #[test]
    fn lists_down_windows_open_and_closed() {
        let mut p = String::new();
        down_windows_to(&[], &mut p);
        assert!(p.contains("answered its clients for the whole run"), "{p}");
        let all = vec![
            DownWindow {
                target: "instance:a/db".into(),
                from_s: 6.04,
                to_s: Some(9.31),
                sessions_lost: 3,
            },
            DownWindow {
                target: "instance:b/db".into(),
                from_s: 12.0,
                to_s: None,
                sessions_lost: 1,
            },
        ];
        let mut p = String::new();
        down_windows_to(&all, &mut p);
        for cell in ["instance:a/db", "6.0", "9.3", "(end)", ">3<"] {
            assert!(p.contains(cell), "{cell} in {p}");
        }
        assert_eq!(all[1].span_text(), "from 12.0 s to the end");
    }

    #[test]
    fn lists_incidents_and_their_times() {
        let all = vec![
            Incident {
                t_s: 3.0,
                instance: "vm<1>".into(),
                kind: IncidentKind::OomKill,
                count: 2,
                detail: "oom_kill 0 -> 2".into(),
            },
            Incident {
                t_s: 3.0,
                instance: "vm<1>".into(),
                kind: IncidentKind::CrashRestart,
                count: 1,
                detail: "reinitialized".into(),
            },
        ];
        assert_eq!(incident_times(&all), vec![3.0]);
        let mut p = String::new();
        incidents_to(&all, &mut p);
        assert!(
            p.contains("instance vm&lt;1&gt;: 2 OOM kills, 1 crash restart"),
            "{p}"
        );
        assert!(p.contains("<td>oom_kill</td><td>2</td>"), "{p}");
        let mut none = String::new();
        incidents_to(&[], &mut none);
        assert!(none.contains("No incident was recorded"), "{none}");
    }
}
