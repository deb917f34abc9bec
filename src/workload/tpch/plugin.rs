//! TPC-H as a registered workload: its options (the scale factor `sf`, the optional foreign
//! keys and indexes of a load; the qualification parameters, the refresh functions and the
//! throughput test of a run), readiness against `tpch_meta`, and each client's part in the
//! test ([`super::stream`]).
//!
//! - Without `throughput`, client i is query stream i (clause 5.1.2.4), which runs its 22
//!   queries once in Appendix A's order with its own parameters and ends; client 0 alone is
//!   the power test, and with `refresh` it runs RF1 first and RF2 last (clause 5.3.3).
//! - With `throughput`, the clients are the throughput test (clause 5.3.4): query streams 1
//!   to S and, with `refresh`, a last client that is the refresh stream running S pairs.
//!
//! Each query and refresh function is one transaction type (`Q1` … `Q22`, `RF1`, `RF2`) and
//! one transaction: its statements go as one simple-protocol message, which PostgreSQL runs
//! in one implicit transaction (Q15's view is created, read and dropped in it), so the server
//! counts one commit per unit. The texts, answers and times the streams recorded
//! ([`super::record`]) become the run's `tpch/` files and its metrics.

use std::sync::Arc;

use crate::config::{
    OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo, DEFAULT_ROLE,
};
use crate::event::Sink;
use crate::results::Figure;
use crate::target::ResolvedTarget;
use crate::workload::{
    ClientSlot, Loaded, Plugin, Terminal, TxnType, Workload, WorkloadError, RUN_SEED,
};

use super::loader::{self, FOREIGN_KEYS_OPTION, INDEXES_OPTION, REFRESH, REFRESH_PAIRS, SF};
use super::power::{min_streams, QUERIES};
use super::qphh::{POWER_AT_SIZE, QPHH, THROUGHPUT};
use super::queries::ParamSource;
use super::record;
use super::refresh::UpdateSets;
use super::role::Test;
use super::rows::ScaleFactor;
use super::stream::Shared;
use crate::workload::streams::{Stream, Units};

/// The run option that swaps the seeded parameters for clause 2.4.x.4's.
const QUALIFICATION: &str = "qualification";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: SF,
        kind: OptionKind::Fraction { value_name: "SF" },
        help: "TPC-H scale factor, fractions allowed (0.01, 0.1, 1, 10) [prepare default: \
               --scale, a whole number; a run uses the load's]",
        load: true,
    },
    OptionSpec {
        key: FOREIGN_KEYS_OPTION,
        kind: OptionKind::Flag,
        // The same key and text as pgbench's: an option key means one thing for every workload.
        help: "add the foreign keys after the load, off by default (pgbench: adds f to \
               --init-steps; tpch: clause 1.4.2.3's)",
        load: true,
    },
    OptionSpec {
        key: INDEXES_OPTION,
        kind: OptionKind::Flag,
        help: "prepare also indexes the foreign-key columns, l_shipdate and o_orderdate (off \
               for a spec-pure load)",
        load: true,
    },
    OptionSpec {
        key: QUALIFICATION,
        kind: OptionKind::Flag,
        help: "run the queries with clause 2.4.x.4's qualification parameters (whose answers \
               the specification lists) instead of parameters drawn from the run's seed",
        load: false,
    },
    OptionSpec {
        key: REFRESH,
        kind: OptionKind::Flag,
        help: "run the refresh functions (new orders in, old ones out; the database changes, \
               pair after pair): the power test's stream 0 runs RF1 first and RF2 last, the \
               throughput test's last client is the refresh stream",
        load: false,
    },
    OptionSpec {
        key: THROUGHPUT,
        kind: OptionKind::Flag,
        help: "run the throughput test: the clients are query streams 1 to S (with --refresh, \
               S + 1 clients, the last the refresh stream running S pairs); the figure is \
               Throughput@Size",
        load: false,
    },
    OptionSpec {
        key: POWER_AT_SIZE,
        kind: OptionKind::Fraction {
            value_name: "POWER",
        },
        help: "the Power@Size of the power test run just before (its summary's figure): a \
               throughput run then reports QphH@Size, the two combined",
        load: false,
    },
    OptionSpec {
        key: QPHH,
        kind: OptionKind::Flag,
        help: "QphH@Size in one command: the power test (one client: RF1, the 22 queries, RF2) \
               into OUT/power, then the throughput test (-c S+1: S query streams and the \
               refresh stream) into OUT/throughput, whose summary has the three metrics",
        load: false,
    },
];

