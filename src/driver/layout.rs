//! The layout of a run as the clients see it: which targets each client holds a session to,
//! which target of a set serves each role, and, for each phase, whether a client is active,
//! which deck of sets it draws from, which mix deck per group, and its pace (rate, think
//! time). Built once from the Plan, read by every client at each segment change; per
//! transaction only the set → role → target lookup is made, through plain vectors.

use std::sync::Arc;
use std::time::Duration;

use crate::config::timeline::Segment;
use crate::config::{DriveMode, RunPlan, TargetSpec};
use crate::workload::{ClientSlot, Emulator, Workload};

use super::deck::{card_counts, CardRun, Deck};
use super::error::{DeckError, LayoutError};

/// (card, copies) pairs of a deck.
type Cards = Vec<(usize, u32)>;

/// One database of a (group, set): a session target.
#[derive(Debug, Clone)]
pub struct TargetSlot {
    pub group: usize,
    pub params: pgwire::ConnectParams,
    /// Where a lost session looks for the primary (issue 54): each in order, the first that
    /// is not in recovery; empty: it reconnects to `params`.
    pub follow: Vec<pgwire::ConnectParams>,
}

/// A database the plan names, before it is resolved: its group, its set, and the spec.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTarget {
    pub group: usize,
    pub set: String,
    pub spec: TargetSpec,
}

/// Every distinct database of every (group, set) of `plan`, in plan order (this order is the
/// target index everywhere), and every set with the target of each of its group's `roles`.
pub fn plan_targets(plan: &RunPlan, roles: &[Vec<String>]) -> (Vec<PlannedTarget>, Vec<SetSlot>) {
    let mut targets: Vec<PlannedTarget> = Vec::new();
    let mut sets = Vec::new();
    for (g, group) in plan.groups.iter().enumerate() {
        for set in &group.sets {
            let first = targets.len();
            for (spec, _) in set.distinct_targets() {
                targets.push(PlannedTarget {
                    group: g,
                    set: set.name.clone(),
                    spec: spec.clone(),
                });
            }
            let of_role = |role: &String| {
                let spec = set.target(role);
                (first..targets.len())
                    .find(|t| Some(&targets[*t].spec) == spec)
                    .unwrap_or(first)
            };
            let roles = roles.get(g).map_or(&[][..], |r| r.as_slice());
            sets.push(SetSlot {
                group: g,
                targets: roles.iter().map(of_role).collect(),
                emulator: None,
            });
        }
    }
    (targets, sets)
}

/// One set of a group: the target serving each of the group's roles, and the set's own
/// emulator when its workload has one (made by [`Layout::new`]).
#[derive(Debug, Clone)]
pub struct SetSlot {
    pub group: usize,
    /// Index into `Layout::targets`, per role in the order of `GroupSlot::roles`.
    pub targets: Vec<usize>,
    pub emulator: Option<Arc<dyn Emulator>>,
}

