//! TPC-C as a registered workload: its options (spec keying and think times, the PL/pgSQL
//! back end, clients per home warehouse), readiness and consistency checks, the headline NOTPM,
//! and a client's terminal (home warehouse and district, its own 23-card mix deck).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::results::TypeRule;
use crate::target::ResolvedTarget;
use crate::workload::{
    CheckOutcome, ClientSlot, Headline, Loaded, Plugin, Rng, Terminal, TxnFuture, TxnType,
    Workload, WorkloadError,
};

use super::{Args, Client, Tpcc, NEW_ORDER, TXN_TYPES};

/// Keying and think times of TPC-C's terminal model (clause 5.2.5).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ThinkMode {
    /// No keying or think time: each client sends its next transaction at once (the seed's
    /// "thinktime=zero"; DBT-2's and HammerDB's usual setting).
    #[default]
    Zero,
    /// The spec's fixed keying time before and negative-exponential think time after each
    /// transaction: about 12 transactions per minute per client.
    Spec,
}

/// TPC-C's own options, typed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub think: ThinkMode,
    /// Call the PL/pgSQL functions `prepare` installs instead of client-side SQL.
    pub procedures: bool,
    /// Clients sharing one home warehouse before the next warehouse gets one; unset spreads
    /// clients over warehouses round-robin.
    pub clients_per_warehouse: Option<u32>,
}

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "think",
        kind: OptionKind::Choice(&["zero", "spec"]),
        help: "keying and think times: zero (next transaction at once) or spec (clause 5.2.5, \
               about 12 transactions a minute per client) [default: zero]",
        load: false,
    },
    OptionSpec {
        key: "procedures",
        kind: OptionKind::Flag,
        help: "run the transactions as PL/pgSQL functions (installed by prepare) instead of \
               client-side prepared SQL",
        load: false,
    },
    OptionSpec {
        key: "clients_per_warehouse",
        kind: OptionKind::Count,
        help: "clients sharing one home warehouse before the next warehouse gets one (the spec \
               has 10) [default: round-robin over warehouses]",
        load: false,
    },
];

impl Options {
    /// The typed options of resolved values (kinds were checked by config).
    pub fn from_values(values: &OptionValues) -> Options {
        Options {
            think: match values.get("think").and_then(|v| v.as_str()) {
                Some("spec") => ThinkMode::Spec,
                _ => ThinkMode::Zero,
            },
            procedures: values
                .get("procedures")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            clients_per_warehouse: values
                .get("clients_per_warehouse")
                .and_then(|v| v.as_integer())
                .and_then(|n| u32::try_from(n).ok()),
        }
    }

    /// The options as a run's `runtime.toml` records them, defaults included.
    pub fn to_values(self) -> OptionValues {
        let mut out = OptionValues::new();
        let think = match self.think {
            ThinkMode::Zero => "zero",
            ThinkMode::Spec => "spec",
        };
        out.insert("think".into(), think.into());
        out.insert("procedures".into(), self.procedures.into());
        if let Some(n) = self.clients_per_warehouse {
            out.insert("clients_per_warehouse".into(), i64::from(n).into());
        }
        out
    }
}

/// The registered TPC-C workload.
pub struct TpccKind;

pub static TPCC: TpccKind = TpccKind;

impl WorkloadInfo for TpccKind {
    fn name(&self) -> &'static str {
        "tpcc"
    }
    fn about(&self) -> &'static str {
        "TPC-C (DBT-2's workload): five transaction types over the nine TPC-C tables; its \
         scale is the warehouse count"
    }
    fn scale_name(&self) -> Option<&'static str> {
        Some("warehouses")
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn resolve_options(&self, given: &OptionValues) -> Result<OptionValues, String> {
        Ok(Options::from_values(given).to_values())
    }
    fn txn_type_names(&self) -> Vec<String> {
        TXN_TYPES.iter().map(|t| t.to_string()).collect()
    }
}

impl Plugin for TpccKind {
    async fn check_ready(
        &self,
        options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        let procedures = Options::from_values(options).procedures;
        super::check_ready(client, procedures)
            .await
            .map(Loaded::scale)
    }

    async fn prepare(
        &self,
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        super::prepare(plan, target, events).await
    }

    fn check(
        &self,
        client: &tokio_postgres::Client,
    ) -> Option<impl Future<Output = Result<Vec<CheckOutcome>, WorkloadError>>> {
        Some(super::check(client))
    }

    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        Ok(Arc::new(Tpcc::new(scale, &Options::from_values(options))))
    }
}

