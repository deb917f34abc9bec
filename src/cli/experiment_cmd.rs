//! `tidebench sweep`, `tidebench density` and `tidebench knee`: flags to an `Experiment`, run
//! it on the terminal sink, and end with a table of its points and the analysis in words.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use crate::config::{self, RawRun, RunSource};
use crate::driver::Stop;
use crate::event::Sink;
use crate::experiment::presets::{self, ExperimentPreset, PresetShape};
use crate::experiment::vary::{InstanceValue, VaryKey};
use crate::experiment::{density, knee as knee_series, BaseRun, Experiment, Finished, Vary};
use crate::instance::Home;
use crate::results::experiment::{ExperimentFile, Request, RunStatus, Varied, KNEE_MEMORY_KEY};
use crate::workload::Registry;

use super::args::{DensityArgs, ExperimentArgs, KneeArgs, RunArgs, SweepArgs};
use super::{console, cores, host_memory, runtime, terminal, CliError, WorkloadFlags};
use super::{EXIT_INTERRUPTED, EXIT_RUN_FAILED};

pub fn sweep(args: SweepArgs, flags: &WorkloadFlags, home: &Home) -> Result<u8, CliError> {
    let preset = experiment_preset(&args.run, "sweep")?;
    let (base, label) = base_run(&args.run, flags, preset, Guests::Preset)?;
    let mut vary_specs = args.vary.clone();
    let mut repeat = args.experiment.repeat;
    if let Some(PresetShape::Sweep { vary, repeat: r }) = preset.map(|p| &p.shape) {
        if vary_specs.is_empty() {
            vary_specs = vary.iter().map(|v| v.to_string()).collect();
        }
        repeat = repeat.or(Some(*r));
    }
    let varies = vary_specs
        .iter()
        .map(|v| Vary::parse(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::usage)?;
    whole_vcpus(&base, &varies, home)?;
    let request = request(&label, &base, &args.experiment, repeat, &varies, None, None);
    let dir = out_dir(&args.run, "sweep");
    let exp = Experiment::sweep(dir, request, &base, &varies, &Registry)?;
    if args.run.dry_run {
        return dry_run(&exp);
    }
    execute(&exp, home)
}

/// A VM's vCPUs are whole: `--vary instance.cpus` with a fraction over an existing VM
/// instance is refused before the first run (a declared VM is held to it by the run file's
/// rules when the points are planned).
fn whole_vcpus(base: &BaseRun, varies: &[Vary], home: &Home) -> Result<(), CliError> {
    for v in varies {
        let VaryKey::Instance {
            instance,
            what: InstanceValue::Cpus,
        } = &v.key
        else {
            continue;
        };
        let whole = |x: &String| x.parse::<f64>().is_ok_and(|c| c >= 1.0 && c.fract() == 0.0);
        let Some(bad) = v.values.iter().find(|x| !whole(x)) else {
            continue;
        };
        let names = match instance {
            Some(n) => vec![n.clone()],
            None => base.instances().unwrap_or_default(),
        };
        for name in names {
            if crate::instance::find(home, &name).is_ok_and(|i| i.guest().is_some()) {
                return Err(CliError::usage(format!(
                    "--vary {}: {bad} is not a number of vCPUs, and instance '{name}' is a VM \
                     (--hypervisor qemu); give whole numbers, 1 or more",
                    v.name
                )));
            }
        }
    }
    Ok(())
}

pub fn density(args: DensityArgs, flags: &WorkloadFlags, home: &Home) -> Result<u8, CliError> {
    let preset = experiment_preset(&args.run, "density")?;
    let (base, label) = base_run(&args.run, flags, preset, Guests::Experiment)?;
    let (mut cpus, mut memory, mut steps) = (args.cpus, args.memory.clone(), None);
    if let Some(PresetShape::Density {
        cpus: c,
        memory_gib,
    }) = preset.map(|p| &p.shape)
    {
        cpus = cpus.or(Some(*c));
        memory = memory.or(Some(format!("{memory_gib}GB")));
        let n = presets::density_steps(*c, *memory_gib, cores(), host_memory());
        steps = Some(format!("1..{n}"));
    }
    if let Some(m) = &memory {
        config::size::parse_size(m).map_err(|e| CliError::usage(format!("--memory {m}: {e}")))?;
    }
    let Some(steps) = args.instances.clone().or(steps) else {
        return Err(CliError::usage(
            "density needs --instances (e.g. --instances 1..4), or --preset nutanix-density",
        ));
    };
    let instances = presets::parse_instances(&steps).map_err(CliError::usage)?;
    crate::config::target::check_name("instance prefix", &args.instance_prefix)
        .map_err(CliError::usage)?;
    let shape = density::Shape {
        cpus,
        memory: memory.clone(),
        prefix: args.instance_prefix.clone(),
        settings: args.settings.clone(),
        guest: args
            .run
            .knobs
            .guest
            .hypervisor
            .map(|hypervisor| density::GuestShape {
                hypervisor,
                accel: args.run.knobs.guest.accel,
            }),
    };
    shape.check().map_err(CliError::usage)?;
    let varied = [Vary {
        name: density::KEY.into(),
        key: crate::experiment::vary::VaryKey::Run(density::KEY.into()),
        values: instances.iter().map(u32::to_string).collect(),
    }];
    let repeat = args.experiment.repeat;
    let request = request(
        &label,
        &base,
        &args.experiment,
        repeat,
        &varied,
        cpus,
        memory,
    );
    let dir = out_dir(&args.run, "density");
    let exp = Experiment::density(dir, request, &base, &instances, &shape, &Registry)?;
    if args.run.dry_run {
        return dry_run(&exp);
    }
    execute(&exp, home)
}

pub fn knee(args: KneeArgs, flags: &WorkloadFlags, home: &Home) -> Result<u8, CliError> {
    let preset = experiment_preset(&args.run, "knee")?;
    let (mut base, label) = base_run(&args.run, flags, preset, Guests::Experiment)?;
    let guest = &args.run.knobs.guest;
    if guest.hypervisor.is_some() {
        let names = base.instances().map_err(CliError::usage)?;
        base.text =
            knee_series::on_vms(&base.text, &names, guest.accel).map_err(CliError::usage)?;
    }
    let (mut memory, mut steps, mut keep) = (args.memory.clone(), args.steps, args.keep.clone());
    if let Some(PresetShape::Knee {
        memory: m,
        steps: s,
        keep: k,
    }) = preset.map(|p| &p.shape)
    {
        if memory.is_none() {
            memory = Some(m.to_string());
            steps = steps.or(Some(*s));
        }
        if keep.is_none() && args.keep_difference.is_none() {
            keep = Some(k.to_string());
        }
    }
    let Some(memory) = memory else {
        return Err(CliError::usage(
            "knee needs --memory LO..HI (e.g. --memory 512MB..4GB --steps 6) or a list (512MB,1GB,2GB), or --preset vpostgres-knee",
        ));
    };
    let keep = knee_series::Keep::parse(keep.as_deref(), args.keep_difference.as_deref())
        .map_err(CliError::usage)?;
    let sizes = knee_series::memory_sizes(&memory, steps).map_err(CliError::usage)?;
    let points = knee_series::points(&sizes, keep).map_err(CliError::usage)?;
    let varied = [Vary {
        name: KNEE_MEMORY_KEY.into(),
        key: crate::experiment::vary::VaryKey::parse(KNEE_MEMORY_KEY).map_err(CliError::usage)?,
        values: sizes.iter().map(|m| knee_series::pg_size(*m)).collect(),
    }];
    let repeat = args.experiment.repeat;
    let mut request = request(&label, &base, &args.experiment, repeat, &varied, None, None);
    request.knee = Some(keep.request());
    let dir = out_dir(&args.run, "knee");
    let exp = Experiment::knee(dir, request, &base, &points, &Registry)?;
    if args.run.dry_run {
        return dry_run(&exp);
    }
    execute(&exp, home)
}

/// `--preset NAME` when it names a built-in experiment of `command` (a run preset is a base
/// run instead; another command's experiment is refused with the command to use).
pub(super) fn experiment_preset(
    run: &RunArgs,
    command: &str,
) -> Result<Option<&'static ExperimentPreset>, CliError> {
    let Some(name) = run.preset.as_deref() else {
        return Ok(None);
    };
    if let Some(p) = presets::find(name) {
        let wanted = p.shape.command();
        if wanted != command {
            return Err(CliError::usage(format!(
                "{name} is a {wanted} experiment; run it with `tidebench {wanted} --preset {name}`"
            )));
        }
        return Ok(Some(p));
    }
    if config::presets::find(name).is_none() {
        return Err(CliError::usage(format!(
            "no preset named '{name}'; experiments: {}; runs: {}",
            presets::names().join(", "),
            config::presets::names().join(", ")
        )));
    }
    Ok(None)
}

