//! The `script` workload: each named script is a transaction type, drawn by its weight as
//! pgbench draws `-f`/`-b` scripts; a client keeps its variables from one transaction to the
//! next, as pgbench's do. Its `random*()` draw from its own pg_prng state, seeded as pgbench
//! 15 seeds client `:client_id`'s from `--random-seed`, saved at a transaction's start and
//! put back for each retry, so a retry replays the same values (pgbench 15); the script is
//! chosen by weight from the state of the pgbench thread the client would be on.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

use super::run::{run, ClientVars};
use super::sources::{self, Scripts, BUILTIN, DEFINE, FILE, ROLES, SCRIPTS};
use crate::config::{OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::results::{CommandStats, CommandSums};
use crate::target::ResolvedTarget;
use crate::workload::{
    pg_prng::{PgPrng, PgbenchSeeds},
    ClientSlot, Loaded, Plugin, Rng, Terminal, TxnFuture, TxnType, Workload, WorkloadError,
};

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: FILE,
        kind: OptionKind::Entries {
            short: Some('f'),
            value_name: "FILE[@WEIGHT]",
            selects: true,
            paths: true,
        },
        help: "a pgbench script file to run, drawn by weight among the others (as pgbench -f)",
        load: false,
    },
    OptionSpec {
        key: BUILTIN,
        kind: OptionKind::Entries {
            short: Some('b'),
            value_name: "NAME[@WEIGHT]",
            selects: true,
            paths: false,
        },
        help: "one of pgbench's built-in scripts: tpcb-like, simple-update, select-only (as pgbench -b)",
        load: false,
    },
    OptionSpec {
        key: DEFINE,
        kind: OptionKind::Entries {
            short: Some('D'),
            value_name: "NAME=VALUE",
            selects: false,
            paths: false,
        },
        help: "a variable every client of a script starts with (as pgbench -D)",
        load: false,
    },
    OptionSpec {
        key: PER_COMMAND,
        kind: OptionKind::Flag,
        help: "time each command of each script and report them (as pgbench -r)",
        load: false,
    },
    OptionSpec {
        key: TRACE,
        kind: OptionKind::Flag,
        help: "trace each client's scripts, commands, SQL sent and results on stderr (as pgbench -d)",
        load: false,
    },
    OptionSpec {
        key: SCRIPTS,
        kind: OptionKind::Entries {
            short: None,
            value_name: "FILE[@WEIGHT]",
            selects: true,
            paths: true,
        },
        help: "scripts as -f takes them; in run files also tables \
               { file = \"a.sql\" or builtin = \"NAME\", weight = 3, role = \"dss\" }",
        load: false,
    },
];

/// The option that turns per-command figures on (`--report-per-command`).
const PER_COMMAND: &str = "report_per_command";

/// The option that turns pgbench's `-d` trace on (`--debug`).
const TRACE: &str = "debug";

/// The registered workload.
pub struct ScriptKind;

pub static SCRIPT: ScriptKind = ScriptKind;

impl WorkloadInfo for ScriptKind {
    fn name(&self) -> &'static str {
        "script"
    }
    fn about(&self) -> &'static str {
        "your own SQL: pgbench scripts (-f FILE, -b NAME, -D NAME=VALUE) with pgbench's language"
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    /// A script runs on a set's `oltp` target unless its `scripts` entry says `dss`; a set
    /// with one target serves both.
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }
    /// Reads and compiles the scripts now, so a mistake stops the run before it connects.
    fn resolve_options(&self, given: &OptionValues) -> Result<OptionValues, String> {
        sources::load(given)?;
        Ok(given.clone())
    }
    /// The types are the scripts, known only from the options.
    fn txn_type_names(&self) -> Vec<String> {
        Vec::new()
    }
    fn txn_type_names_for(&self, options: &OptionValues) -> Vec<String> {
        sources::load(options)
            .map(|s| s.codes.into_iter().map(|c| c.name).collect())
            .unwrap_or_default()
    }
}

