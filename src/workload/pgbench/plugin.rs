//! pgbench's three scripts as registered workloads (`tpcb`, `select-only` with `-S`,
//! `simple-update` with `-N`): one family on the same four tables, each naming the script a
//! group runs when its phase gives no mix.

use std::sync::Arc;

use crate::config::{OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::target::ResolvedTarget;
use crate::workload::{
    pg_prng::{PgPrng, PgbenchSeeds},
    ClientSlot, Kind, Loaded, Pending, Rng, Terminal, TxnFuture, TxnType, Workload, WorkloadError,
};

use super::{Args, Pgbench, SCRIPTS, SELECT_ONLY_TXN, SIMPLE_UPDATE_TXN, TPCB_TXN};

/// One of pgbench's built-in scripts as a workload.
pub struct Script {
    index: usize,
    about: &'static str,
    shorthand: Option<char>,
}

pub static TPCB: Script = Script {
    index: TPCB_TXN,
    about: "pgbench's default TPC-B-like script (7 statements per transaction)",
    shorthand: None,
};
pub static SELECT_ONLY: Script = Script {
    index: SELECT_ONLY_TXN,
    about: "pgbench -S: one primary-key lookup on pgbench_accounts",
    shorthand: Some('S'),
};
pub static SIMPLE_UPDATE: Script = Script {
    index: SIMPLE_UPDATE_TXN,
    about: "pgbench -N: TPC-B-like without the tellers and branches updates",
    shorthand: Some('N'),
};

impl WorkloadInfo for Script {
    fn name(&self) -> &'static str {
        SCRIPTS[self.index]
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn family(&self) -> &'static str {
        "pgbench"
    }
    fn shorthand(&self) -> Option<char> {
        self.shorthand
    }
    fn txn_type_names(&self) -> Vec<String> {
        SCRIPTS.iter().map(|s| s.to_string()).collect()
    }
}

impl Kind for Script {
    fn check_ready<'a>(
        &'a self,
        _options: &'a OptionValues,
        client: &'a tokio_postgres::Client,
    ) -> Pending<'a, Result<Loaded, WorkloadError>> {
        Box::pin(async move { super::check_ready(client).await.map(Loaded::scale) })
    }

    fn prepare<'a>(
        &'a self,
        plan: &'a PreparePlan,
        target: &'a ResolvedTarget,
        events: &'a Arc<dyn Sink>,
    ) -> Pending<'a, Result<(), WorkloadError>> {
        Box::pin(super::prepare(plan, target, events))
    }

    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        Ok(Arc::new(Built {
            pgbench: Pgbench::new(self.index, scale),
            seeds: crate::workload::pgbench_seeds(options),
        }))
    }
}

/// A built-in script for a run: the script and pgbench's seeding of the run's clients.
#[derive(Debug)]
struct Built {
    pgbench: Pgbench,
    seeds: PgbenchSeeds,
}

impl Workload for Built {
    fn txn_types(&self) -> &[TxnType] {
        &self.pgbench.types
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        Box::new(PgbenchTerminal {
            rng: self.seeds.client(slot.index),
            workload: self,
            txn: TPCB_TXN,
            args: Args {
                aid: 0,
                bid: 0,
                tid: 0,
                delta: 0,
            },
        })
    }
}

/// A pgbench client: the drawn script, its variables, kept for the retries (which replay
/// them, as pgbench 15's do), and its function state (pgbench's `cs_func_rs`).
struct PgbenchTerminal {
    workload: Arc<Built>,
    txn: usize,
    args: Args,
    rng: PgPrng,
}

impl Terminal for PgbenchTerminal {
    fn next_type(&mut self, rng: &mut Rng) -> usize {
        self.workload.pgbench.draw_txn(rng)
    }

    fn draw(&mut self, txn: usize, _rng: &mut Rng) {
        self.txn = txn;
        self.args = self.workload.pgbench.draw_args(txn, &mut self.rng);
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        Box::pin(
            self.workload
                .pgbench
                .execute(conn, protocol, self.txn, &self.args),
        )
    }
}
