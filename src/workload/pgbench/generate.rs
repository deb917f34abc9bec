//! pgbench's generation steps: `g` (rows made here, sent as binary COPY, see `copy`) and `G`
//! (rows made by the server with pgbench 15's `insert ... select ... generate_series`). Both
//! empty the four tables first, as pgbench's do, and leave the same rows.
//!
//! In the staging schema, branches and tellers load on one session and accounts over `jobs`
//! sessions (contiguous `aid` ranges), all at once. In place, everything is one transaction
//! on one session, as pgbench's, so an interruption leaves the old rows.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::try_join_all;
use futures_util::{pin_mut, SinkExt};
use tokio_postgres::Client;

use super::copy::{self, AccountRows};
use super::loader::{connect, count, db_error, run, Load, Place};
use super::schema::{self, ACCOUNTS_PER_SCALE, BRANCHES_PER_SCALE, NAMES, TELLERS_PER_SCALE};
use crate::target::ResolvedTarget;
use crate::workload::WorkloadError;

/// Who makes the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Generation {
    /// `g`: tidebench, over COPY.
    Client,
    /// `G`: the server.
    Server,
}

/// The rows of the three tables pgbench fills, at `scale`.
pub(super) fn total_rows(scale: u32) -> u64 {
    let per_scale = BRANCHES_PER_SCALE + TELLERS_PER_SCALE + ACCOUNTS_PER_SCALE;
    per_scale as u64 * u64::from(scale)
}

/// Empties the tables and generates their rows; returns the rows the server counted.
pub(super) async fn rows(
    load: &Load<'_>,
    how: Generation,
    counter: Arc<AtomicU64>,
) -> Result<u64, WorkloadError> {
    match load.place {
        Place::InPlace => in_one_transaction(load, how, &counter).await,
        Place::Staging => in_parallel(load, how, &counter).await,
    }
}

/// pgbench's way: one session, one transaction, accounts COPY FREEZE unless partitioned.
async fn in_one_transaction(
    load: &Load<'_>,
    how: Generation,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    let target = load.target;
    let client = connect(target, load.place).await?;
    let begin = format!("begin;\n{}", schema::truncate_sql(&NAMES));
    run(&client, target, "emptying the tables", &begin).await?;
    let mut n = small_tables(&client, load, how, counter).await?;
    let all = (1, ACCOUNTS_PER_SCALE * i64::from(load.scale));
    let freeze = load.init.partitions == 0;
    n += accounts(&client, load, how, all, freeze, counter).await?;
    run(&client, target, "committing the rows", "commit").await?;
    Ok(n)
}

/// Branches and tellers on one session while accounts load over `jobs` sessions.
async fn in_parallel(
    load: &Load<'_>,
    how: Generation,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    let target = load.target;
    let small = async {
        let client = connect(target, load.place).await?;
        let begin = format!(
            "begin;\n{}",
            schema::truncate_sql(&["pgbench_branches", "pgbench_history", "pgbench_tellers"])
        );
        run(&client, target, "emptying the tables", &begin).await?;
        let n = small_tables(&client, load, how, counter).await?;
        run(&client, target, "committing the rows", "commit").await?;
        Ok::<u64, WorkloadError>(n)
    };
    let ranges = job_ranges(ACCOUNTS_PER_SCALE * i64::from(load.scale), load.jobs);
    // A sole session empties accounts in its loading transaction, so its COPY may FREEZE.
    let sole = ranges.len() == 1;
    let big = async {
        if !sole {
            let client = connect(target, load.place).await?;
            let sql = schema::truncate_sql(&["pgbench_accounts"]);
            run(&client, target, "emptying pgbench_accounts", &sql).await?;
        }
        let sessions = ranges
            .into_iter()
            .map(|range| accounts_session(load, how, range, sole, counter));
        Ok::<u64, WorkloadError>(try_join_all(sessions).await?.iter().sum())
    };
    let (small_rows, account_rows) = tokio::try_join!(small, big)?;
    Ok(small_rows + account_rows)
}

