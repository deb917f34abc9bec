//! `tidebench slurm` and `tidebench kube`: print (or, for Slurm, submit) the launch files of a
//! run spread over several driver hosts, as `crate::launch` writes them. The I/O is here: the
//! clock, reading the run file a ConfigMap carries, writing and submitting the batch script.

use std::process::Command as Process;
use std::time::SystemTime;

use super::args::SlurmCommand;
use super::CliError;
use crate::launch::args::KubeArgs;
use crate::launch::{kube, slurm};

/// Prints the batch script, or writes it into the results dir and runs sbatch (`--submit`).
pub fn slurm(args: SlurmCommand) -> Result<u8, CliError> {
    let spec = args.slurm.spec(SystemTime::now());
    let script = slurm::sbatch_script(&spec, &args.slurm.options())?;
    if !args.submit {
        print!("{script}");
        return Ok(0);
    }
    let dir = std::path::Path::new(&spec.results_dir);
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join("tidebench.sbatch");
    std::fs::write(&path, &script)
        .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))?;
    let mut sbatch = Process::new("sbatch");
    if args.wait {
        sbatch.arg("--wait");
    }
    let status = sbatch.arg(&path).status().map_err(|e| {
        CliError::usage(format!(
            "cannot run sbatch ({e}): is Slurm installed here? The script is in {}",
            path.display()
        ))
    })?;
    eprintln!(
        "slurm: {} ({} shards); results in {}, merged into {}/merged",
        path.display(),
        spec.drivers,
        spec.results_dir,
        spec.results_dir
    );
    Ok(match status.code() {
        Some(0) => 0,
        _ if args.wait => super::EXIT_RUN_FAILED,
        _ => 2,
    })
}

/// Prints the manifests; the run file goes into a ConfigMap unless it lies on the claim.
pub fn kube(args: KubeArgs) -> Result<u8, CliError> {
    let spec = args.spec(SystemTime::now());
    let text = if kube::ships_run_file(&spec) {
        Some(std::fs::read_to_string(&spec.run_file).map_err(|e| {
            CliError::usage(format!(
                "cannot read the run file {} ({e}); the manifests carry it to the pods",
                spec.run_file.display()
            ))
        })?)
    } else {
        None
    };
    let yaml = kube::manifests(&spec, &args.image, &args.results_claim, &args.options(text))?;
    print!("{yaml}");
    Ok(0)
}
