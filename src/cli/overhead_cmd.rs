//! `tidebench overhead`: the Cybertec study's experiment as one command. The same pgbench run (TPC-B-like,
//! scale 10, 10 clients, synchronous_commit=off by default) on a native target and on a
//! virtualized one, each profiled over its measured window; it ends with the tps ratio and the
//! profile difference. Underneath it is a sweep over `target` (so `--repeat`, `--out`,
//! resuming and `experiment.html` work as for `sweep`), and `compare.html` in the experiment
//! dir puts the two sides and their profiles side by side.
//!
//! With `--hypervisor qemu` (issue 40) tidebench makes the two sides itself, of one size: a
//! QEMU guest and a native managed instance (in a control group of that size where cgroups
//! can be made), each declared as an `[[instance]]` of its own side's runs only, so the
//! experiment stops one side while the other runs. A guest under TCG makes the ratio an
//! emulator's, and the verdict says so; `--profile host` adds each side's share of the host.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::experiment::{Experiment, Vary};
use crate::instance::vm::{Accel, Hypervisor};
use crate::instance::{CgroupPaths, Home};
use crate::results::experiment::{ExperimentFile, RunStatus};
use crate::results::profile::ProfileFile;
use crate::results::RuntimeInfo;
use crate::workload::Registry;

use super::args::OverheadArgs;
use super::experiment_cmd::{base_run, dry_run, execute_file, exit_code, out_dir, request, Guests};
use super::{CliError, WorkloadFlags};

/// The Cybertec study's pgbench run: a run preset, so the workload is named by config's
/// presets, not here.
const PRESET: &str = "overhead";
const CLIENTS: u32 = 10;
const SESSION: &str = "synchronous_commit=off";
/// The managed instances `--hypervisor` makes: the native side and the VM.
pub const NATIVE_INSTANCE: &str = "overhead-native";
pub const VM_INSTANCE: &str = "overhead-vm";
/// Their size when `--cpus`/`--memory` are not given.
const DEFAULT_CPUS: f64 = 1.0;
const DEFAULT_MEMORY: &str = "1GiB";

/// The two sides' targets, and the `[[instance]]` table tidebench declares for a side it
/// makes itself.
struct Sides {
    native: String,
    virtual_: String,
    native_table: Option<Table>,
    vm_table: Option<Table>,
}

pub fn overhead(args: OverheadArgs, flags: &WorkloadFlags, home: &Home) -> Result<u8, CliError> {
    if args.run.target.is_some() {
        return Err(CliError::usage(
            "overhead runs on two targets: give them as --native TARGET and --virtual TARGET \
             (or --hypervisor qemu to make them), not --target",
        ));
    }
    let sides = sides(&args)?;
    let mut run = args.run;
    // The Cybertec study's run unless told otherwise; the profile is the point of the command.
    let from_file = run.config.is_some() || run.preset.is_some();
    if !from_file && run.workload.is_none() && flags.shorthand.is_none() {
        run.preset = Some(PRESET.into());
    }
    run.clients = run.clients.or(Some(CLIENTS));
    if run.session_set.is_empty() {
        run.session_set.push(SESSION.into());
    }
    run.profile = run.profile.or(Some("instances".into()));
    let (base, label) = base_run(&run, flags, None, Guests::Experiment)?;
    let varies = [Vary {
        name: "target".into(),
        key: crate::experiment::vary::VaryKey::Run("target".into()),
        values: vec![sides.native.clone(), sides.virtual_.clone()],
    }];
    let repeat = args.experiment.repeat;
    // The size as given: a resume with another size is refused with the difference.
    let request = request(
        &label,
        &base,
        &args.experiment,
        repeat,
        &varies,
        args.cpus,
        args.memory.clone(),
    );
    let dir = out_dir(&run, "overhead");
    let mut exp = Experiment::sweep(dir, request, &base, &varies, &Registry)?;
    declare(&mut exp, &sides)?;
    if run.dry_run {
        return dry_run(&exp);
    }
    let (file, interrupted) = execute_file(&exp, home)?;
    print!("{}", verdict(&file, &exp.dir));
    Ok(exit_code(&file, interrupted))
}

