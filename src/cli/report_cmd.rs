//! `tidebench report`: a results or experiment dir's HTML report, its `--by` table or its
//! merged mix log; a dir a killed driver left is rebuilt first.

use super::{args, CliError};
use crate::workload::Registry;

pub fn report(args: args::ReportArgs) -> Result<u8, CliError> {
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