impl Workload for Tpcc {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn statements(&self) -> Vec<(usize, &str)> {
        use super::{procedures as p, *};
        let sent = [
            (NEW_ORDER, new_order::BEGIN),
            (NEW_ORDER, new_order::ITEMS),
            (NEW_ORDER, new_order::DISTRICT),
            (NEW_ORDER, new_order::STOCK),
            (NEW_ORDER, new_order::INSERT),
            (NEW_ORDER, new_order::COMMIT),
            (NEW_ORDER, new_order::ROLLBACK),
            (PAYMENT, payment::BY_ID),
            (PAYMENT, payment::BY_LAST),
            (ORDER_STATUS, order_status::BY_ID),
            (ORDER_STATUS, order_status::BY_LAST),
            (DELIVERY, delivery::DELIVER),
            (STOCK_LEVEL, stock_level::COUNT_LOW),
            (NEW_ORDER, p::CALL_NEW_ORDER),
            (PAYMENT, p::CALL_PAYMENT),
            (ORDER_STATUS, p::CALL_ORDER_STATUS),
            (DELIVERY, p::CALL_DELIVERY),
            (STOCK_LEVEL, p::CALL_STOCK_LEVEL),
        ];
        sent.iter().map(|(t, s)| (*t, s.sql)).collect()
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        let client = self.client(slot);
        Box::new(TpccTerminal {
            args: None,
            client,
            workload: self,
        })
    }

    fn keying_time(&self, txn: usize) -> Duration {
        Tpcc::keying_time(self, txn)
    }

    fn think_time(&self, txn: usize, rng: &mut Rng) -> Duration {
        Tpcc::think_time(self, txn, rng)
    }

    fn headline(&self) -> Option<Headline> {
        Some(Headline::per_minute(
            super::rules::HEADLINE_LABEL,
            TXN_TYPES[NEW_ORDER],
        ))
    }

    fn type_rules(&self) -> Vec<TypeRule> {
        super::rules::type_rules()
    }

    fn notes(&self, group: &str, clients: u32) -> Vec<String> {
        let warehouses = self.warehouses;
        if self.think != ThinkMode::Spec || clients >= 10 * warehouses {
            return Vec::new();
        }
        vec![format!(
            "note: group '{group}' paces its {clients} client(s) at the spec's terminal speed \
             (about 12 transactions a minute each); the spec drives {warehouses} \
             warehouse(s) with {} terminals",
            10 * warehouses
        )]
    }
}

/// A TPC-C terminal: its home and deck, and the inputs of the transaction drawn last.
struct TpccTerminal {
    workload: Arc<Tpcc>,
    client: Client,
    args: Option<Args>,
}

impl Terminal for TpccTerminal {
    fn next_type(&mut self, rng: &mut Rng) -> usize {
        self.workload.draw_txn(&mut self.client, rng)
    }

    fn draw(&mut self, txn: usize, rng: &mut Rng) {
        self.args = Some(self.workload.draw_args(txn, &self.client, rng));
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        match &self.args {
            Some(args) => Box::pin(self.workload.execute(conn, protocol, args)),
            None => Box::pin(async {
                Err(pgwire::Error {
                    kind: pgwire::ErrorKind::Protocol("no transaction drawn".into()),
                })
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_pacing_with_few_clients_gets_a_note() {
        let spec = Options {
            think: ThinkMode::Spec,
            ..Options::default()
        };
        let notes = Tpcc::new(2, &spec).notes("g", 8);
        assert!(
            notes.len() == 1 && notes[0].contains("20 terminals"),
            "{notes:?}"
        );
        assert!(Tpcc::new(2, &spec).notes("g", 20).is_empty());
        assert!(Tpcc::new(2, &Options::default()).notes("g", 1).is_empty());
    }

    #[test]
    fn every_type_is_told_by_a_statement_of_its_own() {
        use crate::sampler::waits::types::TypeMap;
        let w = Tpcc::new(2, &Options::default());
        let names = w.txn_types();
        let statements = w.statements();
        let map = TypeMap::new(
            statements
                .iter()
                .map(|(t, sql)| (names[*t].name.as_str(), *sql)),
        );
        for (t, sql) in &statements {
            // Each text as sent, values in place of the first `$n` where it has one.
            let sent = sql.replacen("$1", "7", 1);
            assert_eq!(map.type_of(&sent), Some(names[*t].name.as_str()), "{sql}");
        }
        for t in 0..names.len() {
            assert!(statements.iter().any(|(x, _)| *x == t), "type {t}");
        }
    }

    #[test]
    fn resolved_options_round_trip() {
        let o = Options {
            think: ThinkMode::Spec,
            procedures: true,
            clients_per_warehouse: Some(10),
        };
        assert_eq!(Options::from_values(&o.to_values()), o);
        let defaults = TPCC.resolve_options(&OptionValues::new()).unwrap();
        assert_eq!(Options::from_values(&defaults), Options::default());
        assert_eq!(defaults.get("think").and_then(|v| v.as_str()), Some("zero"));
    }
}
