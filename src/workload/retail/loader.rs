//! `prepare` for `retail`: the tables and the fact table's partitions, then `--jobs` COPY
//! streams, each taking the next partition and copying its range of line items straight into
//! it, in chunks generated as they go (gpfdist's role in the Greenplum study). The rows are functions of
//! their ids, so the tables are byte for byte the same whatever the number of streams. The
//! dimensions follow, then ANALYZE, then `retail_meta`, written last: a load interrupted
//! anywhere has none and is not taken as ready.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use futures_util::future::try_join_all;
use futures_util::SinkExt;
use tokio_postgres::Client;

use super::gen::{self, Size};
use super::{DATA_SEED, META, SCHEMA, TABLES};
use crate::config::PreparePlan;
use crate::event::{Event, LoadSummary, Sink};
use crate::target::ResolvedTarget;
use crate::workload::kit::staging::{connect, copy_text, db_error};
use crate::workload::kit::Progress;
use crate::workload::WorkloadError;

/// Line items generated and sent per CopyData batch.
const CHUNK_ROWS: u64 = 20_000;

pub async fn prepare(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
) -> Result<(), WorkloadError> {
    let size = Size::new(super::rows_of(plan.scale, &plan.options), DATA_SEED);
    let segments = super::segments_of(&plan.options);
    let client = connect(target).await?;
    crate::workload::kit::lock::take(&client, target, "retail tables").await?;
    let started = Instant::now();
    let layout = if segments == 0 {
        create(&client, target, plan.force, SCHEMA).await?;
        None
    } else {
        Some(super::segments::create(plan, target, &client, &size, segments).await?)
    };
    let mut progress = Progress::start("retail order_lineitems", size.rows, Arc::clone(events));
    let bytes = Arc::new(AtomicU64::new(0));
    let single = std::slice::from_ref(target);
    let to = match &layout {
        None => Dests {
            dests: single,
            route: &|_| 0,
        },
        Some(seg) => Dests {
            dests: &seg.targets,
            route: &*seg.route,
        },
    };
    copy_fact(
        &to,
        &size,
        plan.jobs,
        progress.counter(),
        Arc::clone(&bytes),
    )
    .await?;
    let copy = started.elapsed();
    progress.phase("dimensions and ANALYZE");
    copy_dimensions(&client, target, &size).await?;
    let coordinator = std::slice::from_ref(target).iter().filter(|_| segments > 0);
    for t in to.dests.iter().chain(coordinator) {
        connect(t)
            .await?
            .batch_execute("ANALYZE")
            .await
            .map_err(|e| db_error(t, "ANALYZE", &e))?;
    }
    client
        .batch_execute(&format!(
            "CREATE TABLE {META} (rows bigint NOT NULL, customers bigint NOT NULL, seed bigint \
             NOT NULL, segments int NOT NULL); INSERT INTO {META} VALUES ({}, {}, {}, {segments})",
            size.rows, size.customers, size.seed
        ))
        .await
        .map_err(|e| db_error(target, "writing retail_meta", &e))?;
    drop(progress);
    let mb = bytes.load(Ordering::Relaxed) as f64 / 1e6;
    let spread = match layout.as_ref().map(|s| s.share) {
        None => String::new(),
        Some(Some((cpus, bytes))) => format!(
            " over {segments} segments ({cpus} CPU and {} each)",
            crate::config::size::gib(bytes)
        ),
        Some(None) => {
            format!(" over {segments} segments (without limits: control groups need root)")
        }
    };
    events.send(Event::Note(format!(
        "retail: {} line items, {mb:.1} MB in {} streams{spread}: {:.0} rows/s, {:.1} MB/s",
        size.rows,
        plan.jobs.max(1),
        size.rows as f64 / copy.as_secs_f64().max(1e-9),
        mb / copy.as_secs_f64().max(1e-9)
    )));
    events.send(Event::LoadFinished(LoadSummary {
        what: match super::bytes_of(&plan.options, super::SIZE) {
            Some(b) => format!("retail {}", crate::config::size::format_size(b)),
            None => format!("retail scale {}", plan.scale),
        },
        target: target.label.clone(),
        rows: size.rows,
        elapsed: started.elapsed(),
        steps: vec![
            ("copy".into(), copy),
            ("dimensions, analyze".into(), started.elapsed() - copy),
        ],
    }));
    Ok(())
}

/// The tables (`schema`) and the fact table's time partitions, dropping an earlier load only
/// with `--force`.
pub async fn create(
    client: &Client,
    target: &ResolvedTarget,
    force: bool,
    schema: &str,
) -> Result<(), WorkloadError> {
    create_with(client, target, force, schema, true).await
}

