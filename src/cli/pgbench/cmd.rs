//! `tidebench pgbench ARGS...`: a drop-in for pgbench 15's command line (issue 38, item 2),
//! so `alias pgbench='tidebench pgbench'` keeps a user's scripts and their exit statuses.
//!
//! pgbench's argv is read as pgbench reads it (`argv`), turned into the arguments of
//! tidebench's own `run` or `prepare` (`plan`) and parsed by the same clap grammar,
//! then run against the server pgbench would connect to (never a managed instance). The
//! results dir is written as for any run (its place on stderr); stdout gets pgbench's summary
//! block (`block`) and stderr pgbench's `-P` lines.
//!
//! Exit statuses are pgbench's: 0 done, 1 bad options or a setup pgbench would refuse (no
//! server, no tables), 2 a run with aborted clients; 130 after Ctrl-C.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::plan::{self, Facts, Known, Request};
use super::refusal::Refusal;
use super::{abort, block, script_error, values};
use crate::cli::args::{self, Command, PgbenchArgs};
use crate::cli::common::{cores, exit_on_second_signal, on_host, runtime, EXIT_INTERRUPTED};
use crate::cli::error::EXIT_USAGE;
use crate::cli::{CliError, WorkloadFlags};
use crate::config;
use crate::config::plan::PgbenchBeforeRun;
use crate::driver::Stop;
use crate::event::{Event, PgbenchTables, PrepareFailed, RunWarning, Sink, VacuumStep};
use crate::instance::Home;
use crate::runner::RunError;
use crate::target::TargetError;
use crate::workload::pgbench::BeforeRunError;
use crate::workload::Registry;

/// pgbench's exit status for bad options and a refused setup.
const EXIT_PGBENCH_USAGE: u8 = 1;
/// pgbench's exit status when a client aborted.
const EXIT_PGBENCH_ABORTED: u8 = 2;
const NAME: &str = "tidebench pgbench";

/// Runs `tidebench pgbench ARGS` and returns pgbench's exit status.
pub fn pgbench(args: PgbenchArgs, home: &Home) -> Result<u8, CliError> {
    let env = |name: &str| std::env::var(name).ok();
    let read = |path: &str| std::fs::read_to_string(path);
    let request = match plan::request(&args.args, &Known::from_grammar(), &env, &read) {
        Ok(r) => r,
        Err(refusal) => return Ok(refused(&refusal)),
    };
    match request {
        Request::Help => print!("{HELP}"),
        Request::Version => println!(
            "pgbench (PostgreSQL) 15 (tidebench {}, pgbench 15's command line)",
            env!("CARGO_PKG_VERSION")
        ),
        Request::ListBuiltins => eprintln!("{}", values::builtin_list()),
        Request::ShowScript(name) => show_script(name),
        Request::Init(argv) => return Ok(init(argv, home)),
        Request::Bench(argv, facts) => return Ok(bench(argv, &facts, args.notes, home)),
    }
    Ok(0)
}

/// pgbench's `--show-script NAME`, on stderr as pgbench writes it.
fn show_script(name: &str) {
    let text = crate::workload::script::builtin::BUILTINS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, t)| t);
    let desc = values::BUILTINS
        .iter()
        .find(|b| b.0 == name)
        .map_or("", |b| b.1);
    eprintln!("-- {name}: {desc}\n{text}");
}

/// Says why, in pgbench's shape, and gives its exit status for bad options.
fn refused(r: &Refusal) -> u8 {
    let level = if r.getopt { "" } else { "error: " };
    // A further line of the message that is a message of its own (`detail: ...`) carries
    // the program's prefix too; others (a list of built-ins) come bare, as pgbench's.
    let mut lines = r.message.split('\n');
    eprintln!("{NAME}: {level}{}", lines.next().unwrap_or_default());
    for line in lines {
        let own = ["detail: ", "hint: ", "error: "]
            .iter()
            .any(|l| line.starts_with(l));
        if own {
            eprintln!("{NAME}: {line}");
        } else {
            eprintln!("{line}");
        }
    }
    if r.hint {
        eprintln!("{NAME}: hint: Try \"{NAME} --help\" for more information.");
    }
    EXIT_PGBENCH_USAGE
}

/// tidebench's own grammar on the translated arguments: a mapping this module got wrong
/// shows as clap's message, with pgbench's exit status.
fn parse(command: &str, argv: Vec<String>) -> Result<(Command, WorkloadFlags), u8> {
    let full = ["tidebench".to_string(), command.to_string()]
        .into_iter()
        .chain(argv);
    match args::parse_from(full) {
        Ok((cli, flags)) => Ok((cli.command, flags)),
        Err(e) => {
            let text = e.render().to_string();
            Err(refused(&Refusal {
                message: text.trim_start_matches("error: ").trim_end().to_string(),
                hint: false,
                getopt: false,
            }))
        }
    }
}

