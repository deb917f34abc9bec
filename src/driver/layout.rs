//! The layout of a run as the clients see it: which targets each client holds a session to,
//! which target of a set serves each role, and, for each phase, whether a client is active,
//! which deck of sets it draws from, which mix deck per group, and its pace (rate, think
//! time). Built once from the Plan, read by every client at each segment change; per
//! transaction only the set → role → target lookup is made, through plain vectors.

use std::sync::Arc;
use std::time::Duration;

use crate::config::timeline::Segment;
use crate::config::{DriveMode, RunPlan};
use crate::workload::{ClientSlot, Workload};

use super::deck::{card_counts, Deck};

/// (card, copies) pairs of a deck.
type Cards = Vec<(usize, u32)>;

/// One database of a (group, set): a session target.
#[derive(Debug, Clone)]
pub struct TargetSlot {
    pub group: usize,
    pub params: pgwire::ConnectParams,
}

/// One set of a group: the target serving each of the group's roles.
#[derive(Debug, Clone)]
pub struct SetSlot {
    pub group: usize,
    /// Index into `Layout::targets`, per role in the order of `GroupSlot::roles`.
    pub targets: Vec<usize>,
}

/// A group's workload, its roles, and how its transaction types map to the run's type list.
#[derive(Debug, Clone)]
pub struct GroupSlot {
    pub workload: Arc<dyn Workload>,
    /// Global type index of each of the workload's transaction types.
    pub txn_map: Vec<usize>,
    /// Role of each of the workload's transaction types: index into `roles`.
    pub txn_role: Vec<usize>,
    pub roles: Vec<String>,
    /// Indexes into `Layout::sets`.
    pub sets: Vec<usize>,
    /// Indexes into `Layout::targets`.
    pub targets: Vec<usize>,
}

impl GroupSlot {
    /// The group's part of the plan: its workload and the roles its sets map to targets.
    pub fn new(workload: Arc<dyn Workload>, roles: Vec<String>) -> GroupSlot {
        let txn_role = workload
            .txn_types()
            .iter()
            .map(|t| roles.iter().position(|r| *r == t.role).unwrap_or(0))
            .collect();
        GroupSlot {
            workload,
            txn_map: Vec::new(),
            txn_role,
            roles,
            sets: Vec::new(),
            targets: Vec::new(),
        }
    }
}

/// Which clients serve what: a group (independent mode) or all of them (shared mode), and the
/// client's place among them.
#[derive(Debug, Clone, Copy)]
pub struct ClientAssignment {
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
    pub sets: Vec<SetSlot>,
    pub groups: Vec<GroupSlot>,
    pub segments: Vec<Segment>,
    pub clients: Vec<ClientAssignment>,
    /// Printable name of each target (password redacted).
    pub labels: Vec<String>,
    plan: RunPlan,
    /// Shared mode: per phase, card counts over all sets.
    shared_cards: Vec<Cards>,
    /// Per phase, per group: card counts over the group's transaction types (None = workload's own).
    mix_cards: Vec<Vec<Option<Cards>>>,
}

impl Layout {
    /// `targets` holds each distinct database of every (group, set) in plan order, `sets`
    /// every (group, set) with its target per role; `groups` one slot per group; `txn_types`
    /// the run's list of type names.
    pub fn new(
        plan: &RunPlan,
        segments: Vec<Segment>,
        mut groups: Vec<GroupSlot>,
        targets: Vec<TargetSlot>,
        sets: Vec<SetSlot>,
        labels: Vec<String>,
        txn_types: &[String],
    ) -> Result<Layout, String> {
        for (g, slot) in groups.iter_mut().enumerate() {
            slot.txn_map = slot
                .workload
                .txn_types()
                .iter()
                .map(|t| txn_types.iter().position(|n| *n == t.name).unwrap_or(0))
                .collect();
            slot.sets = (0..sets.len()).filter(|s| sets[*s].group == g).collect();
            slot.targets = (0..targets.len())
                .filter(|t| targets[*t].group == g)
                .collect();
        }
        let mut shared_cards = Vec::new();
        let mut mix_cards = Vec::new();
        for phase in &plan.phases {
            let weights: Vec<f64> = sets
                .iter()
                .map(|s| phase.groups[s.group].share / groups[s.group].sets.len() as f64)
                .collect();
            let counts = if plan.mode == DriveMode::Shared {
                card_counts(&weights, plan.deck_size)
                    .map_err(|e| format!("phase '{}': {e}", phase.name))?
            } else {
                vec![0; sets.len()]
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
                    if let Some(i) = names.iter().position(|n| n.name == *name) {
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
                .map(|i| ClientAssignment {
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
                        roles.push(ClientAssignment {
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
            sets,
            groups,
            segments,
            clients,
            labels,
            plan: plan.clone(),
            shared_cards,
            mix_cards,
        })
    }

    /// Targets a client holds sessions to (one per database of each set it can reach), by
    /// global index.
    pub fn client_targets(&self, role: &ClientAssignment) -> Vec<usize> {
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
    pub fn active(&self, role: &ClientAssignment, phase: usize) -> bool {
        match role.group {
            Some(g) => role.slot.index < self.plan.phases[phase].groups[g].clients,
            None => true,
        }
    }

    /// The client's deck of sets for `phase`; cards are global set indexes.
    pub fn set_deck(&self, role: &ClientAssignment, phase: usize) -> Deck<u16> {
        match role.group {
            // Independent: the group's sets take equal turns.
            Some(g) => {
                let counts: Vec<(u16, u32)> =
                    self.groups[g].sets.iter().map(|s| (*s as u16, 1)).collect();
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

    pub fn pace(&self, role: &ClientAssignment, phase: usize) -> Pace {
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
    pub fn pace_is_constant(&self, role: &ClientAssignment) -> bool {
        role.group.is_none()
    }
}
