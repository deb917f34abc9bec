//! `prepare` for TPC-C: the nine tables of `schema.sql` filled per clause 4.3.3.1 with text
//! COPY, one warehouse per loader session at a time over `--jobs` sessions (the item table is
//! one more unit of work), then the keys and indexes over the same number of sessions, then
//! ANALYZE, and last the `tpcc_meta` row that marks the load complete.
//!
//! Text COPY rather than binary: the rows are mostly strings (which binary COPY does not make
//! cheaper to parse) and numerics (whose binary form is awkward to build).
//!
//! Interrupted (error, Ctrl-C, crash), the tables stay without `tpcc_meta`: runs refuse them
//! and the next prepare asks for `--force`, which drops and reloads.

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::future::try_join_all;
use futures_util::SinkExt;
use rand::seq::SliceRandom;
use rand::{Rng as _, SeedableRng};
use tokio_postgres::{Client, CopyInSink};

use super::random::{
    c_last_delta_ok, c_last_load, nurand, push_astring, push_data, push_decimal, push_last_name,
    push_nstring, push_zip, C_ID_RUN, C_LAST_RUN, OL_I_ID_RUN,
};
use super::{CUSTOMERS_PER_DISTRICT, DISTRICTS, ITEMS};
use crate::config::PreparePlan;
use crate::target::{describe_pg_error, ResolvedTarget};
use crate::workload::pgbench::progress::Progress;
use crate::workload::{Rng, WorkloadError};

const SCHEMA: &str = include_str!("schema.sql");
const INDEX_MARKER: &str = "-- @indexes";

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

/// Orders per district, and the first order id still in NEW-ORDER (clause 4.3.3.1).
const ORDERS_PER_DISTRICT: i64 = 3000;
const FIRST_NEW_ORDER: i64 = 2101;
/// CopyData batch size, as pgbench's loader uses.
const CHUNK_BYTES: usize = 256 * 1024;

fn db_error(target: &ResolvedTarget, what: &str, e: &tokio_postgres::Error) -> WorkloadError {
    WorkloadError::Database(format!(
        "{what} on target '{}': {}",
        target.label,
        describe_pg_error(e)
    ))
}

async fn connect(target: &ResolvedTarget) -> Result<Client, WorkloadError> {
    target
        .connect_tokio()
        .await
        .map_err(|e| WorkloadError::Database(e.to_string()))
}

