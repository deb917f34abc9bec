//! CH-benCHmark as a registered workload of TPC-C's family: its load is TPC-C's with CH's
//! tables ([`super::loader`]), so a `tpcc` group may share its database, and a client is a
//! query stream of the shared runner ([`crate::workload::streams`]), which runs the 22
//! queries in TPC-H's Appendix A order for its stream number: once and ends, or, with
//! `repeat_streams` (CH-benCHmark's analytic streams, as preset `ch` runs them), again and again until
//! its phase ends, so the OLTP group beside it has the analytic load for the whole phase.

use std::sync::Arc;

use crate::config::{
    OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo, DEFAULT_ROLE,
};
use crate::event::Sink;
use crate::target::ResolvedTarget;
use crate::workload::streams::{Query, Record, Refusal, Role, Stream, Unit, Units};
use crate::workload::tpch::queries::stream_order;
use crate::workload::{ClientSlot, Loaded, Plugin, Terminal, TxnType, Workload, WorkloadError};

use super::loader::{self, SHIFT_DAYS};
use super::queries::{render, TEXTS};

/// The run option that makes each stream run its 22 queries again until its phase ends.
pub const REPEAT: &str = "repeat_streams";

const OPTIONS: &[OptionSpec] = &[OptionSpec {
    key: REPEAT,
    kind: OptionKind::Flag,
    help: "each stream runs the 22 queries again and again until its phase ends (CH-benCHmark's \
           analytic streams; preset ch sets it), instead of once; needs a duration",
    load: false,
}];

/// Whether `options` ask for streams that repeat.
fn repeats(options: &OptionValues) -> bool {
    options.get(REPEAT).and_then(|v| v.as_bool()) == Some(true)
}

/// The registered CH-benCHmark workload.
pub struct ChKind;

pub static CH: ChKind = ChKind;

/// The transaction types' names: `CH1` … `CH22` (apart from TPC-H's `Q1` … `Q22`, so a run
/// with both keeps them apart), type `i` being query `i + 1`.
fn type_names() -> Vec<String> {
    (1..=TEXTS.len()).map(|q| format!("CH{q}")).collect()
}

impl WorkloadInfo for ChKind {
    fn name(&self) -> &'static str {
        "ch"
    }
    fn about(&self) -> &'static str {
        "CH-benCHmark's 22 analytic queries over TPC-C's tables and its own supplier, nation \
         and region: each client is a query stream that runs them once (--repeat-streams: until the \
         run's end), and a tpcc group may share the database (prepare loads both)"
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn family(&self) -> &'static str {
        "tpcc"
    }
    fn scale_name(&self) -> Option<&'static str> {
        Some("warehouses")
    }
    fn txn_type_names(&self) -> Vec<String> {
        type_names()
    }
    fn units_per_client(&self) -> Option<u64> {
        Some(TEXTS.len() as u64)
    }
    fn units_per_client_for(&self, options: &OptionValues) -> Option<u64> {
        self.units_per_client().filter(|_| !repeats(options))
    }
}

impl Plugin for ChKind {
    async fn check_ready(
        &self,
        _options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        loader::check_ready(client).await
    }

    async fn prepare(
        &self,
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        loader::prepare(plan, target, events).await
    }

    fn build(&self, _scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        let days = options.get(SHIFT_DAYS).and_then(|v| v.as_integer());
        Ok(Arc::new(Ch::new(days.unwrap_or(0), repeats(options))))
    }
}

/// CH-benCHmark's streams over a load whose dates move the queries' by `days`.
#[derive(Debug)]
pub struct Ch {
    types: Vec<TxnType>,
    days: i64,
    /// Streams run their queries again until their phase ends (the `repeat_streams` option).
    repeat: bool,
    record: Record,
}

impl Ch {
    pub fn new(days: i64, repeat: bool) -> Ch {
        Ch {
            types: type_names()
                .into_iter()
                .map(|n| TxnType::new(n, DEFAULT_ROLE))
                .collect(),
            days,
            repeat,
            record: Record::new("ch"),
        }
    }
}

impl Workload for Ch {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        let role = Role::Queries {
            stream: slot.index,
            refresh_pair: None,
        };
        Box::new(Stream::new(self, role))
    }

    fn units_per_client(&self) -> Option<u64> {
        Some(TEXTS.len() as u64).filter(|_| !self.repeat)
    }

    fn notes(&self, group: &str, clients: u32) -> Vec<String> {
        vec![format!(
            "note: group '{group}' runs {clients} CH-benCHmark query stream(s); the queries' \
             dates are moved {} days to the load's",
            self.days
        )]
    }

    fn unit_times(&self) -> Vec<crate::results::UnitTime> {
        self.record.unit_times()
    }

    fn files(&self) -> Vec<(String, String)> {
        self.record.files()
    }
}

