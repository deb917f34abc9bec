//! The test cases a retail client runs, the Greenplum study's operations as transaction types on the
//! `dss` role: the two reports, one statement each, and `load`, its "Data Loading" as a run's
//! transaction.
//!
//! `load` copies the orders that would follow the fact table's five years, each client its own
//! range of them, into a table of its own with the fact table's columns (`retail_load_<client>`,
//! made on first use), emptied first in the same transaction. So every execution is the same
//! work however often it runs, and the reports' answers and `check` never change under it. It
//! runs on the client's own session (pgwire's COPY), so it is timed, cut by `--txn-timeout`
//! and cancelled by Ctrl-C as the reports are; N clients running it are N streams. The bytes
//! of COPY text it sent are kept (see `Volume`), for MB/s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rand::Rng as _;

use super::gen::{self, Size};
use super::{FULL_SCAN, PARTIAL_SCAN};
use crate::results::Volume;
use crate::workload::{ClientSlot, Rng, Terminal, TxnEnd, TxnFuture, TxnType, Workload};

/// The types, in the order results name them.
pub const TYPES: [&str; 3] = ["full_scan", "partial_scan", "load"];
const LOAD: usize = 2;
/// The cases drawn when `--cases` is not given: the reports (a load is asked for).
pub const DEFAULT_CASES: [&str; 2] = ["full_scan", "partial_scan"];
/// Line items generated per CopyData message of a `load`.
const CHUNK_ROWS: u64 = 5_000;

/// What one `load` copies: line items of a load of `size`, each client from its own first id
/// on (`spacing` ids apart), up to `amount`.
#[derive(Debug, Clone, Copy)]
pub struct LoadSpec {
    pub size: Size,
    pub amount: Amount,
    pub spacing: u64,
}

/// How much one `load` copies.
#[derive(Debug, Clone, Copy)]
pub enum Amount {
    Rows(u64),
    /// Bytes of COPY text, to the end of the line that reaches them.
    Bytes(u64),
}

#[derive(Debug)]
pub struct Retail {
    types: Vec<TxnType>,
    /// The types clients draw, as indexes into `types`.
    cases: Vec<usize>,
    load: LoadSpec,
    loaded: Arc<LoadSums>,
}

/// Every client's completed loads, added up.
#[derive(Debug, Default)]
struct LoadSums {
    executions: AtomicU64,
    rows: AtomicU64,
    bytes: AtomicU64,
    busy_ns: AtomicU64,
}

impl Retail {
    /// The workload drawing `cases` (names out of [`TYPES`]; checked by the option's kind).
    pub fn new(cases: &[String], load: LoadSpec) -> Retail {
        Retail {
            types: TYPES.iter().map(|t| TxnType::new(*t, "dss")).collect(),
            cases: cases
                .iter()
                .filter_map(|c| TYPES.iter().position(|t| t == c))
                .collect(),
            load,
            loaded: Arc::default(),
        }
    }
}

impl Workload for Retail {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        Box::new(RetailTerminal {
            txn: 0,
            first_id: self.load.size.rows + u64::from(slot.index) * self.load.spacing,
            load_sql: load_sql(&format!("retail_load_{}", slot.index)),
            workload: self,
        })
    }

    fn volumes(&self) -> Vec<Volume> {
        let l = &self.loaded;
        let executions = l.executions.load(Ordering::Relaxed);
        if executions == 0 {
            return Vec::new();
        }
        vec![Volume {
            txn_type: TYPES[LOAD].into(),
            executions,
            rows: l.rows.load(Ordering::Relaxed),
            bytes: l.bytes.load(Ordering::Relaxed),
            busy_s: l.busy_ns.load(Ordering::Relaxed) as f64 / 1e9,
        }]
    }
}

/// A stream of test cases: which one runs next, and where this client's loads go.
struct RetailTerminal {
    workload: Arc<Retail>,
    txn: usize,
    /// The first line-item id of this client's loads.
    first_id: u64,
    /// Its load: into its own table, made if new and emptied first.
    load_sql: String,
}

/// One load's statements into `table`: one transaction, the COPY last.
fn load_sql(table: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {table} (LIKE order_lineitems); TRUNCATE {table}; \
         COPY {table} FROM STDIN"
    )
}

impl Terminal for RetailTerminal {
    fn next_type(&mut self, rng: &mut Rng) -> usize {
        let cases = &self.workload.cases;
        cases[rng.gen_range(0..cases.len())]
    }

    fn draw(&mut self, txn: usize, _rng: &mut Rng) {
        self.txn = txn;
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        _protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        Box::pin(async move {
            match self.txn {
                0 => conn.simple_query(FULL_SCAN).await.map(drop)?,
                1 => conn.simple_query(PARTIAL_SCAN).await.map(drop)?,
                _ => self.load(conn).await?,
            }
            Ok(TxnEnd::Committed)
        })
    }
}

impl RetailTerminal {
    /// One `load`: the table made if new, emptied, and this client's rows copied in, all one
    /// transaction; the bytes sent are counted once it commits.
    async fn load(&self, conn: &mut pgwire::Connection) -> Result<(), pgwire::Error> {
        let LoadSpec { size, amount, .. } = self.workload.load;
        let (end, limit) = match amount {
            Amount::Rows(n) => (self.first_id + n, u64::MAX),
            Amount::Bytes(b) => (u64::MAX, b),
        };
        let mut from = self.first_id;
        let mut bytes = 0u64;
        let started = Instant::now();
        let copied = conn
            .copy_in(&self.load_sql, |text| {
                let to = (from + CHUNK_ROWS).min(end);
                gen::copy_rows(&size, from, to, text);
                from = to;
                let left = (limit - bytes) as usize;
                if text.len() >= left {
                    // The line that reaches the limit ends the load.
                    let cut = text[left.max(1) - 1..]
                        .find('\n')
                        .map_or(text.len(), |i| left.max(1) + i);
                    text.truncate(cut);
                    from = end;
                }
                bytes += text.len() as u64;
                from < end
            })
            .await?
            .affected();
        let sums = &self.workload.loaded;
        sums.executions.fetch_add(1, Ordering::Relaxed);
        sums.rows.fetch_add(copied, Ordering::Relaxed);
        sums.bytes.fetch_add(bytes, Ordering::Relaxed);
        let ns = started.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        sums.busy_ns.fetch_add(ns, Ordering::Relaxed);
        Ok(())
    }
}
