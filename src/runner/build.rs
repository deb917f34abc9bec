//! Stage 3 of a run: the workloads for the data found, the run's transaction types (with the
//! role each runs on) and key space, what the workloads' specifications demand, notes for the
//! user, and the driver's layout of sessions, sets and decks.

use std::sync::Arc;

use crate::config::{timeline, DriveMode, Isolation, ProtocolName, RunPlan};
use crate::driver::layout::{GroupSlot, Layout, TargetSlot};
use crate::driver::poll::LiveHeadline;
use crate::metrics::{KeySpace, TargetKey};
use crate::results::{Headline, RatioRule, TypeRule};
use crate::workload::{Loaded, Workload};

use super::targets::Targets;
use super::RunError;

/// What the drive and the results need besides the layout, which goes to the driver.
pub struct Frame {
    pub keys: KeySpace,
    pub type_rules: Vec<TypeRule>,
    pub ratio_rules: Vec<RatioRule>,
    /// The first group's headline with one (TPC-C's NOTPM), for the summary, its label chosen
    /// for the run's databases (tpce: tpsE on one, tpsV on more).
    pub headline: Option<Headline>,
    /// The same, as the driver's live output counts it.
    pub live_headline: Option<LiveHeadline>,
    /// Per segment, each group's configured share (shared mode), for the polling block.
    pub shares: Vec<Option<Vec<f64>>>,
    pub notes: Vec<String>,
    /// The groups' workloads, asked for what they kept themselves once the run has ended.
    pub workloads: Vec<Arc<dyn Workload>>,
}

impl Frame {
    /// What the summary states about the run as a whole: the same at its start (for
    /// `run-start.json`) and its end, but for `elapsed` and `complete`, which only the end knows.
    pub fn run_facts(
        &self,
        plan: &RunPlan,
        started_at: std::time::SystemTime,
        elapsed: std::time::Duration,
        complete: bool,
    ) -> crate::results::RunFacts {
        crate::results::RunFacts {
            workload: plan.name().to_string(),
            started_at,
            elapsed,
            complete,
            rate_limited: plan.rate.is_some()
                || plan
                    .phases
                    .iter()
                    .any(|p| p.groups.iter().any(|g| g.rate.is_some())),
            type_rules: self.type_rules.clone(),
            headline: self.headline.clone(),
            ratio_rules: self.ratio_rules.clone(),
        }
    }

    /// The run's transaction types for `runtime.toml`: the key space's, each with the
    /// isolation level the first workload declaring it fixes for it.
    pub fn type_facts(&self) -> Vec<crate::results::TxnTypeFacts> {
        let mut facts = crate::results::TxnTypeFacts::of(&self.keys);
        for f in &mut facts {
            f.isolation = self
                .workloads
                .iter()
                .flat_map(|w| w.txn_types())
                .find(|t| t.name == f.name)
                .and_then(|t| t.isolation.clone());
        }
        facts
    }
}

/// What every workload's `build` learns of the run besides its own options (see
/// [`crate::workload::RUN_SEED`]).
fn run_options(plan: &RunPlan) -> [(String, toml::Value); 4] {
    let protocol = match plan.protocol {
        ProtocolName::Simple => "simple",
        ProtocolName::Extended => "extended",
        ProtocolName::Prepared => "prepared",
    };
    [
        // As the TOML integer it would be written as: the same 64 bits.
        (
            crate::workload::RUN_SEED.to_string(),
            toml::Value::Integer(plan.seed as i64),
        ),
        (
            crate::workload::RUN_PROTOCOL.to_string(),
            toml::Value::String(protocol.to_string()),
        ),
        (
            crate::workload::RUN_CLIENTS.to_string(),
            toml::Value::Integer(i64::from(plan.clients)),
        ),
        (
            crate::workload::RUN_THREADS.to_string(),
            toml::Value::Integer(i64::from(plan.jobs)),
        ),
    ]
}