/// Who reads `--hypervisor` and `--accel`.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Guests {
    /// The experiment makes its instances VMs itself (density, knee, overhead).
    Experiment,
    /// A preset's knob (sweep over preset tpcv): its TOML declares the VMs.
    Preset,
}

/// The run the experiment varies, and its source's name.
pub(super) fn base_run(
    run: &RunArgs,
    flags: &WorkloadFlags,
    preset: Option<&'static ExperimentPreset>,
    guests: Guests,
) -> Result<(BaseRun, String), CliError> {
    let mut raw: RawRun = run.to_raw(flags);
    raw.out = None;
    if guests == Guests::Experiment {
        raw.preset = raw.preset.without_guest();
    }
    let (label, text) = match preset {
        Some(p) => (format!("preset {}", p.name), p.run.to_string()),
        None => {
            let source = match run.source() {
                RunSource::Preset(n) => RunSource::PresetOnHost(n, host_memory()),
                other => other,
            };
            config::run_text(source, &raw, cores())?
        }
    };
    let base = BaseRun {
        label: label.clone(),
        text,
        flags: raw,
    };
    Ok((base, label))
}

pub(super) fn request(
    label: &str,
    base: &BaseRun,
    exp: &ExperimentArgs,
    repeat: Option<u32>,
    varies: &[Vary],
    cpus: Option<f64>,
    memory: Option<String>,
) -> Request {
    Request {
        source: label.to_string(),
        // experiment.json and its page keep these: a run file's or a flag's password must not.
        base_text: config::target::redact_dsn(&base.text),
        flags: given_run_flags(),
        vary: varies
            .iter()
            .map(|v| Varied {
                key: v.name.clone(),
                values: v.values.clone(),
            })
            .collect(),
        repeat: repeat.unwrap_or(1),
        point_duration: exp.point_duration.clone(),
        cpus,
        memory,
        knee: None,
        consolidate: None,
    }
}

