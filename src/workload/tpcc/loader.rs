//! `prepare` for TPC-C: the nine tables of `schema.sql` built in a staging schema of
//! tidebench's own ([`crate::workload::kit::staging::STAGING`]) and moved into the target
//! schema (the session's `current_schema()`, normally `public`) only once complete.
//!
//! Steps: take the per-database load lock; refuse if TPC-C tables exist (unless `--force`, or
//! unless they are a complete load of the asked size lacking only the `--procedures`
//! functions, which are then installed); drop a staging schema left by an interrupted load
//! (it is ours, so that needs no `--force`) and create it afresh; fill the tables per clause
//! 4.3.3.1 with text COPY ([`super::rows`]), one warehouse per loader session at a time over
//! `--jobs` sessions; build the keys and indexes over the same number of sessions; ANALYZE;
//! write `tpcc_meta` there. Last, in one transaction: drop the old tables (`--force`), move
//! the ten tables with their indexes and statistics into the target schema (`ALTER TABLE ...
//! SET SCHEMA`), install the functions of `procedures.sql` there and drop the empty staging
//! schema.
//!
//! Interrupted anywhere (error, Ctrl-C, crash), the target schema is as it was: runs find no
//! `tpcc_meta` and say to prepare, and the next prepare needs no `--force`. The functions
//! name their tables unqualified, resolved through the caller's search path, so they work
//! on the moved tables.

use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use futures_util::future::try_join_all;
use rand::SeedableRng;
use tokio_postgres::Client;

use super::procedures;
use super::random::{c_last_delta_ok, c_last_load, C_ID_RUN, C_LAST_RUN, OL_I_ID_RUN};
use super::rows::{load_units, Flavor, Shared, ORDERS_PER_DISTRICT};
use super::{CUSTOMERS_PER_DISTRICT, DISTRICTS, ITEMS};
use crate::config::PreparePlan;
use crate::event::{Event, LoadSummary, Sink};
use crate::target::ResolvedTarget;
use crate::workload::kit::staging::{
    connect, connect_staging, copy_text, create_fresh, db_error, existing_tables, in_staging,
    move_sql, run_parallel, split_schema, target_schema,
};
use crate::workload::kit::{lock, MetaTable, Progress};
use crate::workload::{Rng, WorkloadError};

const SCHEMA: &str = include_str!("schema.sql");

/// Every table `prepare` creates; `tpcc_meta` last, as it is written last.
pub const TABLES: [&str; 10] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
    "tpcc_meta",
];

/// What a workload of TPC-C's family adds to TPC-C's load, in the same staging schema and
/// the same final move (`workload::ch`: CH-benCHmark's three tables and two columns).
pub struct Additions {
    /// The load's name in progress lines, errors and the summary.
    pub what: &'static str,
    /// SQL run in staging after TPC-C's tables are created and before any row is loaded, with
    /// the kit's index marker: its key and index statements run beside TPC-C's.
    pub schema: &'static str,
    /// The tables it adds, its meta table last (written last, read first by readiness).
    pub tables: &'static [&'static str],
    /// The rows TPC-C's tables get.
    pub flavor: Flavor,
    /// The added tables' rows as COPY text, by table.
    pub copies: Vec<(&'static str, String)>,
    /// Writes the meta table in staging, once every row is in.
    pub meta: String,
    /// The seed TPC-C's rows are drawn from, fixed so that every load of a size holds the
    /// same rows (`None`: a new one per load, as TPC-C's own).
    pub seed: Option<u64>,
}

/// Creates and fills the TPC-C tables for `plan.scale` warehouses; progress and the summary
/// go to `events`.
pub async fn prepare(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
) -> Result<(), WorkloadError> {
    prepare_with(plan, target, events, None).await
}