impl Plugin for ScriptKind {
    /// Any database will do for the user's own scripts; the scale (`:scale`) is pgbench's:
    /// the rows of pgbench_branches when that table is there, else 1. A built-in (`-b`)
    /// needs pgbench's tables, as pgbench 15 checks before it runs one.
    async fn check_ready(
        &self,
        options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        if sources::uses_builtin(options) {
            return crate::workload::pgbench::check_ready(client)
                .await
                .map(Loaded::scale);
        }
        let db = || WorkloadError::query("reading the scale");
        // Two statements: a subquery on a missing table fails at planning, CASE or not.
        let present: bool = client
            .query_typed_one("select to_regclass('pgbench_branches') is not null", &[])
            .await
            .map_err(db())?
            .get(0);
        let count: i64 = if present {
            client
                .query_typed_one("select count(*) from pgbench_branches", &[])
                .await
                .map_err(db())?
                .get(0)
        } else {
            1
        };
        Ok(Loaded::scale(
            u32::try_from(count.max(1)).unwrap_or(u32::MAX),
        ))
    }

    /// Scripts bring no data of their own: `prepare` of a run file only makes the groups'
    /// databases (the runner does that before this), and the scripts' tables are the user's
    /// (for `-b`, `tidebench prepare --workload tpcb --scale N`).
    async fn prepare(
        &self,
        _plan: &PreparePlan,
        _target: &ResolvedTarget,
        _events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        Ok(())
    }

    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        let scripts = sources::load(options)?;
        let simple = options
            .get(crate::workload::RUN_PROTOCOL)
            .and_then(|v| v.as_str())
            == Some("simple");
        if let Some(code) = scripts
            .codes
            .iter()
            .find(|c| c.has_pipeline())
            .filter(|_| simple)
        {
            return Err(format!(
                "script \"{}\" has a \\startpipeline, which the simple protocol cannot run; \
                 use -M extended or -M prepared (pgbench refuses it too)",
                code.name
            ));
        }
        let types = scripts
            .codes
            .iter()
            .zip(&scripts.roles)
            .map(|(c, role)| TxnType::new(c.name.clone(), role.clone()))
            .collect();
        let per_command = options
            .get(PER_COMMAND)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
            .then(|| Mutex::new(empty_sums(&scripts)));
        let seeds = crate::workload::pgbench_seeds(options);
        let trace = options
            .get(TRACE)
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        Ok(Arc::new(ScriptWorkload {
            trace,
            total: scripts.weights.iter().sum(),
            default_seed: seeds.default_seed(),
            seeds,
            scripts,
            types,
            scale,
            per_command,
            events: OnceLock::new(),
        }))
    }
}

/// Zeroed sums, one per command of each script.
fn empty_sums(scripts: &Scripts) -> Vec<Vec<CommandSums>> {
    scripts
        .codes
        .iter()
        .map(|c| vec![CommandSums::default(); c.commands.len()])
        .collect()
}

/// The run's event sink, as a workload keeps it.
struct Events(Arc<dyn Sink>);

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events")
    }
}

/// The scripts of a run at a known scale.
#[derive(Debug)]
pub struct ScriptWorkload {
    scripts: Scripts,
    types: Vec<TxnType>,
    total: u64,
    scale: u32,
    /// The run's seed (pgbench's `--random-seed`), clients and threads.
    seeds: PgbenchSeeds,
    /// pgbench's `:default_seed` for that seed and the run's clients.
    default_seed: i64,
    /// The run's events, for `debug()` (see [`Workload::attach`]).
    events: OnceLock<Events>,
    /// With `--report-per-command`: every ended client's sums, merged (one lock per client,
    /// at its end; a client adds to its own sums without any).
    per_command: Option<Mutex<Vec<Vec<CommandSums>>>>,
    /// pgbench's `-d` trace on.
    trace: bool,
}

impl ScriptWorkload {
    /// pgbench's automatic variables, where a script uses them and `-D` did not set them
    /// (`client_id` always, as pgbench).
    fn start_vars(&self, slot: ClientSlot) -> ClientVars {
        let names = &self.scripts.vars;
        let mut vars = ClientVars::new(names.len(), self.seeds.client(slot.index));
        for (s, text) in &self.scripts.defines {
            vars.set_text(*s, text);
        }
        // As pgbench: `:random_seed` is the seed, `:default_seed` (the hash functions' seed)
        // a draw of pg_prng seeded with it.
        let auto = [
            ("scale", i64::from(self.scale)),
            ("default_seed", self.default_seed),
            ("random_seed", self.seeds.seed as i64),
        ];
        for (name, value) in auto {
            if let Some(s) = names.get(name) {
                if !vars.slots[s].defined {
                    vars.set_value(s, super::expr::Value::Int(value));
                }
            }
        }
        if let Some(s) = names.get("client_id") {
            vars.set_value(s, super::expr::Value::Int(i64::from(slot.index)));
        }
        vars.trace = self.trace.then_some(slot.index);
        vars.client = slot.index;
        if self.per_command.is_some() {
            vars.per_command = Some(empty_sums(&self.scripts));
        }
        vars
    }
}