/// Stage 3: the driver's layout, and the run's frame.
pub fn build(
    plan: &RunPlan,
    targets: &Targets,
    readies: &[Loaded],
) -> Result<(Layout, Frame), RunError> {
    let workloads: Vec<Arc<dyn Workload>> = plan
        .groups
        .iter()
        .zip(&targets.kinds)
        .zip(readies)
        .map(|((g, kind), ready)| {
            let mut options = g.options.workload.clone();
            options.extend(ready.facts.clone());
            options.extend(run_options(plan));
            kind.build(ready.scale, &options)
                .map_err(|message| RunError::Workload {
                    group: g.name.clone(),
                    message,
                })
        })
        .collect::<Result<_, _>>()?;
    let keys = key_space(plan, targets, &workloads);
    // What the workloads' specifications demand of their types (the summary checks a type
    // named by two groups once), and the first headline among them.
    let type_rules = workloads.iter().flat_map(|w| w.type_rules()).collect();
    let ratio_rules = workloads.iter().flat_map(|w| w.ratio_rules()).collect();
    let headline = workloads
        .iter()
        .find_map(|w| w.headline())
        .map(|h| h.for_databases(databases_running(&keys, &workloads, &h.txn_type)));
    let live_headline = headline.as_ref().and_then(|h| {
        Some(LiveHeadline {
            txn: keys.txn_types.iter().position(|t| *t == h.txn_type)?,
            label: h.label.clone(),
            per: h.per,
        })
    });
    let mut notes = plan.notes();
    for (g, (group, w)) in plan.groups.iter().zip(&workloads).enumerate() {
        notes.extend(w.notes(&group.name, plan.most_clients(g)));
    }
    let kept = workloads.clone();
    let layout = layout(plan, targets, workloads, &keys)?;
    let frame = Frame {
        workloads: kept,
        type_rules,
        ratio_rules,
        headline,
        live_headline,
        shares: shares(plan, &keys),
        notes,
        keys,
    };
    Ok((layout, frame))
}

/// How many of the run's databases (targets of every set and role) belong to a group whose
/// workload has type `txn_type`: what a headline's label may depend on.
fn databases_running(keys: &KeySpace, workloads: &[Arc<dyn Workload>], txn_type: &str) -> usize {
    keys.targets
        .iter()
        .filter(|t| {
            workloads
                .get(t.group)
                .is_some_and(|w| w.txn_types().iter().any(|x| x.name == txn_type))
        })
        .count()
}

/// The names behind recorder keys: segments, targets, groups, and every workload's types
/// (a name two groups share is one type, on the role its first group gives it).
fn key_space(plan: &RunPlan, targets: &Targets, workloads: &[Arc<dyn Workload>]) -> KeySpace {
    let mut txn_types: Vec<String> = Vec::new();
    let mut txn_roles: Vec<String> = Vec::new();
    let mut txn_emulated: Vec<bool> = Vec::new();
    for t in workloads.iter().flat_map(|w| w.txn_types()) {
        if !txn_types.contains(&t.name) {
            txn_types.push(t.name.clone());
            txn_roles.push(t.role.clone());
            txn_emulated.push(t.emulated);
        }
    }
    KeySpace {
        segments: timeline::segments(plan),
        targets: targets
            .planned
            .iter()
            .zip(&targets.resolved)
            .map(|(p, r)| TargetKey {
                label: r.label.clone(),
                group: p.group,
                set: p.set.clone(),
            })
            .collect(),
        groups: plan.groups.iter().map(|g| g.name.clone()).collect(),
        txn_types,
        txn_roles,
        txn_emulated,
    }
}

fn layout(
    plan: &RunPlan,
    targets: &Targets,
    workloads: Vec<Arc<dyn Workload>>,
    keys: &KeySpace,
) -> Result<Layout, RunError> {
    let slots: Vec<TargetSlot> = targets
        .planned
        .iter()
        .zip(&targets.resolved)
        .map(|(p, r)| {
            let for_group = |params: &pgwire::ConnectParams| {
                named_for(
                    session_params(
                        params,
                        plan.groups[p.group].options.isolation,
                        plan.txn_timeout,
                        &plan.session_settings,
                    ),
                    &plan.groups[p.group].name,
                    &p.set,
                )
            };
            TargetSlot {
                group: p.group,
                params: for_group(&r.params),
                follow: r.follow.iter().map(for_group).collect(),
            }
        })
        .collect();
    let labels = targets.resolved.iter().map(|r| r.label.clone()).collect();
    let groups = workloads
        .into_iter()
        .zip(&targets.roles)
        .map(|(w, r)| GroupSlot::new(w, r.clone()))
        .collect();
    Layout::new(
        plan,
        keys.segments.clone(),
        groups,
        slots,
        targets.sets.clone(),
        labels,
        &keys.txn_types,
    )
    .map_err(RunError::from)
}

