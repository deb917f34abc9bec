//! `prepare` for TPC-H on the loading kit ([`crate::workload::kit`]): the eight tables of
//! [`super::schema`] built in the staging schema, filled by `--jobs` COPY sessions, each
//! taking the next part of a table ([`super::rows::write_part`], generated off the runtime's
//! threads), then the primary keys (clause 1.4.2.2), with `foreign_keys` the foreign keys
//! (1.4.2.3) and with `indexes` the secondary indexes, ANALYZE, and `tpch_meta` last; the
//! tables move into the target schema in one transaction. Interrupted anywhere (error,
//! Ctrl-C, crash), the target schema is as it was: a run finds no `tpch_meta` and says to
//! prepare.
//!
//! The scale factor is clause 4.1.3's and may be fractional: the `sf` option (`--sf 0.01`),
//! or, without it, the plan's whole `--scale`. `tpch_meta` keeps it, and a run reads it back.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use futures_util::future::try_join_all;
use tokio_postgres::Client;

use super::refresh::{CREATE_STATE, STATE_TABLE};
use super::rows::{write_part, ScaleFactor, Table};
use super::schema::{create_tables, FOREIGN_KEYS, INDEXES, PRIMARY_KEYS};
use crate::config::{OptionValues, PreparePlan};
use crate::event::{Event, LoadSummary, Sink};
use crate::target::ResolvedTarget;
use crate::workload::kit::staging::{
    connect, connect_staging, copy_text, create_fresh, db_error, existing_tables, in_staging,
    move_sql, run_parallel, target_schema,
};
use crate::workload::kit::{lock, MetaTable, Progress};
use crate::workload::{Loaded, WorkloadError};

/// Every table `prepare` creates (`tpch_refresh` keeps the refresh pairs taken, see
/// [`super::refresh`]); `tpch_meta` last, as it is written last.
pub const TABLES: [&str; 10] = [
    "region",
    "nation",
    "part",
    "supplier",
    "partsupp",
    "customer",
    "orders",
    "lineitem",
    "tpch_refresh",
    "tpch_meta",
];

/// The option and the fact that carry the scale factor.
pub const SF: &str = "sf";
/// Load options: the foreign keys and the secondary indexes, both off for a spec-pure load.
pub const FOREIGN_KEYS_OPTION: &str = "foreign_keys";
pub const INDEXES_OPTION: &str = "indexes";
/// The run option that adds the refresh functions, and the fact readiness reads from
/// `tpch_refresh` for it: the refresh pairs the database has taken.
pub const REFRESH: &str = "refresh";
pub const REFRESH_PAIRS: &str = "refresh_pairs";

/// Rows per COPY part: small enough that `--jobs` sessions share even SF 0.01's tables, large
/// enough that a part's statement costs nothing beside its rows.
const ROWS_PER_PART: u64 = 100_000;

/// The table a complete TPC-H load ends with, which readiness reads first.
const META: MetaTable = MetaTable {
    load: "TPC-H",
    table: "tpch_meta",
    prepare: "tidebench prepare --workload tpch --sf SF",
};

/// The scale factor a load (or a run) asks for: `sf`, else the whole `scale`.
pub fn scale_factor(options: &OptionValues, scale: u32) -> Result<ScaleFactor, String> {
    let sf = match options.get(SF) {
        Some(toml::Value::Float(x)) => *x,
        Some(toml::Value::Integer(n)) => *n as f64,
        _ => f64::from(scale),
    };
    ScaleFactor::new(sf).map_err(|e| e.to_string())
}

/// One COPY part: a table, its part number (1-based) and the table's part count.
#[derive(Debug, Clone, Copy)]
struct Unit {
    table: Table,
    part: u32,
    parts: u32,
}

/// The parts of every table, the largest tables' first so the sessions end together.
fn units(sf: ScaleFactor) -> Vec<Unit> {
    let mut out = Vec::new();
    for table in Table::ALL.iter().rev() {
        let rows = estimated_rows(*table, sf);
        let parts = if table.splits() {
            rows.div_ceil(ROWS_PER_PART).clamp(1, 10_000) as u32
        } else {
            1
        };
        out.extend((1..=parts).map(|part| Unit {
            table: *table,
            part,
            parts,
        }));
    }
    out
}

/// Clause 4.2.5's count, and for LINEITEM its mean of 4 lines an order.
fn estimated_rows(table: Table, sf: ScaleFactor) -> u64 {
    table
        .expected_rows(sf)
        .unwrap_or_else(|| 4 * Table::Orders.expected_rows(sf).unwrap_or(0))
}

