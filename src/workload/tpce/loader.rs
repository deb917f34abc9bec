//! `prepare` for tpce: the 33 tables of `schema.sql` built in tidebench's staging schema
//! ([`crate::workload::staging`]) and moved into the target schema in one transaction, as
//! TPC-C's are, so an interrupted load leaves nothing that looks complete.
//!
//! Steps: validate the knobs ([`Scale::new`]) before touching the target; take the load lock;
//! refuse existing tpce tables unless `--force`; create the staging tables; generate and COPY
//! the units of [`gen::Unit::all`] over `--jobs` sessions, each unit's rows made on a blocking
//! thread (generation is CPU work: the simulated trade history above all) and streamed to the
//! session in bounded batches; build keys and indexes and ANALYZE over the same sessions; write
//! `tpce_meta`; then in one transaction move the tables, create the run's trade id sequence
//! `t_id_seq` and install the PL/pgSQL functions of `--procedures`.
//!
//! Every row is a pure function of (seed, scale, ids), so the tables are byte-identical
//! whatever `--jobs` is. The seed is fixed ([`DATA_SEED`]) and recorded in `tpce_meta` with
//! the knobs; a run reads them back ([`check_ready`]) so its input generator draws ids that
//! exist.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use futures_util::future::try_join_all;
use tokio_postgres::Client;

use super::error::TpceError;
use super::gen::{self, Unit};
use super::procedures;
use super::scale::{Scale, DEFAULT_SCALE_FACTOR};
use crate::config::{OptionValues, PreparePlan};
use crate::event::{Event, LoadSummary, Sink};
use crate::target::ResolvedTarget;
use crate::workload::kit::staging::{
    connect, connect_staging, copy_text, create_fresh, db_error, existing_tables, in_staging,
    move_sql, run_parallel, split_schema, target_schema,
};
use crate::workload::kit::{lock, MetaTable, Progress};
use crate::workload::{Loaded, WorkloadError};

const SCHEMA: &str = include_str!("schema.sql");

/// The generator's seed for every load: fixed, so two loads of the same knobs are identical.
pub const DATA_SEED: u64 = 0x7470_6365_2d31_3131;

/// Initial trade days when `--trade-days` is not given: the spec's 300 make 17 M trades per
/// load unit; 10 make 576,000, which a laptop loads in well under a minute per unit.
pub const DEFAULT_TRADE_DAYS: u32 = 10;

/// The keys of the facts [`check_ready`] hands the run (see [`Loaded`]).
pub const FACT_TRADE_DAYS: &str = "trade_days";
pub const FACT_SCALE_FACTOR: &str = "scale_factor";
pub const FACT_SEED: &str = "data_seed";

/// Every table `prepare` creates; `tpce_meta` last, as it is written last.
pub fn tables() -> Vec<&'static str> {
    let mut out: Vec<&str> = gen::Table::ALL.iter().map(|t| t.name()).collect();
    out.push("tpce_meta");
    out
}

/// The load's knobs from `prepare`'s scale (customers) and options (trade days).
pub fn scale_of(customers: u32, options: &OptionValues) -> Result<Scale, WorkloadError> {
    let trade_days = options
        .get(FACT_TRADE_DAYS)
        .and_then(|v| v.as_integer())
        .map_or(DEFAULT_TRADE_DAYS, |n| u32::try_from(n).unwrap_or(0));
    Scale::new(u64::from(customers), trade_days, DEFAULT_SCALE_FACTOR)
        .map_err(|e| TpceError::from(e).into())
}

