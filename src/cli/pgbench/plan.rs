//! pgbench's command line, once read (`argv`), turned into what tidebench runs: the
//! arguments of `tidebench run` (benchmarking) or `tidebench prepare` (`-i`), parsed by the
//! same clap grammar as the user's own, and the facts pgbench's summary block states that
//! tidebench's summary does not hold (script names and weights, the query mode, -t or -T).
//!
//! pgbench's checks and their words are kept, in its order: values as they are read, then
//! the mode, operands and -t/-T. Everything refused here exits 1, as pgbench's usage errors.
//! No I/O: the environment and the reading of a script file come in as functions.

use super::argv::{self as pgbench_argv, Argv, Given, Mode, To};
use super::refusal::{not_supported, refuse, Refusal};
use super::values::{
    find_builtin, init_steps, leading_float, target, unreadable, weighted, BUILTINS, MAX_SCRIPTS,
};
use crate::cli::args;
use crate::workload::script;

/// pgbench's default number of transactions per client when neither -t nor -T is given.
const DEFAULT_TRANSACTIONS: i64 = 10;

/// What `tidebench pgbench ARGS` is to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Help,
    Version,
    /// `-b list`: the built-ins on stderr, exit 0.
    ListBuiltins,
    /// `--show-script NAME`: that built-in's text on stderr, exit 0.
    ShowScript(&'static str),
    /// `-i`: `tidebench prepare` with these arguments (after `prepare`).
    Init(Vec<String>),
    /// `tidebench run` with these arguments (after `run`), and what the summary block says.
    Bench(Vec<String>, Facts),
}

/// One script of the run, as pgbench's summary names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// `<builtin: select only>`, or the file as given.
    pub desc: String,
    pub weight: i64,
    /// The transaction type tidebench records it under.
    pub txn_type: String,
}

/// How long pgbench runs: -T seconds or -t transactions per client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Seconds(i64),
    PerClient(i64),
}

/// What pgbench's summary block states that comes from its command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    pub scripts: Vec<Script>,
    /// A built-in script runs: the scale is the data's (pgbench counts pgbench_branches).
    pub internal: bool,
    pub scale: i64,
    /// -s given: with a built-in script pgbench says it reads the data's scale instead.
    pub scale_given: bool,
    pub protocol: String,
    pub clients: i64,
    pub threads: i64,
    pub max_tries: i64,
    pub length: Length,
    /// -P, -R or -L: pgbench prints latency average and stddev from its samples.
    pub latency_samples: bool,
    pub rate: bool,
    pub failures_detailed: bool,
    /// -r: pgbench's per-command latencies and failures.
    pub per_command: bool,
    /// -d: pgbench's debug trace (the scripts then run through the interpreter, which has it).
    pub debug: bool,
    pub connect_each: bool,
    /// --progress-timestamp: `-P` lines show the Unix time instead of the elapsed time.
    pub progress_timestamp: bool,
    /// Run pgbench's vacuum first (not -n), and of pgbench_accounts too (-v).
    pub vacuum: bool,
    pub vacuum_accounts: bool,
    /// The connection string built as pgbench connects (see [`target`]).
    pub target: String,
    /// --random-seed was given: pgbench says the seed it set.
    pub seed_given: bool,
}

/// The flags tidebench's `run` and `prepare` know in this build (asked of the clap grammar).
pub struct Known {
    pub run: Vec<String>,
    pub prepare: Vec<String>,
}

