//! `prepare` for pgbench's tables: the same rows `pgbench -i` (PostgreSQL 15) leaves, loaded
//! with parallel binary COPY, and swapped in only once complete.
//!
//! Steps: take a per-database advisory lock; refuse if the tables exist (unless `--force`,
//! which drops them first, as `pgbench -i` does); drop leftover staging tables of an
//! interrupted load; create the staging tables; COPY branches and tellers on one session and
//! accounts over `jobs` sessions (contiguous `aid` ranges); `VACUUM ANALYZE` then primary
//! keys, one session per table (pgbench's order: the vacuum then has no index to scan);
//! finally, in one transaction, rename the staging tables and their indexes to pgbench's names.
//!
//! Interrupted anywhere (error, Ctrl-C dropping this future, server crash), the database holds
//! at most `*__loading` tables, which nothing reads and the next `prepare` drops: never
//! tables under pgbench's names that look complete.
//!
//! `COPY ... FREEZE` (what pgbench 14+ uses: rows written frozen and all-visible, so the
//! VACUUM has nothing to do) needs the table created in the loading transaction, hence a
//! single session. With one job the accounts staging table is created that way; with more,
//! rows are written plain and the VACUUM sets the same all-visible state, at the cost of one
//! more pass over the table.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures_util::future::try_join_all;
use futures_util::{pin_mut, SinkExt};
use tokio_postgres::Client;

use super::copy::{self, AccountRows};
use super::progress::Progress;
use super::schema::{self, ACCOUNTS, ACCOUNTS_PER_SCALE, BRANCHES, TABLES, TELLERS};
use crate::config::PreparePlan;
use crate::event::{Event, LoadSummary, Sink};
use crate::target::{describe_pg_error, ResolvedTarget};
use crate::workload::{load_lock, WorkloadError};

/// Creates pgbench's tables at `plan.scale` in `target`, as `pgbench -i -s SCALE` would;
/// progress and the summary go to `events`.
pub async fn prepare(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
) -> Result<(), WorkloadError> {
    let scale = plan.scale;
    if scale == 0 {
        return Err(WorkloadError::Database(
            "scale 0 has no rows; pass --scale 1 or more (pgbench's -s)".into(),
        ));
    }
    let started = Instant::now();
    let control = connect(target).await?;
    load_lock::take(&control, target, "pgbench tables").await?;

    let existing = existing_tables(&control, target).await?;
    if !existing.is_empty() && !plan.force {
        return Err(WorkloadError::AlreadyPrepared(format!(
            "target '{}' already has pgbench tables ({}); add `--force` to drop and reload them",
            target.label,
            existing.join(", ")
        )));
    }
    if !existing.is_empty() {
        // As `pgbench -i`: the old tables go first. Kept until the swap, their pages still
        // being written back competed with the load (scale 50: 5.7 s against 4.7 s, scale
        // 200 about 15 % slower than pgbench); dropped, the kernel discards them unwritten.
        run(&control, target, "dropping the old tables", &drop_sql()).await?;
    }
    let accounts = ACCOUNTS_PER_SCALE * i64::from(scale);
    let ranges = job_ranges(accounts, plan.jobs);
    // One session: create accounts in its loading transaction, so COPY can FREEZE.
    let freeze = ranges.len() == 1;
    let sql = staging_sql(scale, !freeze);
    run(&control, target, "creating staging tables", &sql).await?;

    let tellers = schema::TELLERS_PER_SCALE * i64::from(scale);
    let branches = schema::BRANCHES_PER_SCALE * i64::from(scale);
    let mut progress = Progress::start(
        "pgbench tables",
        (accounts + tellers + branches) as u64,
        Arc::clone(events),
    );
    let rows = load_rows(&control, target, scale, ranges, progress.counter()).await?;
    let copy = started.elapsed();

    progress.phase("vacuum analyze ...");
    let t = Instant::now();
    run_each(
        target,
        TABLES
            .iter()
            .map(|t| format!("vacuum analyze {}", t.staging_name())),
    )
    .await?;
    revacuum_not_all_visible(&control, target).await?;
    let vacuum = t.elapsed();

    progress.phase("creating primary keys ...");
    let t = Instant::now();
    run_each(
        target,
        TABLES.iter().filter_map(|t| t.add_staging_pkey_sql()),
    )
    .await?;
    let pkeys = t.elapsed();

    run(
        &control,
        target,
        "swapping in the loaded tables",
        &swap_sql(),
    )
    .await?;
    drop(progress);
    events.send(Event::LoadFinished(LoadSummary {
        what: format!("pgbench scale {scale}"),
        target: target.label.clone(),
        rows,
        elapsed: started.elapsed(),
        steps: vec![
            ("copy".into(), copy),
            ("vacuum".into(), vacuum),
            ("primary keys".into(), pkeys),
        ],
    }));
    Ok(())
}