impl Workload for ScriptWorkload {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn statements(&self) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        for (i, code) in self.scripts.codes.iter().enumerate() {
            for c in &code.commands {
                if let super::compile::Command::Sql(sql) = c {
                    out.push((i, sql.statement.sql));
                }
            }
        }
        out
    }

    fn command_stats(&self) -> Vec<CommandStats> {
        let Some(merged) = &self.per_command else {
            return Vec::new();
        };
        let merged = merged.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (code, sums) in self.scripts.codes.iter().zip(merged.iter()) {
            for (i, (s, label)) in sums.iter().zip(&code.labels).enumerate() {
                out.push(s.stats(&code.name, i as u32 + 1, label));
            }
        }
        out
    }

    fn attach(&self, events: &Arc<dyn Sink>) {
        let _ = self.events.set(Events(Arc::clone(events)));
    }

    fn terminal(self: Arc<Self>, slot: ClientSlot) -> Box<dyn Terminal> {
        let vars = self.start_vars(slot);
        let choose = self.seeds.client_choose(slot.index);
        Box::new(ScriptTerminal {
            saved: vars.rng,
            workload: self,
            vars: RefCell::new(vars),
            txn: 0,
            choose,
        })
    }
}

/// One client: its variables, the drawn script, the function state its tries start from
/// and the state its scripts are chosen with.
struct ScriptTerminal {
    workload: Arc<ScriptWorkload>,
    vars: RefCell<ClientVars>,
    txn: usize,
    /// `vars.rng` at the transaction's start (pgbench's `random_state`).
    saved: PgPrng,
    /// pgbench's `ts_choose_rs` (see [`PgbenchSeeds::client_choose`]).
    choose: PgPrng,
}

/// A client's per-command sums join the workload's when it ends.
impl Drop for ScriptTerminal {
    fn drop(&mut self) {
        let (Some(mine), Some(all)) = (
            self.vars.get_mut().per_command.take(),
            &self.workload.per_command,
        ) else {
            return;
        };
        let mut all = all.lock().unwrap_or_else(|e| e.into_inner());
        for (to, from) in all.iter_mut().zip(&mine) {
            for (t, f) in to.iter_mut().zip(from) {
                t.merge(f);
            }
        }
    }
}

impl Terminal for ScriptTerminal {
    /// pgbench's `chooseScript`: no draw for one script, else `getrand(0, total - 1)` on
    /// the thread's state, walked over the weights.
    fn next_type(&mut self, _rng: &mut Rng) -> usize {
        let w = &self.workload;
        if w.types.len() == 1 {
            return 0;
        }
        let mut pick = self.choose.getrand(0, w.total as i64 - 1) as u64;
        for (i, &weight) in w.scripts.weights.iter().enumerate() {
            if pick < weight {
                return i;
            }
            pick -= weight;
        }
        0
    }

    /// Nothing is drawn ahead: the script draws as it runs. Its state is saved here, at
    /// the transaction's start, for the retries.
    fn draw(&mut self, txn: usize, _rng: &mut Rng) {
        self.txn = txn;
        self.saved = self.vars.get_mut().rng;
    }

    fn failed_command(&self) -> Option<u32> {
        self.vars.borrow().failed_at
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        // The borrow spans the whole try on purpose: a terminal runs one try at a time on its
        // client's thread, and a try cut short drops its future, and the borrow with it.
        #[allow(clippy::await_holding_refcell_ref)]
        Box::pin(async move {
            let mut vars = self.vars.borrow_mut();
            vars.rng = self.saved;
            let w = &self.workload;
            run(
                &w.scripts.codes[self.txn],
                self.txn,
                &w.scripts.vars,
                &mut vars,
                conn,
                protocol,
                w.events.get().map(|e| &*e.0),
            )
            .await
        })
    }
}