/// The command line after the command name, without `--out DIR` (resuming names the same
/// dir, and may name it differently), nor the experiment's own flags (kept field by field).
fn given_run_flags() -> Vec<String> {
    let args: Vec<String> = std::env::args()
        .skip(2)
        .map(|a| config::target::redact_dsn(&a))
        .collect();
    let mut out = Vec::new();
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
            continue;
        }
        let flag = a.split('=').next().unwrap_or_default();
        let own = [
            "--out",
            "-o",
            "--vary",
            "--repeat",
            "--point-duration",
            "--instances",
            "--cpus",
            "--memory",
            "--instance-prefix",
            "--schemes",
            "--overcommit",
            "--databases",
            "--periods",
            "--period",
            "--high",
            "--low",
            "--shared-buffers",
            "--host-group",
            "--working-set",
            "--ramp-up",
            "--steps",
            "--keep",
            "--keep-difference",
            "--native",
            "--virtual",
        ];
        if own.contains(&flag) {
            skip_next = !a.contains('=');
            continue;
        }
        if flag == "--balloon" {
            continue;
        }
        out.push(a);
    }
    out
}

pub(super) fn out_dir(run: &RunArgs, kind: &str) -> PathBuf {
    run.out.clone().unwrap_or_else(|| {
        PathBuf::from("results").join(crate::results::writer::dir_name(SystemTime::now(), kind))
    })
}

/// `--dry-run`: every run's plan validated as the experiment would run it (with
/// `--point-duration`), and a line saying what would run; nothing is started.
pub(super) fn dry_run(exp: &Experiment) -> Result<u8, CliError> {
    for run in &exp.runs {
        let mut run = run.clone();
        if let Some(d) = &exp.point_duration {
            run.over.phase_duration = Some(d.clone());
        }
        run.plan(cores(), 1, &Registry)
            .map_err(|e| CliError::usage(format!("{}: {e}", run.label)))?;
    }
    println!(
        "dry run: {} points x {} repeats = {} runs into {}, each run checked; nothing was run",
        exp.points.len(),
        exp.repeat,
        exp.points.len() * exp.repeat as usize,
        exp.dir.display()
    );
    Ok(0)
}

pub(super) fn execute(exp: &Experiment, home: &Home) -> Result<u8, CliError> {
    let (file, interrupted) = execute_file(exp, home)?;
    Ok(exit_code(&file, interrupted))
}

/// Runs the experiment on the terminal sink and prints its summary; returns its record and
/// whether it was interrupted.
pub(super) fn execute_file(
    exp: &Experiment,
    home: &Home,
) -> Result<(ExperimentFile, bool), CliError> {
    let rt = runtime()?;
    let stop = Stop::new();
    let events: Arc<dyn Sink> = Arc::new(terminal::Terminal::default());
    rt.spawn(
        stop.clone()
            .on_signals(Arc::clone(&events), super::exit_on_second_signal),
    );
    let Finished { file, interrupted } = rt.block_on(crate::experiment::execute(
        exp,
        cores(),
        home,
        &stop,
        &events,
    ))?;
    print!("{}", console::experiment_summary(&file, &exp.dir));
    Ok((file, interrupted))
}

pub(super) fn exit_code(file: &ExperimentFile, interrupted: bool) -> u8 {
    if interrupted {
        return EXIT_INTERRUPTED;
    }
    let failed = file
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .any(|r| r.status != RunStatus::Complete);
    if failed {
        EXIT_RUN_FAILED
    } else {
        0
    }
}