/// Creates and fills the TPC-H tables for the plan's scale factor; progress and the summary
/// go to `events`.
pub async fn prepare(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
) -> Result<(), WorkloadError> {
    let sf =
        scale_factor(&plan.options, plan.scale).map_err(|message| WorkloadError::LoadOption {
            option: SF,
            message,
        })?;
    let flag = |key: &str| plan.options.get(key).and_then(|v| v.as_bool()) == Some(true);
    let (foreign_keys, indexes) = (flag(FOREIGN_KEYS_OPTION), flag(INDEXES_OPTION));
    let started = Instant::now();
    let control = connect(target).await?;
    lock::take(&control, target, "TPC-H tables").await?;
    let schema = target_schema(&control, target).await?;
    let existing = existing_tables(&control, target, &schema, &TABLES).await?;
    if !existing.is_empty() && !plan.force {
        return Err(WorkloadError::AlreadyPrepared {
            target: target.label.clone(),
            what: "TPC-H tables",
            tables: existing,
        });
    }
    let create = create_tables().join(";\n") + ";";
    create_fresh(&control, target, &create, "TPC-H").await?;

    let all = units(sf);
    let total = Table::ALL.iter().map(|t| estimated_rows(*t, sf)).sum();
    let mut progress = Progress::start("TPC-H tables", total, Arc::clone(events));
    let next = Arc::new(AtomicUsize::new(0));
    let all = Arc::new(all);
    let lineitems = Arc::new(AtomicU64::new(0));
    let jobs = (plan.jobs.max(1) as usize).min(all.len());
    let job = |_| {
        copy_units(
            target,
            sf,
            Arc::clone(&all),
            Arc::clone(&next),
            progress.counter(),
            Arc::clone(&lineitems),
        )
    };
    let rows: u64 = try_join_all((0..jobs).map(job)).await?.iter().sum();
    let copy = started.elapsed();

    let t = Instant::now();
    progress.phase("creating primary keys ...");
    run_parallel(target, PRIMARY_KEYS.map(String::from).to_vec(), plan.jobs).await?;
    if foreign_keys {
        progress.phase("creating foreign keys ...");
        run_parallel(target, FOREIGN_KEYS.map(String::from).to_vec(), plan.jobs).await?;
    }
    if indexes {
        progress.phase("creating indexes ...");
        run_parallel(target, INDEXES.map(String::from).to_vec(), plan.jobs).await?;
    }
    progress.phase("analyze ...");
    let analyze = Table::ALL
        .iter()
        .map(|t| format!("ANALYZE {}", t.name()))
        .collect();
    run_parallel(target, analyze, plan.jobs).await?;
    let keys = t.elapsed();

    let meta = format!(
        "CREATE TABLE tpch_meta (sf double precision NOT NULL, foreign_keys boolean NOT NULL, \
           indexes boolean NOT NULL, lineitem_rows bigint NOT NULL, \
           loaded_at timestamptz NOT NULL DEFAULT now());\n\
         INSERT INTO tpch_meta (sf, foreign_keys, indexes, lineitem_rows) \
           VALUES ({:?}, {foreign_keys}, {indexes}, {});",
        sf.get(),
        lineitems.load(Ordering::Relaxed)
    );
    let meta = format!("{CREATE_STATE}\n{meta}");
    control
        .batch_execute(&in_staging(&meta))
        .await
        .map_err(|e| db_error(target, "writing tpch_meta", &e))?;
    control
        .batch_execute(&move_sql(&TABLES, &schema, plan.force, ""))
        .await
        .map_err(|e| db_error(target, "moving the loaded TPC-H tables into place", &e))?;
    drop(progress);
    events.send(Event::LoadFinished(LoadSummary {
        what: format!("TPC-H at scale factor {sf}"),
        target: target.label.clone(),
        rows,
        elapsed: started.elapsed(),
        steps: vec![("copy".into(), copy), ("keys and analyze".into(), keys)],
    }));
    Ok(())
}

/// One loader session: takes the next unit until none is left, generates its rows off the
/// runtime's threads and COPYs them; returns the rows it loaded.
async fn copy_units(
    target: &ResolvedTarget,
    sf: ScaleFactor,
    all: Arc<Vec<Unit>>,
    next: Arc<AtomicUsize>,
    counter: Arc<AtomicU64>,
    lineitems: Arc<AtomicU64>,
) -> Result<u64, WorkloadError> {
    let client = connect_staging(target).await?;
    let mut loaded = 0;
    while let Some(unit) = all.get(next.fetch_add(1, Ordering::Relaxed)).copied() {
        let text = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            let rows = write_part(unit.table, sf, unit.part, unit.parts, &mut out)
                .map_err(|e| e.to_string())?;
            // DBGEN's text is ASCII; a lossy conversion could only hide a generator bug.
            String::from_utf8(out)
                .map(|text| (rows, text))
                .map_err(|e| e.to_string())
        })
        .await?
        .map_err(|message| WorkloadError::Query {
            what: format!("generating {} rows", unit.table.name()),
            message,
        })?;
        let (rows, text) = text;
        copy_text(&client, target, unit.table.name(), text).await?;
        counter.fetch_add(rows, Ordering::Relaxed);
        if unit.table == Table::LineItem {
            lineitems.fetch_add(rows, Ordering::Relaxed);
        }
        loaded += rows;
    }
    Ok(loaded)
}