/// Per segment, each group's configured share in shared mode.
fn shares(plan: &RunPlan, keys: &KeySpace) -> Vec<Option<Vec<f64>>> {
    keys.segments
        .iter()
        .map(|s| {
            (plan.mode == DriveMode::Shared).then(|| {
                plan.phases[s.phase]
                    .groups
                    .iter()
                    .map(|g| g.share)
                    .collect()
            })
        })
        .collect()
}

/// Sessions keep the `application_name` their connection string gives; tidebench's default
/// gains the group and set, so a DBA tells the tenants apart in `pg_stat_activity`
/// (`tidebench/a/a_1`; PostgreSQL keeps 63 bytes of it).
fn named_for(mut params: pgwire::ConnectParams, group: &str, set: &str) -> pgwire::ConnectParams {
    let default = crate::config::target::APPLICATION_NAME;
    if params.application_name == default {
        params.application_name = format!("{default}/{group}/{set}");
    }
    params
}

/// The driver's session parameters for a group: the target's own, plus the group's isolation
/// as a session default and the transaction timeout as `statement_timeout` (set at startup,
/// so they cost no statement and no transaction). The server's own timeout ends a statement
/// that waits on a lock; the client's deadline (the same length) covers a server that does
/// not answer at all.
fn session_params(
    params: &pgwire::ConnectParams,
    isolation: Isolation,
    txn_timeout: Option<std::time::Duration>,
    settings: &[(String, String)],
) -> pgwire::ConnectParams {
    let mut out = params.clone();
    let timeout = txn_timeout.map(|t| format!("-c statement_timeout={}", t.as_millis().max(1)));
    let given = settings
        .iter()
        .map(|(n, v)| Some(crate::config::options::startup_option(n, v)));
    for ours in [Some(isolation.startup_options()), timeout]
        .into_iter()
        .chain(given)
        .flatten()
    {
        if ours.is_empty() {
            continue;
        }
        if !out.options.is_empty() {
            out.options.push(' ');
        }
        out.options.push_str(&ours);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn isolation_and_timeout_join_the_targets_own_startup_options() {
        let mut params = pgwire::ConnectParams {
            host: pgwire::Host::Tcp("db".into()),
            port: 5432,
            user: "u".into(),
            password: None,
            dbname: "d".into(),
            application_name: "tidebench".into(),
            options: String::new(),
            connect_timeout: Duration::from_secs(1),
            hostaddr: None,
            tls: pgwire::Tls::disabled(),
            keepalive: pgwire::KeepAlive::default(),
        };
        assert_eq!(
            session_params(&params, Isolation::ReadCommitted, None, &[]).options,
            ""
        );
        params.options = "-c work_mem=64MB".into();
        assert_eq!(
            session_params(&params, Isolation::Serializable, None, &[]).options,
            "-c work_mem=64MB -c default_transaction_isolation=serializable"
        );
        assert_eq!(
            session_params(&params, Isolation::ReadCommitted, None, &[]).options,
            "-c work_mem=64MB"
        );
        let off = [("synchronous_commit".to_string(), "off".to_string())];
        assert_eq!(
            session_params(&params, Isolation::ReadCommitted, None, &off).options,
            "-c work_mem=64MB -c synchronous_commit=off"
        );
        assert_eq!(
            session_params(
                &params,
                Isolation::ReadCommitted,
                Some(Duration::from_millis(2500)),
                &[]
            )
            .options,
            "-c work_mem=64MB -c statement_timeout=2500"
        );
    }
}
