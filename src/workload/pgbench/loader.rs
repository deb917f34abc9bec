//! `prepare` for pgbench's tables: what `pgbench -i` (PostgreSQL 15) with the same options
//! leaves (see `init` and `schema`), rows loaded with parallel binary COPY (`g`) or
//! server-side `generate_series` (`G`), and swapped in only once complete.
//!
//! Staged (a step list that creates the tables, e.g. the default `dtgvp`): take the
//! per-database load lock; refuse if the tables exist (unless `--force` and the list drops them,
//! as `pgbench -i` does); drop the old tables (`d`); create the tables in tidebench's staging
//! schema (`t`, dropping what an interrupted load left there); run the other steps there, in
//! order, with unqualified names as pgbench sends them, so indexes, constraints and partitions
//! get pgbench's names; finally, in one transaction, move every table into the target schema.
//! Interrupted anywhere (error, Ctrl-C dropping this future, server crash), the target schema
//! holds no table under pgbench's names that looks complete.
//!
//! In place (any other list, e.g. `-I g`, `-I vp`, `-I f`): each step on the tables under
//! pgbench's names, in order, as pgbench does. A generation step there is one transaction on
//! one session (truncate, then the rows), as pgbench's, so it too never leaves half the rows.
//!
//! `COPY ... FREEZE` (what pgbench 14+ uses: rows written frozen and all-visible, so the
//! vacuum has nothing to do) needs the table created or truncated in the loading transaction,
//! hence a single session, and a table that is not partitioned. With more jobs, rows are
//! written plain and the vacuum sets the same all-visible state, at the cost of one more pass.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use tokio_postgres::Client;

use super::generate::{self, Generation};
use super::init::{InitOptions, Step};
use super::schema::{self, NAMES};
use crate::config::PreparePlan;
use crate::event::{Event, LoadSummary, Sink};
use crate::target::{describe_pg_error, ResolvedTarget};
use crate::workload::kit::staging::{self, STAGING};
use crate::workload::kit::{lock, Progress};
use crate::workload::WorkloadError;

/// Where the steps' unqualified names point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// tidebench's staging schema, moved in at the end.
    Staging,
    /// The target schema: pgbench's tables themselves.
    InPlace,
}

/// Creates pgbench's tables at `plan.scale` with `plan.options` (pgbench -i's) in `target`,
/// as `pgbench -i` would; progress and the summary go to `events`.
pub async fn prepare(
    plan: &PreparePlan,
    target: &ResolvedTarget,
    events: &Arc<dyn Sink>,
) -> Result<(), WorkloadError> {
    if plan.scale == 0 {
        return Err(WorkloadError::NoRows {
            flag: "--scale",
            alias: " (pgbench's -s)",
        });
    }
    let init =
        InitOptions::from_values(&plan.options).map_err(|message| WorkloadError::LoadOption {
            option: "pgbench -i",
            message,
        })?;
    let started = Instant::now();
    let control = connect(target, Place::InPlace).await?;
    lock::take(&control, target, "pgbench tables").await?;
    let schema = staging::target_schema(&control, target).await?;
    let existing = staging::existing_tables(&control, target, &schema, &NAMES).await?;
    refuse_existing(&init, &existing, plan.force, target)?;

    let mut load = Load {
        target,
        init: &init,
        scale: plan.scale,
        jobs: plan.jobs,
        place: Place::InPlace,
        events,
        progress: None,
        rows: 0,
        times: Vec::new(),
    };
    match init.staged() {
        Some((drops, rest)) => {
            if drops && !existing.is_empty() {
                // As `pgbench -i`: the old tables go first. Kept until the move, their pages
                // still being written back competed with the load (scale 50: 5.7 s against
                // 4.7 s); dropped, the kernel discards them unwritten.
                run(
                    &control,
                    target,
                    "dropping the old tables",
                    &schema::drop_sql(),
                )
                .await?;
            }
            let mut create = schema::create_sql(plan.scale, &init, true).join(";\n");
            create.push(';');
            staging::create_fresh(&control, target, &create, "pgbench").await?;
            load.place = Place::Staging;
            for step in rest {
                load.step(*step).await?;
            }
            let mv = move_sql(&init, &schema);
            run(&control, target, "moving in the loaded tables", &mv).await?;
        }
        None => {
            for step in &init.steps {
                load.step(*step).await?;
            }
        }
    }
    load.finish(started);
    Ok(())
}

