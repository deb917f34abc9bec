//! Command line: flags to config, commands to calls, errors to exit codes. No business logic:
//! each command builds a Plan through `config` and hands it to the room that owns the work.

pub mod args;
pub mod argv_scrub;
pub mod check_view;
pub mod console;
mod consolidate_cmd;
pub mod error;
pub mod experiment_cmd;
pub mod instance_cmd;
mod launch_cmd;
mod overhead_cmd;
mod pgbench_abort;
mod pgbench_argv;
mod pgbench_block;
pub mod pgbench_cmd;
mod pgbench_plan;
mod pgbench_values;
mod prepare_cmd;
mod shard_args;
pub mod target_cmd;
pub mod terminal;
pub mod workload_args;

use std::process::ExitCode;
use std::sync::Arc;

pub use args::{Cli, Command};
pub use error::CliError;
pub use workload_args::WorkloadFlags;

use crate::config;
use crate::driver::Stop;
use crate::event::Sink;
use crate::instance::Home;
use crate::workload::Registry;

/// Exit code of a run or prepare stopped by SIGINT/SIGTERM (results still written for a run).
pub const EXIT_INTERRUPTED: u8 = 130;
/// Exit code of a run that failed (a client or driver thread panicked), and of an experiment
/// with a failed run.
pub const EXIT_RUN_FAILED: u8 = 1;

/// Parses the command line, runs the command, and turns the result into an exit code.
pub fn main() -> ExitCode {
    let (cli, flags) = match args::parse() {
        Ok(parsed) => parsed,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { error::EXIT_USAGE } else { 0 });
        }
    };
    // clap holds its own copies now: take any password out of what `ps` shows of us.
    argv_scrub::scrub();
    match dispatch(cli.command, &flags) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("{}", e.said());
            ExitCode::from(e.code())
        }
    }
}

fn dispatch(command: Command, flags: &WorkloadFlags) -> Result<u8, CliError> {
    let home = Home::from_env();
    match command {
        Command::Run(args) => run(args, flags, &home),
        Command::Prepare(args) => prepare_cmd::prepare(args, flags, &home),
        Command::Instance(cmd) => instance_cmd::run(cmd, &home).map(|()| 0),
        Command::Target(cmd) => target_cmd::run(cmd, &home),
        Command::Presets(args) => presets(args),
        Command::Report(args) => report(args),
        Command::Compare(args) => compare(args),
        Command::Check(args) => check(args, &home),
        Command::Sweep(args) => experiment_cmd::sweep(args, flags, &home),
        Command::Density(args) => experiment_cmd::density(args, flags, &home),
        Command::Consolidate(args) => consolidate_cmd::consolidate(args, flags, &home),
        Command::BalloonHold { bytes } => match crate::instance::balloon_hold(bytes) {
            Ok(()) => Ok(0),
            Err(e) => {
                eprintln!("{e}");
                Ok(1)
            }
        },
        Command::GuestInit => crate::instance::vm::guest_init::run(),
        Command::Knee(args) => experiment_cmd::knee(args, flags, &home),
        Command::Overhead(args) => overhead_cmd::overhead(args, flags, &home),
        Command::Merge(args) => merge(args),
        Command::Slurm(args) => launch_cmd::slurm(args),
        Command::Kube(args) => launch_cmd::kube(args),
        Command::Pgbench(args) => pgbench_cmd::pgbench(args, &home),
    }
}

fn cores() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// A second Ctrl-C (or SIGTERM) while the first is being handled: exit at once. What the run
/// wrote so far stays in its `.partial` dir (`tidebench report DIR.partial` reads it).
fn exit_on_second_signal() -> ! {
    eprintln!("\nsecond interrupt: exiting now; what was written stays in the .partial dir");
    std::process::exit(130)
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))
}

/// What a command that runs or loads needs: the async runtime, the stop signal wired to Ctrl-C
/// and SIGTERM, and the terminal as the events' sink.
fn interactive() -> Result<(tokio::runtime::Runtime, Stop, Arc<dyn Sink>), CliError> {
    let rt = runtime()?;
    let stop = Stop::new();
    let events: Arc<dyn Sink> = Arc::new(terminal::Terminal::default());
    rt.spawn(
        stop.clone()
            .on_signals(Arc::clone(&events), exit_on_second_signal),
    );
    Ok((rt, stop, events))
}

/// The host's memory, which a generated preset sizes its instances by.
fn host_memory() -> Option<u64> {
    crate::sampler::host::HostFacts::collect().memory_total_bytes
}