/// Creates and fills the tpce tables for `plan.scale` customers; progress and the summary go
/// to `events`.
pub async fn prepare(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
) -> Result<(), WorkloadError> {
    let scale = scale_of(plan.scale, &plan.options)?;
    let started = Instant::now();
    let control = connect(target).await?;
    lock::take(&control, target, "tpce tables").await?;
    let schema = target_schema(&control, target).await?;
    let tables = tables();
    let existing = existing_tables(&control, target, &schema, &tables).await?;
    if !existing.is_empty() && !plan.force {
        return Err(WorkloadError::AlreadyPrepared {
            target: target.label.clone(),
            what: "tpce tables",
            tables: existing,
        });
    }
    let (create, statements) = split_schema(SCHEMA);
    create_fresh(&control, target, create, "tpce").await?;

    let mut progress = Progress::start("tpce tables", expected_rows(&scale), Arc::clone(events));
    let units = Arc::new(Unit::all(&scale));
    let next = Arc::new(AtomicUsize::new(0));
    let jobs = (plan.jobs.max(1) as usize).min(units.len());
    let job = |_| {
        load_units(
            target,
            Arc::clone(&units),
            Arc::clone(&next),
            scale,
            progress.counter(),
        )
    };
    let rows: u64 = try_join_all((0..jobs).map(job)).await?.iter().sum();
    let copy = started.elapsed();

    progress.phase("creating primary keys and indexes ...");
    let t = Instant::now();
    run_parallel(target, statements, plan.jobs).await?;
    progress.phase("analyze ...");
    let analyze = gen::Table::ALL
        .iter()
        .map(|t| format!("ANALYZE {}", t.name()))
        .collect();
    run_parallel(target, analyze, plan.jobs).await?;
    let indexes = t.elapsed();

    control
        .batch_execute(&in_staging(&meta_sql(&scale)))
        .await
        .map_err(|e| db_error(target, "writing tpce_meta", &e))?;
    let extra = format!(
        "DROP SEQUENCE IF EXISTS t_id_seq;\n\
         CREATE SEQUENCE t_id_seq START WITH {};\n{}",
        scale.first_run_trade_id(),
        procedures::SQL
    );
    control
        .batch_execute(&move_sql(&tables, &schema, plan.force, &extra))
        .await
        .map_err(|e| db_error(target, "moving the loaded tpce tables into place", &e))?;
    drop(progress);
    events.send(Event::LoadFinished(LoadSummary {
        what: format!(
            "tpce with {} customers, {} trade days",
            scale.customers(),
            scale.trade_days()
        ),
        target: target.label.clone(),
        rows,
        elapsed: started.elapsed(),
        steps: vec![
            ("generate and copy".into(), copy),
            ("keys, indexes and analyze".into(), indexes),
        ],
    }));
    Ok(())
}

fn meta_sql(scale: &Scale) -> String {
    format!(
        "CREATE TABLE tpce_meta (customers bigint NOT NULL, trade_days int NOT NULL, \
           scale_factor int NOT NULL, seed bigint NOT NULL, first_trade_id bigint NOT NULL, \
           loaded_at timestamptz NOT NULL DEFAULT now());\n\
         INSERT INTO tpce_meta (customers, trade_days, scale_factor, seed, first_trade_id) \
           VALUES ({}, {}, {}, {}, {});",
        scale.customers(),
        scale.trade_days(),
        scale.scale_factor(),
        DATA_SEED as i64,
        scale.first_run_trade_id()
    )
}

/// One loader session: takes units until none is left; returns the rows it loaded. A unit's
/// batches are made on a blocking thread and handed over a small channel, so generation runs
/// on its own core while the session copies the previous batch.
async fn load_units(
    target: &ResolvedTarget,
    units: Arc<Vec<Unit>>,
    next: Arc<AtomicUsize>,
    scale: Scale,
    counter: Arc<AtomicU64>,
) -> Result<u64, WorkloadError> {
    let client = connect_staging(target).await?;
    let mut rows = 0;
    while let Some(&unit) = units.get(next.fetch_add(1, Ordering::Relaxed)) {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<gen::Batch>(2);
        // Dropping the receiver (an error below, or Ctrl-C dropping this future) makes the
        // next send fail, which ends the generator.
        let producer = tokio::task::spawn_blocking(move || {
            for batch in unit.batches(DATA_SEED, &scale) {
                if tx.blocking_send(batch).is_err() {
                    break;
                }
            }
        });
        while let Some(batch) = rx.recv().await {
            rows += copy_batch(&client, target, batch, &counter).await?;
        }
        // A generator that panicked is a defect: `Task` says so and asks for a report.
        producer.await?;
    }
    Ok(rows)
}

async fn copy_batch(
    client: &Client,
    target: &ResolvedTarget,
    batch: gen::Batch,
    counter: &AtomicU64,
) -> Result<u64, WorkloadError> {
    let mut rows = 0;
    for (table, text) in batch.into_tables() {
        let n = copy_text(client, target, table.name(), text).await?;
        counter.fetch_add(n, Ordering::Relaxed);
        rows += n;
    }
    Ok(rows)
}