/// Refuses to touch existing tables that the steps would drop or refill without `--force`,
/// and a staged list that would create them again without dropping them (pgbench fails on
/// its `create table` there).
fn refuse_existing(
    init: &InitOptions,
    existing: &[String],
    force: bool,
    target: &ResolvedTarget,
) -> Result<(), WorkloadError> {
    if existing.is_empty() {
        return Ok(());
    }
    if let Some((false, _)) = init.staged() {
        return Err(WorkloadError::CreateOverExisting {
            target: target.label.clone(),
            tables: existing.to_vec(),
        });
    }
    if init.replaces_rows() && !force {
        return Err(WorkloadError::AlreadyPrepared {
            target: target.label.clone(),
            what: "pgbench tables",
            tables: existing.to_vec(),
        });
    }
    Ok(())
}

/// The last step of a staged load, one transaction: old tables out (dropped again in case
/// another session created them meanwhile: the load lock keeps out only other `prepare`s),
/// autovacuum back on, every table (partitions too: they do not follow their parent) into
/// `schema`, the staging schema gone.
fn move_sql(init: &InitOptions, schema: &str) -> String {
    let target = staging::ident(schema);
    let old: Vec<String> = NAMES.iter().map(|t| format!("{target}.{t}")).collect();
    let mut sql = format!("begin;\ndrop table if exists {};\n", old.join(", "));
    for t in schema::leaf_tables(init) {
        sql.push_str(&schema::reset_autovacuum_sql(&format!("{STAGING}.{t}")));
        sql.push_str(";\n");
    }
    for t in schema::all_tables(init) {
        sql.push_str(&format!("alter table {STAGING}.{t} set schema {target};\n"));
    }
    sql.push_str(&format!("drop schema {STAGING};\ncommit;\n"));
    sql
}

/// One load under way: what the steps need and what they have to tell.
pub(super) struct Load<'a> {
    pub target: &'a ResolvedTarget,
    pub init: &'a InitOptions,
    pub scale: u32,
    pub jobs: u32,
    pub place: Place,
    events: &'a Arc<dyn Sink>,
    progress: Option<Progress>,
    rows: u64,
    times: Vec<(String, Duration)>,
}

impl Load<'_> {
    async fn step(&mut self, step: Step) -> Result<(), WorkloadError> {
        let t = Instant::now();
        match step {
            Step::Drop => self.once("dropping tables", &schema::drop_sql()).await?,
            Step::Create => {
                let sql = schema::create_sql(self.scale, self.init, false).join(";\n");
                self.once("creating tables", &sql).await?;
            }
            Step::ClientGenerate => self.generate(Generation::Client).await?,
            Step::ServerGenerate => self.generate(Generation::Server).await?,
            Step::Vacuum => self.vacuum().await?,
            Step::PrimaryKeys => {
                self.announce("creating primary keys ...");
                run_each(self.target, self.place, schema::primary_keys_sql(self.init)).await?;
            }
            Step::ForeignKeys => {
                self.announce("creating foreign keys ...");
                let sql = schema::foreign_keys_sql();
                self.once("creating foreign keys", &sql).await?;
            }
        }
        if let Some(label) = step.timed_label() {
            self.times.push((label.to_string(), t.elapsed()));
        }
        Ok(())
    }

    /// `sql` on a session of its own (one implicit transaction).
    async fn once(&self, what: &str, sql: &str) -> Result<(), WorkloadError> {
        let client = connect(self.target, self.place).await?;
        run(&client, self.target, what, sql).await
    }

    /// `g` or `G`: a fresh row count, then the rows.
    async fn generate(&mut self, how: Generation) -> Result<(), WorkloadError> {
        let total = generate::total_rows(self.scale);
        // A second generation (`-I dtgG`) starts its own count, as pgbench's.
        drop(self.progress.take());
        let progress = Progress::start("pgbench tables", total, Arc::clone(self.events));
        let counter = progress.counter();
        self.progress = Some(progress);
        self.rows = generate::rows(self, how, counter).await?;
        Ok(())
    }

    /// `v`: `VACUUM ANALYZE` of the four tables, each on its own session (pgbench's order;
    /// after the keys when the list says so, like pgbench's).
    async fn vacuum(&mut self) -> Result<(), WorkloadError> {
        self.announce("vacuum analyze ...");
        let sqls = schema::TABLES
            .iter()
            .map(|t| format!("vacuum analyze {}", t.name))
            .collect();
        run_each(self.target, self.place, sqls).await?;
        revacuum_not_all_visible(self).await
    }

    /// Ends the row count, if any, and says what comes next.
    fn announce(&mut self, what: &str) {
        match self.progress.as_mut() {
            Some(p) => p.phase(what),
            None => self.events.send(Event::LoadStep(what.to_string())),
        }
    }

    fn finish(mut self, started: Instant) {
        drop(self.progress.take());
        self.events.send(Event::LoadFinished(LoadSummary {
            what: format!("pgbench scale {}", self.scale),
            target: self.target.label.clone(),
            rows: self.rows,
            elapsed: started.elapsed(),
            steps: std::mem::take(&mut self.times),
        }));
    }
}