/// One session's share of accounts, in a transaction of its own: tokio-postgres reports a
/// COPY done at CommandComplete, before an implicit transaction commits at Sync; a VACUUM
/// starting in that gap would see the rows as in progress and leave their pages not
/// all-visible.
async fn accounts_session(
    load: &Load<'_>,
    how: Generation,
    range: (i64, i64),
    sole: bool,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    let target = load.target;
    let client = connect(target, load.place).await?;
    let mut begin = String::from("begin");
    if sole {
        begin.push_str(";\n");
        begin.push_str(&schema::truncate_sql(&["pgbench_accounts"]));
    }
    run(&client, target, "loading pgbench_accounts", &begin).await?;
    let freeze = sole && load.init.partitions == 0;
    let n = accounts(&client, load, how, range, freeze, counter).await?;
    run(&client, target, "committing pgbench_accounts", "commit").await?;
    Ok(n)
}

/// Branches and tellers, in the open transaction of `client`.
async fn small_tables(
    client: &Client,
    load: &Load<'_>,
    how: Generation,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    let (target, scale) = (load.target, load.scale);
    let branches = BRANCHES_PER_SCALE * i64::from(scale);
    let tellers = TELLERS_PER_SCALE * i64::from(scale);
    match how {
        Generation::Client => {
            let b = copy::branches(scale);
            let b = copy_in(client, target, "pgbench_branches", false, [(b, 0)], counter).await?;
            let t = copy::tellers(scale);
            let t = copy_in(client, target, "pgbench_tellers", false, [(t, 0)], counter).await?;
            count(counter, b + t);
            Ok(b + t)
        }
        Generation::Server => {
            let b = format!(
                "insert into pgbench_branches(bid,bbalance) \
                 select bid, 0 from generate_series(1, {branches}) as bid"
            );
            let t = format!(
                "insert into pgbench_tellers(tid,bid,tbalance) \
                 select tid, (tid - 1) / {TELLERS_PER_SCALE} + 1, 0 \
                 from generate_series(1, {tellers}) as tid"
            );
            let n = insert(client, target, &b, counter).await?;
            Ok(n + insert(client, target, &t, counter).await?)
        }
    }
}

/// Accounts `first..=last`, in the open transaction of `client`.
async fn accounts(
    client: &Client,
    load: &Load<'_>,
    how: Generation,
    (first, last): (i64, i64),
    freeze: bool,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    match how {
        Generation::Client => {
            let mut rows = AccountRows::new(first, last, schema::big_aid(load.scale));
            let chunks = std::iter::from_fn(move || rows.next_chunk());
            copy_in(
                client,
                load.target,
                "pgbench_accounts",
                freeze,
                chunks,
                counter,
            )
            .await
        }
        Generation::Server => {
            let sql = format!(
                "insert into pgbench_accounts(aid,bid,abalance,filler) \
                 select aid, (aid - 1) / {ACCOUNTS_PER_SCALE} + 1, 0, '' \
                 from generate_series({first}, {last}) as aid"
            );
            insert(client, load.target, &sql, counter).await
        }
    }
}

/// Runs one `insert ... select`; returns (and counts) its rows.
async fn insert(
    client: &Client,
    target: &ResolvedTarget,
    sql: &str,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    let n = client
        .execute(sql, &[])
        .await
        .map_err(|e| db_error(target, "generating rows server-side", &e))?;
    count(counter, n);
    Ok(n)
}

/// COPYs a binary stream, chunk by chunk, into `table`; counts each chunk's rows as it goes
/// and returns the rows the server counted.
async fn copy_in(
    client: &Client,
    target: &ResolvedTarget,
    table: &str,
    freeze: bool,
    chunks: impl IntoIterator<Item = (Bytes, u64)>,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    let what = format!("loading {table}");
    let options = if freeze {
        "format binary, freeze"
    } else {
        "format binary"
    };
    let sink = client
        .copy_in::<_, Bytes>(&format!("copy {table} from stdin ({options})"))
        .await
        .map_err(|e| db_error(target, &what, &e))?;
    pin_mut!(sink);
    for (chunk, n) in chunks {
        sink.feed(chunk)
            .await
            .map_err(|e| db_error(target, &what, &e))?;
        count(counter, n);
    }
    sink.finish().await.map_err(|e| db_error(target, &what, &e))
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
    fn total_rows_are_branches_tellers_and_accounts() {
        assert_eq!(total_rows(1), 100_011);
        assert_eq!(total_rows(3), 300_033);
    }
}
