//! `summary.json`'s `incidents`: what happened to the managed instances during a run (issue 15,
//! item 5). A memory limit below what an instance needs makes the kernel's OOM killer kill its
//! backends; PostgreSQL then terminates every other session and reinitializes (crash recovery,
//! which also resets its statistics). A run goes on through that, so its totals alone do not
//! show it: these records do, with their times.
//!
//! Each record ([`Incident`], written in sampling order):
//!
//! | field | meaning |
//! |---|---|
//! | `t_s` | seconds since the run started (3 decimals), the clock of `system.csv`: the sampling round that saw it |
//! | `instance` | the managed instance's name |
//! | `kind` | `oom_kill` (its cgroup's OOM kill counter grew), `backend_killed` (server.log: a server process was terminated by a signal), `crash_restart` (server.log: all server processes terminated and reinitialized; or the postmaster's pid changed), `server_down` (the postmaster is gone: e.g. crash recovery was itself OOM-killed, "shutting down due to startup process failure") |
//! | `count` | how many of that kind the round saw (at least 1) |
//! | `detail` | one line: the counter's values, or the server.log line |
//!
//! They are watched by the sampler (absent with `--sample 0`) for managed instances only; an
//! OOM kill needs the instance to have a cgroup (`--memory`). The field is left out when there
//! were none, and older summaries read as having none.

pub use crate::event::{Incident, IncidentKind};

/// One instance's incidents over the whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceIncidents {
    pub instance: String,
    /// Total count per kind, in [`IncidentKind::ALL`] order (zero kinds left out).
    pub counts: Vec<(IncidentKind, u64)>,
    pub first_s: f64,
    pub last_s: f64,
}

impl InstanceIncidents {
    /// "30 OOM kills, 30 server processes killed, 30 crash restarts".
    pub fn counts_text(&self) -> String {
        let parts: Vec<String> = self
            .counts
            .iter()
            .map(|(kind, n)| kind.counted(*n))
            .collect();
        parts.join(", ")
    }
}

/// The incidents summed per instance, instances in the order they first had one.
pub fn per_instance(incidents: &[Incident]) -> Vec<InstanceIncidents> {
    let mut out: Vec<InstanceIncidents> = Vec::new();
    for i in incidents {
        let at = match out.iter().position(|o| o.instance == i.instance) {
            Some(at) => at,
            None => {
                out.push(InstanceIncidents {
                    instance: i.instance.clone(),
                    counts: Vec::new(),
                    first_s: i.t_s,
                    last_s: i.t_s,
                });
                out.len() - 1
            }
        };
        let o = &mut out[at];
        o.first_s = o.first_s.min(i.t_s);
        o.last_s = o.last_s.max(i.t_s);
        match o.counts.iter_mut().find(|(k, _)| *k == i.kind) {
            Some((_, n)) => *n += i.count,
            None => o.counts.push((i.kind, i.count)),
        }
    }
    for o in &mut out {
        o.counts.sort_by_key(|(k, _)| *k);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incident(t_s: f64, instance: &str, kind: IncidentKind, count: u64) -> Incident {
        Incident {
            t_s,
            instance: instance.into(),
            kind,
            count,
            detail: String::new(),
        }
    }

    #[test]
    fn sums_per_instance_and_kind() {
        let all = [
            incident(2.0, "vm1", IncidentKind::CrashRestart, 1),
            incident(2.0, "vm1", IncidentKind::OomKill, 2),
            incident(3.0, "vm2", IncidentKind::OomKill, 1),
            incident(5.5, "vm1", IncidentKind::OomKill, 1),
        ];
        let per = per_instance(&all);
        assert_eq!(per.len(), 2);
        assert_eq!(per[0].instance, "vm1");
        assert_eq!(
            per[0].counts,
            vec![(IncidentKind::OomKill, 3), (IncidentKind::CrashRestart, 1)]
        );
        assert_eq!((per[0].first_s, per[0].last_s), (2.0, 5.5));
        assert_eq!(per[0].counts_text(), "3 OOM kills, 1 crash restart");
        assert_eq!(per[1].counts_text(), "1 OOM kill");
        assert!(per_instance(&[]).is_empty());
    }

    #[test]
    fn kinds_are_written_in_snake_case() {
        let text =
            serde_json::to_string(&incident(1.5, "a", IncidentKind::BackendKilled, 1)).unwrap();
        assert_eq!(
            text,
            r#"{"t_s":1.5,"instance":"a","kind":"backend_killed","count":1,"detail":""}"#
        );
        for k in IncidentKind::ALL {
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.name())
            );
        }
    }
}