/// A preset named on the command line, sized for this host.
fn on_host(source: config::RunSource<'_>) -> config::RunSource<'_> {
    match source {
        config::RunSource::Preset(name) => config::RunSource::PresetOnHost(name, host_memory()),
        other => other,
    }
}

/// `tidebench presets`: the list, or one preset's TOML (`--show`).
fn presets(args: args::PresetsArgs) -> Result<u8, CliError> {
    let knobs = args.knobs.to_knobs();
    let Some(name) = args.show else {
        if let Some(flag) = knobs.given().first() {
            return Err(CliError::usage(format!(
                "{flag} shapes a preset's TOML; add --show NAME to print it"
            )));
        }
        print!("{}", console::presets());
        return Ok(0);
    };
    if let Some(exp) = crate::experiment::presets::find(&name) {
        print!("{}", exp.run);
        print!("{}", exp.shape.describe());
        return Ok(0);
    }
    let preset = config::presets::find(&name).ok_or_else(|| {
        CliError::usage(format!(
            "no preset named '{name}'; `tidebench presets` lists them ({})",
            config::presets::names().join(", ")
        ))
    })?;
    let input = config::presets::PresetInput {
        knobs: &knobs,
        cores: cores(),
        memory: host_memory(),
        phase_duration: None,
    };
    print!("{}", preset.toml(&input).map_err(CliError::usage)?);
    Ok(0)
}

fn run(command: args::RunCommand, flags: &WorkloadFlags, home: &Home) -> Result<u8, CliError> {
    let args = command.run;
    let build = |seed: u64| {
        config::build_run_plan(
            on_host(args.source()),
            args.to_raw(flags),
            cores(),
            seed,
            &Registry,
        )
    };
    let mut plan = build(config::seed_from_clock())?;
    if let Some(start) = command.shard.read().map_err(CliError::usage)? {
        // Every shard must draw as one process would: unless --seed (or the file) gives one,
        // the seed comes from the run id they share.
        let run_id = command.shard.run_id(plan.name(), &start);
        plan = build(config::shard::seed_of_run(&run_id))?;
        command
            .shard
            .apply(&mut plan, start, run_id)
            .map_err(CliError::usage)?;
    }
    if args.dry_run {
        print!("{}", console::planned_run(&plan));
        return Ok(0);
    }
    let (rt, stop, events) = interactive()?;
    let outcome = rt.block_on(crate::runner::run(plan, home, stop.clone(), events))?;
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    print!(
        "{}",
        console::run_summary(&outcome.summary, &outcome.dir, &outcome.scales)
    );
    if let Some(why) = &outcome.summary.failure {
        eprintln!(
            "error: the run failed: {why} (results kept, complete: false; please report this bug)"
        );
        return Ok(EXIT_RUN_FAILED);
    }
    // pgbench's last word after an aborted client, and its exit status (2).
    if !outcome.summary.aborted_clients.is_empty() {
        eprintln!(
            "error: Run was aborted; the above results are incomplete ({} client(s) aborted: \
             see the warnings above and aborted_clients in summary.json)",
            outcome.summary.aborted_clients.len()
        );
        return Ok(error::EXIT_USAGE);
    }
    Ok(if outcome.summary.complete {
        0
    } else {
        EXIT_INTERRUPTED
    })
}

/// A `.partial` dir a killed driver left has no `summary.json`: rebuild it from the intervals
/// (marked incomplete) before anything reads it; the dir keeps its name.
fn recover_if_killed(dir: &std::path::Path) -> Result<(), CliError> {
    let partial = dir.extension().is_some_and(|e| e == "partial");
    let started = dir.join(crate::results::START_FILE).exists();
    if dir.join(crate::results::SUMMARY_FILE).exists() || !(partial || started) {
        return Ok(());
    }
    let got = crate::results::recover(dir).map_err(|e| CliError::usage(e.to_string()))?;
    let s = &got.summary;
    eprintln!(
        "note: {} had no summary.json (its driver stopped without finishing); rebuilt it from \
         {} interval rows{}: {} committed, {} failed over {:.1} s measured, complete: false",
        dir.display(),
        got.rows,
        match got.dropped {
            0 => String::new(),
            n => format!(" ({n} of a damaged last interval left out)"),
        },
        s.totals.committed,
        s.totals.failed,
        s.duration_s,
    );
    Ok(())
}

/// `tidebench merge`: the shards' dirs into one; bad input exits 2.
fn merge(args: args::MergeArgs) -> Result<u8, CliError> {
    let merged = crate::results::merge::merge(&args.dirs, &args.out, args.allow_missing)
        .map_err(CliError::usage)?;
    for w in &merged.warnings {
        eprintln!("warning: {w}");
    }
    if let Err(e) = crate::report::html::write(&merged.dir) {
        eprintln!(
            "warning: report.html not written ({e}); retry with `tidebench report {}`",
            merged.dir.display()
        );
    }
    print!(
        "{}",
        console::run_summary(&merged.summary, &merged.dir, &[])
    );
    if !merged.missing.is_empty() {
        eprintln!(
            "warning: {}",
            merged.summary.failure.clone().unwrap_or_default()
        );
    }
    Ok(0)
}

fn report(args: args::ReportArgs) -> Result<u8, CliError> {
    if args.mix_log {
        recover_if_killed(&args.dir)?;
        let csv = crate::report::mixlog::merged_csv(&args.dir).map_err(CliError::usage)?;
        print!("{csv}");
        return Ok(0);
    }
    if args.synthetic {
        let shape = crate::report::synthetic::Shape::LARGE;
        let dir = crate::report::synthetic::generate(&args.dir, &shape, &Registry)
            .map_err(CliError::usage)?;
        println!("{}", dir.display());
        return Ok(0);
    }
    let experiment = crate::results::experiment::is_experiment(&args.dir);
    if experiment && (args.by.is_some() || args.mix_log) {
        return Err(CliError::usage(format!(
            "{} is an experiment dir; --by and --mix-log read one run: give one of its run dirs",
            args.dir.display()
        )));
    }
    if !experiment && args.by.is_none() {
        recover_if_killed(&args.dir)?;
    }
    let Some(by) = args.by else {
        let path = if experiment {
            crate::report::experiment::write(&args.dir)
        } else {
            crate::report::html::write(&args.dir)
        }
        .map_err(CliError::usage)?;
        println!("{}", path.display());
        return Ok(0);
    };
    let dims = by
        .iter()
        .map(|d| crate::report::Dim::parse(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::usage)?;
    let table = crate::report::aggregate(&args.dir, &dims, args.all).map_err(CliError::usage)?;
    print!("{table}");
    Ok(0)
}

fn compare(args: args::CompareArgs) -> Result<u8, CliError> {
    let experiments = args
        .dirs
        .iter()
        .filter(|d| crate::results::experiment::is_experiment(d))
        .count();
    if experiments > 0 {
        if experiments < args.dirs.len() || args.html.is_some() {
            return Err(CliError::usage(
                "compare takes either results dirs or experiment dirs (point by point, text only), not both",
            ));
        }
        let table = crate::report::compare_experiment::compare_table(&args.dirs)
            .map_err(CliError::usage)?;
        print!("{table}");
        return Ok(0);
    }
    let sides = crate::report::compare::sides(&args.dirs).map_err(CliError::usage)?;
    print!("{}", crate::report::compare::table(&sides));
    print!("{}", crate::report::compare_profile::table(&args.dirs));
    print!("{}", crate::report::compare_waits::table(&args.dirs));
    if let Some(out) = &args.html {
        let page = crate::report::compare::html(&sides).replace(
            "</body>",
            &format!(
                "{}</body>",
                crate::report::compare_profile::html(&args.dirs)
            ),
        );
        crate::results::atomic::write(out, page.as_bytes())
            .map_err(|e| CliError::usage(e.to_string()))?;
        println!("{}", out.display());
    }
    Ok(0)
}

/// `tidebench check`: the workload's consistency conditions on one target; exit 1 on a failure.
fn check(args: args::CheckArgs, home: &Home) -> Result<u8, CliError> {
    let spec = match args.target.as_deref() {
        Some(t) => {
            config::TargetSpec::parse(t).map_err(|m| CliError::usage(format!("target: {m}")))?
        }
        None => config::TargetSpec::default_instance(),
    };
    let kind = Registry::kind(&args.workload).map_err(CliError::usage)?;
    let rt = runtime()?;
    rt.block_on(async {
        let target = crate::runner::resolve_target(&spec, home)
            .await
            .map_err(|e| CliError::usage(e.to_string()))?;
        let client = target
            .connect_tokio()
            .await
            .map_err(|e| CliError::usage(e.to_string()))?;
        let Some(checks) = kind.check(&client) else {
            let with: Vec<&str> = crate::workload::registry::WORKLOADS
                .iter()
                .filter(|k| k.check(&client).is_some())
                .map(|k| k.name())
                .collect();
            return Err(CliError::usage(format!(
                "workload {} has no consistency checks; `check` supports {}",
                kind.name(),
                with.join(", ")
            )));
        };
        let outcomes = checks
            .await
            .map_err(|e| CliError::usage(format!("check on '{}': {e}", target.label)))?;
        print!("{}", check_view::render(&outcomes));
        let failed = outcomes.iter().filter(|o| !o.passed()).count();
        if failed > 0 {
            return Err(CliError::check_failed(format!(
                "{failed} of {} consistency conditions failed on '{}'",
                outcomes.len(),
                target.label
            )));
        }
        println!(
            "all {} consistency conditions hold on '{}'",
            outcomes.len(),
            target.label
        );
        Ok(0)
    })
}