/// The sides as given (`--native`, `--virtual`), or made with `--hypervisor`.
fn sides(args: &OverheadArgs) -> Result<Sides, CliError> {
    match (&args.virtual_, args.run.knobs.guest.hypervisor) {
        (Some(v), _) => match &args.native {
            Some(n) => Ok(Sides {
                native: n.clone(),
                virtual_: v.clone(),
                native_table: None,
                vm_table: None,
            }),
            None => Err(CliError::usage(
                "overhead needs the native side too: give --native TARGET (or leave --virtual \
                 out and give --hypervisor qemu to make both sides)",
            )),
        },
        (None, None) => Err(CliError::usage(
            "overhead needs a virtualized side: give --virtual TARGET, or --hypervisor qemu to \
             let tidebench make a VM and a native instance of one size (--cpus, --memory)",
        )),
        (None, Some(h)) => made_sides(args, h, args.run.knobs.guest.accel),
    }
}

/// A VM and (unless `--native` names one) a native instance of `--cpus` and `--memory`.
fn made_sides(
    args: &OverheadArgs,
    hypervisor: Hypervisor,
    accel: Option<Accel>,
) -> Result<Sides, CliError> {
    let cpus = args.cpus.unwrap_or(DEFAULT_CPUS);
    if !(1.0..=255.0).contains(&cpus) || cpus.fract() != 0.0 {
        return Err(CliError::usage(format!(
            "--cpus {cpus} is not a number of vCPUs: the VM gets whole vCPUs and the native \
             side the same CPU quota; give a whole number from 1 to 255"
        )));
    }
    let memory = args.memory.as_deref().unwrap_or(DEFAULT_MEMORY);
    crate::config::size::parse_size(memory)
        .map_err(|e| CliError::usage(format!("--memory {memory}: {e}")))?;
    let mut vm = instance_table(VM_INSTANCE);
    vm.insert("hypervisor".into(), Value::String(hypervisor.name().into()));
    if let Some(a) = accel {
        vm.insert("accel".into(), Value::String(a.name().into()));
    }
    vm.insert("cpus".into(), Value::Integer(cpus as i64));
    vm.insert("memory".into(), Value::String(memory.into()));
    let (native, native_table) = match &args.native {
        Some(target) => (target.clone(), None),
        None => {
            let mut t = instance_table(NATIVE_INSTANCE);
            if CgroupPaths::can_create() {
                t.insert("cpus".into(), Value::Float(cpus));
                t.insert("memory".into(), Value::String(memory.into()));
            } else {
                eprintln!(
                    "note: control groups cannot be made here (they need root), so the native \
                     side '{NATIVE_INSTANCE}' runs without the VM's size: it may use every core \
                     and all memory"
                );
            }
            (format!("instance:{NATIVE_INSTANCE}"), Some(t))
        }
    };
    Ok(Sides {
        native,
        virtual_: format!("instance:{VM_INSTANCE}"),
        native_table,
        vm_table: Some(vm),
    })
}

fn instance_table(name: &str) -> Table {
    let mut t = Table::new();
    t.insert("name".into(), Value::String(name.into()));
    t
}

/// Writes each made side's `[[instance]]` into the runs of its own side only: the experiment
/// stops the instances a run does not declare, so the idle side takes nothing.
fn declare(exp: &mut Experiment, sides: &Sides) -> Result<(), CliError> {
    for (point, run) in exp.points.iter().zip(exp.runs.iter_mut()) {
        let target = point.0.first().map(|(_, v)| v.as_str());
        let table = if target == Some(sides.native.as_str()) {
            &sides.native_table
        } else {
            &sides.vm_table
        };
        let Some(table) = table else { continue };
        let mut doc: Table = toml::from_str(&run.text)
            .map_err(|e| CliError::usage(format!("{}: {}", run.label, e.message())))?;
        let list = doc
            .entry("instance")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(list) = list.as_array_mut() else {
            return Err(CliError::usage(format!(
                "{}: `instance` is not a list of [[instance]] tables",
                run.label
            )));
        };
        list.push(Value::Table(table.clone()));
        run.text = toml::to_string(&doc).map_err(|e| CliError::usage(e.to_string()))?;
    }
    Ok(())
}

/// A ratio with two decimals, or two significant digits below 0.1: under TCG a VM can run at
/// a few thousandths of the host's rate, which two decimals would print as 0.00.
fn two_significant(r: f64) -> String {
    if r >= 0.1 || r <= 0.0 || !r.is_finite() {
        return format!("{r:.2}");
    }
    let digits = (-r.log10()).floor() as usize + 2;
    format!("{r:.digits$}")
}

