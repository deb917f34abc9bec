//! What the other groups cost a group that runs the headline's type (CH-benCHmark's question:
//! what the analytic streams cost the OLTP tenant beside them), for `summary.json`, the
//! console and the report.
//!
//! Read from the run's own phases, independent mode only: a measured phase where the group
//! ran *alone* (every other group at 0 clients) is set against each measured phase of the
//! same iteration where it ran *beside* others with the same clients. Each side gives the
//! group's headline (TPC-C's NOTPM) over the seconds the phase ran and the p95 of the
//! headline type's latency (New-Order's), and the pair their ratios, beside over alone: a
//! NOTPM ratio under 1 and a p95 ratio over 1 are the neighbours' cost. The neighbours'
//! committed units in the beside phase are stated too, so a pair where they did little
//! (a stream that ended early) reads as such.

use serde::{Deserialize, Serialize};

use super::breakdown::PhaseStats;
use super::headline::{Headline, Per};
use super::summary::{round3, LatencyStats};
use crate::metrics::{KeySpace, Recorder};

/// One group's phase alone against one beside other groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interference {
    /// The group that ran the headline's type (the OLTP tenant).
    pub group: String,
    /// The headline's label (NOTPM) and the type it counts (new_order).
    pub label: String,
    pub txn_type: String,
    /// The headline's unit: per minute (NOTPM) unless it says second.
    #[serde(default, skip_serializing_if = "Per::is_minute")]
    pub per: Per,
    /// The group's clients, the same in both phases.
    pub clients: u32,
    pub alone: Side,
    pub beside: Side,
    /// The other groups in the beside phase that had clients.
    pub neighbours: Vec<Neighbour>,
    /// Beside's headline over alone's, 3 decimals; absent when alone's is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// Beside's p95 over alone's, 3 decimals; absent without both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ratio: Option<f64>,
}

/// The group's figures in one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub iteration: u32,
    pub phase: String,
    /// The headline over the seconds the phase ran, in its unit.
    pub headline: f64,
    /// The headline type's p95 latency in ms; absent when none committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    /// The same type's p90 (TPC-C's response-time rule is on the 90th percentile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_ms: Option<f64>,
}

/// A group beside the tenant: its clients and what it committed in the beside phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    pub group: String,
    pub clients: u32,
    pub committed: u64,
    /// Its committed units per hour over the phase's seconds (CH-benCHmark's analytic
    /// queries per hour, for a `ch` group), 1 decimal.
    #[serde(default)]
    pub per_hour: f64,
}

/// Every pair of the run: for each group that committed the headline's type and each
/// measured phase it ran beside others, the nearest earlier (else later) measured phase of
/// the same iteration it ran alone with the same clients. Empty without a headline, outside
/// independent mode (phases without clients) or without such phases.
pub fn of(
    h: Option<&Headline>,
    keys: &KeySpace,
    rec: &Recorder,
    phases: &[PhaseStats],
) -> Vec<Interference> {
    let Some((h, txn)) =
        h.and_then(|h| Some((h, keys.txn_types.iter().position(|t| *t == h.txn_type)?)))
    else {
        return Vec::new();
    };
    let n = keys.groups.len();
    let cells = keys.roll_up(rec, keys.segments.len() * n, |p| {
        (p.txn == txn).then_some(p.segment * n + p.group)
    });
    let latency = |si: usize, g: usize| {
        cells
            .get(si * n + g)
            .and_then(|s| s.latency.as_ref())
            .and_then(LatencyStats::from_micros)
    };
    let tenants: Vec<usize> = (0..n)
        .filter(|g| {
            (0..keys.segments.len()).any(|si| {
                measured(phases, si) && cells.get(si * n + g).is_some_and(|s| s.committed > 0)
            })
        })
        .collect();
    let mut out = Vec::new();
    for g in tenants {
        for (si, ph) in phases.iter().enumerate() {
            let Some(clients) = clients_of(ph, g).filter(|c| *c > 0) else {
                continue;
            };
            if !ph.measured || others(ph, g).is_empty() {
                continue;
            }
            let Some(ai) = alone_for(phases, si, g, clients) else {
                continue;
            };
            let side = |i: usize| Side {
                iteration: phases[i].iteration,
                phase: phases[i].phase.clone(),
                headline: phases[i]
                    .groups
                    .get(g)
                    .and_then(|x| x.headline)
                    .unwrap_or(0.0),
                p95_ms: latency(i, g).map(|l| l.p95),
                p90_ms: latency(i, g).map(|l| l.p90),
            };
            let (alone, beside) = (side(ai), side(si));
            out.push(Interference {
                group: keys.groups[g].clone(),
                label: h.label.clone(),
                txn_type: h.txn_type.clone(),
                per: h.per,
                clients,
                ratio: ratio(beside.headline, alone.headline),
                p95_ratio: beside
                    .p95_ms
                    .zip(alone.p95_ms)
                    .and_then(|(b, a)| ratio(b, a)),
                alone,
                beside,
                neighbours: others(ph, g),
            });
        }
    }
    out
}