/// Checks that a complete TPC-H load is there: its scale factor (the data's scale is its
/// ceiling, at least 1) as the fact `sf` a run builds its parameters from. A run that asks for
/// another scale factor (`--sf`) is refused with the `prepare` that loads it.
pub async fn check_ready(client: &Client, options: &OptionValues) -> Result<Loaded, WorkloadError> {
    let row = META
        .read(client, "SELECT sf FROM tpch_meta LIMIT 1")
        .await?;
    let sf: f64 = row.get(0);
    let loaded = ScaleFactor::new(sf).map_err(|e| {
        WorkloadError::not_prepared(
            format!("tpch_meta holds a scale factor tidebench cannot use ({e})"),
            format!("run `{}` first (add `--force` to reload)", META.prepare),
        )
    })?;
    if let Ok(asked) = scale_factor(options, 1) {
        if options.contains_key(SF) && asked != loaded {
            return Err(WorkloadError::not_prepared(
                format!(
                    "the run asks for TPC-H scale factor {asked}, the data was loaded at {loaded}"
                ),
                format!(
                    "drop --sf to run at the load's, or reload with `tidebench prepare --workload \
                     tpch --sf {asked} --force`"
                ),
            ));
        }
    }
    let mut facts = OptionValues::new();
    facts.insert(SF.into(), sf.into());
    let refresh = options.get(REFRESH).and_then(|v| v.as_bool()) == Some(true);
    if let Some(pairs) = refresh_pairs(client, refresh).await? {
        facts.insert(REFRESH_PAIRS.into(), i64::from(pairs).into());
    }
    Ok(Loaded {
        scale: sf.ceil().clamp(1.0, f64::from(u32::MAX)) as u32,
        facts,
    })
}

/// The refresh pairs the database has taken, from `tpch_refresh` (None where a load made
/// before the refresh functions has no such table). A run with the refresh functions needs
/// the table and a database whose last pair ran both functions.
async fn refresh_pairs(client: &Client, refresh: bool) -> Result<Option<u32>, WorkloadError> {
    let reload = || format!("reload with `{} --force`", META.prepare);
    let query = WorkloadError::query("reading tpch_refresh");
    let exists = client
        .query_one(
            &format!("SELECT to_regclass('{STATE_TABLE}') IS NOT NULL"),
            &[],
        )
        .await
        .map_err(&query)?;
    if !exists.get::<_, bool>(0) {
        if refresh {
            return Err(WorkloadError::not_prepared(
                format!(
                    "the TPC-H load has no {STATE_TABLE} table (it predates the refresh \
                     functions)"
                ),
                reload(),
            ));
        }
        return Ok(None);
    }
    let row = client
        .query_one(&format!("SELECT inserted, deleted FROM {STATE_TABLE}"), &[])
        .await
        .map_err(&query)?;
    let (inserted, deleted): (i32, i32) = (row.get(0), row.get(1));
    if refresh && inserted != deleted {
        return Err(WorkloadError::not_prepared(
            format!(
                "refresh pair {inserted} ran RF1 but not RF2 (a run was cut between them), so \
                 the orders are not as many as the load's"
            ),
            reload(),
        ));
    }
    Ok(Some(u32::try_from(inserted).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_each_table_once_and_fixed_tables_are_whole() {
        let sf = ScaleFactor::new(0.1).unwrap();
        let all = units(sf);
        for table in Table::ALL {
            let parts: Vec<&Unit> = all.iter().filter(|u| u.table == table).collect();
            let n = parts.len() as u32;
            assert!(parts.iter().all(|u| u.parts == n), "{}", table.name());
            assert_eq!(
                n == 1,
                !table.splits() || estimated_rows(table, sf) <= ROWS_PER_PART
            );
        }
        assert_eq!(all[0].table, Table::LineItem);
    }

    #[test]
    fn the_scale_factor_is_the_option_or_the_whole_scale() {
        let mut options = OptionValues::new();
        assert_eq!(scale_factor(&options, 3).unwrap().get(), 3.0);
        options.insert(SF.into(), 0.01.into());
        assert_eq!(scale_factor(&options, 3).unwrap().get(), 0.01);
        options.insert(SF.into(), (-1.0).into());
        assert!(scale_factor(&options, 3)
            .unwrap_err()
            .contains("above zero"));
    }
}
