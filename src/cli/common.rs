//! What the commands share: exit codes beyond usage, the host's cores and memory, a preset
//! sized for this host, and the async runtime with Ctrl-C and SIGTERM wired to a stop.

use std::sync::Arc;

use super::{terminal, CliError};
use crate::config;
use crate::driver::Stop;
use crate::event::Sink;

/// Exit code of a run or prepare stopped by SIGINT/SIGTERM (results still written for a run).
pub const EXIT_INTERRUPTED: u8 = 130;
/// Exit code of a run that failed (a client or driver thread panicked), and of an experiment
/// with a failed run.
pub const EXIT_RUN_FAILED: u8 = 1;

pub fn cores() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// A second Ctrl-C (or SIGTERM) while the first is being handled: exit at once. What the run
/// wrote so far stays in its `.partial` dir (`tidebench report DIR.partial` reads it).
pub fn exit_on_second_signal() -> ! {
    eprintln!("\nsecond interrupt: exiting now; what was written stays in the .partial dir");
    std::process::exit(130)
}

pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))
}

/// What a command that runs or loads needs: the async runtime, the stop signal wired to Ctrl-C
/// and SIGTERM, and the terminal as the events' sink.
pub fn interactive() -> Result<(tokio::runtime::Runtime, Stop, Arc<dyn Sink>), CliError> {
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
pub fn host_memory() -> Option<u64> {
    crate::instance::host_memory::total()
}

/// A preset named on the command line, sized for this host.
pub fn on_host(source: config::RunSource<'_>) -> config::RunSource<'_> {
    match source {
        config::RunSource::Preset(name) => config::RunSource::PresetOnHost(name, host_memory()),
        other => other,
    }
}