/// The COPY phase: branches and tellers on the control session, accounts on one session
/// per range, all at once. Returns the rows the server counted.
async fn load_rows(
    control: &Client,
    target: &ResolvedTarget,
    scale: u32,
    ranges: Vec<(i64, i64)>,
    counter: Arc<AtomicU64>,
) -> Result<u64, WorkloadError> {
    let small = async {
        let b = copy_all(
            control,
            target,
            &BRANCHES.staging_name(),
            copy::branches(scale),
        )
        .await?;
        counter.fetch_add(b, Ordering::Relaxed);
        let t = copy_all(
            control,
            target,
            &TELLERS.staging_name(),
            copy::tellers(scale),
        )
        .await?;
        counter.fetch_add(t, Ordering::Relaxed);
        Ok::<u64, WorkloadError>(b + t)
    };
    let freeze = ranges.len() == 1;
    let big = try_join_all(ranges.into_iter().map(|(first, last)| {
        let job = AccountsJob {
            first,
            last,
            big_aid: schema::big_aid(scale),
            freeze,
            scale,
        };
        load_accounts(target, job, Arc::clone(&counter))
    }));
    let (small_rows, account_rows) = tokio::try_join!(small, big)?;
    Ok(small_rows + account_rows.iter().sum::<u64>())
}

/// Splits `1..=total` into `jobs` contiguous ranges of nearly equal size.
fn job_ranges(total: i64, jobs: u32) -> Vec<(i64, i64)> {
    let jobs = i128::from(jobs.max(1)).min(i128::from(total.max(1)));
    let total = i128::from(total);
    // i128: total * job would overflow i64 for huge scales with many jobs.
    (0..jobs)
        .map(|j| {
            (
                (total * j / jobs + 1) as i64,
                (total * (j + 1) / jobs) as i64,
            )
        })
        .collect()
}

/// Drops leftovers of an interrupted load, then creates empty staging tables (all but
/// accounts unless `with_accounts`).
fn staging_sql(scale: u32, with_accounts: bool) -> String {
    let names: Vec<String> = TABLES.iter().map(|t| t.staging_name()).collect();
    let mut sql = format!("drop table if exists {};\n", names.join(", "));
    for t in TABLES
        .iter()
        .filter(|t| with_accounts || t.name != ACCOUNTS.name)
    {
        sql.push_str(&t.create_staging_sql(scale));
        sql.push_str(";\n");
    }
    sql
}

/// One transaction: old tables out (when forced), staging tables and indexes renamed in.
fn drop_sql() -> String {
    let names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
    format!("drop table if exists {};\n", names.join(", "))
}

/// Renames the loaded staging tables to pgbench's names, in one transaction. The old tables
/// are gone by then (see [`drop_sql`]); dropping again covers tables another session created
/// in the meantime (the advisory lock keeps out only other `prepare`s).
fn swap_sql() -> String {
    let mut sql = String::from("begin;\n");
    sql.push_str(&drop_sql());
    for t in TABLES {
        sql.push_str(&t.rename_sql());
    }
    sql.push_str("commit;\n");
    sql
}

/// Opens a session for loading. Its commits are synchronous whatever the server default:
/// VACUUM marks a page all-visible only once it could set its rows' "committed" hint bits,
/// and it cannot while the commit-log LSN group of their transaction (32 consecutive xids)
/// holds an async commit whose WAL is not yet flushed. With async commits here, pages were
/// left not all-visible, unlike after `pgbench -i`.
async fn connect(target: &ResolvedTarget) -> Result<Client, WorkloadError> {
    let client = target
        .connect_tokio()
        .await
        .map_err(|e| WorkloadError::Database(e.to_string()))?;
    run(
        &client,
        target,
        "setting up the session",
        "set synchronous_commit = on",
    )
    .await?;
    Ok(client)
}

fn db_error(target: &ResolvedTarget, what: &str, e: &tokio_postgres::Error) -> WorkloadError {
    WorkloadError::Database(format!(
        "target '{}': {what} failed: {}",
        target.label,
        describe_pg_error(e)
    ))
}

async fn run(
    client: &Client,
    target: &ResolvedTarget,
    what: &str,
    sql: &str,
) -> Result<(), WorkloadError> {
    client
        .batch_execute(sql)
        .await
        .map_err(|e| db_error(target, what, &e))
}

/// Vacuums again the loaded tables a first VACUUM left with pages not all-visible. That
/// happens when an asynchronous commit elsewhere on the server shares the loaded rows'
/// commit-log group and its WAL is not flushed yet (see [`connect`]; CI saw it once). A
/// transaction that takes an xid and commits synchronously flushes the WAL up to it first.
async fn revacuum_not_all_visible(
    control: &Client,
    target: &ResolvedTarget,
) -> Result<(), WorkloadError> {
    let names: Vec<String> = TABLES.iter().map(|t| t.staging_name()).collect();
    let rows = control
        .query(
            "select relname::text from pg_class \
             where relname = any($1) and relkind = 'r' and relallvisible < relpages",
            &[&names],
        )
        .await
        .map_err(|e| db_error(target, "checking the vacuum", &e))?;
    if rows.is_empty() {
        return Ok(());
    }
    run(control, target, "flushing the WAL", "select txid_current()").await?;
    run_each(
        target,
        rows.iter()
            .map(|r| format!("vacuum {}", r.get::<_, String>(0))),
    )
    .await
}

