//! Flags of `tidebench slurm` and `tidebench kube`, which write a launcher's files for a run
//! spread over several driver hosts. Raw flags and their help only; [`SlurmArgs::spec`] and
//! [`KubeArgs::spec`] turn them into the [`LaunchSpec`] the generators take (the clock is a
//! parameter, so no I/O happens here).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Args;

use super::kube::{self, KubeOptions};
use super::slurm::{self, SlurmOptions};
use super::{default_run_id, LaunchSpec};
use crate::config::duration::parse_duration;

/// Shown under `tidebench slurm --help`.
pub const SLURM_AFTER_HELP: &str = "\
Writes a batch script to stdout: one srun step with one task per shard, each running
  tidebench run RUN_FILE --shard auto/N --start-at +LEAD@DIR/start-at --run-id ID \\
      --out DIR/shard-{shard} [RUN_ARGS]
then `tidebench merge DIR/shard-0 ... --out DIR/merged`. Every shard takes its index from
SLURM_PROCID; the first to start writes the common start instant into DIR/start-at and all
start their clients then. Clients are dealt over the shards (client i runs on shard i mod N),
so -c is the run's total. DIR must be on storage every node sees (NFS, Lustre, BeeGFS), and
so must RUN_FILE and the tidebench binary.

A failed shard does not stop the others: the merge keeps what they measured (marked
incomplete) and the job exits with srun's status.

Examples:
  tidebench slurm tpcc.toml --drivers 4 --nodes 4 --time 1:00:00 -- -T 30m -c 256 > tpcc.sbatch
  sbatch tpcc.sbatch
  tidebench report results/tpcc-20261125T210000Z/merged";

/// Shown under `tidebench kube --help`.
pub const KUBE_AFTER_HELP: &str = "\
Writes Kubernetes manifests to stdout (apply them with kubectl apply -f):
  an Indexed Job with one pod per shard, each running
    tidebench run RUN_FILE --shard auto/N --start-at +LEAD@DIR/start-at --run-id ID \\
        --out DIR/shard-{shard} [RUN_ARGS]
  (Kubernetes gives each pod its index in JOB_COMPLETION_INDEX), and a merge Job whose pod
  waits until every shard's dir holds summary.json, then runs tidebench merge into DIR/merged.
  Unless RUN_FILE is a path under /results, a ConfigMap carries it into the pods.

Every pod mounts --results-claim at /results; DIR must be under it, one per run (the default
/results/<run id> is). The pods land on several nodes, so the claim must be ReadWriteMany
(NFS, CephFS, a cloud file store). Files the run file names (a script workload's .sql files)
are not carried: put them and the run file on the claim and give RUN_FILE as /results/....
Keep passwords out of the run file: put PGPASSWORD (and PGUSER...) in a Secret and name it
with --env-secret. Needs Kubernetes 1.29 or later (a failed shard does not stop the others).
Image: see deploy/Containerfile.

Example:
  tidebench kube tpcc.toml --drivers 4 --image registry.example.com/tidebench:0.1 \\
      --results-claim tidebench-results --env-secret pg-bench -- -T 30m -c 256 > tpcc.yaml
  kubectl apply -f tpcc.yaml
  kubectl wait --for=condition=complete job/tidebench-tpcc-20261125t210000z-merge --timeout=2h";

/// What both launchers take: the run, how many shards, where results go, and when they start.
#[derive(Args, Debug)]
pub struct LaunchArgs {
    /// The run file each shard runs. Slurm: by its path on the nodes (a relative one from the
    /// dir the job starts in). Kubernetes: read here and carried into the pods, unless given as
    /// /results/..., a path on the claim
    #[arg(value_name = "RUN_FILE")]
    pub run_file: PathBuf,
    /// Shards: driver processes, one per Slurm task or pod. Clients are dealt over them, so
    /// -c/--clients stays the run's total
    #[arg(short = 'n', long, value_name = "N")]
    pub drivers: u32,
    /// Dir every shard writes, one per run, on storage all of them see (Kubernetes: under
    /// /results): shard I writes DIR/shard-I, the merge DIR/merged [default: results/<run id>;
    /// on Kubernetes /results/<run id>]
    #[arg(long, value_name = "DIR")]
    pub results_dir: Option<String>,
    /// How long after the first shard starts all of them start their clients: time for the
    /// others to be scheduled, pull the image and connect. Raise it on a busy cluster
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = parse_duration)]
    pub start_lead: Duration,
    /// One id for all shards; `merge` refuses dirs of different runs, and a run without
    /// --seed derives its seed from it [default: <run file's name>-<UTC time>]
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// `tidebench run` flags every shard gets, after `--`: -- -T 30m -c 256
    #[arg(last = true, value_name = "RUN_ARGS")]
    pub run_args: Vec<String>,
}