/// `-i`: `tidebench prepare --workload tpcb --force` on the target; 1 where it refuses.
fn init(argv: Vec<String>, home: &Home) -> u8 {
    match parse("prepare", argv) {
        Ok((Command::Prepare(prepare), flags)) => {
            match crate::cli::prepare_cmd::prepare(prepare, &flags, home) {
                Ok(code) => code,
                Err(e) => setup_refused(&e),
            }
        }
        Ok(_) => EXIT_PGBENCH_USAGE,
        Err(code) => code,
    }
}

/// A refused setup (no server, no tables, a bad file): pgbench's 1 where tidebench says 2.
fn setup_refused(e: &CliError) -> u8 {
    let text = crate::error_chain::one_line(e);
    match script_error::pgbench_lines(&text) {
        Some(lines) => {
            let mut lines = lines.iter();
            if let Some(first) = lines.next() {
                eprintln!("{NAME}: error: {first}");
            }
            // The line and the caret come unprefixed, as pgbench prints them.
            for line in lines {
                eprintln!("{line}");
            }
        }
        None => eprintln!("{NAME}: error: {text}"),
    }
    match e.code() {
        EXIT_USAGE => EXIT_PGBENCH_USAGE,
        code => code,
    }
}

/// A benchmark: the run (pgbench's branch count and vacuum first), pgbench's summary block.
/// `notes`: tidebench's own lines too (`--tidebench-notes`).
fn bench(mut argv: Vec<String>, facts: &Facts, notes: bool, home: &Home) -> u8 {
    let out = match results_dir() {
        Ok(dir) => dir,
        Err(e) => return setup_refused(&e),
    };
    argv.extend(["--out".to_string(), out.display().to_string()]);
    argv.extend(["--sample".to_string(), "0".to_string()]);
    let (run, flags) = match parse("run", argv) {
        Ok((Command::Run(run), flags)) => (run, flags),
        Ok(_) => return EXIT_PGBENCH_USAGE,
        Err(code) => return code,
    };
    // The raw config is complete here: validation takes it as it is.
    let raw = config::RawRun {
        // pgbench's script_no: the scripts' order on the command line.
        log_scripts: Some(facts.scripts.iter().map(|s| s.txn_type.clone()).collect()),
        failures_detailed: Some(facts.failures_detailed),
        pgbench_before_run: Some(PgbenchBeforeRun {
            count_branches: facts.internal,
            scale_given: facts.scale_given,
            vacuum: facts.vacuum,
            vacuum_accounts: facts.vacuum_accounts,
        }),
        ..run.run.to_raw(&flags)
    };
    let plan = match config::build_run_plan(
        on_host(run.run.source()),
        raw,
        cores(),
        config::seed_from_clock(),
        &Registry,
    ) {
        Ok(plan) => plan,
        Err(e) => return setup_refused(&e.into()),
    };
    if facts.seed_given {
        // pgbench's info line, the seed "time" or "rand" chose included.
        eprintln!("{NAME}: setting random seed to {}", plan.seed);
    }
    match drive(plan, facts, notes, home) {
        Ok(code) => code,
        Err(e) => setup_refused(&e),
    }
}