/// About how many rows a load of `scale` has, for the progress line: exact for the scaling
/// tables, from tpce.md §2.5's ratios for the simulated history.
pub fn expected_rows(scale: &Scale) -> u64 {
    let lus = scale.load_units();
    let fixed = 5 + 5 + 15 + 240 + 4 + 4 + 12 + 102 + 320 + 14_741;
    let market = scale.companies() * (1 + 1 + 3 + 20 + 4)
        + scale.securities() * 2
        + scale.daily_market_rows();
    // Per customer: itself, its address, tax rates, watch list and ~100 items; ~5 accounts
    // with ~1.42 permissions and ~10 holding summaries each.
    let customers = scale.customers() * (1 + 1 + 2 + 1 + 100 + 5 + 7 + 50);
    // Per trade: itself, 2.4 history rows, a settlement, 0.92 cash rows, 1.34 holding history.
    let trades = scale.initial_trades() * 666 / 100;
    fixed + market + customers + trades + lus * 10
}

/// The table a complete tpce load ends with, which readiness reads first.
const META: MetaTable = MetaTable {
    load: "tpce",
    table: "tpce_meta",
    prepare: "tidebench prepare --workload tpce --customers N",
};

/// Checks that a complete tpce load is there and agrees with the run's `options` (the trade
/// days, if given; the `--procedures` functions, if asked for); returns its customers and the
/// facts the run's input generator needs.
pub async fn check_ready(client: &Client, options: &OptionValues) -> Result<Loaded, WorkloadError> {
    let row = META
        .read(
            client,
            "SELECT customers, trade_days, scale_factor, seed FROM tpce_meta LIMIT 1",
        )
        .await?;
    let customers: i64 = row.get(0);
    let trade_days: i32 = row.get(1);
    let scale_factor: i32 = row.get(2);
    let seed: i64 = row.get(3);
    let customers = META.scale(customers, "customers")?;
    if let Some(asked) = options.get(FACT_TRADE_DAYS).and_then(|v| v.as_integer()) {
        if asked != i64::from(trade_days) {
            return Err(WorkloadError::not_prepared(
                format!(
                    "this tpce data was loaded with --trade-days {trade_days}, not {asked}: \
                     the run's trade ids and times must match the load"
                ),
                format!(
                    "run with --trade-days {trade_days} (or leave it out), or reload with \
                     `tidebench prepare --workload tpce --customers {customers} --trade-days \
                     {asked} --force`"
                ),
            ));
        }
    }
    if options.get("procedures").and_then(|v| v.as_bool()) == Some(true) {
        let missing = procedures::missing_functions(client)
            .await
            .map_err(WorkloadError::query("looking for the tpce functions"))?;
        if !missing.is_empty() {
            return Err(WorkloadError::not_prepared(
                format!(
                    "--procedures calls PL/pgSQL functions this tpce load lacks ({})",
                    missing.join(", ")
                ),
                format!(
                    "reload with `tidebench prepare --workload tpce --customers {customers} \
                     --trade-days {trade_days} --force`"
                ),
            ));
        }
    }
    let mut facts = OptionValues::new();
    facts.insert(FACT_TRADE_DAYS.into(), i64::from(trade_days).into());
    facts.insert(FACT_SCALE_FACTOR.into(), i64::from(scale_factor).into());
    facts.insert(FACT_SEED.into(), seed.into());
    Ok(Loaded {
        scale: customers,
        facts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_come_from_scale_and_options_with_a_laptop_default() {
        let s = scale_of(2_000, &OptionValues::new()).unwrap();
        assert_eq!((s.customers(), s.trade_days()), (2_000, DEFAULT_TRADE_DAYS));
        let mut o = OptionValues::new();
        o.insert(FACT_TRADE_DAYS.into(), 3.into());
        assert_eq!(scale_of(1_000, &o).unwrap().trade_days(), 3);
        let e = scale_of(1_500, &o).unwrap_err().to_string();
        assert!(
            e.contains("--customers 1500") && e.contains("1000 or 2000"),
            "{e}"
        );
    }

    #[test]
    fn the_estimate_is_near_the_per_lu_sizes() {
        let s = scale_of(1_000, &OptionValues::new()).unwrap();
        let rows = expected_rows(&s);
        // ~894 k daily market rows, ~576 k trades × 6.66 and ~166 k customer rows.
        assert!((4_500_000..5_500_000).contains(&rows), "{rows}");
        assert_eq!(tables().len(), 34);
    }
}