/// Vacuums again the tables a first VACUUM left with pages not all-visible. That happens
/// when an asynchronous commit elsewhere on the server shares the loaded rows' commit-log
/// group and its WAL is not flushed yet (see [`connect`]; CI saw it once). A transaction that
/// takes an xid and commits synchronously flushes the WAL up to it first.
async fn revacuum_not_all_visible(load: &Load<'_>) -> Result<(), WorkloadError> {
    let (target, place) = (load.target, load.place);
    let names = schema::leaf_tables(load.init);
    let client = connect(target, place).await?;
    let rows = client
        .query(
            "select relname::text from pg_class \
             where relnamespace = (select oid from pg_namespace where nspname = current_schema()) \
               and relname = any($1) \
               and relkind = 'r' and relallvisible < relpages",
            &[&names],
        )
        .await
        .map_err(|e| db_error(target, "checking the vacuum", &e))?;
    if rows.is_empty() {
        return Ok(());
    }
    run(&client, target, "flushing the WAL", "select txid_current()").await?;
    let sqls = rows
        .iter()
        .map(|r| format!("vacuum {}", r.get::<_, String>(0)))
        .collect();
    run_each(target, place, sqls).await
}

/// Opens a session for loading, its unqualified names `place`'s. Its commits are synchronous
/// whatever the server default: VACUUM marks a page all-visible only once it could set its
/// rows' "committed" hint bits, and it cannot while the commit-log LSN group of their
/// transaction (32 consecutive xids) holds an async commit whose WAL is not yet flushed. With
/// async commits here, pages were left not all-visible, unlike after `pgbench -i`.
pub(super) async fn connect(
    target: &ResolvedTarget,
    place: Place,
) -> Result<Client, WorkloadError> {
    let client = target.connect_tokio().await?;
    let mut setup = String::from("set synchronous_commit = on");
    if place == Place::Staging {
        setup.push_str(&format!(";\nset search_path to {STAGING}"));
    }
    run(&client, target, "setting up the session", &setup).await?;
    Ok(client)
}

pub(super) fn db_error(
    target: &ResolvedTarget,
    what: &str,
    e: &tokio_postgres::Error,
) -> WorkloadError {
    WorkloadError::Server {
        target: target.label.clone(),
        what: what.to_string(),
        message: describe_pg_error(e),
    }
}

pub(super) async fn run(
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

/// Runs each statement on its own session, all at once (VACUUM and index builds of
/// different tables do not wait on each other).
async fn run_each(
    target: &ResolvedTarget,
    place: Place,
    sqls: Vec<String>,
) -> Result<(), WorkloadError> {
    try_join_all(sqls.into_iter().map(|sql| async move {
        let client = connect(target, place).await?;
        run(&client, target, &format!("`{sql}`"), &sql).await
    }))
    .await
    .map(|_| ())
}

/// Adds `n` rows to the progress count.
pub(super) fn count(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_move_takes_every_table_in_one_transaction() {
        let init = InitOptions {
            partitions: 2,
            ..InitOptions::default()
        };
        let sql = move_sql(&init, "public");
        assert!(sql.starts_with(
            "begin;\ndrop table if exists \"public\".pgbench_accounts, \"public\".pgbench_branches"
        ));
        assert!(sql.contains(
            "alter table tidebench_staging.pgbench_accounts_2 reset (autovacuum_enabled);"
        ));
        // The partitioned parent takes no storage options.
        assert!(!sql.contains("tidebench_staging.pgbench_accounts reset"));
        assert!(
            sql.contains("alter table tidebench_staging.pgbench_accounts_1 set schema \"public\";")
        );
        assert!(sql.ends_with("drop schema tidebench_staging;\ncommit;\n"));
    }
}