impl Interference {
    /// The neighbours as words: `A (1 client, 12 committed) and B (...)`.
    pub fn neighbours_text(&self) -> String {
        let each: Vec<String> = self
            .neighbours
            .iter()
            .map(|n| {
                let s = if n.clients == 1 { "" } else { "s" };
                format!(
                    "{} ({} client{s}, {} committed)",
                    n.group, n.clients, n.committed
                )
            })
            .collect();
        each.join(" and ")
    }

    /// A headline figure as the console prints it: 1 decimal per minute, 2 per second.
    pub fn rate(&self, v: f64) -> String {
        match self.per {
            Per::Minute => format!("{v:.1}"),
            Per::Second => format!("{v:.2}"),
        }
    }

    /// One line: `what A (1 client, 12 committed) cost O (2 clients): NOTPM 3648.0 → 2988.0
    /// (×0.819), new_order p95 31.6 → 41.9 ms (×1.326) [phase alone → beside]`.
    pub fn line(&self) -> String {
        let times = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("×{r:.3}"));
        let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let s = if self.clients == 1 { "" } else { "s" };
        format!(
            "what {} cost {} ({} client{s}): {} {} → {} ({}), {} p95 {} → {} ms ({}) \
             [phase {} → {}]",
            self.neighbours_text(),
            self.group,
            self.clients,
            self.label,
            self.rate(self.alone.headline),
            self.rate(self.beside.headline),
            times(self.ratio),
            self.txn_type,
            ms(self.alone.p95_ms),
            ms(self.beside.p95_ms),
            times(self.p95_ratio),
            self.alone.phase,
            self.beside.phase
        )
    }
}

fn measured(phases: &[PhaseStats], si: usize) -> bool {
    phases.get(si).is_some_and(|p| p.measured)
}

fn clients_of(ph: &PhaseStats, g: usize) -> Option<u32> {
    ph.groups.get(g).and_then(|x| x.clients)
}

/// The groups other than `g` with clients in `ph`.
fn others(ph: &PhaseStats, g: usize) -> Vec<Neighbour> {
    ph.groups
        .iter()
        .enumerate()
        .filter(|(i, x)| *i != g && x.clients.unwrap_or(0) > 0)
        .map(|(_, x)| Neighbour {
            group: x.group.clone(),
            clients: x.clients.unwrap_or(0),
            committed: x.stats.committed,
            per_hour: if ph.duration_s > 0.0 {
                (x.stats.committed as f64 * 3600.0 / ph.duration_s * 10.0).round() / 10.0
            } else {
                0.0
            },
        })
        .collect()
}

/// The measured phase of `si`'s iteration where `g` ran alone with `clients`: the nearest
/// before `si`, else the nearest after.
fn alone_for(phases: &[PhaseStats], si: usize, g: usize, clients: u32) -> Option<usize> {
    let fits = |i: &usize| {
        let ph = &phases[*i];
        ph.measured
            && ph.iteration == phases[si].iteration
            && clients_of(ph, g) == Some(clients)
            && others(ph, g).is_empty()
    };
    (0..si)
        .rev()
        .find(fits)
        .or_else(|| (si + 1..phases.len()).find(fits))
}

fn ratio(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| round3(part / whole))
}

pub mod curve;
#[cfg(test)]
mod tests;