/// Runs each statement on its own session, all at once (VACUUM and index builds of
/// different tables do not wait on each other).
async fn run_each(
    target: &ResolvedTarget,
    sqls: impl Iterator<Item = String>,
) -> Result<(), WorkloadError> {
    try_join_all(sqls.map(|sql| async move {
        let client = connect(target).await?;
        run(&client, target, &format!("`{sql}`"), &sql).await
    }))
    .await
    .map(|_| ())
}

/// Which of pgbench's tables exist (as the search path resolves them, like pgbench).
async fn existing_tables(
    control: &Client,
    target: &ResolvedTarget,
) -> Result<Vec<String>, WorkloadError> {
    let names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
    let rows = control
        .query(
            "select t from unnest($1::text[]) as t where to_regclass(t) is not null order by t",
            &[&names],
        )
        .await
        .map_err(|e| db_error(target, "looking for pgbench tables", &e))?;
    Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
}

/// COPYs one complete binary stream into `table`; returns the rows the server counted.
async fn copy_all(
    client: &Client,
    target: &ResolvedTarget,
    table: &str,
    data: Bytes,
) -> Result<u64, WorkloadError> {
    let what = format!("loading {table}");
    run(client, target, &what, "begin").await?;
    let sink = client
        .copy_in::<_, Bytes>(&format!("copy {table} from stdin (format binary)"))
        .await
        .map_err(|e| db_error(target, &what, &e))?;
    pin_mut!(sink);
    sink.feed(data)
        .await
        .map_err(|e| db_error(target, &what, &e))?;
    let copied = sink
        .finish()
        .await
        .map_err(|e| db_error(target, &what, &e))?;
    run(client, target, &what, "commit").await?;
    Ok(copied)
}

/// What one loader session loads.
struct AccountsJob {
    first: i64,
    last: i64,
    big_aid: bool,
    /// Sole loader: create the staging table in the loading transaction and COPY FREEZE.
    freeze: bool,
    scale: u32,
}

/// One loader session: accounts `first..=last` in ~256 KiB CopyData chunks.
async fn load_accounts(
    target: &ResolvedTarget,
    job: AccountsJob,
    counter: Arc<AtomicU64>,
) -> Result<u64, WorkloadError> {
    let table = ACCOUNTS.staging_name();
    let what = format!("loading {table} (aid {}..{})", job.first, job.last);
    let client = connect(target).await?;
    // Explicit transaction: tokio-postgres reports the COPY done at CommandComplete, before
    // the implicit transaction commits at Sync; VACUUM starting in that gap would see the rows
    // as in progress and leave their pages not all-visible.
    let mut setup = String::from("begin;\n");
    let copy = if job.freeze {
        // Created in the loading transaction, so COPY may FREEZE.
        setup.push_str(&ACCOUNTS.create_staging_sql(job.scale));
        format!("copy {table} from stdin (format binary, freeze)")
    } else {
        format!("copy {table} from stdin (format binary)")
    };
    run(&client, target, &what, &setup).await?;
    let sink = client
        .copy_in::<_, Bytes>(&copy)
        .await
        .map_err(|e| db_error(target, &what, &e))?;
    pin_mut!(sink);
    let mut rows = AccountRows::new(job.first, job.last, job.big_aid);
    while let Some((chunk, n)) = rows.next_chunk() {
        sink.feed(chunk)
            .await
            .map_err(|e| db_error(target, &what, &e))?;
        counter.fetch_add(n, Ordering::Relaxed);
    }
    let copied = sink
        .finish()
        .await
        .map_err(|e| db_error(target, &what, &e))?;
    run(&client, target, &what, "commit").await?;
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ranges_cover_every_aid_once() {
        for (total, jobs) in [
            (100_000, 1),
            (100_000, 3),
            (5_000_000, 7),
            (3, 8),
            (100_000, 0),
        ] {
            let r = job_ranges(total, jobs);
            assert_eq!(r.first().map(|x| x.0), Some(1));
            assert_eq!(r.last().map(|x| x.1), Some(total));
            for w in r.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0);
            }
            assert!(r.iter().all(|(a, b)| a <= b));
        }
    }

    #[test]
    fn swap_renames_in_one_transaction() {
        let swap = swap_sql();
        assert!(swap.starts_with("begin;\ndrop table if exists pgbench_history"));
        assert!(swap.contains("rename to pgbench_accounts"), "{swap}");
        assert!(swap.ends_with("commit;\n"));
    }
}