/// Creates and fills the TPC-C tables for `plan.scale` warehouses.
pub async fn prepare(plan: &PreparePlan, target: &ResolvedTarget) -> Result<(), WorkloadError> {
    let warehouses = plan.scale;
    if warehouses == 0 {
        return Err(WorkloadError::Database(
            "0 warehouses have no rows; pass --warehouses 1 or more".into(),
        ));
    }
    let started = Instant::now();
    let control = connect(target).await?;
    let existing = existing_tables(&control, target).await?;
    if !existing.is_empty() && !plan.force {
        return Err(WorkloadError::AlreadyPrepared(format!(
            "target '{}' already has TPC-C tables ({}); add `--force` to drop and reload them",
            target.label,
            existing.join(", ")
        )));
    }
    let (create, indexes) = SCHEMA.split_once(INDEX_MARKER).unwrap_or((SCHEMA, ""));
    // The rest of the marker's line is its comment.
    let indexes = indexes.split_once('\n').map_or("", |(_, rest)| rest);
    let drop_old = format!("DROP TABLE IF EXISTS {} CASCADE;\n", TABLES.join(", "));
    control
        .batch_execute(&format!("{drop_old}{create}"))
        .await
        .map_err(|e| db_error(target, "creating the TPC-C tables", &e))?;
    let now: String = control
        .query_one("SELECT localtimestamp(0)::text", &[])
        .await
        .map_err(|e| db_error(target, "reading the server's time", &e))?
        .get(0);

    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let c_load = c_last_load(&mut Rng::seed_from_u64(seed));
    let per_warehouse = 1
        + DISTRICTS as u64 * (1 + 3 * CUSTOMERS_PER_DISTRICT as u64 + 900)
        + ITEMS as u64
        + DISTRICTS as u64 * ORDERS_PER_DISTRICT as u64 * 10;
    let mut progress = Progress::start(
        "TPC-C tables",
        ITEMS as u64 + u64::from(warehouses) * per_warehouse,
    );
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
                c_load,
                seed,
                counter: progress.counter(),
            },
        )
    };
    let rows: u64 = try_join_all((0..jobs).map(job)).await?.iter().sum();
    let copy_secs = started.elapsed().as_secs_f64();

    progress.phase("creating primary keys and indexes ...");
    let t = Instant::now();
    let statements: Vec<String> = indexes
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("--"))
        .map(String::from)
        .collect();
    run_parallel(target, statements, plan.jobs).await?;
    progress.phase("analyze ...");
    let analyze = TABLES[..9].iter().map(|t| format!("ANALYZE {t}")).collect();
    run_parallel(target, analyze, plan.jobs).await?;
    let index_secs = t.elapsed().as_secs_f64();

    let meta = format!(
        "CREATE TABLE tpcc_meta (warehouses int NOT NULL, c_last_load int NOT NULL, \
           c_last_run int NOT NULL, c_id_run int NOT NULL, ol_i_id_run int NOT NULL, \
           loaded_at timestamptz NOT NULL DEFAULT now());\n\
         INSERT INTO tpcc_meta (warehouses, c_last_load, c_last_run, c_id_run, ol_i_id_run) \
           VALUES ({warehouses}, {c_load}, {C_LAST_RUN}, {C_ID_RUN}, {OL_I_ID_RUN});"
    );
    control
        .batch_execute(&meta)
        .await
        .map_err(|e| db_error(target, "writing tpcc_meta", &e))?;
    drop(progress);
    eprintln!(
        "prepared TPC-C with {warehouses} warehouses in target '{}': {rows} rows in {:.2} s \
         (copy {copy_secs:.2} s, keys, indexes and analyze {index_secs:.2} s)",
        target.label,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

async fn existing_tables(
    client: &Client,
    target: &ResolvedTarget,
) -> Result<Vec<String>, WorkloadError> {
    let names: Vec<&str> = TABLES.to_vec();
    Ok(client
        .query(
            "SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NOT NULL",
            &[&names],
        )
        .await
        .map_err(|e| db_error(target, "looking for TPC-C tables", &e))?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Runs `statements` over up to `jobs` sessions, each taking the next one when done.
async fn run_parallel(
    target: &ResolvedTarget,
    statements: Vec<String>,
    jobs: u32,
) -> Result<(), WorkloadError> {
    let statements = Arc::new(statements);
    let next = Arc::new(AtomicU32::new(0));
    let sessions = (jobs.max(1) as usize).min(statements.len());
    try_join_all((0..sessions).map(|_| {
        let (statements, next) = (Arc::clone(&statements), Arc::clone(&next));
        async move {
            let client = connect(target).await?;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(sql) = statements.get(i) else {
                    return Ok::<(), WorkloadError>(());
                };
                client
                    .batch_execute(sql)
                    .await
                    .map_err(|e| db_error(target, sql, &e))?;
            }
        }
    }))
    .await?;
    Ok(())
}

/// What every loader session needs.
struct Shared {
    /// The load's timestamp (C_SINCE, O_ENTRY_D, ...), as SQL text.
    now: String,
    c_load: i64,
    seed: u64,
    counter: Arc<AtomicU64>,
}

/// One loader session: takes units until none is left; returns the rows it loaded.
async fn load_units(
    target: &ResolvedTarget,
    next: Arc<AtomicU32>,
    warehouses: u32,
    shared: Shared,
) -> Result<u64, WorkloadError> {
    let client = connect(target).await?;
    let mut rows = 0;
    loop {
        let unit = next.fetch_add(1, Ordering::Relaxed);
        if unit > warehouses {
            return Ok(rows);
        }
        let mut rng = Rng::seed_from_u64(shared.seed ^ u64::from(unit).wrapping_mul(0x9e37));
        let mut load = Loader {
            client: &client,
            target,
            shared: &shared,
            rng: &mut rng,
        };
        rows += if unit == 0 {
            load.items().await?
        } else {
            load.warehouse(i64::from(unit)).await?
        };
    }
}

/// One COPY in progress: rows are appended as text to `buf`, sent in ~256 KiB chunks.
struct Copy<'a> {
    sink: Pin<Box<CopyInSink<Bytes>>>,
    buf: String,
    rows: u64,
    counter: &'a AtomicU64,
    target: &'a ResolvedTarget,
    what: String,
}

impl Copy<'_> {
    /// Ends the current row; sends the buffer when it is full.
    async fn end_row(&mut self) -> Result<(), WorkloadError> {
        self.buf.pop(); // the trailing tab of the last field
        self.buf.push('\n');
        self.rows += 1;
        if self.buf.len() >= CHUNK_BYTES {
            self.send().await?;
        }
        Ok(())
    }

    async fn send(&mut self) -> Result<(), WorkloadError> {
        let chunk = Bytes::from(std::mem::take(&mut self.buf).into_bytes());
        self.buf.reserve(CHUNK_BYTES + 1024);
        self.sink
            .feed(chunk)
            .await
            .map_err(|e| db_error(self.target, &self.what, &e))?;
        self.counter.fetch_add(self.rows, Ordering::Relaxed);
        self.rows = 0;
        Ok(())
    }

    async fn finish(mut self) -> Result<u64, WorkloadError> {
        self.send().await?;
        self.sink
            .as_mut()
            .finish()
            .await
            .map_err(|e| db_error(self.target, &self.what, &e))
    }

    /// Appends one field and its separator.
    fn field(&mut self, v: impl std::fmt::Display) {
        use std::fmt::Write as _;
        let _ = write!(self.buf, "{v}\t");
    }

    fn null(&mut self) {
        self.buf.push_str("\\N\t");
    }

    fn sep(&mut self) {
        self.buf.push('\t');
    }
}