impl SetSlot {
    /// The target of the set that serves the role of the group's type `txn`.
    pub fn target_for(&self, group: &GroupSlot, txn: usize) -> usize {
        let role = group.txn_role.get(txn).copied().unwrap_or(0);
        self.targets.get(role).copied().unwrap_or(self.targets[0])
    }
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
        mut sets: Vec<SetSlot>,
        labels: Vec<String>,
        txn_types: &[String],
    ) -> Result<Layout, LayoutError> {
        // One emulator per set: what it issues goes back to the set its input came from. Each
        // shard of a run has its own (for its clients' trades), with draws of its own; only
        // the first runs the work a database needs once.
        let shard = plan.shard.as_ref().map_or(0, |s| s.index);
        for (i, set) in sets.iter_mut().enumerate() {
            let seed = crate::driver::thread::client_seed(
                plan.seed ^ u64::from(shard).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                u32::MAX - i as u32,
            );
            set.emulator = groups[set.group].workload.emulator(seed, shard == 0);
        }
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
            shared_cards.push(set_cards(plan, phase, &sets, &groups)?);
            let mut per_group = Vec::new();
            for (g, pg) in phase.groups.iter().enumerate() {
                per_group.push(mix_cards_of(&groups[g], pg).map_err(|source| {
                    LayoutError::Mix {
                        phase: phase.name.clone(),
                        group: g + 1,
                        source,
                    }
                })?);
            }
            mix_cards.push(per_group);
        }
        let clients = assignments(plan, groups.len());
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

    /// Sessions each target receives from this process (one per client that serves it).
    pub fn sessions_per_target(&self) -> Vec<u32> {
        let mut n = vec![0u32; self.targets.len()];
        for id in self.own_clients() {
            for t in self.client_targets(&self.clients[id as usize]) {
                n[t] += 1;
            }
        }
        n
    }

    /// The global ids of the clients this process runs: all of them, or a shard's (`--shard`).
    pub fn own_clients(&self) -> Vec<u32> {
        (0..self.clients.len() as u32)
            .filter(|c| self.plan.shard.as_ref().is_none_or(|s| s.runs_client(*c)))
            .collect()
    }

    /// The sets whose emulators a client serves: those it can reach.
    pub fn served_sets(&self, role: &ClientAssignment) -> Vec<usize> {
        let reach: Vec<usize> = match role.group {
            Some(g) => self.groups[g].sets.clone(),
            None => (0..self.sets.len()).collect(),
        };
        reach
            .into_iter()
            .filter(|s| self.sets[*s].emulator.is_some())
            .collect()
    }

    /// Every set's emulator, by set index (None where its workload has none).
    pub fn emulators(&self) -> impl Iterator<Item = (usize, &Arc<dyn Emulator>)> {
        self.sets
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.emulator.as_ref().map(|e| (i, e)))
    }

    /// The transactions a client runs before it ends, when its group's workload fixes them
    /// (a shared-mode client of a one-group run belongs to that group).
    pub fn units_per_client(&self, role: &ClientAssignment) -> Option<u64> {
        let group = match role.group {
            Some(g) => g,
            None if self.groups.len() == 1 => 0,
            None => return None,
        };
        self.groups.get(group)?.workload.units_for(role.slot)
    }

    /// Whether the client runs transactions in `phase`.
    pub fn active(&self, role: &ClientAssignment, phase: usize) -> bool {
        match role.group {
            Some(g) => role.slot.index < self.plan.phases[phase].groups[g].clients,
            None => true,
        }
    }

    /// The client's deck of sets for `phase`; cards are global set indexes. `run` is the run
    /// length the client's previous deck reached (automatic runs carry over phases).
    pub fn set_deck(&self, role: &ClientAssignment, phase: usize, run: u32) -> Deck<u16> {
        let counts: Vec<(u16, u32)> = match role.group {
            // Independent: the group's sets take equal turns.
            Some(g) => self.groups[g].sets.iter().map(|s| (*s as u16, 1)).collect(),
            None => self.shared_cards[phase]
                .iter()
                .map(|(t, n)| (*t as u16, *n))
                .collect(),
        };
        let mode = match self.plan.card_run {
            Some(n) => CardRun::Fixed(n),
            None => CardRun::Auto,
        };
        Deck::new(&counts).with_runs(mode, run)
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

/// A phase's shared-mode deck: cards over all sets, each group's share split evenly over its
/// sets. Empty in independent mode.
fn set_cards(
    plan: &RunPlan,
    phase: &crate::config::PhasePlan,
    sets: &[SetSlot],
    groups: &[GroupSlot],
) -> Result<Cards, LayoutError> {
    if plan.mode != DriveMode::Shared {
        return Ok(Vec::new());
    }
    let weights: Vec<f64> = sets
        .iter()
        .map(|s| phase.groups[s.group].share / groups[s.group].sets.len() as f64)
        .collect();
    let counts = card_counts(&weights, plan.deck_size).map_err(|source| LayoutError::Shares {
        phase: phase.name.clone(),
        source,
    })?;
    Ok(nonzero(counts))
}

/// A group's mix deck for a phase over its workload's types; `None` = the workload's own mix.
fn mix_cards_of(
    group: &GroupSlot,
    phase: &crate::config::PhaseGroup,
) -> Result<Option<Cards>, DeckError> {
    if phase.mix.is_empty() {
        return Ok(None);
    }
    let names = group.workload.txn_types();
    let mut weights = vec![0.0; names.len()];
    for (name, w) in &phase.mix {
        if let Some(i) = names.iter().position(|n| n.name == *name) {
            weights[i] = *w;
        }
    }
    Ok(Some(nonzero(card_counts(&weights, None)?)))
}

fn nonzero(counts: Vec<u32>) -> Cards {
    counts
        .into_iter()
        .enumerate()
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The clients: the shared pool, or each group's most clients over its phases.
fn assignments(plan: &RunPlan, groups: usize) -> Vec<ClientAssignment> {
    let seat = |group, index, count| ClientAssignment {
        group,
        slot: ClientSlot { index, count },
    };
    match plan.mode {
        DriveMode::Shared => (0..plan.clients)
            .map(|i| seat(None, i, plan.clients))
            .collect(),
        DriveMode::Independent => (0..groups)
            .flat_map(|g| {
                let most = plan.most_clients(g);
                (0..most).map(move |i| seat(Some(g), i, most))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rand::SeedableRng;

    use super::*;
    use crate::config::groups::Source;
    use crate::workload::{Registry, Rng};

    /// The layout of a run file, with every target at a made-up address.
    fn layout_of(text: &str) -> Layout {
        let src = Source {
            file: "t.toml",
            text,
        };
        let raw = crate::config::parse_run_text(&src, &Registry).unwrap();
        let plan = crate::config::validate_run(&src, raw, 2, 1, &Registry).unwrap();
        let kinds: Vec<_> = plan
            .groups
            .iter()
            .map(|g| Registry::kind(g.workload.as_str()).unwrap())
            .collect();
        let roles: Vec<Vec<String>> = kinds
            .iter()
            .map(|k| k.roles().iter().map(|r| r.to_string()).collect())
            .collect();
        let (planned, sets) = plan_targets(&plan, &roles);
        let targets: Vec<TargetSlot> = planned
            .iter()
            .map(|t| TargetSlot {
                group: t.group,
                params: pgwire::ConnectParams {
                    host: pgwire::Host::Tcp("db".into()),
                    port: 5432,
                    user: "u".into(),
                    password: None,
                    dbname: t.spec.redacted(),
                    application_name: "t".into(),
                    options: String::new(),
                    connect_timeout: Duration::from_secs(1),
                    hostaddr: None,
                    tls: pgwire::Tls::disabled(),
                    keepalive: pgwire::KeepAlive::default(),
                },
                follow: Vec::new(),
            })
            .collect();
        let labels = planned.iter().map(|t| t.spec.redacted()).collect();
        let groups: Vec<GroupSlot> = kinds
            .iter()
            .zip(&plan.groups)
            .zip(roles)
            .map(|((k, g), r)| GroupSlot::new(k.build(1, &g.options.workload).unwrap(), r))
            .collect();
        let mut types: Vec<String> = Vec::new();
        for g in &groups {
            for t in g.workload.txn_types() {
                if !types.contains(&t.name) {
                    types.push(t.name.clone());
                }
            }
        }
        let segments = crate::config::timeline::segments(&plan);
        Layout::new(&plan, segments, groups, targets, sets, labels, &types).unwrap()
    }

    const TWO_ROLES: &str = "clients = 3\n\
        [[group]]\nname = \"P\"\nworkload = \"probe\"\n\
        [[group.set]]\noltp = \"instance:a/o1\"\ndss = \"instance:a/d1\"\n\
        [[group.set]]\noltp = \"instance:a/both\"\n\
        [[group]]\nname = \"T\"\nworkload = \"tpcb\"\ntarget = \"instance:a/t\"\n\
        [[phase]]\nduration = \"2s\"\nshares = { P = 60, T = 40 }\n\
        [[phase]]\nduration = \"2s\"\nshares = { P = 0, T = 100 }\n";

    #[test]
    fn sets_map_each_role_to_one_of_their_databases() {
        let l = layout_of(TWO_ROLES);
        let names: Vec<&str> = l.targets.iter().map(|t| t.params.dbname.as_str()).collect();
        // Set 1's two databases (roles in name order: dss, oltp), set 2's one, T's one.
        assert_eq!(
            names,
            [
                "instance:a/d1",
                "instance:a/o1",
                "instance:a/both",
                "instance:a/t"
            ]
        );
        let p = &l.groups[0];
        assert_eq!(p.roles, ["oltp", "dss"]);
        assert_eq!(p.txn_role, [0, 1]);
        // Set 1: oltp -> o1 (1), dss -> d1 (0); set 2 serves both roles from one database.
        assert_eq!(l.sets[0].targets, [1, 0]);
        assert_eq!(l.sets[1].targets, [2, 2]);
        assert_eq!(l.sets[2].targets, [3]);
        assert_eq!(
            (p.sets.clone(), l.groups[1].sets.clone()),
            (vec![0, 1], vec![2])
        );
        // A shared-mode client holds one session per database: every target, once.
        assert_eq!(l.sessions_per_target(), [3, 3, 3, 3]);
    }

    #[test]
    fn shared_decks_hold_the_shares_per_set_and_phase() {
        let l = layout_of(TWO_ROLES);
        let client = l.clients[0];
        let mut rng = Rng::seed_from_u64(3);
        for (phase, want) in [(0, [30, 30, 40]), (1, [0, 0, 100])] {
            let mut deck = l.set_deck(&client, phase, 1);
            let mut got = [0u32; 3];
            for _ in 0..deck.len() {
                got[usize::from(deck.draw(&mut rng).unwrap())] += 1;
            }
            let total: u32 = got.iter().sum();
            let pct: Vec<u32> = got.iter().map(|n| n * 100 / total).collect();
            assert_eq!(pct, want, "phase {phase}");
        }
    }

    #[test]
    fn independent_clients_serve_their_group_and_follow_its_counts() {
        let l = layout_of(
            "mode = \"independent\"\n\
             [[group]]\nname = \"A\"\nworkload = \"tpcb\"\ninstance = \"i\"\nsets = 2\n\
             [[group]]\nname = \"B\"\nworkload = \"tpcb\"\ninstance = \"i\"\n\
             [[phase]]\nduration = \"1s\"\nclients = { A = 2, B = 1 }\nrate = { A = 10 }\n\
             [[phase]]\nduration = \"1s\"\nclients = { A = 1, B = 1 }\nthink = { B = \"5ms\" }\n",
        );
        let groups: Vec<Option<usize>> = l.clients.iter().map(|c| c.group).collect();
        assert_eq!(groups, [Some(0), Some(0), Some(1)]);
        let second_a = l.clients[1];
        assert!(l.active(&second_a, 0) && !l.active(&second_a, 1));
        assert_eq!(l.client_targets(&second_a), [0, 1]);
        assert_eq!(l.client_targets(&l.clients[2]), [2]);
        // A's rate is spread over its active clients; B thinks in phase 2.
        assert_eq!(l.pace(&second_a, 0).rate, Some(5.0));
        assert_eq!(l.pace(&l.clients[2], 1).think, Duration::from_millis(5));
        // Independent decks: the group's sets take equal turns.
        let mut deck = l.set_deck(&second_a, 0, 1);
        let mut rng = Rng::seed_from_u64(1);
        let mut drawn: Vec<u16> = (0..2).map(|_| deck.draw(&mut rng).unwrap()).collect();
        drawn.sort_unstable();
        assert_eq!(drawn, [0, 1]);
    }
}