/// As [`create`]; `by_time` false leaves the fact table's partitions to the caller (a
/// coordinator's are its segments).
pub async fn create_with(
    client: &Client,
    target: &ResolvedTarget,
    force: bool,
    schema: &str,
    by_time: bool,
) -> Result<(), WorkloadError> {
    let found: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() \
             AND tablename = ANY($1)",
            &[&TABLES.iter().map(|t| t.to_string()).collect::<Vec<_>>()],
        )
        .await
        .map_err(|e| db_error(target, "looking for retail's tables", &e))?
        .get(0);
    if found > 0 && !force {
        return Err(WorkloadError::AlreadyPrepared {
            target: target.label.clone(),
            what: "retail's tables",
            tables: Vec::new(),
        });
    }
    let mut sql = format!("DROP TABLE IF EXISTS {} CASCADE;\n", TABLES.join(", "));
    sql.push_str(schema);
    for p in gen::partitions().into_iter().filter(|_| by_time) {
        sql.push_str(&format!(
            "CREATE TABLE {} PARTITION OF order_lineitems FOR VALUES FROM ('{}') TO ('{}');\n",
            p.name,
            gen::timestamp(p.from),
            gen::timestamp(p.to)
        ));
    }
    client
        .batch_execute(&sql)
        .await
        .map_err(|e| db_error(target, "creating retail's tables", &e))
}

/// Where the fact table's rows go: one database, or segments that each hold a range of
/// customers (`route` gives a customer's index into `dests`).
pub struct Dests<'a> {
    pub dests: &'a [ResolvedTarget],
    pub route: &'a (dyn Fn(u64) -> usize + Sync),
}

/// The fact table over `jobs` streams, a partition at a time each; a stream holds a COPY to
/// every destination and sends each row to its own.
pub async fn copy_fact(
    to: &Dests<'_>,
    size: &Size,
    jobs: u32,
    rows: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
) -> Result<(), WorkloadError> {
    let parts = Arc::new(gen::partitions());
    let next = Arc::new(AtomicUsize::new(0));
    let streams = (jobs.max(1) as usize).min(parts.len());
    try_join_all((0..streams).map(|_| {
        let (parts, next, rows, bytes) = (
            Arc::clone(&parts),
            Arc::clone(&next),
            Arc::clone(&rows),
            Arc::clone(&bytes),
        );
        async move {
            let clients = try_join_all(to.dests.iter().map(connect)).await?;
            loop {
                let Some(p) = parts.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    return Ok::<(), WorkloadError>(());
                };
                let range = (size.first_id_at(p.from), size.first_id_at(p.to));
                copy_range(&clients, to, &p.name, size, range, &rows, &bytes).await?;
            }
        }
    }))
    .await?;
    Ok(())
}

/// Line items `range` into `table` of every destination, generated a chunk at a time.
async fn copy_range(
    clients: &[Client],
    to: &Dests<'_>,
    table: &str,
    size: &Size,
    (lo, hi): (u64, u64),
    rows: &AtomicU64,
    bytes: &AtomicU64,
) -> Result<(), WorkloadError> {
    let what = format!("loading {table}");
    let mut sinks = Vec::with_capacity(clients.len());
    for (client, target) in clients.iter().zip(to.dests) {
        let sink = client
            .copy_in::<_, bytes::Bytes>(&format!("COPY {table} FROM STDIN"))
            .await
            .map_err(|e| db_error(target, &what, &e))?;
        sinks.push(Box::pin(sink));
    }
    let mut texts = vec![String::new(); clients.len()];
    let mut from = lo;
    while from < hi {
        let chunk_end = (from + CHUNK_ROWS).min(hi);
        texts.iter_mut().for_each(String::clear);
        gen::copy_rows_split(size, from, chunk_end, to.route, &mut texts);
        for ((sink, text), target) in sinks.iter_mut().zip(&texts).zip(to.dests) {
            if text.is_empty() {
                continue;
            }
            bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
            sink.send(bytes::Bytes::copy_from_slice(text.as_bytes()))
                .await
                .map_err(|e| db_error(target, &what, &e))?;
        }
        rows.fetch_add(chunk_end - from, Ordering::Relaxed);
        from = chunk_end;
    }
    for (sink, target) in sinks.iter_mut().zip(to.dests) {
        sink.as_mut()
            .finish()
            .await
            .map_err(|e| db_error(target, &what, &e))?;
    }
    Ok(())
}

/// Categories, products and customers: small, one session.
async fn copy_dimensions(
    client: &Client,
    target: &ResolvedTarget,
    size: &Size,
) -> Result<(), WorkloadError> {
    let mut categories = String::new();
    for (i, name) in gen::CATEGORIES.iter().enumerate() {
        categories.push_str(&format!("{}\t{name}\n", i + 1));
    }
    copy_text(client, target, "product_categories", categories).await?;
    let mut products = String::new();
    for p in 1..=gen::PRODUCTS {
        let c = gen::price_of(p);
        products.push_str(&format!(
            "{p}\tProduct {p}\t{}\t{}.{:02}\n",
            gen::category_of(p),
            c / 100,
            c % 100
        ));
    }
    copy_text(client, target, "products", products).await?;
    let mut customers = String::with_capacity(size.customers as usize * 20);
    for c in 1..=size.customers {
        customers.push_str(&format!("{c}\tCustomer {c}\n"));
    }
    copy_text(client, target, "customers", customers).await?;
    Ok(())
}