struct Loader<'a> {
    client: &'a Client,
    target: &'a ResolvedTarget,
    shared: &'a Shared,
    rng: &'a mut Rng,
}

impl<'a> Loader<'a> {
    async fn copy(&self, table: &str) -> Result<Copy<'a>, WorkloadError> {
        let what = format!("loading {table}");
        let sink = self
            .client
            .copy_in::<_, Bytes>(&format!("COPY {table} FROM STDIN"))
            .await
            .map_err(|e| db_error(self.target, &what, &e))?;
        Ok(Copy {
            sink: Box::pin(sink),
            buf: String::with_capacity(CHUNK_BYTES + 1024),
            rows: 0,
            counter: &self.shared.counter,
            target: self.target,
            what,
        })
    }

    /// ITEM: 100,000 rows (clause 4.3.3.1).
    async fn items(&mut self) -> Result<u64, WorkloadError> {
        let mut c = self.copy("item").await?;
        for i_id in 1..=ITEMS {
            c.field(i_id);
            c.field(self.rng.gen_range(1..=10_000));
            push_astring(&mut c.buf, self.rng, 14, 24);
            c.sep();
            push_decimal(&mut c.buf, self.rng, 100, 10_000, 2);
            c.sep();
            push_data(&mut c.buf, self.rng);
            c.sep();
            c.end_row().await?;
        }
        c.finish().await
    }

    /// Name, street 1 and 2, city, state, zip: the address of warehouses, districts and
    /// customers (clause 4.3.3.1).
    fn address(&mut self, c: &mut Copy<'_>, name: Option<(usize, usize)>) {
        if let Some((lo, hi)) = name {
            push_astring(&mut c.buf, self.rng, lo, hi);
            c.sep();
        }
        for _ in 0..3 {
            push_astring(&mut c.buf, self.rng, 10, 20);
            c.sep();
        }
        push_astring(&mut c.buf, self.rng, 2, 2);
        c.sep();
        push_zip(&mut c.buf, self.rng);
        c.sep();
    }

    /// Every row belonging to warehouse `w`.
    async fn warehouse(&mut self, w: i64) -> Result<u64, WorkloadError> {
        let mut rows = 0;
        let mut c = self.copy("warehouse").await?;
        c.field(w);
        self.address(&mut c, Some((6, 10)));
        push_decimal(&mut c.buf, self.rng, 0, 2000, 4);
        c.sep();
        c.field("300000.00");
        c.end_row().await?;
        rows += c.finish().await?;

        let mut c = self.copy("district").await?;
        for d in 1..=DISTRICTS {
            c.field(d);
            c.field(w);
            self.address(&mut c, Some((6, 10)));
            push_decimal(&mut c.buf, self.rng, 0, 2000, 4);
            c.sep();
            c.field("30000.00");
            c.field(ORDERS_PER_DISTRICT + 1);
            c.end_row().await?;
        }
        rows += c.finish().await?;
        rows += self.stock(w).await?;
        rows += self.customers(w).await?;
        rows += self.orders(w).await?;
        Ok(rows)
    }

    async fn stock(&mut self, w: i64) -> Result<u64, WorkloadError> {
        let mut c = self.copy("stock").await?;
        for i in 1..=ITEMS {
            c.field(i);
            c.field(w);
            c.field(self.rng.gen_range(10..=100));
            for _ in 0..10 {
                push_astring(&mut c.buf, self.rng, 24, 24);
                c.sep();
            }
            c.buf.push_str("0\t0\t0\t");
            push_data(&mut c.buf, self.rng);
            c.sep();
            c.end_row().await?;
        }
        c.finish().await
    }

    /// CUSTOMER and HISTORY (one history row per customer).
    async fn customers(&mut self, w: i64) -> Result<u64, WorkloadError> {
        let now = self.shared.now.clone();
        let mut c = self.copy("customer").await?;
        for d in 1..=DISTRICTS {
            for id in 1..=CUSTOMERS_PER_DISTRICT {
                c.field(id);
                c.field(d);
                c.field(w);
                push_astring(&mut c.buf, self.rng, 8, 16);
                c.buf.push_str("\tOE\t");
                // Clause 4.3.3.1: the first 1,000 customers take every name once, the rest
                // NURand(255, 0, 999) with the load's C.
                let num = if id <= 1000 {
                    id - 1
                } else {
                    nurand(self.rng, 255, 0, 999, self.shared.c_load)
                };
                push_last_name(&mut c.buf, num);
                c.sep();
                self.address(&mut c, None);
                push_nstring(&mut c.buf, self.rng, 16, 16);
                c.sep();
                c.field(&now);
                c.field(if self.rng.gen_range(0..10) == 0 {
                    "BC"
                } else {
                    "GC"
                });
                c.field("50000.00");
                push_decimal(&mut c.buf, self.rng, 0, 5000, 4);
                c.buf.push_str("\t-10.00\t10.00\t1\t0\t");
                push_astring(&mut c.buf, self.rng, 300, 500);
                c.sep();
                c.end_row().await?;
            }
        }
        let mut rows = c.finish().await?;

        let mut c = self.copy("history").await?;
        for d in 1..=DISTRICTS {
            for id in 1..=CUSTOMERS_PER_DISTRICT {
                c.field(id);
                c.field(d);
                c.field(w);
                c.field(d);
                c.field(w);
                c.field(&now);
                c.field("10.00");
                push_astring(&mut c.buf, self.rng, 12, 24);
                c.sep();
                c.end_row().await?;
            }
        }
        rows += c.finish().await?;
        Ok(rows)
    }

    /// ORDER (customers in a random permutation), NEW-ORDER (the last 900 per district) and
    /// ORDER-LINE (5-15 per order; delivered orders have a date and amount 0).
    async fn orders(&mut self, w: i64) -> Result<u64, WorkloadError> {
        let now = self.shared.now.clone();
        let mut line_counts: Vec<i64> =
            Vec::with_capacity((DISTRICTS * ORDERS_PER_DISTRICT) as usize);
        let mut customers: Vec<i64> = (1..=CUSTOMERS_PER_DISTRICT).collect();
        let mut c = self.copy("orders").await?;
        for d in 1..=DISTRICTS {
            customers.shuffle(self.rng);
            for o in 1..=ORDERS_PER_DISTRICT {
                let lines = self.rng.gen_range(5..=15);
                line_counts.push(lines);
                c.field(o);
                c.field(d);
                c.field(w);
                c.field(customers[(o - 1) as usize]);
                c.field(&now);
                if o < FIRST_NEW_ORDER {
                    c.field(self.rng.gen_range(1..=10));
                } else {
                    c.null();
                }
                c.field(lines);
                c.field(1);
                c.end_row().await?;
            }
        }
        let mut rows = c.finish().await?;

        let mut c = self.copy("new_order").await?;
        for d in 1..=DISTRICTS {
            for o in FIRST_NEW_ORDER..=ORDERS_PER_DISTRICT {
                c.field(o);
                c.field(d);
                c.field(w);
                c.end_row().await?;
            }
        }
        rows += c.finish().await?;

        let mut c = self.copy("order_line").await?;
        let mut counts = line_counts.iter();
        for d in 1..=DISTRICTS {
            for o in 1..=ORDERS_PER_DISTRICT {
                let n = counts.next().copied().unwrap_or(5);
                for number in 1..=n {
                    c.field(o);
                    c.field(d);
                    c.field(w);
                    c.field(number);
                    c.field(self.rng.gen_range(1..=ITEMS));
                    c.field(w);
                    if o < FIRST_NEW_ORDER {
                        c.field(&now);
                    } else {
                        c.null();
                    }
                    c.field(5);
                    if o < FIRST_NEW_ORDER {
                        c.field("0.00");
                    } else {
                        push_decimal(&mut c.buf, self.rng, 1, 999_999, 2);
                        c.sep();
                    }
                    push_astring(&mut c.buf, self.rng, 24, 24);
                    c.sep();
                    c.end_row().await?;
                }
            }
        }
        rows += c.finish().await?;
        Ok(rows)
    }
}

