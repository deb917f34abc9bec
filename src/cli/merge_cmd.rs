//! `tidebench merge`: the results dirs of a run's shards into one results dir.

use super::{args, console, CliError};

/// `tidebench merge`: the shards' dirs into one; bad input exits 2.
pub fn merge(args: args::MergeArgs) -> Result<u8, CliError> {
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