/// [`prepare`], with what a workload of the family adds loaded beside TPC-C's tables.
pub async fn prepare_with(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
    additions: Option<Additions>,
) -> Result<(), WorkloadError> {
    let warehouses = plan.scale;
    if warehouses == 0 {
        return Err(WorkloadError::NoRows {
            flag: "--warehouses",
            alias: "",
        });
    }
    let what = additions.as_ref().map_or("TPC-C", |a| a.what);
    let mut tables: Vec<&str> = TABLES.to_vec();
    tables.extend(additions.iter().flat_map(|a| a.tables.iter().copied()));
    let started = Instant::now();
    let control = connect(target).await?;
    lock::take(&control, target, &format!("{what} tables")).await?;
    let schema = target_schema(&control, target).await?;
    let existing = existing_tables(&control, target, &schema, &tables).await?;
    if !existing.is_empty() && !plan.force {
        if additions.is_some() {
            return Err(WorkloadError::AlreadyPrepared {
                target: target.label.clone(),
                what,
                tables: existing,
            });
        }
        return install_missing_functions(&control, target, warehouses, &existing, &**events).await;
    }
    let (create, mut statements) = split_schema(SCHEMA);
    let (added, added_statements) = split_schema(additions.as_ref().map_or("", |a| a.schema));
    statements.extend(added_statements);
    create_fresh(&control, target, &format!("{create}\n{added}"), what).await?;
    let (rows, mut progress) = copy_rows(plan, target, events, &control, &additions).await?;
    let copy = started.elapsed();

    progress.phase("creating primary keys and indexes ...");
    let t = Instant::now();
    run_parallel(target, statements, plan.jobs).await?;
    progress.phase("analyze ...");
    // The meta tables are written after the analyze.
    let analyze = tables
        .iter()
        .filter(|t| !t.ends_with("_meta"))
        .map(|t| format!("ANALYZE {t}"))
        .collect();
    run_parallel(target, analyze, plan.jobs).await?;
    let indexes = t.elapsed();

    let mut meta = tpcc_meta(warehouses, rows.c_load);
    meta.push_str(additions.as_ref().map_or("", |a| a.meta.as_str()));
    control
        .batch_execute(&in_staging(&meta))
        .await
        .map_err(|e| db_error(target, "writing the meta tables", &e))?;
    control
        .batch_execute(&move_sql(&tables, &schema, plan.force, procedures::SQL))
        .await
        .map_err(|e| {
            db_error(
                target,
                &format!("moving the loaded {what} tables into place"),
                &e,
            )
        })?;
    drop(progress);
    events.send(Event::LoadFinished(LoadSummary {
        what: format!("{what} with {warehouses} warehouses"),
        target: target.label.clone(),
        rows: rows.count,
        elapsed: started.elapsed(),
        steps: vec![
            ("copy".into(), copy),
            ("keys, indexes and analyze".into(), indexes),
        ],
    }));
    Ok(())
}

/// What the copy step loaded: its rows and the load's C for C_LAST.
struct Copied {
    count: u64,
    c_load: i64,
}

/// `tpcc_meta`'s table and row.
fn tpcc_meta(warehouses: u32, c_load: i64) -> String {
    format!(
        "CREATE TABLE tpcc_meta (warehouses int NOT NULL, c_last_load int NOT NULL, \
           c_last_run int NOT NULL, c_id_run int NOT NULL, ol_i_id_run int NOT NULL, \
           loaded_at timestamptz NOT NULL DEFAULT now());\n\
         INSERT INTO tpcc_meta (warehouses, c_last_load, c_last_run, c_id_run, ol_i_id_run) \
           VALUES ({warehouses}, {c_load}, {C_LAST_RUN}, {C_ID_RUN}, {OL_I_ID_RUN});\n"
    )
}

/// Fills the staging tables: TPC-C's per clause 4.3.3.1 (or as `additions` flavor them), one
/// warehouse per loader session at a time over `--jobs` sessions, then the added tables' rows
/// on a session of their own. Returns the rows and the load's progress, for the next steps.
async fn copy_rows(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
    control: &Client,
    additions: &Option<Additions>,
) -> Result<(Copied, Progress), WorkloadError> {
    let warehouses = plan.scale;
    let now = control
        .query_one(
            "SELECT localtimestamp(0)::text, \
               extract(epoch FROM localtimestamp(0) AT TIME ZONE 'UTC')::bigint",
            &[],
        )
        .await
        .map_err(|e| db_error(target, "reading the server's time", &e))?;
    let (now, now_epoch): (String, i64) = (now.get(0), now.get(1));
    let seed = additions.as_ref().and_then(|a| a.seed).unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let c_load = c_last_load(&mut Rng::seed_from_u64(seed));
    let per_warehouse = 1
        + DISTRICTS as u64 * (1 + 3 * CUSTOMERS_PER_DISTRICT as u64 + 900)
        + ITEMS as u64
        + DISTRICTS as u64 * ORDERS_PER_DISTRICT as u64 * 10;
    let what = additions.as_ref().map_or("TPC-C", |a| a.what);
    let progress = Progress::start(
        &format!("{what} tables"),
        ITEMS as u64 + u64::from(warehouses) * per_warehouse,
        Arc::clone(events),
    );
    let flavor = additions.as_ref().map_or(Flavor::Tpcc, |a| a.flavor);
    // Unit 0 is the item table, unit w the rows of warehouse w.
    let next = Arc::new(AtomicU32::new(0));
    let jobs = plan.jobs.clamp(1, warehouses + 1);
    let job = |_| {
        load_units(
            target,
            Arc::clone(&next),
            warehouses,
            Shared {
                now: now.clone(),
                now_epoch,
                flavor,
                c_load,
                seed,
                counter: progress.counter(),
            },
        )
    };
    let mut count: u64 = try_join_all((0..jobs).map(job)).await?.iter().sum();
    if let Some(a) = additions {
        let staging = connect_staging(target).await?;
        for (table, text) in &a.copies {
            count += copy_text(&staging, target, table, text.clone()).await?;
        }
    }
    Ok((Copied { count, c_load }, progress))
}

