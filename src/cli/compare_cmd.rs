//! `tidebench compare`: results dirs side by side (text, and HTML with `--html`) with the
//! recoveries of runs that played the same events and the verdict per metric (exit 1 on a
//! regression; `--format json|junit|markdown` for a CI), or experiment dirs point by point.

use std::path::PathBuf;

use clap::Args;

use super::error::EXIT_CHECK_FAILED;
use super::CliError;
use crate::report::compare::{figures, recoveries, verdict, verdict_out};

pub(super) const COMPARE_AFTER_HELP: &str = "\
The verdict: for each metric (throughput, the headline, latency p50/p95/p99, CPU productivity,
and per transaction type and per group their tps, p95 and p99 from merged histograms), the ratio
of the two sides' medians (other / baseline) and a 95% bootstrap interval of that ratio. A metric
regressed when its ratio is past its threshold in the worse direction and the whole interval lies
on that side of 1; improved likewise the other way; otherwise within noise. A verdict needs 3 runs
a side (a dir of results dirs, e.g. one per repetition): with fewer, the metric is described, never
judged, and never fails.

Without --fail-on every metric is judged at its default threshold (tps, headline and cpu -5%;
p50, p95, p99 +10%); with --fail-on only the metrics it selects are (the others are described),
and the most specific one wins:
  --fail-on tps:-3%                  every throughput figure (the run's, each type's, each group's)
  --fail-on p95:+10%                 every p95
  --fail-on type:new_order:p99:+5%   one type's p99 (group:NAME:METRIC for a group)

Runs that played the same [[event]]s are also compared event by event, per event and group: the
time to the first commit after it, the time back to 90% of the rate before, the failed
transactions and the time down (medians over a side's runs); in the table, --html, the JSON's
`recoveries` and the Markdown.

Example (a CI step: 5 runs of each build, then the verdict):
  tidebench compare results/base results/patched --fail-on tps:-3% --format junit > verdict.xml

Exit codes: 0 nothing regressed, 1 a metric regressed, 2 bad input.";

/// The format `compare` writes its verdict in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// The tables and the verdict, for a terminal
    Text,
    /// The verdict as JSON: per metric and side, the medians, ratio, interval, threshold, verdict
    Json,
    /// The verdict as JUnit XML: one test case per metric, a regression a failure
    Junit,
    /// The verdict as Markdown, for a pull-request comment
    Markdown,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results dirs, dirs holding several results dirs (repeated runs), or experiment dirs (point by point); the first is the baseline
    #[arg(required = true, num_args = 2..)]
    pub dirs: Vec<PathBuf>,
    /// Also write the comparison as an HTML page to this file
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// A metric's threshold, METRIC:N% in its worse direction (tps:-3%, p95:+10%, type:NAME:p99:+5%); repeatable
    #[arg(long = "fail-on", value_name = "METRIC:N%", value_parser = parse_fail_on)]
    pub fail_on: Vec<crate::report::compare::verdict::Threshold>,
    /// How to print the verdict: text (the tables too), json, junit or markdown
    #[arg(long, value_enum, default_value = "text")]
    pub format: CompareFormat,
}

pub(super) fn parse_fail_on(
    text: &str,
) -> Result<crate::report::compare::verdict::Threshold, String> {
    text.parse()
        .map_err(|e: crate::report::compare::verdict::ThresholdError| e.to_string())
}

pub fn compare(args: CompareArgs) -> Result<u8, CliError> {
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
