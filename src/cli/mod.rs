//! Command line: flags to config, commands to calls, errors to exit codes. No business logic:
//! each command builds a Plan through `config` and hands it to the room that owns the work.
//! This file parses and dispatches; each command has a `*_cmd.rs` of its own, the drop-in a
//! folder (`pgbench/`), and what several commands share is in `common`.

mod ab_cmd;
pub mod args;
pub mod argv_scrub;
mod check_cmd;
pub mod check_view;
mod common;
mod compare_cmd;
pub mod console;
mod consolidate_cmd;
pub mod error;
pub mod experiment_cmd;
pub mod instance_cmd;
mod launch_cmd;
mod merge_cmd;
mod overhead_cmd;
mod pgbench;
mod prepare_cmd;
mod presets_cmd;
mod report_cmd;
mod run_cmd;
mod shard_args;
pub mod target_cmd;
pub mod terminal;
pub mod workload_args;

use std::process::ExitCode;

pub use args::{Cli, Command};
pub use common::{EXIT_INTERRUPTED, EXIT_RUN_FAILED};
pub use error::CliError;
pub use workload_args::WorkloadFlags;

// The experiment, target and launch commands reach what they share through `super::`.
use common::{cores, exit_on_second_signal, host_memory, runtime};

use crate::instance::Home;

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
        Command::Run(args) => run_cmd::run(args, flags, &home),
        Command::Prepare(args) => prepare_cmd::prepare(args, flags, &home),
        Command::Instance(cmd) => instance_cmd::run(cmd, &home).map(|()| 0),
        Command::Target(cmd) => target_cmd::run(cmd, &home),
        Command::Presets(args) => presets_cmd::presets(args),
        Command::Report(args) => report_cmd::report(args),
        Command::Compare(args) => compare_cmd::compare(args),
        Command::Ab(args) => ab_cmd::ab(args),
        Command::Check(args) => check_cmd::check(args, &home),
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
        Command::Merge(args) => merge_cmd::merge(args),
        Command::Slurm(args) => launch_cmd::slurm(args),
        Command::Kube(args) => launch_cmd::kube(args),
        Command::Pgbench(args) => pgbench::pgbench(args, &home),
    }
}
