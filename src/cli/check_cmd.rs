//! `tidebench check`: a workload's consistency conditions on one target.

use super::common::runtime;
use super::{args, check_view, CliError};
use crate::config;
use crate::instance::Home;
use crate::workload::Registry;

/// `tidebench check`: the workload's consistency conditions on one target; exit 1 on a failure.
pub fn check(args: args::CheckArgs, home: &Home) -> Result<u8, CliError> {
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
