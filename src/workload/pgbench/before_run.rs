//! What pgbench 15 does on the server before a run, for the pgbench drop-in: with a built-in
//! script it counts pgbench_branches (its scale), refusing when the table is not there,
//! before anything else touches the tables; then its vacuum unless -n. The runner calls this
//! when the plan asks for it (`RunPlan::pgbench_before_run`); what it has to say goes out as
//! events, and the drop-in's sink words them as pgbench does.

use crate::config::plan::PgbenchBeforeRun;
use crate::event::{Event, PgbenchTables, Sink, VacuumStep};
use crate::target::{ResolvedTarget, TargetError};

const COUNT_BRANCHES: &str = "select count(*) from pgbench_branches";
/// How pgbench_accounts (the one the search path finds) is partitioned: the strategy
/// (`r` range, `h` hash; NULL when it is not partitioned) and its partitions' count.
const PARTITIONING: &str = "select p.partstrat::text, \
     (select count(*) from pg_catalog.pg_inherits i where i.inhparent = c.oid) \
     from pg_catalog.pg_class c \
     left join pg_catalog.pg_partitioned_table p on p.partrelid = c.oid \
     where c.oid = pg_catalog.to_regclass('pgbench_accounts')";
/// pgbench's vacuum: branches and tellers vacuumed, history emptied.
const VACUUM: [&str; 3] = [
    "vacuum pgbench_branches",
    "vacuum pgbench_tellers",
    "truncate pgbench_history",
];
/// With -v: pgbench_accounts too.
const VACUUM_ACCOUNTS: &str = "vacuum analyze pgbench_accounts";

/// Why the step stopped the run before it started.
#[derive(Debug, thiserror::Error)]
pub enum BeforeRunError {
    /// No session to the target for the step.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// pgbench's `could not count number of branches` (exit 1 in the drop-in); `words` as
    /// libpq words the server's error; `no_table`: the table is not there (pgbench then hints
    /// at `pgbench -i` in `dbname`).
    #[error("could not count number of branches: {words}")]
    NoBranches {
        words: String,
        no_table: bool,
        dbname: String,
    },
}

/// The branch count and the vacuum `step` asks for, on `target`.
pub async fn before_run(
    step: &PgbenchBeforeRun,
    target: &ResolvedTarget,
    events: &dyn Sink,
) -> Result<(), BeforeRunError> {
    if !step.count_branches && !step.vacuum {
        return Ok(());
    }
    let client = target.connect_tokio().await?;
    if step.count_branches {
        count_branches(&client, &target.params.dbname, step.scale_given, events).await?;
    }
    if step.vacuum {
        vacuum(&client, &VACUUM, false, events).await;
        if step.vacuum_accounts {
            vacuum(&client, &[VACUUM_ACCOUNTS], true, events).await;
        }
    }
    Ok(())
}

/// pgbench's count for a built-in script; with -s its warning that the count wins.
async fn count_branches(
    client: &tokio_postgres::Client,
    dbname: &str,
    scale_given: bool,
    events: &dyn Sink,
) -> Result<(), BeforeRunError> {
    match client.query_typed_one(COUNT_BRANCHES, &[]).await {
        Ok(row) => {
            if scale_given {
                let count: i64 = row.try_get(0).unwrap_or_default();
                events.send(Event::PgbenchTables(PgbenchTables::ScaleIgnored { count }));
            }
            partitioning(client, events).await;
            Ok(())
        }
        Err(e) => Err(BeforeRunError::NoBranches {
            words: format!("{}{}", server_words(&e), pointed_line(&e, COUNT_BRANCHES)),
            no_table: e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE),
            dbname: dbname.to_string(),
        }),
    }
}

/// pgbench_accounts' partitioning, for the summary block's lines. A catalog that cannot be
/// read leaves them out: the run does not depend on them.
async fn partitioning(client: &tokio_postgres::Client, events: &dyn Sink) {
    let Ok(Some(row)) = client.query_opt(PARTITIONING, &[]).await else {
        return;
    };
    let strategy: Option<String> = row.try_get(0).unwrap_or_default();
    let method = match strategy.as_deref() {
        Some("r") => "range",
        Some("h") => "hash",
        _ => return,
    };
    let count: i64 = row.try_get(1).unwrap_or_default();
    events.send(Event::PgbenchTables(PgbenchTables::Partitioned {
        method,
        count,
    }));
}

/// libpq's `LINE 1: QUERY` and caret under the place the server's error points at in the
/// one-line `query` (empty when it points nowhere).
fn pointed_line(e: &tokio_postgres::Error, query: &str) -> String {
    let at = match e.as_db_error().and_then(|db| db.position()) {
        Some(tokio_postgres::error::ErrorPosition::Original(at)) => *at as usize,
        _ => return String::new(),
    };
    let prefix = "LINE 1: ";
    let pad = prefix.len()
        + query[..query.len().min(at.saturating_sub(1))]
            .chars()
            .count();
    format!("\n{prefix}{query}\n{:pad$}^", "")
}

/// A server's error as libpq words it (`ERROR:  relation ... does not exist`); another error
/// as tidebench describes it.
fn server_words(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}:  {}", db.severity(), db.message()),
        None => crate::target::describe_pg_error(e),
    }
}

/// One round of pgbench's vacuum: a statement that fails is said and passed over, as pgbench
/// passes over it.
async fn vacuum(
    client: &tokio_postgres::Client,
    statements: &[&str],
    accounts: bool,
    events: &dyn Sink,
) {
    events.send(Event::Vacuum(VacuumStep::Started { accounts }));
    for sql in statements {
        if let Err(e) = client.batch_execute(sql).await {
            events.send(Event::Vacuum(VacuumStep::Failed(
                crate::target::describe_pg_error(&e),
            )));
        }
    }
    events.send(Event::Vacuum(VacuumStep::Done));
}
