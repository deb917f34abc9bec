//! pgbench's three scripts as registered workloads (`tpcb`, `select-only` with `-S`,
//! `simple-update` with `-N`): one family on the same four tables, each naming the script a
//! group runs when its phase gives no mix.

use std::sync::Arc;

use crate::config::{OptionSpec, OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::target::ResolvedTarget;
use crate::workload::{
    pg_prng::{PgPrng, PgbenchSeeds},
    ClientSlot, Loaded, Plugin, Rng, Terminal, TxnFuture, TxnType, Workload, WorkloadError,
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

impl Plugin for Script {
    async fn check_ready(
        &self,
        _options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        super::check_ready(client).await.map(Loaded::scale)
    }

    async fn prepare(
        &self,
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        super::prepare(plan, target, events).await
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

    fn statements(&self) -> Vec<(usize, &str)> {
        super::sql::by_script()
    }

    fn own_types(&self) -> Vec<usize> {
        vec![self.pgbench.script]
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

#[cfg(test)]
mod tests {
    use crate::config::{self, groups::Source, OptionKind};
    use crate::workload::Registry;

    use super::init::OPTIONS;

    /// A run file's plan, or its error as text.
    fn run_file(text: &str) -> Result<config::RunPlan, String> {
        let src = Source {
            file: "run.toml",
            text,
        };
        config::parse_run_text(&src, &Registry)
            .and_then(|raw| config::validate_run(&src, raw, 2, 1, &Registry))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn run_files_take_pgbench_init_options_and_refuse_bad_ones_as_flags_do() {
        let head = "workload = \"tpcb\"\ntarget = \"instance:default\"\n";
        let plan = run_file(&format!(
            "{head}fillfactor = 90\npartitions = 2\npartition_method = \"hash\"\n\
             init_steps = \"dtGvp\"\n"
        ))
        .unwrap();
        let loads = config::load_plans(&plan, 1, false, &Registry).unwrap();
        let options = &loads[0].0.options;
        assert_eq!(options.get("fillfactor"), Some(&toml::Value::Integer(90)));
        assert_eq!(
            options.get("init_steps"),
            Some(&toml::Value::String("dtGvp".into()))
        );
        for (line, needle) in [
            (
                "fillfactor = 5",
                "fillfactor must be a whole number from 10 to 100, not 5",
            ),
            (
                "partitions = -1",
                "partitions must be a whole number from 0",
            ),
            (
                "init_steps = \"dtx\"",
                "unrecognized initialization step \"x\"",
            ),
            (
                "partition_method = \"range\"",
                "--partition-method requires",
            ),
            ("partition_method = \"list\"", "takes one of range, hash"),
        ] {
            let e = run_file(&format!("{head}{line}\n")).unwrap_err();
            assert!(e.contains(needle), "{line}: {e}");
        }
    }

    #[test]
    fn number_and_text_kinds_check_values() {
        let spec = |key: &str| *OPTIONS.iter().find(|o| o.key == key).unwrap();
        let fillfactor = spec("fillfactor");
        assert!(matches!(fillfactor.kind, OptionKind::Number { .. }));
        assert!(fillfactor.check(&toml::Value::Integer(10)).is_ok());
        assert!(fillfactor.check(&toml::Value::Integer(101)).is_err());
        assert!(fillfactor.check(&toml::Value::String("90".into())).is_err());
        let steps = spec("init_steps");
        assert!(steps.check(&toml::Value::String("dtg".into())).is_ok());
        let e = steps.check(&toml::Value::Integer(1)).unwrap_err();
        assert!(e.contains("takes a string"), "{e}");
    }
}
