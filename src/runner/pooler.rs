//! Runs through a connection pooler (issue 57). A pooler in transaction mode hands each
//! client session a server session per transaction, so named prepared statements, the
//! default protocol, fail there. Before the run: a run that did not ask for a protocol sends
//! unnamed statements (`extended`) behind such a pooler; one that asked for `prepared` is
//! refused where the pooler is seen losing them. The databases behind it are marked, as the
//! server's count is read there with the pooler's server sessions closed; behind a managed
//! instance's own pooler the statistics are read on the instance, not through the pooler.
//! Statistics sessions a pooler kept from their own database are said too, as their reads
//! then count where the run measures.

use crate::config::{Isolation, ProtocolName, RunPlan, TargetSpec};
use crate::driver::layout::PlannedTarget;
use crate::event::{Event, Sink};
use crate::instance::Home;
use crate::target::ResolvedTarget;

use super::{Databases, RunError};

/// Settles the run's protocol for the poolers in front of `targets`, marks the databases
/// behind them, and says what a pooler changed about the run. Returns the servers (keys)
/// found behind a pooler that shares server sessions.
pub async fn settle(
    plan: &mut RunPlan,
    planned: &[PlannedTarget],
    targets: &[ResolvedTarget],
    dbs: &mut Databases,
    home: &Home,
    events: &dyn Sink,
) -> Result<Vec<(String, u16)>, RunError> {
    for (label, dbname) in dbs.stats_on_measured() {
        events.send(Event::Note(format!(
            "{label}: the server (or a pooler in front of it) refused the statistics session \
             another database, so it reads from '{dbname}', the measured one; to keep its reads \
             out of the count, let the target's user reach the `postgres` database (behind a \
             pooler: a [databases] entry for it)"
        )));
    }
    let mut probed: Vec<(String, u16)> = Vec::new();
    let mut pooled: Vec<(String, u16)> = Vec::new();
    for t in targets {
        if probed.contains(&t.server_key()) {
            continue;
        }
        probed.push(t.server_key());
        let shares = t.shares_server_sessions().await?;
        let direct = managed_behind(t, home).await?;
        if let Some((name, _)) = &direct {
            events.send(Event::Note(format!(
                "{}: the pooler of managed instance '{name}'; the server's counters are read on \
                 the instance itself",
                t.label
            )));
        }
        // A managed pooler in session mode passes everything a session leaves, but its server
        // sessions outlive the clients' too: its count is read as behind any pooler.
        if !shares && direct.is_none() {
            continue;
        }
        pooled.push(t.server_key());
        let sharded = plan.shard.is_some();
        let by_session = !shares;
        dbs.mark_pooled(t, direct.as_ref().map(|(_, d)| d), sharded, by_session)
            .await?;
        if by_session {
            continue;
        }
        if let Some(what) = startup_options(plan, groups_of(planned, targets, &t.server_key())) {
            return Err(RunError::StartupOptionsThroughPooler {
                target: t.label.clone(),
                what,
            });
        }
        if plan.protocol != ProtocolName::Prepared {
            continue;
        }
        if plan.protocol_default {
            plan.protocol = ProtocolName::Extended;
            events.send(Event::Note(format!(
                "{}: a connection pooler hands sessions other server sessions (transaction \
                 mode), where named prepared statements are lost; statements go unnamed \
                 (-M extended). Give -M prepared where the pooler carries them (pgbouncer \
                 1.21+ with max_prepared_statements)",
                t.label
            )));
            continue;
        }
        if t.named_statements_survive().await? == Some(false) {
            return Err(RunError::PreparedThroughPooler {
                target: t.label.clone(),
            });
        }
    }
    Ok(pooled)
}

/// The managed instance (its name, and a target on the same database) when `t` is its managed
/// pooler: on 127.0.0.1 at the port that instance's pooler listens on.
async fn managed_behind(
    t: &ResolvedTarget,
    home: &Home,
) -> Result<Option<(String, ResolvedTarget)>, RunError> {
    let (host, port) = t.server_key();
    if !matches!(host.as_str(), "127.0.0.1" | "localhost") {
        return Ok(None);
    }
    let within = home.clone();
    let owner =
        tokio::task::spawn_blocking(move || crate::instance::pooler::owner_of(&within, port))
            .await?;
    let Some(instance) = owner else {
        return Ok(None);
    };
    let spec = TargetSpec::Instance {
        name: instance.name.clone(),
        dbname: t.params.dbname.clone(),
        also: Vec::new(),
    };
    let direct = super::targets::resolve_target(&spec, home).await?;
    Ok(Some((instance.name, direct)))
}

/// The groups with a database on the server `key`.
fn groups_of(
    planned: &[PlannedTarget],
    targets: &[ResolvedTarget],
    key: &(String, u16),
) -> Vec<usize> {
    planned
        .iter()
        .zip(targets)
        .filter(|(_, t)| t.server_key() == *key)
        .map(|(p, _)| p.group)
        .collect()
}

/// What the sessions of `groups` would send as startup options (a session default isolation
/// other than the server's, the transaction timeout, `--session-set`), said as the flags that
/// ask for it; `None` when nothing.
fn startup_options(plan: &RunPlan, groups: Vec<usize>) -> Option<String> {
    let mut what: Vec<String> = Vec::new();
    for g in groups {
        let isolation = plan.groups[g].options.isolation;
        let said = format!("isolation {}", isolation.as_sql());
        if isolation != Isolation::ReadCommitted && !what.contains(&said) {
            what.push(said);
        }
    }
    if plan.txn_timeout.is_some() {
        what.push("a transaction timeout (statement_timeout)".into());
    }
    for (name, _) in &plan.session_settings {
        what.push(format!("--session-set {name}"));
    }
    (!what.is_empty()).then(|| what.join(", "))
}