/// The tps ratio (virtual over native, medians), marked when the VM was emulated, each side's
/// share of the host (`--profile host`), and the profile difference of the first complete run
/// of each side; `compare.html` beside them.
fn verdict(file: &ExperimentFile, dir: &Path) -> String {
    let [native, virt] = match file.points.as_slice() {
        [a, b] => [a, b],
        _ => return String::new(),
    };
    let first = |p: &crate::results::experiment::Point| -> Option<PathBuf> {
        p.runs
            .iter()
            .find(|r| r.status == RunStatus::Complete)
            .map(|r| dir.join(&r.dir))
    };
    let (a, b) = (first(native), first(virt));
    let vm = b.as_deref().and_then(vm_facts);
    let mut out = String::from("\noverhead (Cybertec, PostgreSQL virtualization revisited):\n");
    match (native.median, virt.median) {
        (Some(n), Some(v)) if n > 0.0 => out.push_str(&format!(
            "  tps native {n:.1}, virtual {v:.1}: virtual/native {} ({:.0} % lost{})\n",
            two_significant(v / n),
            (1.0 - v / n) * 100.0,
            if vm.as_ref().is_some_and(|f| f.emulated) {
                "; emulated"
            } else {
                ""
            }
        )),
        _ => out.push_str("  no tps ratio: a side has no complete run\n"),
    }
    if let Some(f) = &vm {
        out.push_str(&vm_line(f));
    }
    let (Some(a), Some(b)) = (a, b) else {
        return out;
    };
    let dirs = [a, b];
    for (side, d) in ["native", "virtual"].iter().zip(&dirs) {
        out.push_str(&host_share(side, d));
    }
    out.push_str(&profiles(&dirs, dir));
    out
}

/// The virtual side's VM, when its server ran in a QEMU guest.
fn vm_facts(run: &Path) -> Option<crate::results::VmFacts> {
    let runtime = RuntimeInfo::read(run).ok()?;
    runtime.servers.into_iter().find_map(|s| s.vm)
}

fn vm_line(f: &crate::results::VmFacts) -> String {
    let size = format!(
        "{} vCPU, {}",
        f.vcpus,
        crate::config::size::format_size(f.memory_bytes)
    );
    if f.emulated {
        format!(
            "  emulated: the VM ({size}) ran under TCG, software emulation, so this ratio is an \
             emulator's, not a VM's real overhead; run it on a host with working KVM for that\n"
        )
    } else {
        format!("  the VM ({size}) ran under {}\n", f.accel.to_uppercase())
    }
}

/// With `--profile host`: each profiled server's share of every sample the host took in the
/// window (a VM's is its QEMU process: what the guest costs the host), and the CPUs it used.
fn host_share(side: &str, run: &Path) -> String {
    let Ok(Some(p)) = ProfileFile::read(run) else {
        return String::new();
    };
    let Some(host) = p
        .subjects
        .iter()
        .find(|s| s.kind == "host" && s.samples > 0)
    else {
        return String::new();
    };
    let window = (p.window_s.1 - p.window_s.0).max(1e-9);
    let vm = vm_facts(run).is_some();
    let mut out = String::new();
    for s in p
        .subjects
        .iter()
        .filter(|s| matches!(s.kind.as_str(), "instance" | "server"))
    {
        let what = if vm && s.kind == "instance" {
            format!("the VM's QEMU process (instance {})", s.name)
        } else {
            s.heading()
        };
        out.push_str(&format!(
            "  on the host, {side}: {what} {:.1} % of the host's samples ({:.2} CPUs)\n",
            100.0 * s.samples as f64 / host.samples as f64,
            s.samples as f64 / (f64::from(p.hz.max(1)) * window)
        ));
    }
    out
}

/// The profile difference and `compare.html` (both sides and their profiles).
fn profiles(dirs: &[PathBuf; 2], dir: &Path) -> String {
    let mut out = String::new();
    let diff = crate::report::compare_profile::table(dirs);
    if diff.is_empty() {
        out.push_str("  no profile difference: a side has no profile (see its report.html)\n");
    } else {
        out.push_str(&diff);
    }
    if let Ok(sides) = crate::report::compare::sides(dirs) {
        let page = crate::report::compare::html(&sides).replace(
            "</body>",
            &format!("{}</body>", crate::report::compare_profile::html(dirs)),
        );
        let path = dir.join("compare.html");
        if crate::results::atomic::write(&path, page.as_bytes()).is_ok() {
            out.push_str(&format!(
                "\nside by side: {}\nprofiles: {}/report.html and {}/report.html\n",
                path.display(),
                dirs[0].display(),
                dirs[1].display()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_ratio_keeps_two_significant_digits() {
        assert_eq!(two_significant(0.34), "0.34");
        assert_eq!(two_significant(0.0046), "0.0046");
        assert_eq!(two_significant(0.046), "0.046");
        assert_eq!(two_significant(0.0), "0.00");
    }
}
