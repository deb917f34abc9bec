//! Command line: flags to config, commands to calls, errors to exit codes. No business logic:
//! each command builds a Plan through `config` and hands it to the room that owns the work.

pub mod args;
pub mod console;
pub mod error;
pub mod instance_cmd;

use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Parser;

pub use args::{Cli, Command};
pub use error::CliError;

use crate::config;
use crate::driver::Stop;
use crate::instance::Home;
use crate::workload::{Workload, WorkloadError};

/// Exit code of a run or prepare stopped by SIGINT/SIGTERM (results still written for a run).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Parses the command line, runs the command, and turns the result into an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { error::EXIT_USAGE } else { 0 });
        }
    };
    match dispatch(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.code)
        }
    }
}

fn dispatch(command: Command) -> Result<u8, CliError> {
    let home = Home::from_env();
    match command {
        Command::Run(args) => run(args, &home),
        Command::Prepare(args) => prepare(args, &home),
        Command::Instance(cmd) => instance_cmd::run(cmd, &home).map(|()| 0),
    }
}

fn cores() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))
}

fn run(args: args::RunArgs, home: &Home) -> Result<u8, CliError> {
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let plan = config::build_run_plan(args.config.as_deref(), args.to_raw(), cores(), seed)?;
    let rt = runtime()?;
    let stop = Stop::new();
    rt.spawn(stop.clone().on_signals());
    let outcome = rt
        .block_on(crate::runner::run(plan, home, stop.clone()))
        .map_err(|e| CliError::usage(e.to_string()))?;
    print!(
        "{}",
        console::run_summary(
            &outcome.summary,
            &outcome.dir,
            &outcome.target_label,
            outcome.scale
        )
    );
    Ok(if outcome.summary.complete {
        0
    } else {
        EXIT_INTERRUPTED
    })
}

fn prepare(args: args::PrepareArgs, home: &Home) -> Result<u8, CliError> {
    let plan = config::validate_prepare(
        args.workload,
        args.scale,
        args.target.as_deref(),
        args.jobs,
        args.force,
        cores(),
    )?;
    let rt = runtime()?;
    let stop = Stop::new();
    rt.spawn(stop.clone().on_signals());
    rt.block_on(async {
        let target = crate::runner::resolve_target(&plan.target, home)
            .await
            .map_err(|e| CliError::usage(e.to_string()))?;
        tokio::select! {
            done = Workload::prepare(&plan, &target) => match done {
                Ok(()) => Ok(0),
                Err(WorkloadError::Interrupted) => Ok(EXIT_INTERRUPTED),
                Err(e) => Err(CliError::usage(format!("prepare on '{}': {e}", target.label))),
            },
            _ = stop.wait() => {
                eprintln!("prepare interrupted: no table was left looking complete; run prepare again");
                Ok(EXIT_INTERRUPTED)
            }
        }
    })
}