impl Known {
    /// The long flags (and their aliases) of `run` and `prepare`.
    pub fn from_grammar() -> Known {
        let of = |name: &str| {
            args::command()
                .find_subcommand(name)
                .map(|c| {
                    c.get_arguments()
                        .flat_map(|a| {
                            a.get_long()
                                .into_iter()
                                .chain(a.get_all_aliases().unwrap_or_default())
                                .map(str::to_string)
                                .collect::<Vec<_>>()
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        Known {
            run: of("run"),
            prepare: of("prepare"),
        }
    }

    fn has(&self, init: bool, flag: &str) -> bool {
        let list = if init { &self.prepare } else { &self.run };
        list.iter().any(|f| f == flag)
    }
}

/// Turns pgbench's argv (without the program name) into a request; `env` reads a variable.
pub fn request(
    args: &[String],
    known: &Known,
    env: &dyn Fn(&str) -> Option<String>,
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<Request, Refusal> {
    // pgbench looks for these in the first place only.
    match args.first().map(String::as_str) {
        Some("--help" | "-?") => return Ok(Request::Help),
        Some("--version" | "-V") => return Ok(Request::Version),
        _ => {}
    }
    let argv = pgbench_argv::read(args).map_err(|e| Refusal {
        message: e.to_string(),
        hint: true,
        getopt: true,
    })?;
    let init = argv.given.iter().any(|g| g.opt.long == "initialize");
    let mut b = Builder::new(init);
    for g in &argv.given {
        if let Some(done) = b.take(g, known, read)? {
            return Ok(done);
        }
    }
    b.finish(&argv, known, env)
}

/// The options read so far.
struct Builder {
    init: bool,
    out: Vec<String>,
    scripts: Vec<Script>,
    /// (is a file, name or path, weight), in order.
    entries: Vec<(bool, String, i64)>,
    /// The script files' texts, as read when `-f` named them.
    file_texts: Vec<String>,
    defines: Vec<String>,
    bench_set: bool,
    init_set: bool,
    facts: Facts,
    transactions: bool,
    no_vacuum: bool,
    host: Option<String>,
    port: Option<String>,
    user: Option<String>,
    /// The first option tidebench cannot take, refused once pgbench's own checks pass.
    unsupported: Option<String>,
    /// -l, --sampling-rate, --aggregate-interval, --log-prefix, -P, --progress-timestamp:
    /// what pgbench checks between them once its options are read.
    logs: LogOptions,
}

/// The log and progress options as given, for pgbench's checks between them.
#[derive(Debug, Clone, Default)]
struct LogOptions {
    log: bool,
    sampling: bool,
    aggregate: Option<i64>,
    prefix: bool,
    progress: bool,
    timestamp: bool,
}

impl Builder {
    fn new(init: bool) -> Builder {
        Builder {
            init,
            out: Vec::new(),
            scripts: Vec::new(),
            entries: Vec::new(),
            file_texts: Vec::new(),
            defines: Vec::new(),
            bench_set: false,
            init_set: false,
            facts: Facts {
                scripts: Vec::new(),
                internal: false,
                scale: 1,
                scale_given: false,
                protocol: "simple".into(),
                clients: 1,
                threads: 1,
                max_tries: 1,
                length: Length::PerClient(DEFAULT_TRANSACTIONS),
                latency_samples: false,
                rate: false,
                failures_detailed: false,
                per_command: false,
                debug: false,
                connect_each: false,
                progress_timestamp: false,
                vacuum: true,
                vacuum_accounts: false,
                target: String::new(),
                seed_given: false,
            },
            transactions: false,
            no_vacuum: false,
            host: None,
            port: None,
            user: None,
            unsupported: None,
            logs: LogOptions::default(),
        }
    }

    /// One option: checked as pgbench checks it, then kept. `Some` ends the reading
    /// (`-b list`, `--show-script`).
    fn take(
        &mut self,
        g: &Given,
        known: &Known,
        read: &dyn Fn(&str) -> std::io::Result<String>,
    ) -> Result<Option<Request>, Refusal> {
        match g.opt.mode {
            Mode::Bench => self.bench_set = true,
            Mode::Init => self.init_set = true,
            Mode::Both => {}
        }
        let value = g.value.clone().unwrap_or_default();
        // `-b list` and `--show-script NAME` end pgbench at once.
        match (g.opt.long, value.as_str()) {
            ("builtin", "list") => return Ok(Some(Request::ListBuiltins)),
            ("show-script", name) => return Ok(Some(Request::ShowScript(find_builtin(name)?.0))),
            _ => {}
        }
        if !self.take_script(g.opt.long, &value, read)? {
            self.take_number(g.opt.long, &value)?;
            self.take_other(g.opt.long, value)?;
        }
        self.pass_on(g, known);
        Ok(None)
    }

    /// Modes, connection and the rest.
    fn take_other(&mut self, long: &str, value: String) -> Result<(), Refusal> {
        match long {
            "protocol" => match value.as_str() {
                "simple" | "extended" | "prepared" => self.facts.protocol = value,
                _ => return Err(refuse(format!("invalid query mode (-M): \"{value}\""))),
            },
            "random-seed" => self.random_seed(&value)?,
            "partition-method" if !["range", "hash"].contains(&value.to_lowercase().as_str()) => {
                return Err(refuse(format!(
                    "invalid partition method, expecting \"range\" or \"hash\", got: \"{value}\""
                )))
            }
            "init-steps" => init_steps(&value)?,
            "no-vacuum" => self.no_vacuum = true,
            "vacuum-all" => self.facts.vacuum_accounts = true,
            "failures-detailed" => self.facts.failures_detailed = true,
            "report-per-command" => self.facts.per_command = true,
            "debug" => self.facts.debug = true,
            "connect" => self.facts.connect_each = true,
            "host" => self.host = Some(value),
            "port" => self.port = Some(value),
            "username" => self.user = Some(value),
            _ => {}
        }
        Ok(())
    }

    /// The options that choose scripts and their variables; true when `long` is one.
    fn take_script(
        &mut self,
        long: &str,
        value: &str,
        read: &dyn Fn(&str) -> std::io::Result<String>,
    ) -> Result<bool, Refusal> {
        match long {
            "builtin" => {
                let (name, weight) = weighted(value)?;
                self.add_builtin(find_builtin(name)?, weight)?;
            }
            "select-only" => self.add_builtin(BUILTINS[2], 1)?,
            "skip-some-updates" => self.add_builtin(BUILTINS[1], 1)?,
            "file" => {
                let (path, weight) = weighted(value)?;
                // pgbench reads the file when it meets `-f`; `-` is standard input.
                if path != "-" {
                    self.file_texts
                        .push(read(path).map_err(|e| unreadable(path, &e))?);
                }
                self.add_entry((true, path.to_string(), weight))?;
            }
            "define" => {
                match value.split_once('=') {
                    Some((n, v)) if !n.is_empty() && !v.is_empty() => {}
                    _ => return Err(refuse(format!("invalid variable definition: \"{value}\""))),
                }
                self.defines.push(value.to_string());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The options with a number, checked with pgbench's ranges and words.
    fn take_number(&mut self, long: &str, value: &str) -> Result<(), Refusal> {
        let int = || -> Result<i64, Refusal> {
            let (name, min) = pgbench_argv::int_option(long).unwrap_or(("option", 0));
            pgbench_argv::parse_int(value, name, min).map_err(refuse)
        };
        match long {
            "client" => self.facts.clients = int()?,
            "jobs" => self.facts.threads = int()?,
            "time" => self.facts.length = Length::Seconds(int()?),
            "transactions" => {
                self.facts.length = Length::PerClient(int()?);
                self.transactions = true;
            }
            "progress" => {
                int()?;
                self.logs.progress = true;
                self.facts.latency_samples = true;
                self.push("--progress", &format!("{}s", value.trim()));
            }
            "rate" => {
                let rate = leading_float(value);
                if rate <= 0.0 {
                    return Err(refuse(format!("invalid rate limit: \"{value}\"")));
                }
                self.facts.latency_samples = true;
                self.facts.rate = true;
                self.push("--rate", &rate.to_string());
            }
            "max-tries" => match value.trim().parse::<i64>() {
                Ok(n) if n >= 0 => self.facts.max_tries = n,
                _ => {
                    return Err(refuse(format!(
                        "invalid number of maximum tries: \"{value}\""
                    )))
                }
            },
            "scale" => {
                self.facts.scale = int()?;
                self.facts.scale_given = true;
            }
            "fillfactor" | "partitions" => {
                int()?;
            }
            _ => self.take_log_number(long, value)?,
        }
        Ok(())
    }

    /// -L, --sampling-rate and --aggregate-interval, in pgbench's words when refused.
    fn take_log_number(&mut self, long: &str, value: &str) -> Result<(), Refusal> {
        match long {
            "latency-limit" => {
                let ms = leading_float(value);
                if ms <= 0.0 {
                    return Err(refuse(format!("invalid latency limit: \"{value}\"")));
                }
                self.facts.latency_samples = true;
                self.push("--latency-limit", &ms.to_string());
            }
            "sampling-rate" => {
                let rate = leading_float(value);
                if rate <= 0.0 || rate > 1.0 {
                    return Err(refuse(format!("invalid sampling rate: \"{value}\"")));
                }
                self.logs.sampling = true;
            }
            "aggregate-interval" => {
                let (name, min) = pgbench_argv::int_option(long).unwrap_or(("option", 1));
                let n = pgbench_argv::parse_int(value, name, min).map_err(refuse)?;
                self.logs.aggregate = Some(n);
            }
            "log" => self.logs.log = true,
            "log-prefix" => self.logs.prefix = true,
            "progress-timestamp" => {
                self.logs.timestamp = true;
                self.facts.progress_timestamp = true;
            }
            _ => {}
        }
        Ok(())
    }

    /// An option that maps to a tidebench flag of the mode being run goes on as it is; one
    /// with no counterpart (in this build) is noted for refusal.
    fn pass_on(&mut self, g: &Given, known: &Known) {
        let wrong_mode = match g.opt.mode {
            Mode::Bench => self.init,
            Mode::Init => !self.init,
            Mode::Both => false,
        };
        let missing = match g.opt.to {
            // The mode error comes first, as pgbench's.
            _ if wrong_mode => false,
            To::Flag(flag) if known.has(self.init, flag) => {
                // pgbench takes an option again (the last value counts), clap does not.
                self.drop_flag(&format!("--{flag}"), g.opt.takes_value);
                self.out.push(format!("--{flag}"));
                self.out.extend(g.value.clone());
                false
            }
            To::Flag(_) | To::Unsupported => true,
            To::Own => false,
        };
        if missing && self.unsupported.is_none() {
            self.unsupported = Some(g.spelled.clone());
        }
    }

    /// Forgets `flag` (and its value) given earlier.
    fn drop_flag(&mut self, flag: &str, with_value: bool) {
        if let Some(at) = self.out.iter().position(|a| a == flag) {
            let end = (at + 1 + usize::from(with_value)).min(self.out.len());
            self.out.drain(at..end);
        }
    }

    fn push(&mut self, flag: &str, value: &str) {
        self.drop_flag(flag, true);
        self.out.push(flag.to_string());
        self.out.push(value.to_string());
    }

    fn add_builtin(
        &mut self,
        b: (&'static str, &'static str, &'static str),
        weight: i64,
    ) -> Result<(), Refusal> {
        self.add_entry((false, b.0.to_string(), weight))?;
        self.facts.internal = true;
        Ok(())
    }

    /// pgbench's refusal, before it connects, of a script file's statement with more
    /// variables than the extended and prepared protocols send as parameters.
    fn no_wide_statement(&self) -> Result<(), Refusal> {
        for text in &self.file_texts {
            if let Some(sql) = script::wide_statement(text) {
                return Err(refuse(format!(
                    "statement has too many arguments (maximum is {}): {sql}",
                    script::MAX_PARAMS
                )));
            }
        }
        Ok(())
    }

    /// One more script, refused as pgbench refuses the 129th when it reads it.
    fn add_entry(&mut self, entry: (bool, String, i64)) -> Result<(), Refusal> {
        if self.entries.len() >= MAX_SCRIPTS {
            return Err(refuse(format!(
                "at most {MAX_SCRIPTS} SQL scripts are allowed"
            )));
        }
        self.entries.push(entry);
        Ok(())
    }

    fn random_seed(&mut self, value: &str) -> Result<(), Refusal> {
        self.facts.seed_given = true;
        match value {
            // tidebench's default seed comes from the clock, as pgbench's "time".
            "time" | "rand" => Ok(()),
            n => match n.parse::<u64>() {
                Ok(seed) => {
                    self.push("--seed", &seed.to_string());
                    Ok(())
                }
                Err(_) => Err(refuse(format!(
                    "unrecognized random seed option \"{value}\"\n\
                     detail: Expecting an unsigned integer, \"time\" or \"rand\".\n\
                     error: error while setting random seed from --random-seed option"
                ))),
            },
        }
    }

    /// pgbench's checks after its options, then the arguments of `prepare` or `run`.
    fn finish(
        mut self,
        argv: &Argv,
        known: &Known,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Request, Refusal> {
        let dbname = match argv.operands.first() {
            Some(d) => d.clone(),
            None => env("PGDATABASE")
                .filter(|v| !v.is_empty())
                .or_else(|| env("PGUSER").filter(|v| !v.is_empty()))
                .or_else(|| env("USER").filter(|v| !v.is_empty()))
                .unwrap_or_else(|| "root".into()),
        };
        if let Some(extra) = argv.operands.get(1) {
            return Err(Refusal {
                message: format!("too many command-line arguments (first is \"{extra}\")"),
                hint: true,
                getopt: false,
            });
        }
        self.facts.target = target(
            self.host.as_deref(),
            self.port.as_deref(),
            self.user.as_deref(),
            &dbname,
        );
        if self.init {
            return self.finish_init(argv, known);
        }
        if self.init_set {
            return Err(refuse(
                "some of the specified options cannot be used in benchmarking mode",
            ));
        }
        let given = |long: &str| argv.given.iter().any(|g| g.opt.long == long);
        if given("time") && given("transactions") {
            return Err(refuse(
                "specify either a number of transactions (-t) or a duration (-T), not both",
            ));
        }
        if self.facts.max_tries == 0 && !given("time") && !given("latency-limit") {
            return Err(refuse(
                "an unlimited number of transaction tries can only be used with --latency-limit \
                 or a duration (-T)",
            ));
        }
        self.logs.check(self.facts.length)?;
        if let Some(spelled) = self.unsupported.take() {
            return Err(not_supported(&spelled));
        }
        self.finish_bench(known)
    }

    fn finish_init(mut self, argv: &Argv, known: &Known) -> Result<Request, Refusal> {
        if self.bench_set {
            return Err(refuse(
                "some of the specified options cannot be used in initialization (-i) mode",
            ));
        }
        let given = |long: &str| argv.given.iter().any(|g| g.opt.long == long);
        if given("partition-method") && !argv.given.iter().any(partitions_above_zero) {
            return Err(refuse(
                "--partition-method requires greater than zero --partitions",
            ));
        }
        if let Some(spelled) = self.unsupported.take() {
            return Err(not_supported(&spelled));
        }
        if self.no_vacuum {
            if !known.has(true, "no-vacuum") {
                return Err(not_supported("-n"));
            }
            self.out.push("--no-vacuum".into());
        }
        let mut out: Vec<String> = ["--workload", "tpcb", "--force", "--scale"]
            .map(String::from)
            .to_vec();
        out.push(self.facts.scale.to_string());
        out.push("--target".into());
        out.push(self.facts.target.clone());
        out.extend(self.out);
        Ok(Request::Init(out))
    }

    fn finish_bench(mut self, known: &Known) -> Result<Request, Refusal> {
        if self.entries.is_empty() {
            self.add_builtin(BUILTINS[0], 1)?;
        }
        if self.entries.iter().map(|e| e.2).sum::<i64>() == 0 {
            return Err(refuse("total script weight must not be zero"));
        }
        if self.facts.protocol != "simple" {
            self.no_wide_statement()?;
        }
        let f = &mut self.facts;
        f.threads = f.threads.min(f.clients);
        f.vacuum = !self.no_vacuum;
        let mut out = vec![
            "--target".to_string(),
            f.target.clone(),
            "--clients".into(),
            f.clients.to_string(),
            "--jobs".into(),
            f.threads.to_string(),
            "--protocol".into(),
            f.protocol.clone(),
            "--max-tries".into(),
            run_max_tries(f.max_tries),
        ];
        match f.length {
            Length::Seconds(s) => out.extend(["--duration".into(), format!("{s}s")]),
            Length::PerClient(n) if !self.transactions => {
                if !known.has(false, "transactions") {
                    return Err(refuse(
                        "running without -T (pgbench's default is -t 10) needs -t, which is not \
                         supported yet; give -T SECONDS",
                    ));
                }
                out.extend(["--transactions".into(), n.to_string()]);
            }
            Length::PerClient(_) => {}
        }
        if !self.out.iter().any(|a| a == "--progress") {
            out.extend(["--progress".into(), "0".into()]);
        }
        out.extend(self.scripts_args());
        out.append(&mut self.out);
        self.facts.scripts = self.scripts;
        Ok(Request::Bench(out, self.facts))
    }

    /// The scripts: one built-in alone runs as tidebench's own workload of it; anything else
    /// runs through the script interpreter (`-f`, `-b`, `-D`).
    fn scripts_args(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        if self.facts.debug && !self.init {
            out.push("--debug".into());
        }
        let alone = self.entries.len() == 1
            && !self.entries[0].0
            && self.defines.is_empty()
            && !self.facts.per_command
            && !self.facts.debug;
        let mut names: Vec<String> = Vec::new();
        for (file, name, weight) in &self.entries {
            let (desc, base) = if *file {
                let stem = std::path::Path::new(name)
                    .file_stem()
                    .map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
                (name.clone(), stem)
            } else {
                let b = BUILTINS.iter().find(|b| b.0 == name).copied();
                let b = b.unwrap_or(BUILTINS[0]);
                if alone {
                    out.extend(["--workload".into(), b.2.into()]);
                }
                (b.1.to_string(), name.clone())
            };
            if !alone {
                out.push(if *file { "-f" } else { "-b" }.into());
                out.push(format!("{name}@{weight}"));
            }
            names.push(base);
            self.scripts.push(Script {
                desc,
                weight: *weight,
                txn_type: String::new(),
            });
        }
        // The interpreter names files first, then built-ins, a repeated name with #2, #3...
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by_key(|&i| !self.entries[i].0);
        let mut taken: Vec<String> = Vec::new();
        for i in order {
            let base = names[i].clone();
            let mut name = base.clone();
            let mut k = 2;
            while taken.contains(&name) {
                name = format!("{base}#{k}");
                k += 1;
            }
            taken.push(name.clone());
            self.scripts[i].txn_type = name;
        }
        for d in &self.defines {
            out.extend(["-D".into(), d.clone()]);
        }
        // Without a built-in pgbench's :scale is -s (default 1), never the data's.
        if !self.facts.internal && !self.defines.iter().any(|d| d.starts_with("scale=")) {
            out.extend(["-D".into(), format!("scale={}", self.facts.scale)]);
        }
        out
    }
}

impl LogOptions {
    /// pgbench 15's checks between the log options, in its order and words.
    fn check(&self, length: Length) -> Result<(), Refusal> {
        if self.sampling && !self.log {
            return Err(refuse(
                "log sampling (--sampling-rate) is allowed only when logging transactions (-l)",
            ));
        }
        if self.sampling && self.aggregate.is_some() {
            return Err(refuse(
                "log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot \
                 be used at the same time",
            ));
        }
        if self.aggregate.is_some() && !self.log {
            return Err(refuse(
                "log aggregation is allowed only when actually logging transactions",
            ));
        }
        if self.prefix && !self.log {
            return Err(refuse(
                "log file prefix (--log-prefix) is allowed only when logging transactions (-l)",
            ));
        }
        if let (Some(every), Length::Seconds(secs)) = (self.aggregate, length) {
            if every > secs {
                return Err(refuse(format!(
                    "number of seconds for aggregation ({every}) must not be higher than test \
                     duration ({secs})"
                )));
            }
            if secs % every != 0 {
                return Err(refuse(format!(
                    "duration ({secs}) must be a multiple of aggregation interval ({every})"
                )));
            }
        }
        if self.timestamp && !self.progress {
            return Err(refuse(
                "--progress-timestamp is allowed only under --progress",
            ));
        }
        Ok(())
    }
}

fn partitions_above_zero(g: &Given) -> bool {
    g.opt.long == "partitions"
        && g.value
            .as_deref()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .is_some_and(|n| n > 0)
}

/// `--max-tries` for `run`: pgbench's 0 (unlimited, allowed only with -T or --latency-limit)
/// becomes the most tidebench counts, 4294967295 tries: the run's end stops the retries first.
fn run_max_tries(pgbench: i64) -> String {
    match pgbench {
        0 => u32::MAX.to_string(),
        n => n.to_string(),
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