/// Runs the plan with pgbench's terminal: header, vacuum (the runner has the pgbench workload
/// do it), `-P` lines, the block.
fn drive(plan: config::RunPlan, facts: &Facts, notes: bool, home: &Home) -> Result<u8, CliError> {
    let rt = runtime()?;
    let stop = Stop::new();
    let sink = Arc::new(PgbenchSink {
        max_tries: facts.max_tries,
        scripts: facts.scripts.clone(),
        timestamp: facts.progress_timestamp,
        notes,
        connect: Mutex::new(Duration::ZERO),
        partitions: Mutex::new(None),
        unprepared: Mutex::new(Vec::new()),
        setup_line: Mutex::new(facts.debug.then(|| setup_line(facts))),
    });
    let events: Arc<dyn Sink> = sink.clone();
    rt.spawn(
        stop.clone()
            .on_signals(Arc::clone(&events), exit_on_second_signal),
    );
    println!("pgbench (tidebench {})", env!("CARGO_PKG_VERSION"));
    let outcome = match rt.block_on(crate::runner::run(plan, home, stop, events)) {
        Ok(outcome) => outcome,
        Err(RunError::PgbenchBeforeRun(e @ BeforeRunError::NoBranches { .. })) => {
            // The setup session did connect.
            sink.say_setup();
            return Ok(no_branches(&e));
        }
        Err(RunError::PgbenchBeforeRun(BeforeRunError::Target(TargetError::Connect {
            message,
            ..
        }))) => return Ok(no_connection(&facts.target, &message)),
        Err(e) => return Err(e.into()),
    };
    let s = &outcome.summary;
    // pgbench's line for each aborted client stands for tidebench's "client N aborted" warning.
    let unprepared = sink
        .unprepared
        .lock()
        .map(|u| u.clone())
        .unwrap_or_default();
    for a in &s.aborted_clients {
        let a = abort::after_failed_prepare(a, &unprepared).unwrap_or_else(|| a.clone());
        for line in abort::lines(&a, &facts.scripts) {
            eprintln!("{NAME}: error: {line}");
        }
    }
    let aborted = |w: &&RunWarning| matches!(w, RunWarning::ClientAborted { .. });
    for w in outcome.warnings.iter().filter(|w| notes && !aborted(w)) {
        eprintln!("{NAME}: warning: {w}");
    }
    let tables = block::Tables {
        scale: outcome.scales.first().copied(),
        partitions: sink.partitions.lock().map_or(None, |p| *p),
    };
    let connect = sink.connect.lock().map_or(Duration::ZERO, |c| *c);
    print!("{}", block::render(facts, s, &tables, connect));
    if notes {
        eprintln!("{NAME}: results in {}", outcome.dir.display());
    }
    if s.failure.is_some() || !s.aborted_clients.is_empty() {
        if let Some(why) = &s.failure {
            eprintln!("{NAME}: error: {why}");
        }
        eprintln!("{NAME}: error: Run was aborted; the above results are incomplete.");
        return Ok(EXIT_PGBENCH_ABORTED);
    }
    Ok(if s.complete { 0 } else { EXIT_INTERRUPTED })
}

/// pgbench's words when its setup session cannot connect: libpq's connection error (a
/// server's refusal at the startup as libpq words it, `FATAL:  ...`), then its own; exit 1.
fn no_connection(target: &str, message: &str) -> u8 {
    let place = match crate::target::parse_dsn(target) {
        Ok(p) => match &p.host {
            pgwire::Host::Unix(dir) => {
                format!("on socket \"{}/.s.PGSQL.{}\"", dir.display(), p.port)
            }
            pgwire::Host::Tcp(host) => format!("at \"{host}\", port {}", p.port),
        },
        Err(_) => format!("for \"{target}\""),
    };
    let said = match message.rsplit_once(" (SQLSTATE ") {
        Some((words, _)) => format!("FATAL:  {words}"),
        None => message.to_string(),
    };
    eprintln!("{NAME}: error: connection to server {place} failed: {said}");
    eprintln!("{NAME}: error: could not create connection for setup");
    EXIT_PGBENCH_USAGE
}

/// pgbench's refusal when it cannot count pgbench_branches before a run: its error, its hint
/// to initialize when the table is not there, and exit 1.
fn no_branches(e: &BeforeRunError) -> u8 {
    eprintln!("{NAME}: error: {e}");
    if let BeforeRunError::NoBranches {
        no_table: true,
        dbname,
        ..
    } = e
    {
        eprintln!(
            "{NAME}: hint: Perhaps you need to do initialization (\"pgbench -i\") in database \
             \"{dbname}\"."
        );
    }
    EXIT_PGBENCH_USAGE
}

/// Where the drop-in's results dirs go: `$TIDEBENCH_HOME/pgbench-runs/` when the variable is
/// set, else `pgbench-runs` under the system's temp dir (`/tmp/tidebench-<uid>/`), so a user's
/// working directory gets nothing a pgbench run would not leave there. One dir per run.
fn results_dir() -> Result<PathBuf, CliError> {
    let base = match std::env::var_os("TIDEBENCH_HOME") {
        Some(home) if !home.is_empty() => PathBuf::from(home).join("pgbench-runs"),
        _ => {
            // SAFETY: geteuid has no preconditions.
            let uid = unsafe { libc::geteuid() };
            std::env::temp_dir()
                .join(format!("tidebench-{uid}"))
                .join("pgbench-runs")
        }
    };
    std::fs::create_dir_all(&base).map_err(|e| {
        CliError::usage(format!(
            "cannot create {} for the results dir: {e} (set TIDEBENCH_HOME to a writable dir)",
            base.display()
        ))
    })?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(base.join(format!("run-{stamp}-{}", std::process::id())))
}

