//! `tidebench consolidate`: a consolidation file (or the preset, or flags alone) and the
//! command's flags to a `Spec`, the experiment of every scheme at every rate, run like any
//! experiment (resumable, `experiment.json` and `experiment.html` after every run).

use crate::config::RunSource;
use crate::experiment::consolidate::{self, RawSpec, Spec};
use crate::experiment::{BaseRun, Experiment};
use crate::instance::Home;
use crate::workload::Registry;

use super::args::ConsolidateArgs;
use super::experiment_cmd::{dry_run, execute, experiment_preset, out_dir, request};
use super::{CliError, WorkloadFlags};

pub fn consolidate(
    args: ConsolidateArgs,
    flags: &WorkloadFlags,
    home: &Home,
) -> Result<u8, CliError> {
    let preset = experiment_preset(&args.run, "consolidate")?;
    let (label, text) = match (preset, &args.run.source()) {
        (Some(p), _) => (format!("preset {}", p.name), p.run.to_string()),
        (None, RunSource::File(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                CliError::usage(format!(
                    "cannot read {}: {e}; give a consolidation file (see `tidebench consolidate --help`)",
                    path.display()
                ))
            })?;
            (path.display().to_string(), text)
        }
        (None, RunSource::None) => ("flags".to_string(), String::new()),
        (None, _) => {
            return Err(CliError::usage(
                "consolidate takes a consolidation file or --preset vpostgres-consolidation, not a run preset",
            ))
        }
    };
    let (run_text, from_file) = consolidate::split_file(&label, &text).map_err(CliError::usage)?;
    let spec = Spec::check(from_file.overlay(flag_spec(&args)?)).map_err(CliError::usage)?;
    let mut raw = args.run.to_raw(flags);
    raw.out = None;
    // The experiment makes its VMs itself (`hypervisor` below), not a preset's TOML.
    raw.preset = raw.preset.without_guest();
    let base = BaseRun {
        label: label.clone(),
        text: run_text,
        flags: raw,
    };
    let request = request(
        &label,
        &base,
        &args.experiment,
        args.experiment.repeat,
        &[],
        None,
        None,
    );
    let dir = out_dir(&args.run, "consolidate");
    let exp = Experiment::consolidate(dir, request, &base, &spec, &Registry)?;
    if args.run.dry_run {
        return dry_run(&exp);
    }
    execute(&exp, home)
}

/// The `[consolidate]` keys given as flags.
fn flag_spec(args: &ConsolidateArgs) -> Result<RawSpec, CliError> {
    let list = |text: &Option<String>| -> Option<Vec<String>> {
        text.as_ref().map(|t| {
            t.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
    };
    let overcommit = match list(&args.overcommit) {
        Some(rates) => Some(
            rates
                .iter()
                .map(|r| r.trim_end_matches('%').parse::<u32>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| {
                    CliError::usage(format!(
                        "--overcommit {}: give whole percents, e.g. 0,10,20,30,40,50,55",
                        args.overcommit.as_deref().unwrap_or_default()
                    ))
                })?,
        ),
        None => None,
    };
    Ok(RawSpec {
        schemes: list(&args.schemes),
        databases: args.databases,
        periods: args.periods,
        period: args
            .period
            .clone()
            .or_else(|| args.experiment.point_duration.clone()),
        ramp_up: args.run.ramp_up.clone(),
        high: args.high,
        low: args.low,
        cpus: args.cpus,
        memory: args.memory.clone(),
        shared_buffers: args.shared_buffers.clone(),
        overcommit,
        balloon: args.balloon.then_some(true),
        host_group: args.host_group.clone(),
        working_set: args.working_set.as_deref().map(working_set).transpose()?,
        hypervisor: args.run.knobs.guest.hypervisor.map(|_| "qemu".to_string()),
        accel: args.run.knobs.guest.accel.map(|a| a.name().to_string()),
        ksm: args.ksm.as_deref().map(|k| k == "on"),
        settings: (!args.settings.is_empty()).then(|| args.settings.iter().cloned().collect()),
    })
}

/// `--working-set`: a size, or a `tidebench knee` dir whose knee gives it.
fn working_set(given: &str) -> Result<String, CliError> {
    let dir = std::path::Path::new(given);
    if !crate::results::experiment::is_experiment(dir) {
        return Ok(given.to_string());
    }
    let file = crate::results::experiment::read(dir)?;
    let knee = file.analysis.knee.ok_or_else(|| {
        CliError::usage(format!(
            "--working-set {given}: that experiment is a {}, not a knee; give a size or a `tidebench knee` dir",
            file.kind.name()
        ))
    })?;
    if knee.mode != crate::results::experiment::KneeMode::KeepSharedBuffers {
        return Err(CliError::usage(format!(
            "--working-set {given}: that knee kept memory − shared_buffers, so it found the shared-buffers working set; give a knee made with --keep shared_buffers=SIZE (the VM memory working set), or a size"
        )));
    }
    match knee.knee_mib {
        Some(mib) => Ok(format!("{}MB", mib.round() as u64)),
        None => Err(CliError::usage(format!(
            "--working-set {given}: the knee experiment found no knee ({}); give a size instead",
            knee.no_knee.unwrap_or_else(|| "no reason recorded".into())
        ))),
    }
}
