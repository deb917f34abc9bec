//! pgbench's built-in scripts (tpcb-like, select-only, simple-update) over pgbench's own schema.
//! (Skeleton: to be filled in.)

use crate::config::{PreparePlan, WorkloadName};
use crate::target::ResolvedTarget;

use super::{Rng, TxnEnd, WorkloadError};

#[derive(Debug, Clone)]
pub struct Pgbench {
    pub name: WorkloadName,
    pub scale: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct Args {
    pub aid: i64,
    pub bid: i64,
    pub tid: i64,
    pub delta: i64,
}

impl Pgbench {
    pub fn new(name: WorkloadName, scale: u32) -> Pgbench {
        Pgbench { name, scale }
    }
    pub fn name(&self) -> &'static str {
        self.name.as_str()
    }
    pub fn txn_types(&self) -> &'static [&'static str] {
        &["tpcb"]
    }
    pub fn draw_txn(&self, _rng: &mut Rng) -> usize {
        0
    }
    pub fn draw_args(&self, _txn: usize, _rng: &mut Rng) -> Args {
        Args { aid: 1, bid: 1, tid: 1, delta: 0 }
    }
    pub async fn execute(
        &self,
        _conn: &mut pgwire::Connection,
        _protocol: pgwire::Protocol,
        _txn: usize,
        _args: &Args,
    ) -> Result<TxnEnd, pgwire::Error> {
        Ok(TxnEnd::Committed)
    }
}

pub async fn check_ready(_name: WorkloadName, _client: &tokio_postgres::Client) -> Result<u32, WorkloadError> {
    Ok(1)
}

pub async fn prepare(_plan: &PreparePlan, _target: &ResolvedTarget) -> Result<(), WorkloadError> {
    Ok(())
}