/// Checks that a complete TPC-C load is there and returns its warehouse count.
pub async fn check_ready(client: &Client) -> Result<u32, WorkloadError> {
    const HOW: &str = "run `tidebench prepare --workload tpcc --warehouses W` first";
    let meta = client
        .query_opt("SELECT warehouses, c_last_load FROM tpcc_meta LIMIT 1", &[])
        .await;
    let row = match meta {
        Ok(Some(row)) => row,
        Ok(None) => {
            return Err(WorkloadError::NotPrepared(format!(
            "tpcc_meta is empty, so the TPC-C load is incomplete; {HOW} (add `--force` to reload)"
        )))
        }
        // An undefined table: no (complete) TPC-C load here.
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
            return Err(WorkloadError::NotPrepared(format!(
                "target has no complete TPC-C load (no tpcc_meta table); {HOW} \
                 (add `--force` if a load was interrupted)"
            )))
        }
        Err(e) => {
            return Err(WorkloadError::Database(format!(
                "checking the TPC-C tables failed: {}",
                describe_pg_error(&e)
            )))
        }
    };
    let warehouses: i32 = row.get(0);
    let c_load: i32 = row.get(1);
    if !c_last_delta_ok(i64::from(c_load), C_LAST_RUN) {
        return Err(WorkloadError::NotPrepared(format!(
            "the TPC-C data was loaded with C_LAST constant {c_load}, which breaks the delta \
             rule of clause 2.1.6.1 with this tidebench's run constant {C_LAST_RUN}; reload \
             with `tidebench prepare --workload tpcc --warehouses {warehouses} --force`"
        )));
    }
    u32::try_from(warehouses)
        .ok()
        .filter(|&w| w > 0)
        .ok_or_else(|| {
            WorkloadError::NotPrepared(format!(
                "tpcc_meta says {warehouses} warehouses; {HOW} (add `--force` to reload)"
            ))
        })
}
