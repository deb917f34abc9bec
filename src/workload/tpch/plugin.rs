//! TPC-H as a registered workload: its options (the scale factor `sf`, the optional foreign
//! keys and indexes of a load, the qualification parameters of a run), readiness against
//! `tpch_meta`, and a client's terminal: client i is query stream i (clause 5.1.2.4), which
//! runs its 22 queries once in Appendix A's order with its own parameters and ends (its
//! [`Workload::units_per_client`]); stream 0 alone is the power test's query part.
//!
//! Each query is one transaction type (`Q1` … `Q22`) and one transaction: its statements go
//! as one simple-protocol message, which PostgreSQL runs in one implicit transaction (Q15's
//! view is created, read and dropped in it), so the server counts one commit per query. The
//! texts, answers and times the streams recorded ([`super::record`]) become the run's
//! `tpch/` files and its Power@Size.

use std::sync::Arc;

use crate::config::{
    OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo, DEFAULT_ROLE,
};
use crate::event::Sink;
use crate::results::Figure;
use crate::target::ResolvedTarget;
use crate::workload::{
    ClientSlot, Loaded, Plugin, Rng, Terminal, TxnEnd, TxnFuture, TxnType, Workload, WorkloadError,
    RUN_SEED,
};

use super::loader::{self, FOREIGN_KEYS_OPTION, INDEXES_OPTION, SF};
use super::power::QUERIES;
use super::queries::{render, stream_order, ParamSource, QueryText};
use super::record::{Done, Record};
use super::rows::ScaleFactor;

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
];

/// The registered TPC-H workload.
pub struct TpchKind;

pub static TPCH: TpchKind = TpchKind;

/// The transaction types' names: `Q1` … `Q22`, type `i` being query `i + 1`.
fn type_names() -> Vec<String> {
    (1..=QUERIES).map(|q| format!("Q{q}")).collect()
}

impl WorkloadInfo for TpchKind {
    fn name(&self) -> &'static str {
        "tpch"
    }
    fn about(&self) -> &'static str {
        "TPC-H's 22 analytic queries over its eight tables at scale factor --sf: each client \
         is a query stream that runs them once (client 0 alone: the power test), and the run \
         ends when every stream is done (--duration is a cap)"
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
        let source = if options.get(QUALIFICATION).and_then(|v| v.as_bool()) == Some(true) {
            ParamSource::Qualification
        } else {
            // The seed travels as the TOML integer of its 64 bits.
            let seed = options.get(RUN_SEED).and_then(|v| v.as_integer());
            ParamSource::Seeded(seed.unwrap_or(0) as u64)
        };
        Ok(Arc::new(Tpch::new(sf, source)))
    }
}

/// TPC-H over data of a known scale factor.
#[derive(Debug)]
pub struct Tpch {
    types: Vec<TxnType>,
    sf: ScaleFactor,
    source: ParamSource,
    record: Arc<Record>,
}

impl Tpch {
    pub fn new(sf: ScaleFactor, source: ParamSource) -> Tpch {
        Tpch {
            types: type_names()
                .into_iter()
                .map(|n| TxnType::new(n, DEFAULT_ROLE))
                .collect(),
            sf,
            source,
            record: Arc::new(Record::default()),
        }
    }
}

impl Workload for Tpch {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        Box::new(Stream {
            stream: slot.index,
            next: 0,
            drawn: None,
            workload: self,
        })
    }

    fn units_per_client(&self) -> Option<u64> {
        Some(QUERIES as u64)
    }

    fn notes(&self, group: &str, clients: u32) -> Vec<String> {
        let params = match self.source {
            ParamSource::Qualification => "the qualification parameters".to_string(),
            ParamSource::Seeded(seed) => format!("parameters drawn from seed {seed}"),
        };
        vec![format!(
            "note: group '{group}' runs {clients} TPC-H query stream(s) at scale factor {} with \
             {params}; the run ends when every stream has run its 22 queries",
            self.sf
        )]
    }

    fn figures(&self) -> Vec<Figure> {
        vec![self.record.power(self.sf)]
    }

    fn files(&self) -> Vec<(String, String)> {
        self.record.files()
    }
}

/// One query stream: its number, its place in its order, and the query drawn last.
struct Stream {
    workload: Arc<Tpch>,
    stream: u32,
    next: usize,
    drawn: Option<QueryText>,
}

impl Terminal for Stream {
    /// The stream's next query in its Appendix A order (after the 22nd the order repeats, for
    /// a run given more transactions than a stream has).
    fn next_type(&mut self, _rng: &mut Rng) -> usize {
        let order = stream_order(self.stream);
        let query = order[self.next % order.len()];
        self.next += 1;
        usize::from(query) - 1
    }

    fn draw(&mut self, txn: usize, _rng: &mut Rng) {
        let w = &self.workload;
        let number = u8::try_from(txn + 1).unwrap_or(0);
        self.drawn = render(number, self.stream, w.source, w.sf).ok();
        if let Some(q) = &self.drawn {
            w.record.text(q);
        }
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        _protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        Box::pin(async move {
            let Some(q) = &self.drawn else {
                return Err(pgwire::Error {
                    kind: pgwire::ErrorKind::Protocol("no query drawn".into()),
                });
            };
            // The values are in the text already: it runs as written to the results dir.
            let sql = q.statements.join(";\n");
            let started = std::time::Instant::now();
            let result = conn.simple_query(&sql).await?;
            let seconds = started.elapsed().as_secs_f64();
            let set = result.result_sets().saturating_sub(1);
            let columns: Vec<String> = result.set_columns(set).map(String::from).collect();
            let rows = result
                .set_rows(set)
                .map(|r| {
                    (0..columns.len())
                        .map(|c| result.get_str(r, c).unwrap_or("").to_string())
                        .collect()
                })
                .collect();
            self.workload.record.done(Done {
                stream: q.stream,
                query: q.number,
                seconds,
                columns,
                rows,
            });
            Ok(TxnEnd::Committed)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_draws_its_order_and_renders_its_parameters() {
        let sf = ScaleFactor::new(0.01).unwrap();
        let w = Arc::new(Tpch::new(sf, ParamSource::Seeded(7)));
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
        let w = TPCH.build(1, &OptionValues::new()).unwrap();
        assert_eq!(w.units_per_client(), Some(22));
        assert_eq!(w.txn_types().len(), 22);
    }
}
