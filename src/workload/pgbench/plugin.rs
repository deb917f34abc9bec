//! pgbench's three scripts as registered workloads (`tpcb`, `select-only` with `-S`,
//! `simple-update` with `-N`): one family on the same four tables, each naming the script a
//! group runs when its phase gives no mix.

use std::sync::Arc;

use crate::config::{OptionSpec, OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::target::ResolvedTarget;
use crate::workload::{
    ClientSlot, Kind, Loaded, Pending, Rng, Terminal, TxnFuture, TxnType, Workload, WorkloadError,
};

use super::init::{self, InitOptions};
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
    /// `pgbench -i`'s options: the three scripts load the same tables.
    fn options(&self) -> &'static [OptionSpec] {
        init::OPTIONS
    }
    fn option_shorts(&self) -> &'static [(&'static str, char)] {
        init::SHORTS
    }
    /// Checks the load options together, as pgbench does; the defaults stay out, so a run's
    /// recorded options are the ones given.
    fn resolve_options(&self, given: &OptionValues) -> Result<OptionValues, String> {
        InitOptions::from_values(given)?;
        Ok(given.clone())
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

    fn build(&self, scale: u32, _options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        Ok(Arc::new(Pgbench::new(self.index, scale)))
    }
}

impl Workload for Pgbench {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn terminal(self: Arc<Self>, _slot: ClientSlot) -> Box<dyn Terminal> {
        Box::new(PgbenchTerminal {
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

/// A pgbench client: the drawn script and its variables.
struct PgbenchTerminal {
    workload: Arc<Pgbench>,
    txn: usize,
    args: Args,
}

impl Terminal for PgbenchTerminal {
    fn next_type(&mut self, rng: &mut Rng) -> usize {
        self.workload.draw_txn(rng)
    }

    fn draw(&mut self, txn: usize, rng: &mut Rng) {
        self.txn = txn;
        self.args = self.workload.draw_args(txn, rng);
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        Box::pin(self.workload.execute(conn, protocol, self.txn, &self.args))
    }
}