/// The terminal in pgbench's manner: its `-P` lines, warnings, a script's `debug()`; the
/// rest of tidebench's talk stays in the results dir.
struct PgbenchSink {
    max_tries: i64,
    /// The run's scripts, in pgbench's order: `--verbose-errors` lines name them by number.
    scripts: Vec<plan::Script>,
    /// --progress-timestamp: `-P` lines start with the Unix time.
    timestamp: bool,
    /// `--tidebench-notes`: tidebench's own warnings too (pgbench has none of them).
    notes: bool,
    /// From the run's start: how long opening the sessions took.
    connect: Mutex<Duration>,
    /// pgbench_accounts' partitioning method and count, when it is partitioned.
    partitions: Mutex<Option<(&'static str, i64)>>,
    /// Statements whose PREPARE failed: the client's abort is said as pgbench 15 says it.
    unprepared: Mutex<Vec<PrepareFailed>>,
    /// `-d`: pgbench's line about its setup session, said once that session is open.
    setup_line: Mutex<Option<String>>,
}

impl PgbenchSink {
    /// Says the `-d` setup line, the first time only.
    fn say_setup(&self) {
        if let Some(line) = self.setup_line.lock().ok().and_then(|mut l| l.take()) {
            eprintln!("{NAME}: {line}");
        }
    }
}

/// pgbench's `-d` line after it opens its setup session: the host, port and database the
/// session uses, and the run's clients and length.
fn setup_line(facts: &Facts) -> String {
    let (host, port, db) = match crate::target::parse_dsn(&facts.target) {
        Ok(p) => {
            let host = match &p.host {
                pgwire::Host::Unix(dir) => dir.display().to_string(),
                pgwire::Host::Tcp(host) => host.clone(),
            };
            (host, p.port.to_string(), p.dbname)
        }
        Err(_) => Default::default(),
    };
    let (what, n) = match facts.length {
        plan::Length::PerClient(n) => ("nxacts", n),
        plan::Length::Seconds(n) => ("duration", n),
    };
    format!(
        "pghost: {host} pgport: {port} nclients: {} {what}: {n} dbName: {db}",
        facts.clients
    )
}

impl Sink for PgbenchSink {
    fn send(&self, event: Event) {
        if matches!(
            event,
            Event::RunStarting(_) | Event::Vacuum(_) | Event::PgbenchTables(_) | Event::Trace(_)
        ) {
            // Each comes once pgbench's setup session is open.
            self.say_setup();
        }
        match event {
            Event::RunStarting(d) => {
                if let Ok(mut c) = self.connect.lock() {
                    *c = d.connect;
                }
            }
            Event::Progress(p) => {
                let unix = self.timestamp.then(|| {
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0.0, |d| d.as_secs_f64())
                });
                eprintln!("{}", block::progress_line(&p, self.max_tries, unix))
            }
            Event::Warning(w) if self.notes => eprintln!("{NAME}: warning: {w}"),
            Event::PgbenchTables(PgbenchTables::ScaleIgnored { count }) => eprintln!(
                "{NAME}: warning: scale option ignored, using count from pgbench_branches \
                 table ({count})"
            ),
            Event::PgbenchTables(PgbenchTables::Partitioned { method, count }) => {
                if let Ok(mut p) = self.partitions.lock() {
                    *p = Some((method, count));
                }
            }
            // pgbench leaves notices to libpq, which prints them bare.
            Event::ScriptDebug(line) | Event::ServerNotice(line) => eprintln!("{line}"),
            Event::Trace(line) => eprintln!("{NAME}: {line}"),
            // pgbench logs the PREPARE's error and runs on, to abort on the execution.
            Event::PrepareFailed(f) => {
                eprintln!("{NAME}: error: {}", f.text);
                if let Ok(mut u) = self.unprepared.lock() {
                    u.push(f);
                }
            }
            Event::Vacuum(step) => vacuum_words(&step),
            Event::TryError(e) => eprintln!(
                "{NAME}: {}",
                block::try_error_line(&e, &self.scripts, self.max_tries)
            ),
            Event::Incidents(all) if self.notes => {
                for i in all {
                    eprintln!("{NAME}: warning: {}: {}", i.instance, i.detail);
                }
            }
            _ => {}
        }
    }
}