/// With TPC-C tables already there and no `--force`: a complete load of the asked size that
/// lacks the `--procedures` functions (prepared by an older tidebench) gets them, cheaply and
/// without touching a row; anything else is refused.
async fn install_missing_functions(
    control: &Client,
    target: &ResolvedTarget,
    warehouses: u32,
    existing: &[String],
    events: &dyn Sink,
) -> Result<(), WorkloadError> {
    let refuse = || WorkloadError::AlreadyPrepared {
        target: target.label.clone(),
        what: "TPC-C tables",
        tables: existing.to_vec(),
    };
    if check_ready(control, false).await.ok() != Some(warehouses) {
        return Err(refuse());
    }
    let missing = procedures::missing_functions(control)
        .await
        .map_err(|e| db_error(target, "looking for the TPC-C functions", &e))?;
    if missing.is_empty() {
        return Err(refuse());
    }
    control
        .batch_execute(procedures::SQL)
        .await
        .map_err(|e| db_error(target, "installing the TPC-C functions", &e))?;
    events.send(Event::Note(format!(
        "target '{}' already has a complete TPC-C load of {warehouses} warehouses; installed \
         the functions `--procedures` calls, which it lacked ({}), and left the tables as they \
         were",
        target.label,
        missing.join(", ")
    )));
    Ok(())
}

/// The table a complete TPC-C load ends with, which readiness reads first.
const META: MetaTable = MetaTable {
    load: "TPC-C",
    table: "tpcc_meta",
    prepare: "tidebench prepare --workload tpcc --warehouses W",
};

/// Checks that a complete TPC-C load is there and returns its warehouse count; with
/// `procedures`, also that the functions `--procedures` calls are installed.
pub async fn check_ready(client: &Client, procedures: bool) -> Result<u32, WorkloadError> {
    let row = META
        .read(
            client,
            "SELECT warehouses, c_last_load FROM tpcc_meta LIMIT 1",
        )
        .await?;
    let warehouses: i32 = row.get(0);
    let c_load: i32 = row.get(1);
    if !c_last_delta_ok(i64::from(c_load), C_LAST_RUN) {
        return Err(WorkloadError::not_prepared(
            format!(
                "the TPC-C data was loaded with C_LAST constant {c_load}, which breaks the \
                 delta rule of clause 2.1.6.1 with this tidebench's run constant {C_LAST_RUN}"
            ),
            format!(
                "reload with `tidebench prepare --workload tpcc --warehouses {warehouses} --force`"
            ),
        ));
    }
    let warehouses = META.scale(i64::from(warehouses), "warehouses")?;
    if procedures {
        let missing = procedures::missing_functions(client)
            .await
            .map_err(WorkloadError::query("looking for the TPC-C functions"))?;
        if !missing.is_empty() {
            return Err(WorkloadError::not_prepared(
                format!(
                    "--procedures calls PL/pgSQL functions this TPC-C load lacks ({}; it was \
                     prepared by an older tidebench)",
                    missing.join(", ")
                ),
                format!(
                    "run `tidebench prepare --workload tpcc --warehouses {warehouses}` on this \
                     target to install them (the tables stay as they are)"
                ),
            ));
        }
    }
    Ok(warehouses)
}