impl Units for Ch {
    fn order(&self, stream: u32) -> Vec<u8> {
        stream_order(stream).to_vec()
    }

    fn query(&self, number: u8, stream: u32) -> Result<Query, Refusal> {
        let sql = render(number, self.days)
            .ok_or_else(|| format!("CH-benCHmark has queries 1 to 22, not {number}"))?;
        Ok(Query {
            number,
            stream,
            text: format!("-- CH-benCHmark Q{number} stream {stream}\n{sql};\n"),
            statements: vec![sql],
        })
    }

    fn refresh(&self, unit: Unit) -> Result<String, Refusal> {
        Err(format!("CH-benCHmark has no refresh function {}", unit.name()).into())
    }

    fn record(&self) -> &Record {
        &self.record
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Rng;

    #[test]
    fn a_stream_runs_the_22_queries_with_the_loads_dates() {
        let mut options = OptionValues::new();
        options.insert(SHIFT_DAYS.into(), 5810.into());
        let w = CH.build(1, &options).unwrap();
        assert_eq!(w.units_per_client(), Some(22));
        assert_eq!(w.txn_types()[0].name, "CH1");
        let mut t = Arc::clone(&w).terminal(ClientSlot { index: 0, count: 1 });
        let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(1);
        let mut drawn: Vec<usize> = (0..22).map(|_| t.next_type(&mut rng)).collect();
        // Stream 0 starts with Q14, as TPC-H's power test does.
        assert_eq!(drawn[0], 13);
        t.draw(3, &mut rng);
        let files = w.files();
        let q4 = files
            .iter()
            .find(|(p, _)| p == "ch/queries/stream0_q4.sql")
            .map(|(_, text)| text.as_str())
            .unwrap_or("");
        assert!(q4.contains("'2022-11-29 00:00:00'"), "{q4}");
        drawn.sort_unstable();
        assert_eq!(drawn, (0..22).collect::<Vec<_>>());
    }

    /// With `repeat_streams` a stream has no count of its own: after its 22 queries it starts them
    /// again, in its order, until its phase ends; and a run without a duration is not one
    /// that lasts until its streams are done.
    #[test]
    fn repeating_streams_run_their_order_again_until_the_phase_ends() {
        let mut options = OptionValues::new();
        options.insert(REPEAT.into(), true.into());
        assert_eq!(CH.units_per_client_for(&options), None);
        assert_eq!(CH.units_per_client_for(&OptionValues::new()), Some(22));
        let w = CH.build(1, &options).unwrap();
        assert_eq!(w.units_per_client(), None);
        let mut t = Arc::clone(&w).terminal(ClientSlot { index: 1, count: 2 });
        let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(1);
        let drawn: Vec<usize> = (0..44).map(|_| t.next_type(&mut rng)).collect();
        assert_eq!(drawn[..22], drawn[22..]);

        use crate::config::{groups::Source, validate_run, RawRun, WorkloadName};
        let src = Source {
            file: "flags",
            text: "",
        };
        let raw = RawRun {
            workload: Some(WorkloadName::new("ch")),
            options,
            ..RawRun::default()
        };
        let plan = validate_run(&src, raw, 2, 1, &crate::workload::Registry).unwrap();
        assert!(
            plan.phases[0].duration < crate::config::transactions::CAP,
            "{:?}",
            plan.phases[0].duration
        );
    }

    #[test]
    fn a_database_shared_with_a_tpcc_group_is_loaded_for_ch_whichever_comes_first() {
        use crate::config::{self, groups::Source};
        use crate::workload::Registry;
        let group = |name: &str, workload: &str| {
            format!("[[group]]\nname = \"{name}\"\nworkload = \"{workload}\"\ntarget = \"instance:x/db\"\n")
        };
        for groups in [
            group("O", "tpcc") + &group("A", "ch"),
            group("A", "ch") + &group("O", "tpcc"),
        ] {
            let text = format!(
                "mode = \"independent\"\n{groups}[[phase]]\nduration = \"5s\"\n\
                 clients = {{ A = 1, O = 1 }}\n"
            );
            let src = Source {
                file: "run.toml",
                text: &text,
            };
            let plan = config::parse_run_text(&src, &Registry)
                .and_then(|raw| config::validate_run(&src, raw, 2, 1, &Registry))
                .unwrap();
            let loads = config::load_plans(&plan, 1, false, &Registry).unwrap();
            assert_eq!(loads.len(), 1, "{groups}");
            assert_eq!(loads[0].0.workload.as_str(), "ch", "{groups}");
        }
    }

    #[test]
    fn ch_is_of_tpccs_family_and_names_its_own_types() {
        assert_eq!(CH.family(), "tpcc");
        assert_eq!(CH.scale_name(), Some("warehouses"));
        assert_eq!(CH.txn_type_names()[21], "CH22");
    }
}
