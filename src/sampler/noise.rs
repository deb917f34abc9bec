//! The noise events' groups (issue 53): each round, the CPU a `noise` event's group has used,
//! as `noise:N` rows of `system.csv` (N the event's number), so the results show the
//! neighbour's size beside the instances it squeezed. A group exists only while its noise
//! runs, so rounds outside that window have no `noise:N` rows.

use crate::instance::{noise, CgroupPaths};

use super::cgroup::cpu_pct;
use super::run::Values;

/// One noise event's group.
pub struct NoiseProbe {
    source: String,
    group: CgroupPaths,
    /// The group's CPU seconds at the last round that read them; `None` while it is absent.
    last_cpu_s: Option<f64>,
    /// Seconds since `last_cpu_s` was read.
    since_s: f64,
}

impl NoiseProbe {
    /// Probes for the groups of the noise events numbered `events` (from 1). Without a cgroup
    /// hierarchy a noise event is refused before the run, so there is nothing to miss.
    pub fn for_events(events: &[usize]) -> Vec<NoiseProbe> {
        events
            .iter()
            .filter_map(|&k| {
                Some(NoiseProbe {
                    source: format!("noise:{k}"),
                    group: noise::group_of(k).ok()?,
                    last_cpu_s: None,
                    since_s: 0.0,
                })
            })
            .collect()
    }

    /// This round's rows: `cpu_seconds` while the group exists, and `cpu_pct` when the round
    /// before read it too (the round the group appears in has no rate: it began within the
    /// round, so a rate over the whole round would understate it).
    pub fn sample(&mut self, dt_s: f64, out: &mut Values) {
        self.since_s += dt_s;
        let Some(cpu) = noise::cpu_seconds(&self.group) else {
            self.last_cpu_s = None;
            return;
        };
        out.push(&self.source, "cpu_seconds", cpu);
        let last = self.last_cpu_s.filter(|_| dt_s > 0.0);
        if let Some(pct) = last.and_then(|last| cpu_pct(last, cpu, self.since_s)) {
            out.push(&self.source, "cpu_pct", pct);
        }
        self.last_cpu_s = Some(cpu);
        self.since_s = 0.0;
    }
}