/// pgbench's words for its vacuum before a run.
fn vacuum_words(step: &VacuumStep) {
    match step {
        VacuumStep::Started { accounts: false } => eprint!("starting vacuum..."),
        VacuumStep::Started { accounts: true } => eprint!("starting vacuum pgbench_accounts..."),
        VacuumStep::Failed(why) => {
            eprintln!("{NAME}: error: {why}\n(ignoring this error and continuing anyway)")
        }
        VacuumStep::Done => eprintln!("end."),
    }
}

const HELP: &str = "\
tidebench pgbench: pgbench 15's command line, run by tidebench.

  alias pgbench='tidebench pgbench'

takes a pgbench command line as pgbench 15 reads it (clustered short options -Sn, values
attached or not -c4 / -c 4 / --client=4, long names shortened to a unique prefix, the database
name anywhere, `--`), connects as pgbench would (-h, -p, -U, the database name, else PGDATABASE,
else PGUSER, else your user name; PGHOST, PGPORT, PGPASSWORD, PGPASSFILE... as libpq), runs
tidebench on that server (it never starts a server of its own) and prints pgbench's summary
block on stdout, its -P progress lines on stderr. Exit status as pgbench's: 0 done, 1 bad
options or a refused setup (no server, no pgbench tables), 2 a run with aborted clients.

Usage:
  tidebench pgbench [--tidebench-notes] [OPTION]... [DBNAME]

Taken (pgbench's meaning):
  -i, --initialize         tidebench prepare --workload tpcb --force (-s, -n, and the
                           initialization options below when tidebench has them)
  -s, --scale=NUM          -i: scale; a run: :scale of scripts without a built-in
  -b, --builtin=NAME[@W]   tpcb-like, simple-update, select-only, a unique prefix, or list
  -f, --file=FILENAME[@W]  a pgbench script (tidebench's interpreter, pgbench 15's language)
  -N, -S                   -b simple-update, -b select-only
  -c, --client=NUM         clients
  -D, --define=VAR=VALUE   a variable for scripts
  -j, --jobs=NUM           driver threads (at most the clients, as pgbench)
  -M, --protocol=simple|extended|prepared   (default: simple, as pgbench)
  -n, --no-vacuum          no vacuum before the run (else pgbench's: branches, tellers,
                           history truncated)
  -v, --vacuum-all         vacuum pgbench_accounts too
  -P, --progress=NUM       pgbench's progress line every NUM seconds
  --progress-timestamp     -P lines show the Unix time instead of the elapsed time
  -l, --log                pgbench's transaction log: pgbench_log.PID (thread 0) and
                           pgbench_log.PID.THREAD in the working directory, pgbench 15's columns
  --log-prefix=PREFIX      the log files' prefix (default: pgbench_log)
  --sampling-rate=NUM      log only this share of transactions
  --aggregate-interval=NUM one aggregated log line per NUM seconds, pgbench 15's columns
  -r, --report-per-command pgbench's statement latencies and failures per command
  -R, --rate=NUM           target rate (transactions per second, all clients)
  -L, --latency-limit=NUM  transactions over NUM ms are counted late; with -R, those already
                           that late when due are skipped (counted, not run)
  -T, --time=NUM           duration in seconds
  --failures-detailed      failures by kind in the summary block
  --verbose-errors         each try a serialization failure or deadlock failed, on stderr
  --max-tries=NUM          tries per transaction on serialization failure or deadlock
                           (0: unlimited, with -T only; run as 4294967295 tries)
  --random-seed=SEED       an integer, time or rand
  --show-script=NAME       print a built-in script, then exit
  -h, -p, -U               host or socket dir, port, user
  -V, --version, -?, --help   (first on the line, as pgbench)

Taken once tidebench has the flag of the same name (else refused as below):
  -t/--transactions (without -T, pgbench's default is -t 10), -C/--connect, --exit-on-abort,
  --continue-on-error; with -i: -I/--init-steps, -F/--fillfactor, -n/--no-vacuum, -q/--quiet,
  --foreign-keys, --tablespace, --index-tablespace, --partitions, --partition-method,
  --unlogged-tables

Refused (exit 1, \"option -X is not supported yet\"):
  -d/--debug

Results: each run also writes an ordinary tidebench results dir (summary.json,
intervals.csv, latency.hlog; `tidebench report DIR`), under $TIDEBENCH_HOME/pgbench-runs/ when
TIDEBENCH_HOME is set, else under /tmp/tidebench-<uid>/pgbench-runs/.

tidebench's own option (before pgbench's):
  --tidebench-notes        also print what pgbench does not: the results dir's path and
                           tidebench's own warnings (e.g. a target without
                           pg_stat_statements), on stderr. Without it stdout and stderr hold
                           pgbench's lines only.
";
