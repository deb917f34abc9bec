//! The layout of a run as the clients see it: which targets each client holds a session to,
//! and, for each phase, whether it is active, which deck of targets it draws from, which mix
//! deck per group, and its pace (rate, think time). Built once from the Plan, read by every
//! client at each segment change; nothing here is touched per transaction.

use std::time::Duration;

use crate::config::timeline::Segment;
use crate::config::{DriveMode, RunPlan};
use crate::workload::{ClientSlot, Workload};

use super::deck::{card_counts, Deck};

/// (card, copies) pairs of a deck.
type Cards = Vec<(usize, u32)>;

/// One (group, set) target.
#[derive(Debug, Clone)]
pub struct TargetSlot {
    pub group: usize,
    pub params: pgwire::ConnectParams,
}

/// A group's workload and how its transaction types map to the run's type list.
#[derive(Debug, Clone)]
pub struct GroupSlot {
    pub workload: Workload,
    /// Global type index of each of the workload's transaction types.
    pub txn_map: Vec<usize>,
    /// Indexes into `Layout::targets`.
    pub targets: Vec<usize>,
}

/// What one client serves.
#[derive(Debug, Clone, Copy)]
pub struct ClientRole {
    /// The group of an independent-mode client; None in shared mode (it serves all).
    pub group: Option<usize>,
    pub slot: ClientSlot,
}

/// How fast a client goes in one phase.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pace {
    /// This client's scheduled transactions per second (Poisson); None = as fast as possible.
    pub rate: Option<f64>,
    pub think: Duration,
}

#[derive(Debug)]
pub struct Layout {
    pub mode: DriveMode,
    pub targets: Vec<TargetSlot>,
    pub groups: Vec<GroupSlot>,
    pub segments: Vec<Segment>,
    pub clients: Vec<ClientRole>,
    /// Printable name of each target (password redacted).
    pub labels: Vec<String>,
    plan: RunPlan,
    /// Shared mode: per phase, card counts over all targets.
    shared_cards: Vec<Cards>,
    /// Per phase, per group: card counts over the group's transaction types (None = workload's own).
    mix_cards: Vec<Vec<Option<Cards>>>,
}

impl Layout {
    /// `targets` holds each (group, set)'s connection parameters in plan order; `workloads`
    /// one workload per group; `txn_types` the run's list of type names.
    pub fn new(
        plan: &RunPlan,
        segments: Vec<Segment>,
        workloads: Vec<Workload>,
        targets: Vec<TargetSlot>,
        labels: Vec<String>,
        txn_types: &[String],
    ) -> Result<Layout, String> {
        let groups: Vec<GroupSlot> = workloads
            .into_iter()
            .enumerate()
            .map(|(g, workload)| GroupSlot {
                txn_map: workload
                    .txn_types()
                    .iter()
                    .map(|t| txn_types.iter().position(|n| n == t).unwrap_or(0))
                    .collect(),
                targets: (0..targets.len())
                    .filter(|t| targets[*t].group == g)
                    .collect(),
                workload,
            })
            .collect();
        let mut shared_cards = Vec::new();
        let mut mix_cards = Vec::new();
        for phase in &plan.phases {
            let weights: Vec<f64> = targets
                .iter()
                .map(|t| phase.groups[t.group].share / groups[t.group].targets.len() as f64)
                .collect();
            let counts = if plan.mode == DriveMode::Shared {
                card_counts(&weights, plan.deck_size)
                    .map_err(|e| format!("phase '{}': {e}", phase.name))?
            } else {
                vec![0; targets.len()]
            };
            shared_cards.push(
                counts
                    .into_iter()
                    .enumerate()
                    .filter(|(_, n)| *n > 0)
                    .collect(),
            );
            let mut per_group = Vec::new();
            for (g, pg) in phase.groups.iter().enumerate() {
                if pg.mix.is_empty() {
                    per_group.push(None);
                    continue;
                }
                let names = groups[g].workload.txn_types();
                let mut weights = vec![0.0; names.len()];
                for (name, w) in &pg.mix {
                    if let Some(i) = names.iter().position(|n| n == name) {
                        weights[i] = *w;
                    }
                }
                let counts = card_counts(&weights, None)
                    .map_err(|e| format!("phase '{}' mix for group {}: {e}", phase.name, g + 1))?;
                per_group.push(Some(
                    counts
                        .into_iter()
                        .enumerate()
                        .filter(|(_, n)| *n > 0)
                        .collect(),
                ));
            }
            mix_cards.push(per_group);
        }
        let clients = match plan.mode {
            DriveMode::Shared => (0..plan.clients)
                .map(|i| ClientRole {
                    group: None,
                    slot: ClientSlot {
                        index: i,
                        count: plan.clients,
                    },
                })
                .collect(),
            DriveMode::Independent => {
                let mut roles = Vec::new();
                for g in 0..groups.len() {
                    let most = plan
                        .phases
                        .iter()
                        .map(|p| p.groups[g].clients)
                        .max()
                        .unwrap_or(0);
                    for i in 0..most {
                        roles.push(ClientRole {
                            group: Some(g),
                            slot: ClientSlot {
                                index: i,
                                count: most,
                            },
                        });
                    }
                }
                roles
            }
        };
        Ok(Layout {
            mode: plan.mode,
            targets,
            groups,
            segments,
            clients,
            labels,
            plan: plan.clone(),
            shared_cards,
            mix_cards,
        })
    }

