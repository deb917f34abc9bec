//! `tidebench overhead`: the Cybertec study's experiment as one command. The same pgbench run (TPC-B-like,
//! scale 10, 10 clients, synchronous_commit=off by default) on a native target and on a
//! virtualized one, each profiled over its measured window; it ends with the tps ratio and the
//! profile difference. Underneath it is a sweep over `target` (so `--repeat`, `--out`,
//! resuming and `experiment.html` work as for `sweep`), and `compare.html` in the experiment
//! dir puts the two sides and their profiles side by side.

use std::path::{Path, PathBuf};

use crate::experiment::{Experiment, Vary};
use crate::instance::Home;
use crate::results::experiment::{ExperimentFile, RunStatus};
use crate::workload::Registry;

use super::args::OverheadArgs;
use super::experiment_cmd::{base_run, dry_run, execute_file, exit_code, out_dir, request};
use super::{CliError, WorkloadFlags};

/// The Cybertec study's pgbench run: a run preset, so the workload is named by config's
/// presets, not here.
const PRESET: &str = "overhead";
const CLIENTS: u32 = 10;
const SESSION: &str = "synchronous_commit=off";

pub fn overhead(args: OverheadArgs, flags: &WorkloadFlags, home: &Home) -> Result<u8, CliError> {
    if args.run.target.is_some() {
        return Err(CliError::usage(
            "overhead runs on two targets: give them as --native TARGET and --virtual TARGET, \
             not --target",
        ));
    }
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
    let (base, label) = base_run(&run, flags, None)?;
    let varies = [Vary {
        name: "target".into(),
        key: crate::experiment::vary::VaryKey::Run("target".into()),
        values: vec![args.native.clone(), args.virtual_.clone()],
    }];
    let repeat = args.experiment.repeat;
    let request = request(&label, &base, &args.experiment, repeat, &varies, None, None);
    let dir = out_dir(&run, "overhead");
    let exp = Experiment::sweep(dir, request, &base, &varies, &Registry)
        .map_err(|e| CliError::usage(e.to_string()))?;
    if run.dry_run {
        return dry_run(&exp);
    }
    let (file, interrupted) = execute_file(&exp, home)?;
    print!("{}", verdict(&file, &exp.dir));
    Ok(exit_code(&file, interrupted))
}

/// The tps ratio (virtual over native, medians) and the profile difference of the first
/// complete run of each side; `compare.html` beside them.
fn verdict(file: &ExperimentFile, dir: &Path) -> String {
    let [native, virt] = match file.points.as_slice() {
        [a, b] => [a, b],
        _ => return String::new(),
    };
    let mut out = String::from("\noverhead (Cybertec, PostgreSQL virtualization revisited):\n");
    match (native.median, virt.median) {
        (Some(n), Some(v)) if n > 0.0 => out.push_str(&format!(
            "  tps native {n:.1}, virtual {v:.1}: virtual/native {:.2} ({:.0} % lost)\n",
            v / n,
            (1.0 - v / n) * 100.0
        )),
        _ => out.push_str("  no tps ratio: a side has no complete run\n"),
    }
    let first = |p: &crate::results::experiment::Point| -> Option<PathBuf> {
        p.runs
            .iter()
            .find(|r| r.status == RunStatus::Complete)
            .map(|r| dir.join(&r.dir))
    };
    let (Some(a), Some(b)) = (first(native), first(virt)) else {
        return out;
    };
    let dirs = [a, b];
    let diff = crate::report::compare_profile::table(&dirs);
    if diff.is_empty() {
        out.push_str("  no profile difference: a side has no profile (see its report.html)\n");
    } else {
        out.push_str(&diff);
    }
    if let Ok(sides) = crate::report::compare::sides(&dirs) {
        let page = crate::report::compare::html(&sides).replace(
            "</body>",
            &format!("{}</body>", crate::report::compare_profile::html(&dirs)),
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
