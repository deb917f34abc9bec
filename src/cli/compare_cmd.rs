//! `tidebench compare`: results dirs side by side (text, and HTML with `--html`) with the
//! recoveries of runs that played the same events and the verdict per metric (exit 1 on a
//! regression; `--format json|junit|markdown` for a CI), or experiment dirs point by point.

use super::args::{self, CompareFormat};
use super::error::EXIT_CHECK_FAILED;
use super::CliError;
use crate::report::compare::{figures, recoveries, verdict, verdict_out};

pub fn compare(args: args::CompareArgs) -> Result<u8, CliError> {
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
        if !args.fail_on.is_empty() || args.format != CompareFormat::Text {
            return Err(CliError::usage(
                "--fail-on and --format judge results dirs (or dirs of repeated runs), not experiment dirs; \
                 compare the runs of one point as dirs of results dirs",
            ));
        }
        let table = crate::report::compare_experiment::compare_table(&args.dirs)
            .map_err(CliError::usage)?;
        print!("{table}");
        return Ok(0);
    }
    let figures = figures::read_sides(&args.dirs).map_err(CliError::usage)?;
    let judged = verdict::judge(&figures, &args.fail_on);
    let recovered = recoveries::read(&args.dirs);
    let code = if verdict::regressed(&judged) {
        EXIT_CHECK_FAILED
    } else {
        0
    };
    let written = match args.format {
        CompareFormat::Text => None,
        CompareFormat::Json => Some(
            verdict_out::json(&figures, &judged, &recovered)
                .map_err(|e| CliError::usage(e.to_string()))?,
        ),
        CompareFormat::Junit => Some(verdict_out::junit(&figures, &judged)),
        CompareFormat::Markdown => Some(format!(
            "{}{}",
            verdict_out::markdown(&figures, &judged),
            recoveries::markdown(&recovered)
        )),
    };
    if let Some(text) = written {
        if args.html.is_some() {
            return Err(CliError::usage(
                "--html writes the text tables' page; give it without --format",
            ));
        }
        print!("{text}");
        return Ok(code);
    }
    let sides = crate::report::compare::sides(&args.dirs).map_err(CliError::usage)?;
    print!("{}", crate::report::compare::table(&sides));
    print!("{}", crate::report::compare_profile::table(&args.dirs));
    print!("{}", crate::report::compare_waits::table(&args.dirs));
    print!("{}", crate::report::compare_units::table(&args.dirs));
    print!("{}", recoveries::table(&recovered));
    print!("{}", verdict_out::text(&figures, &judged));
    if let Some(out) = &args.html {
        let page = crate::report::compare::html(&sides).replace(
            "</body>",
            &format!(
                "{}{}{}</body>",
                recoveries::html(&recovered),
                verdict_out::html(&figures, &judged),
                crate::report::compare_profile::html(&args.dirs)
            ),
        );
        crate::results::atomic::write(out, page.as_bytes())
            .map_err(|e| CliError::usage(e.to_string()))?;
        println!("{}", out.display());
    }
    Ok(code)
}