/// The registered TPC-H workload.
pub struct TpchKind;

pub static TPCH: TpchKind = TpchKind;

/// The transaction types' names: `Q1` … `Q22`, type `i` being query `i + 1`, then `RF1`,
/// `RF2`.
fn type_names() -> Vec<String> {
    (1..=QUERIES)
        .map(|q| format!("Q{q}"))
        .chain(["RF1".to_string(), "RF2".to_string()])
        .collect()
}

impl WorkloadInfo for TpchKind {
    fn name(&self) -> &'static str {
        "tpch"
    }
    fn about(&self) -> &'static str {
        "TPC-H's 22 analytic queries over its eight tables at scale factor --sf: each client \
         is a query stream that runs them once (client 0 alone: the power test; --throughput: \
         the throughput test), --refresh adds the refresh functions, and the run ends when \
         every stream is done (--duration is a cap)"
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn txn_type_names(&self) -> Vec<String> {
        type_names()
    }
    fn units_per_client(&self) -> Option<u64> {
        Some(QUERIES as u64)
    }
}

impl Plugin for TpchKind {
    async fn check_ready(
        &self,
        options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        loader::check_ready(client, options).await
    }

    async fn prepare(
        &self,
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        loader::prepare(plan, target, events).await
    }

    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        let sf = loader::scale_factor(options, scale)?;
        let flag = |key: &str| options.get(key).and_then(|v| v.as_bool()) == Some(true);
        // The seed travels as the TOML integer of its 64 bits.
        let seed = options
            .get(RUN_SEED)
            .and_then(|v| v.as_integer())
            .unwrap_or(0) as u64;
        let source = if flag(QUALIFICATION) {
            ParamSource::Qualification
        } else {
            ParamSource::Seeded(seed)
        };
        let taken = options
            .get(REFRESH_PAIRS)
            .and_then(|v| v.as_integer())
            .unwrap_or(0);
        let test = Test {
            refresh: flag(REFRESH),
            throughput: flag(THROUGHPUT),
            first_pair: u32::try_from(taken + 1).unwrap_or(1),
            power_at_size: match options.get(POWER_AT_SIZE) {
                Some(toml::Value::Float(x)) => Some(*x),
                Some(toml::Value::Integer(n)) => Some(*n as f64),
                _ => None,
            },
        };
        Ok(Arc::new(Tpch::new(sf, source, seed, test)))
    }
}

/// TPC-H over data of a known scale factor.
#[derive(Debug)]
pub struct Tpch {
    types: Vec<TxnType>,
    test: Test,
    shared: Arc<Shared>,
}

impl Tpch {
    pub fn new(sf: ScaleFactor, source: ParamSource, seed: u64, test: Test) -> Tpch {
        Tpch {
            types: type_names()
                .into_iter()
                .map(|n| TxnType::new(n, DEFAULT_ROLE))
                .collect(),
            test,
            shared: Arc::new(Shared {
                sf,
                source,
                // The run's seed, from which the refresh functions' new orders are drawn.
                seed,
                sets: UpdateSets::new(sf),
                record: record::new(),
            }),
        }
    }
}