impl LaunchArgs {
    fn spec(&self, now: SystemTime, default_dir: fn(&str) -> String) -> LaunchSpec {
        let run_id = self
            .run_id
            .clone()
            .unwrap_or_else(|| default_run_id(&self.run_file, now));
        LaunchSpec {
            run_file: self.run_file.clone(),
            drivers: self.drivers,
            run_args: self.run_args.clone(),
            results_dir: self
                .results_dir
                .clone()
                .unwrap_or_else(|| default_dir(&run_id)),
            start_lead: self.start_lead,
            run_id,
        }
    }
}

/// `tidebench slurm`: a batch script for `sbatch`.
#[derive(Args, Debug)]
#[command(after_help = SLURM_AFTER_HELP)]
pub struct SlurmArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Partition to run in [default: the cluster's default]
    #[arg(short = 'p', long, value_name = "NAME")]
    pub partition: Option<String>,
    /// Time limit, as sbatch takes it (30:00, 2:00:00, 1-00:00:00); the lead, the run and the
    /// merge must fit [default: the partition's]
    #[arg(short = 't', long = "time", value_name = "LIMIT")]
    pub time_limit: Option<String>,
    /// Nodes to spread the shards over; --nodes N with --drivers N puts one shard on each
    /// [default: Slurm's choice, which may put several on one node]
    #[arg(short = 'N', long, value_name = "N")]
    pub nodes: Option<u32>,
    /// CPUs for each shard (match run's -j/--jobs) [default: Slurm's, usually 1]
    #[arg(long, value_name = "N")]
    pub cpus_per_task: Option<u32>,
    /// Another #SBATCH option, one word; repeat for more: --sbatch=--exclusive
    /// --sbatch=--account=bench
    #[arg(long, value_name = "OPTION", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// Dir the job starts in (relative paths resolve from it) [default: where sbatch runs]
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<String>,
    /// The tidebench binary on the nodes
    #[arg(long, value_name = "PATH", default_value = super::PROGRAM)]
    pub tidebench: String,
}

impl SlurmArgs {
    /// The spec, with the run id from `now` unless --run-id gave one.
    pub fn spec(&self, now: SystemTime) -> LaunchSpec {
        self.launch.spec(now, slurm::default_results_dir)
    }

    pub fn options(&self) -> SlurmOptions {
        SlurmOptions {
            partition: self.partition.clone(),
            time_limit: self.time_limit.clone(),
            nodes: self.nodes,
            cpus_per_task: self.cpus_per_task,
            sbatch: self.sbatch.clone(),
            workdir: self.workdir.clone(),
            tidebench: self.tidebench.clone(),
        }
    }
}

