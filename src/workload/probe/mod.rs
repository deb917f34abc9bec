//! `probe`: the smallest workload, with no tables. One `SELECT 1` type on each role a set can
//! have (`oltp_probe` on the `oltp` target, `dss_probe` on the `dss` target), drawn in turn.
//! It measures what a round trip and the driver cost on their own, checks that every target of
//! a run file answers, and shows a two-role set routing each type to its own database. Each
//! transaction is the statement's implicit transaction, so the server's commit count agrees.

use std::sync::Arc;

use pgwire::Statement;

use crate::config::{OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::target::ResolvedTarget;
use crate::workload::{
    ClientSlot, Loaded, Plugin, Rng, Terminal, TxnEnd, TxnFuture, TxnType, Workload, WorkloadError,
};

/// The roles, and one transaction type per role, in the same order.
const ROLES: &[&str] = &["oltp", "dss"];
const TYPES: [&str; 2] = ["oltp_probe", "dss_probe"];

const PROBE_OLTP: Statement = Statement {
    name: "probe_oltp",
    sql: "SELECT 1",
};
const PROBE_DSS: Statement = Statement {
    name: "probe_dss",
    sql: "SELECT 1",
};

/// The registered workload.
pub struct ProbeKind;

pub static PROBE: ProbeKind = ProbeKind;

impl WorkloadInfo for ProbeKind {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn about(&self) -> &'static str {
        "one SELECT 1 per role (oltp, dss), no tables: the driver's and a round trip's own cost"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }
    fn txn_type_names(&self) -> Vec<String> {
        TYPES.iter().map(|t| t.to_string()).collect()
    }
}

impl Plugin for ProbeKind {
    async fn check_ready(
        &self,
        _options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        client
            .simple_query("SELECT 1")
            .await
            .map_err(WorkloadError::query("the probe query"))?;
        Ok(Loaded::scale(1))
    }

    /// Nothing to load: checks that the target answers.
    async fn prepare(
        &self,
        _plan: &PreparePlan,
        target: &ResolvedTarget,
        _events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        let client = target.connect_tokio().await?;
        Plugin::check_ready(self, &OptionValues::new(), &client).await?;
        Ok(())
    }

    fn build(&self, _scale: u32, _options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        Ok(Arc::new(Probe {
            types: TYPES
                .iter()
                .zip(ROLES)
                .map(|(t, r)| TxnType::new(*t, *r))
                .collect(),
        }))
    }
}

#[derive(Debug)]
struct Probe {
    types: Vec<TxnType>,
}

impl Workload for Probe {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        Box::new(ProbeTerminal {
            // Clients start on different types, so an even client count splits evenly at once.
            next: slot.index as usize % TYPES.len(),
            txn: 0,
        })
    }
}

struct ProbeTerminal {
    next: usize,
    txn: usize,
}

impl Terminal for ProbeTerminal {
    fn next_type(&mut self, _rng: &mut Rng) -> usize {
        let t = self.next;
        self.next = (self.next + 1) % TYPES.len();
        t
    }

    fn draw(&mut self, txn: usize, _rng: &mut Rng) {
        self.txn = txn;
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        let statement = if self.txn == 0 {
            &PROBE_OLTP
        } else {
            &PROBE_DSS
        };
        Box::pin(async move {
            conn.execute(protocol, statement, &[]).await?;
            Ok(TxnEnd::Committed)
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn types_alternate_and_each_runs_on_its_role() {
        let w = PROBE.build(1, &OptionValues::new()).unwrap();
        let roles: Vec<&str> = w.txn_types().iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ROLES);
        let mut t = w.terminal(ClientSlot { index: 1, count: 2 });
        let mut rng = Rng::seed_from_u64(1);
        let drawn: Vec<usize> = (0..4).map(|_| t.next_type(&mut rng)).collect();
        assert_eq!(drawn, [1, 0, 1, 0]);
    }
}