impl Workload for Tpch {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        let role = self.test.role(slot);
        Box::new(Stream::new(Arc::clone(&self.shared), role))
    }

    fn units_per_client(&self) -> Option<u64> {
        Some(QUERIES as u64)
    }

    fn units_for(&self, slot: ClientSlot) -> Option<u64> {
        Some(self.shared.units(self.test.role(slot)).len() as u64)
    }

    fn notes(&self, group: &str, clients: u32) -> Vec<String> {
        let params = match self.shared.source {
            ParamSource::Qualification => "the qualification parameters".to_string(),
            ParamSource::Seeded(seed) => format!("parameters drawn from seed {seed}"),
        };
        let t = self.test;
        let what = match (t.throughput, t.refresh) {
            (false, false) => format!("{clients} TPC-H query stream(s)"),
            (false, true) => format!(
                "{clients} TPC-H query stream(s), stream 0 with refresh pair {} around it",
                t.first_pair
            ),
            (true, false) => format!("the TPC-H throughput test's {clients} query stream(s)"),
            (true, true) => format!(
                "the TPC-H throughput test's {} query stream(s) and its refresh stream (pairs \
                 {} to {})",
                clients.saturating_sub(1),
                t.first_pair,
                t.first_pair + clients.saturating_sub(1)
            ),
        };
        let mut notes = vec![format!(
            "note: group '{group}' runs {what} at scale factor {} with {params}; the run ends \
             when every stream is done",
            self.shared.sf
        )];
        let streams = if t.refresh {
            clients.saturating_sub(1)
        } else {
            clients
        };
        let min = min_streams(self.shared.sf.get());
        if t.throughput && streams < min {
            notes.push(format!(
                "note: the specification's throughput test at scale factor {} has at least {min} \
                 query streams; give -c {}",
                self.shared.sf,
                min + u32::from(t.refresh)
            ));
        }
        notes
    }

    fn figures(&self) -> Vec<Figure> {
        self.shared.record.figures(self.shared.sf, self.test)
    }

    fn unit_times(&self) -> Vec<crate::results::UnitTime> {
        self.shared.record.unit_times()
    }

    fn files(&self) -> Vec<(String, String)> {
        self.shared.record.files()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpch::queries::stream_order;
    use crate::workload::tpch::role::Role;
    use crate::workload::Rng;

    #[test]
    fn a_stream_draws_its_order_and_renders_its_parameters() {
        let sf = ScaleFactor::new(0.01).unwrap();
        let w = Arc::new(Tpch::new(sf, ParamSource::Seeded(7), 7, Test::QUERIES));
        let mut t = Arc::clone(&w).terminal(ClientSlot { index: 1, count: 2 });
        let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(1);
        let drawn: Vec<u8> = (0..QUERIES)
            .map(|_| t.next_type(&mut rng) as u8 + 1)
            .collect();
        assert_eq!(drawn, stream_order(1));
        t.draw(14, &mut rng);
        let files = w.files();
        assert!(files
            .iter()
            .any(|(p, text)| p == "tpch/queries/stream1_q15.sql"
                && text.contains("create view revenue_s1")));
    }

    #[test]
    fn the_kind_declares_its_units_and_types() {
        assert_eq!(TPCH.units_per_client(), Some(22));
        assert_eq!(TPCH.txn_type_names()[13], "Q14");
        assert_eq!(TPCH.txn_type_names()[23], "RF2");
        let w = TPCH.build(1, &OptionValues::new()).unwrap();
        assert_eq!(w.units_per_client(), Some(22));
        assert_eq!(w.txn_types().len(), 24);
    }

    #[test]
    fn clients_take_their_part_in_the_test() {
        let slot = |index, count| ClientSlot { index, count };
        let power = Test {
            refresh: true,
            first_pair: 5,
            ..Test::QUERIES
        };
        assert_eq!(
            power.role(slot(0, 2)),
            Role::Queries {
                stream: 0,
                refresh_pair: Some(5)
            }
        );
        assert_eq!(
            Role::Queries {
                stream: 1,
                refresh_pair: None
            },
            power.role(slot(1, 2))
        );
        let throughput = Test {
            throughput: true,
            ..power
        };
        // Three clients: query streams 1 and 2, then the refresh stream's two pairs.
        assert_eq!(throughput.role(slot(0, 3)).label(), "stream 1");
        assert_eq!(
            throughput.role(slot(2, 3)),
            Role::Refresh {
                first_pair: 5,
                pairs: 2
            }
        );
        let mut options = OptionValues::new();
        options.insert(THROUGHPUT.into(), true.into());
        options.insert(REFRESH.into(), true.into());
        options.insert(REFRESH_PAIRS.into(), toml::Value::Integer(4));
        let w = TPCH.build(1, &options).unwrap();
        assert_eq!(w.units_for(slot(2, 3)), Some(4));
        assert_eq!(w.units_for(slot(1, 3)), Some(22));
    }
}
