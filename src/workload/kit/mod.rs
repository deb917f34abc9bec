//! The loading kit every workload's `prepare` and readiness check stand on, so that a new
//! workload (TPC-H, CH-benCHmark) writes only its tables, its rows and its facts. A loader
//! uses it in this order (tpcc's and tpce's `loader.rs` are worked examples):
//!
//! 1. Check the load's knobs (`plan.scale`, `plan.options`) before touching the target; what
//!    only this workload can get wrong is a variant of its own error enum, in its folder,
//!    wrapped by one variant of [`WorkloadError`].
//! 2. [`staging::connect`] a control session and [`lock::take`] the load lock on it. Keep that
//!    session to the end: the lock is held as long as it lives, so no other `prepare` of the
//!    database (of any workload) drops the staging schema under this one.
//! 3. [`staging::target_schema`], then [`staging::existing_tables`]: tables already there are
//!    refused with [`WorkloadError::AlreadyPrepared`] unless `plan.force`.
//! 4. Split the workload's `schema.sql` at its `-- @indexes` line ([`staging::split_schema`])
//!    and [`staging::create_fresh`] the staging schema with the `CREATE TABLE` part.
//! 5. [`Progress::start`] with the rows expected; `plan.jobs` loader sessions
//!    ([`staging::connect_staging`]) COPY rows in ([`staging::copy_text`], or COPY of their
//!    own) and add them to [`Progress::counter`]. Then [`Progress::phase`] names each later
//!    step while [`staging::run_parallel`] builds keys and indexes (and ANALYZE) over the
//!    sessions.
//! 6. Write the `<workload>_meta` row into staging last ([`staging::in_staging`]) and move the
//!    tables into the target schema in one transaction ([`staging::move_sql`]): interrupted
//!    anywhere, the target is as it was. Drop the [`Progress`], then send
//!    `Event::LoadFinished`.
//! 7. Readiness, before every run: read the meta row with [`MetaTable::read`] (no table or no
//!    row: not prepared, with the `prepare` that fixes it), its scale with
//!    [`MetaTable::scale`], then whatever the run's options need; return a `Loaded` with the
//!    scale and the facts of the load the run must use.
//!
//! The workload itself is a [`crate::workload::Plugin`]: `check_ready`, `prepare`, `check`
//! and `build` as plain functions; the registry sees it as a [`crate::workload::Kind`].
//!
//! [`WorkloadError`]: crate::workload::WorkloadError
//! [`WorkloadError::AlreadyPrepared`]: crate::workload::WorkloadError::AlreadyPrepared

pub mod lock;
mod meta;
mod progress;
pub mod staging;

pub use meta::MetaTable;
pub use progress::Progress;