    /// Targets a client holds sessions to, by global index; card values index this list.
    pub fn client_targets(&self, role: &ClientRole) -> Vec<usize> {
        match role.group {
            Some(g) => self.groups[g].targets.clone(),
            None => (0..self.targets.len()).collect(),
        }
    }

    /// Sessions each target receives (one per client that serves it).
    pub fn sessions_per_target(&self) -> Vec<u32> {
        let mut n = vec![0u32; self.targets.len()];
        for role in &self.clients {
            for t in self.client_targets(role) {
                n[t] += 1;
            }
        }
        n
    }

    /// Whether the client runs transactions in `phase`.
    pub fn active(&self, role: &ClientRole, phase: usize) -> bool {
        match role.group {
            Some(g) => role.slot.index < self.plan.phases[phase].groups[g].clients,
            None => true,
        }
    }

    /// The client's deck of targets for `phase`; cards are positions in `client_targets`.
    pub fn target_deck(&self, role: &ClientRole, phase: usize) -> Deck<u16> {
        match role.group {
            // Independent: the group's sets take equal turns.
            Some(g) => {
                let counts: Vec<(u16, u32)> = (0..self.groups[g].targets.len())
                    .map(|i| (i as u16, 1))
                    .collect();
                Deck::new(&counts)
            }
            None => {
                let counts: Vec<(u16, u32)> = self.shared_cards[phase]
                    .iter()
                    .map(|(t, n)| (*t as u16, *n))
                    .collect();
                Deck::new(&counts)
            }
        }
    }

    /// The mix deck of `group` in `phase`, over the workload's own type indexes.
    pub fn mix_deck(&self, phase: usize, group: usize) -> Option<Deck<u8>> {
        self.mix_cards[phase][group].as_ref().map(|counts| {
            let c: Vec<(u8, u32)> = counts.iter().map(|(t, n)| (*t as u8, *n)).collect();
            Deck::new(&c)
        })
    }

    pub fn pace(&self, role: &ClientRole, phase: usize) -> Pace {
        match role.group {
            None => Pace {
                rate: self
                    .plan
                    .rate
                    .map(|r| r / f64::from(self.plan.clients.max(1))),
                think: Duration::ZERO,
            },
            Some(g) => {
                let pg = &self.plan.phases[phase].groups[g];
                Pace {
                    rate: pg.rate.map(|r| r / f64::from(pg.clients.max(1))),
                    think: pg.think,
                }
            }
        }
    }

    /// Whether a client's pace is the same in every phase (so its schedule runs on unbroken).
    pub fn pace_is_constant(&self, role: &ClientRole) -> bool {
        role.group.is_none()
    }
}