/// `tidebench kube`: manifests for `kubectl apply`.
#[derive(Args, Debug)]
#[command(after_help = KUBE_AFTER_HELP)]
pub struct KubeArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// The tidebench image every pod runs (built from deploy/Containerfile)
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// The PersistentVolumeClaim for the results, mounted at /results in every pod; it must be
    /// ReadWriteMany
    #[arg(long, value_name = "CLAIM")]
    pub results_claim: String,
    /// Namespace of the Jobs (and the claim and Secret) [default: kubectl's current one]
    #[arg(long, value_name = "NAME")]
    pub namespace: Option<String>,
    /// A Secret whose keys become each shard's environment, e.g. PGPASSWORD and PGUSER
    #[arg(long, value_name = "SECRET")]
    pub env_secret: Option<String>,
    /// How long the merge waits for every shard; after it, it merges those that finished,
    /// marked incomplete, and fails. Give a little more than the lead and the run
    #[arg(long, value_name = "DUR", default_value = "24h", value_parser = parse_duration)]
    pub merge_timeout: Duration,
}

impl KubeArgs {
    /// The spec, with the run id from `now` unless --run-id gave one.
    pub fn spec(&self, now: SystemTime) -> LaunchSpec {
        self.launch.spec(now, kube::default_results_dir)
    }

    /// The options; `run_file_text` is the run file's text when [`kube::ships_run_file`] says
    /// the manifests carry it (the CLI reads it), else `None`.
    pub fn options(&self, run_file_text: Option<String>) -> KubeOptions {
        KubeOptions {
            namespace: self.namespace.clone(),
            env_secret: self.env_secret.clone(),
            merge_timeout: self.merge_timeout,
            run_file_text,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser, Subcommand};

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand, Debug)]
    enum Command {
        Slurm(SlurmArgs),
        Kube(KubeArgs),
    }

    fn parse(line: &str) -> Command {
        Cli::try_parse_from(line.split(' ')).unwrap().command
    }

    #[test]
    fn the_flags_are_well_formed_and_the_help_teaches() {
        Cli::command().debug_assert();
        let help = Cli::command()
            .find_subcommand_mut("kube")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("ReadWriteMany"), "{help}");
    }

    #[test]
    fn slurm_flags_become_the_spec_and_options() {
        let now = humantime::parse_rfc3339("2026-11-25T21:00:00Z").unwrap();
        let Command::Slurm(a) =
            parse("tb slurm tpcc.toml -n 4 -N 4 -p bench --sbatch=--exclusive -- -T 30m -c 64")
        else {
            panic!("not slurm");
        };
        let spec = a.spec(now);
        assert_eq!(spec.run_id, "tpcc-20261125T210000Z");
        assert_eq!(spec.results_dir, "results/tpcc-20261125T210000Z");
        assert_eq!(spec.run_args, ["-T", "30m", "-c", "64"]);
        assert_eq!(spec.start_lead, crate::launch::DEFAULT_START_LEAD);
        let o = a.options();
        assert_eq!((o.nodes, o.partition.as_deref()), (Some(4), Some("bench")));
        assert_eq!(
            (o.sbatch, o.tidebench),
            (vec!["--exclusive".to_string()], "tidebench".into())
        );
    }

    #[test]
    fn kube_flags_become_the_spec_and_options() {
        let now = humantime::parse_rfc3339("2026-11-25T21:00:00Z").unwrap();
        let Command::Kube(a) = parse(
            "tb kube run.toml --drivers 2 --image r/tb:1 --results-claim res --run-id x \
             --start-lead 2m --merge-timeout 3h",
        ) else {
            panic!("not kube");
        };
        let spec = a.spec(now);
        assert_eq!(
            (spec.run_id.as_str(), spec.results_dir.as_str()),
            ("x", "/results/x")
        );
        assert_eq!(spec.start_lead, Duration::from_secs(120));
        let o = a.options(Some("clients = 8\n".into()));
        assert_eq!(o.merge_timeout, Duration::from_secs(3 * 3600));
        assert!(Cli::try_parse_from(["tb", "kube", "run.toml", "-n", "2"]).is_err());
        let Command::Kube(a) = parse("tb kube r.toml -n 2 --image i --results-claim c") else {
            panic!("not kube");
        };
        assert_eq!(a.merge_timeout, kube::DEFAULT_MERGE_TIMEOUT);
    }
}
