//! `tidebench run`: flags or a run file to a RunPlan (sharded when asked), the run, and its
//! summary on the terminal; exit 1 for a failed run, 2 for aborted clients, 130 interrupted.

use super::common::{cores, interactive, on_host, EXIT_INTERRUPTED, EXIT_RUN_FAILED};
use super::{args, console, error, CliError, WorkloadFlags};
use crate::config;
use crate::instance::Home;
use crate::workload::Registry;

pub fn run(command: args::RunCommand, flags: &WorkloadFlags, home: &Home) -> Result<u8, CliError> {
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
