//! `prepare` for CH-benCHmark: TPC-C's load in its CH flavor ([`tpcc::Flavor::Ch`]), with the
//! three added tables and two added columns of [`super::tables`] in the same staging schema
//! and the same final move, and `ch_meta` written last; readiness reads `ch_meta` and TPC-C's
//! own `tpcc_meta`, so a `tpcc` group runs on the same database.

use std::sync::Arc;

use tokio_postgres::Client;

use super::queries::{shift, REFERENCE};
use super::tables::{self, TABLES};
use crate::config::{OptionValues, PreparePlan};
use crate::event::Sink;
use crate::target::ResolvedTarget;
use crate::workload::kit::MetaTable;
use crate::workload::{tpcc, Loaded, WorkloadError};

/// The fact a run's queries need: the days their dates move by.
pub const SHIFT_DAYS: &str = "date_shift_days";

/// The seed a CH load's rows are drawn from: every load of a size holds the same rows (but
/// the dates, which follow the load's), so which rows each query returns does not change
/// from one load to the next. At 1 warehouse Q20 finds a supplier for about one seed in
/// five (see the book): this one does, and Q8's lines too.
pub const LOAD_SEED: u64 = 10;

/// Every table the load adds, `ch_meta` last.
const ADDED: [&str; 4] = [TABLES[0], TABLES[1], TABLES[2], "ch_meta"];

/// Creates and fills TPC-C's tables in the CH flavor and CH's own for `plan.scale`
/// warehouses.
pub async fn prepare(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
) -> Result<(), WorkloadError> {
    let (y, m, d) = REFERENCE;
    let additions = tpcc::Additions {
        what: "CH-benCHmark",
        schema: tables::SCHEMA,
        tables: &ADDED,
        flavor: tpcc::Flavor::Ch,
        copies: tables::copies(LOAD_SEED),
        meta: format!(
            "CREATE TABLE ch_meta (warehouses int NOT NULL, loaded_on date NOT NULL, \
               reference date NOT NULL);\n\
             INSERT INTO ch_meta VALUES ({}, localtimestamp(0)::date, \
               date '{y:04}-{:02}-{d:02}');\n",
            plan.scale,
            u8::from(m)
        ),
        seed: Some(LOAD_SEED),
    };
    tpcc::prepare_with(plan, target, events, Some(additions)).await
}

const META: MetaTable = MetaTable {
    load: "CH-benCHmark",
    table: "ch_meta",
    prepare: "tidebench prepare --workload ch --warehouses W",
};

/// Checks that a complete CH load is there (CH's tables and TPC-C's) and returns its
/// warehouses, with the days the queries' dates move by as a fact.
pub async fn check_ready(client: &Client) -> Result<Loaded, WorkloadError> {
    let row = META
        .read(
            client,
            "SELECT warehouses, loaded_on::text FROM ch_meta LIMIT 1",
        )
        .await?;
    let (warehouses, loaded_on): (i32, String) = (row.get(0), row.get(1));
    let warehouses = META.scale(i64::from(warehouses), "warehouses")?;
    let tpcc = tpcc::check_ready(client, false).await?;
    let reload =
        || format!("run `tidebench prepare --workload ch --warehouses {warehouses} --force`");
    if tpcc != warehouses {
        return Err(WorkloadError::not_prepared(
            format!("ch_meta says {warehouses} warehouses and tpcc_meta {tpcc}"),
            reload(),
        ));
    }
    let Some(days) = shift(&loaded_on) else {
        return Err(WorkloadError::not_prepared(
            format!("ch_meta's load date {loaded_on} is not a date"),
            reload(),
        ));
    };
    let mut facts = OptionValues::new();
    facts.insert(SHIFT_DAYS.into(), days.into());
    Ok(Loaded {
        scale: warehouses,
        facts,
    })
}
