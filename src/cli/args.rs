//! The command-line grammar (clap). Raw flags only: no I/O, no validation beyond syntax;
//! `config` turns them into a Plan. pgbench's short flags are accepted where they mean the same.

use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::{
    Isolation, OptionValues, PresetKnobs, ProtocolName, RawRun, RunSource, WorkloadName,
};

use super::instance_cmd::InstanceCommand;
use super::target_cmd::TargetCommand;
use super::workload_args::{self, WorkloadFlags};

const ABOUT: &str =
    "PostgreSQL benchmark kit for consolidation, virtualization and elastic multi-tenant load";

const AFTER_HELP: &str = "\
Quick start (a managed local instance named `default` is created on demand):
  tidebench prepare --workload tpcb --scale 10
  tidebench run --workload tpcb --clients 8 --duration 30s
  tidebench run -S -c 4 -T 10 -P 2          # pgbench-style flags: select-only, 4 clients, 10 s

Environment:
  TIDEBENCH_HOME     work dir for managed instances (default ./tidebench-data)
  TIDEBENCH_PG_BIN   directory of the PostgreSQL binaries (initdb, pg_ctl, postgres)

Exit codes: 0 ok, 1 a check failed or a run failed (a panic), 2 usage, config or setup error.";

#[derive(Debug, Parser)]
#[command(name = "tidebench", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process, so the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a benchmark (from flags, a TOML file, or both: flags override the file)
    #[command(after_help = RUN_AFTER_HELP)]
    Run(RunCommand),
    /// Create a workload's schema and load its data (parallel COPY)
    Prepare(PrepareArgs),
    /// Manage local PostgreSQL instances (the emulated VMs)
    #[command(subcommand)]
    Instance(InstanceCommand),
    /// Connect to a target as a run would and print where it lands (host, port, user, database, TLS)
    #[command(subcommand)]
    Target(TargetCommand),
    /// List the built-in run presets (use with `run --preset NAME`), or print one's TOML
    Presets(PresetsArgs),
    /// Write DIR/report.html (charts, tables) from a results dir; or re-aggregate it (--by), or dump its mix log
    Report(ReportArgs),
    /// Compare results dirs (or dirs of repeated runs) side by side, with a verdict per metric; exit 1 on a regression
    #[command(after_help = super::compare_cmd::COMPARE_AFTER_HELP)]
    Compare(super::compare_cmd::CompareArgs),
    /// A/B of two PostgreSQL builds (or settings): one instance a side, the same runs alternated A B B A, ending with compare's verdict; exit 1 on a regression
    #[command(after_help = super::ab_cmd::AB_AFTER_HELP)]
    Ab(super::ab_cmd::AbArgs),
    /// Run a workload's consistency checks on a target (TPC-C: conditions 1-4); exit 1 on failure
    Check(CheckArgs),
    /// Run a series of runs over a grid of settings (--vary), repeated, with its analysis; resumable
    #[command(after_help = SWEEP_AFTER_HELP)]
    #[command(mut_arg("out", |a| a.help("Experiment dir: one results dir per run, experiment.json, experiment.html; the same --out resumes [default: ./results/<UTC time>-sweep/]")))]
    #[command(mut_arg("preset", |a| a.help("A built-in experiment (vpostgres-scalability) or run preset (see `tidebench presets`)")))]
    Sweep(SweepArgs),
    /// Add one managed instance per step, each with its own database and load, all run at once: total vs ideal
    #[command(after_help = DENSITY_AFTER_HELP)]
    #[command(mut_arg("out", |a| a.help("Experiment dir: one results dir per step, experiment.json, experiment.html; the same --out resumes [default: ./results/<UTC time>-density/]")))]
    #[command(mut_arg("preset", |a| a.help("A built-in experiment: nutanix-density")))]
    Density(DensityArgs),
    /// Consolidation schemes (1/1/M, 1/M/M, M/M/M) under memory overcommitment: complementary traffic, NOTPM per scheme and rate
    #[command(after_help = CONSOLIDATE_AFTER_HELP)]
    #[command(mut_arg("config", |a| a.help("A consolidation file: run keys for each database's load plus a [consolidate] table (see --help)")))]
    #[command(mut_arg("out", |a| a.help("Experiment dir: one results dir per scheme and rate, experiment.json, experiment.html; the same --out resumes [default: ./results/<UTC time>-consolidate/]")))]
    #[command(mut_arg("preset", |a| a.help("A built-in experiment: vpostgres-consolidation")))]
    Consolidate(ConsolidateArgs),
    /// (internal) hold locked memory in the current control group until stdin closes
    #[command(hide = true)]
    BalloonHold { bytes: u64 },
    /// (internal) PID 1 of a tidebench VM guest (issue 40): never run this on a host
    #[command(hide = true)]
    GuestInit,
    /// Step one VM's memory (shared_buffers or memory − shared_buffers kept) and read the knee: the working-set size
    #[command(after_help = KNEE_AFTER_HELP)]
    #[command(mut_arg("out", |a| a.help("Experiment dir: one results dir per point, experiment.json, experiment.html; the same --out resumes [default: ./results/<UTC time>-knee/]")))]
    #[command(mut_arg("preset", |a| a.help("A built-in experiment (vpostgres-knee) or run preset (see `tidebench presets`)")))]
    Knee(KneeArgs),
    /// Native against virtual (Cybertec's study): the same pgbench run on two targets, profiled; ends with the tps ratio and where the time went
    #[command(after_help = OVERHEAD_AFTER_HELP)]
    #[command(mut_arg("out", |a| a.help("Experiment dir: one results dir per side, experiment.json, experiment.html, compare.html; the same --out resumes [default: ./results/<UTC time>-overhead/]")))]
    Overhead(OverheadArgs),
    /// Merge the results dirs of a run's shards (run --shard) into one results dir: exact totals, percentiles, server check
    #[command(after_help = MERGE_AFTER_HELP)]
    Merge(MergeArgs),
    /// Write a Slurm batch script that runs one run as N shards (srun), then merges them; --submit hands it to sbatch
    #[command(after_help = crate::launch::args::SLURM_AFTER_HELP)]
    Slurm(SlurmCommand),
    /// Write Kubernetes manifests that run one run as N shards (an Indexed Job), then merge them
    #[command(after_help = crate::launch::args::KUBE_AFTER_HELP)]
    Kube(crate::launch::args::KubeArgs),
    /// pgbench 15's command line, run by tidebench on pgbench's server, with pgbench's output and exit statuses (see `tidebench pgbench --help`)
    Pgbench(PgbenchArgs),
}

/// Everything after `tidebench pgbench`, read by the drop-in itself (not by clap).
#[derive(Debug, Args)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub struct PgbenchArgs {
    /// Also print tidebench's own lines on stderr (the results dir, tidebench's warnings),
    /// which pgbench does not print. Given before pgbench's options.
    #[arg(long = "tidebench-notes")]
    pub notes: bool,
    /// pgbench 15's options and database name (`tidebench pgbench --help` lists them)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

const OVERHEAD_AFTER_HELP: &str = "\
Cybertec's \"PostgreSQL virtualization revisited\" (Hans-Jürgen Schönig) ran pgbench (scale 10,
10 clients, synchronous_commit=off) natively and in a Xen VM: 4,500 against 1,600 tps, and 51 %
of PostgreSQL's samples in the VM were in hypercall_page. This runs that comparison on any two
targets, each profiled with perf over its measured window:
  --native   the bare-metal side: a managed instance without limits, or a DSN to the host
  --virtual  the virtualized side: a DSN to a VM (run tidebench on the VM's host, or inside it
             with --profile host to see what the guest sees), or a managed instance with
             limits (instance start NAME --cpus 0.5)
With --hypervisor qemu instead of --virtual, tidebench makes both sides itself, of one size
(--cpus, --memory): the VM is the managed instance overhead-vm, a QEMU guest (KVM where it boots,
else TCG: then the ratio is marked emulated, not a VM's real overhead), and the native side
(unless --native names one) the managed instance overhead-native, in a control group of that
size where cgroups are writable (as root). Each side's instance is stopped while the other runs;
--profile host adds the QEMU process's share of the host's samples to the verdict.
Defaults are that study's: --workload tpcb --scale 10 --clients 10 --session-set
synchronous_commit=off --profile instances; any run flag overrides them. Data is loaded on each
side when missing.

Examples:
  tidebench instance start native
  tidebench instance start limited --cpus 0.5
  tidebench overhead --native instance:native --virtual instance:limited -T 1m
  tidebench overhead --native 'host=/var/run/postgresql dbname=bench' \\
      --virtual postgresql://bench@vm1/bench --profile host --repeat 3 -T 2m
  tidebench overhead --hypervisor qemu --cpus 2 --memory 2GiB --profile host -T 1m

Exit codes: 0 both runs complete, 1 a run failed, 2 bad input (perf missing: apt-get install
linux-perf), 130 interrupted.";

#[derive(Debug, Args)]
pub struct OverheadArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub experiment: ExperimentArgs,
    /// The native side: DSN or instance:NAME[/DB] [default with --hypervisor: the managed instance overhead-native]
    #[arg(long, value_name = "TARGET", help_heading = EXPERIMENT)]
    pub native: Option<String>,
    /// The virtualized side: DSN or instance:NAME[/DB]; leave it out with --hypervisor
    #[arg(long = "virtual", value_name = "TARGET", help_heading = EXPERIMENT, conflicts_with = "hypervisor")]
    pub virtual_: Option<String>,
    /// With --hypervisor: the size of both sides, whole vCPUs of the VM and the native side's CPU quota [default: 1]
    #[arg(long, help_heading = EXPERIMENT, requires = "hypervisor")]
    pub cpus: Option<f64>,
    /// With --hypervisor: the VM's RAM and the native side's memory limit, e.g. 1GiB [default: 1GiB]
    #[arg(long, value_name = "SIZE", help_heading = EXPERIMENT, requires = "hypervisor")]
    pub memory: Option<String>,
}

const SWEEP_AFTER_HELP: &str = "\
Keys (--vary KEY=V1,V2,...; several --vary make a grid, the last varying fastest):
  clients, scale, protocol, rate, duration, ...   any run key, or a workload option (think, procedures)
  group.NAME.KEY                                  one group's key; group.NAME.clients sets its clients in every phase
  instance.cpus | instance.memory | instance.set.SETTING
                                                  every managed instance of the run (or instance.NAME.cpus ...):
                                                  restarted with the value before the point runs
Values: lists and ranges: 1,2,4  1..64x2 (1 2 4 ... 64)  1..16+4 (1 5 9 13)  256MB,1GB
Data is (re)loaded only when a point needs another scale than the database holds.

Each run is an ordinary results dir; --repeat runs the whole series R times back to back, and each
point reports the median, min and max tps of its complete runs. Ctrl-C stops after writing what was
measured; the same command with the same --out resumes, skipping complete runs.

Examples:
  tidebench sweep -S --scale 10 --vary clients=1..32x2 --repeat 3 --duration 1m --out results/scal
  tidebench sweep --workload tpcb --vary protocol=simple,prepared --vary clients=1,4,16 -T 30s
  tidebench sweep --workload tpcb --vary instance.set.shared_buffers=128MB,1GB -c 8 -T 1m
  tidebench sweep --preset vpostgres-scalability --point-duration 1m --out results/vpg

Exit codes: 0 every run complete, 1 some run failed (see experiment.json), 2 bad input, 130 interrupted.";

const DENSITY_AFTER_HELP: &str = "\
Step n starts the managed instances density-1 .. density-n (each in its own control group with
--cpus and --memory, each with its own database prepared on first use and its own --clients) and
runs them all at once on one clock. With --hypervisor qemu each instance is a real VM instead: a
QEMU guest with --cpus whole vCPUs and --memory of RAM (a VM more per step; under TCG, software
emulation, the figures are marked emulated). The analysis gives each step's total tps, each instance's tps,
the ideal n x (median of the 1-instance step), the percent of ideal, and the host CPU used.
The instances stay after the experiment (data kept for a resume); remove them with
`tidebench instance destroy density-N`.

Examples:
  tidebench density --workload tpcb --scale 10 -c 4 --instances 1..4 --cpus 1 --memory 2GB -T 1m
  tidebench density --preset nutanix-density --point-duration 1m --out results/density
  tidebench density -w tpcb -s 10 -c 4 --instances 1..4 --hypervisor qemu --cpus 2 --memory 2GiB -T 1m

Exit codes: 0 every run complete, 1 some run failed (see experiment.json), 2 bad input, 130 interrupted.";

const KNEE_AFTER_HELP: &str = "\
The vPostgres study's working-set sizing (\"Memory Working Set Sizes\", Figures 7-10): the
same load at a series of VM memory sizes. The VM is the run's managed instance (instance:default
unless --target names another) in its own control group: --memory is its cgroup memory limit, page
cache included, and it is restarted with each point's memory and shared_buffers before the point
runs (needs root for the control group). What stays constant:
  --keep shared_buffers=SIZE  x = VM memory: Figures 7 and 9, the VM memory working set
                              (the study kept 1GB)
  --keep-difference SIZE      memory - shared_buffers, x = shared_buffers: Figures 8 and 10, the
                              shared-buffers working set (the study kept 352MB: Figure 7's working
                              set minus 1GB)
Memory: LO..HI with --steps K (K sizes evenly spaced, both ends included, whole MiB; default 6)
or a list 512MB,1GB,2GB. shared_buffers must stay below the VM's memory at every point.

Throughput (the workload's headline, NOTPM for tpcc, else tps; the median over --repeat) is
normalized to the best point, and the knee is found with Kneedle: x and y scaled to [0, 1], the
knee is the point farthest above the diagonal, read as the working-set size. A dip (the study's
near 2 GB) is read through the running maximum and named; a flat curve (within 5 %) has no knee,
its working set fits in the smallest size; a curve still rising without a bend has none either,
its working set is above the largest size; fewer than 3 points with a complete run have none.
Each point's run is an ordinary results dir; Ctrl-C and resume work as for sweep.

Examples:
  tidebench knee --preset vpostgres-knee --out results/knee-vm        # Figure 7, about 1.5 h
  tidebench knee -w tpcc -s 20 -c 30 --ramp-up 1m -T 5m --memory 608MB..2GB --steps 8 \\
      --keep-difference 352MB --out results/knee-sb                   # Figure 8
  tidebench knee -S -s 2 -c 2 -T 10s --memory 160MB,256MB,384MB --keep shared_buffers=64MB

Exit codes: 0 every run complete, 1 some run failed (see experiment.json), 2 bad input, 130 interrupted.";

const RUN_AFTER_HELP: &str = "\
Targets (--target):
  postgresql://user:pass@host:5432/db     a libpq URI
  'host=/tmp port=5432 dbname=db'          a libpq keyword string
  instance:NAME[/DBNAME]                   a managed instance (default: instance:default/tidebench)

Results go to ./results/<UTC time>-<preset, run file or workload>/ (or --out): runtime.toml, summary.json,
intervals.csv, latency.hlog, system.csv. Ctrl-C stops within a second and still writes them (complete: false).

TPC-V end to end (tpce on 8 managed instances, 10 phases; see `tidebench presets --show tpcv`):
  tidebench prepare --preset tpcv --lu-base 1 --trade-days 1
  tidebench run --preset tpcv --lu-base 1 --phase-duration 1m

CH-benCHmark (a tpcc group alone, then beside ch's analytic streams; see `tidebench presets --show ch`):
  tidebench prepare --preset ch --warehouses 4
  tidebench run --preset ch --warehouses 4 --oltp-clients 4 --ch-streams 2 --phase-duration 1m
The summary ends with what the streams cost the tpcc group: its NOTPM and New-Order p95 beside
them against alone, as ratios (summary.json's interference). With the streams on a hot standby
of the tpcc group's instance, it also says how fresh their reads were (summary.json's freshness).

CH-benCHmark's interference curve (1, 2, 4 streams on the tpcc group's database, then on a
database of a second instance, ch-split; a table and report.html's charts at the end):
  tidebench prepare --preset ch-interference
  tidebench run --preset ch-interference --phase-duration 30s

Example config file (tidebench run bench.toml):
  workload = \"tpcb\"
  clients = 16
  duration = \"5m\"
  target = \"instance:default\"

Events (a run file's [[event]] tables): what the run does to its own managed instances, and when;
each is recorded in events.csv and summary.json with the recovery around it:
  [[event]]
  at = \"2m\"                    # or phase = \"NAME\" and at = the offset into its first start
  action = \"fail\"              # fail | freeze (for) | resize (cpus, memory, for) | noise | sql
  target = \"vm-a\"              # a managed instance one of the run's groups uses
  restart_after = \"10s\"
A fail-over: action = \"fail\" on the primary, then action = \"promote\" on its standby a moment
later (the groups' target over both, e.g. instance:a,b); or one action = \"failover\" with
standby = \"b\" and promote_after. The commits lost at the promotion are counted.";

#[derive(Debug, Args)]
pub struct RunArgs {
    /// TOML file describing the run (keys as the long flags, e.g. clients = 8; groups and phases)
    pub config: Option<PathBuf>,
    /// A built-in run (see `tidebench presets`): tpcv, hci, ch, ch-interference, tpcv-elastic,
    /// consolidation-2db, demo (presets ch and ch-interference take --scale/--warehouses as
    /// their size)
    #[arg(long, conflicts_with = "config")]
    pub preset: Option<String>,
    #[command(flatten)]
    pub knobs: PresetKnobArgs,
    /// Set every phase's length (presets use the papers' 10-12 minute phases)
    #[arg(long, allow_hyphen_values = true)]
    pub phase_duration: Option<String>,
    /// Repeat the phase list this many times [default: 1]
    #[arg(long)]
    pub iterations: Option<u32>,
    /// Run the first phase's load this long before measuring [default: 0s]
    #[arg(long, allow_hyphen_values = true)]
    pub ramp_up: Option<String>,
    /// Run the last phase's load this long after measuring [default: 0s]
    #[arg(long, allow_hyphen_values = true)]
    pub ramp_down: Option<String>,
    /// TPC-V style polling block every period, 0 to turn it off [default: 10s with several groups or phases]
    #[arg(long, allow_hyphen_values = true)]
    pub poll: Option<String>,
    /// Cards per target deck [default: the smallest deck that holds the shares exactly]
    #[arg(long)]
    pub deck_size: Option<u32>,
    /// Transactions in a row per drawn target card, 1 for one card per transaction as the TPC-V kit [default: sized so a full deck lasts about 20 ms, at most 64]
    #[arg(long)]
    pub card_run: Option<u32>,
    /// Pin each driver thread to a CPU of its own (true/false), when the process may use at
    /// least as many CPUs as there are driver threads. Where driver and server share 2 cores it
    /// made select-only at 4 clients faster more often, and TPC-C at 4 clients and tpcb at 16
    /// slower (see the Performance part of the book in docs/) [default: false]
    #[arg(long, value_name = "BOOL")]
    pub pin_threads: Option<bool>,
    /// Log every transaction to mix-<thread>.bin in the results dir (see `report --mix-log`)
    #[arg(long)]
    pub mix_log: bool,
    /// pgbench's -L: transactions over this many ms count as late; with --rate, those already
    /// later than this when due are skipped (counted as skipped, not run)
    #[arg(long, value_name = "MS")]
    pub latency_limit: Option<f64>,
    /// pgbench's -l: log every transaction, pgbench 15's columns, to PREFIX.PID (thread 0) and
    /// PREFIX.PID.THREAD in the working directory
    #[arg(long)]
    pub log: bool,
    /// The log files' prefix (pgbench's --log-prefix) [default: pgbench_log]
    #[arg(long, value_name = "PREFIX")]
    pub log_prefix: Option<String>,
    /// Log only this share of transactions, in (0, 1] (pgbench's --sampling-rate)
    #[arg(long, value_name = "SHARE")]
    pub sampling_rate: Option<f64>,
    /// Log one aggregated line per SECONDS instead (pgbench's --aggregate-interval)
    #[arg(long, value_name = "SECONDS")]
    pub aggregate_interval: Option<u32>,
    /// Sample host, instance, disk and PostgreSQL counters into system.csv every period, 0 to turn it off [default: 1s]
    #[arg(long, allow_hyphen_values = true)]
    pub sample: Option<String>,
    /// Sample the run's sessions in pg_stat_activity N times a second for the wait profiles
    /// (waits.csv, summary.json), 0 to turn it off [default: 10]
    #[arg(long, value_name = "N")]
    pub sample_waits: Option<u32>,
    /// Serve live counters in the Prometheus text format on HOST:PORT (a bare port means 127.0.0.1) during the run
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<String>,
    /// A setting every benchmark session starts with, NAME=VALUE (as PGOPTIONS=-cNAME=VALUE for
    /// pgbench); repeat for more, e.g. --session-set synchronous_commit=off
    #[arg(long, value_name = "NAME=VALUE")]
    pub session_set: Vec<String>,
    /// Sample the CPU with perf over the measured window only (ramps and loading left out):
    /// `instances` profiles each managed instance's processes (and a local server's behind a
    /// DSN, and the driver's own), `host` the whole host as well. Writes profile/*.folded and
    /// profile.json; report.html draws flame graphs. Needs perf (apt-get install linux-perf)
    /// [default when given without a value: instances]
    #[arg(long, value_name = "SCOPE", num_args = 0..=1, default_missing_value = "instances")]
    pub profile: Option<String>,
    /// Samples per second per CPU for --profile [default: 99]
    #[arg(long, value_name = "HZ")]
    pub profile_hz: Option<u32>,
    /// How perf walks stacks for --profile: fp (frame pointers) or dwarf (binaries built without them) [default: fp]
    #[arg(long, value_name = "HOW")]
    pub profile_call_graph: Option<String>,
    /// Workload (the list is the registry's)
    #[arg(short = 'w', long)]
    pub workload: Option<String>,
    /// Isolation level every session starts with [default: read-committed]
    #[arg(long, value_enum)]
    pub isolation: Option<Isolation>,
    /// Where to run: DSN or instance:NAME[/DB] [default: instance:default]
    #[arg(long)]
    pub target: Option<String>,
    /// Concurrent clients (sessions; the Greenplum study calls them streams) [default: 1]
    #[arg(short = 'c', long, visible_alias = "streams")]
    pub clients: Option<u32>,
    /// Driver threads; clients are spread over them [default: min(cores, clients)]
    #[arg(short = 'j', long)]
    pub jobs: Option<u32>,
    /// How long to run: 30s, 5m, 1h, or seconds [default: 30s]
    #[arg(short = 'T', long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Transactions each client runs, then ends (pgbench's -t), instead of a duration
    #[arg(short = 't', long, value_name = "N")]
    pub transactions: Option<u64>,
    /// A new session for every transaction, as pgbench's -C; the time to open them is reported as the average connection time
    #[arg(short = 'C', long)]
    pub connect: bool,
    /// Statement protocol: simple, extended or prepared [default: prepared; extended behind a
    /// connection pooler in transaction mode, which loses named statements]
    #[arg(short = 'M', long, value_enum)]
    pub protocol: Option<ProtocolName>,
    /// Target total rate in transactions/s (Poisson schedule; latency counts from the schedule)
    #[arg(short = 'R', long, allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Tries per transaction on serialization failure or deadlock [default: 1 = no retry]
    #[arg(long)]
    pub max_tries: Option<u32>,
    /// After an error no retry helps (a bad table name, a constraint violation), count it and
    /// go on instead of ending the client [default: on for run files, presets and runs over
    /// several databases; off for a one-database run from flags, as pgbench 15]
    #[arg(long, conflicts_with = "exit_on_abort")]
    pub continue_on_error: bool,
    /// Stop the whole run (exit 2) when the first client is aborted (pgbench 17)
    #[arg(long)]
    pub exit_on_abort: bool,
    /// Tell each try that a serialization failure or deadlock failed, and whether the client
    /// retries it (pgbench 15's --verbose-errors)
    #[arg(long)]
    pub verbose_errors: bool,
    /// Abandon a transaction that runs longer than this as a `timeout` failure and reconnect
    /// (also the server's statement_timeout); 0 turns it off [default: 10s when the run has
    /// more than one target, else off]
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub txn_timeout: Option<String>,
    /// Progress line period, 0 to turn it off [default: 5s]
    #[arg(short = 'P', long, allow_hyphen_values = true)]
    pub progress: Option<String>,
    /// Reporting interval of intervals.csv and latency.hlog [default: 30s]
    #[arg(long, allow_hyphen_values = true)]
    pub interval: Option<String>,
    /// Scale the data was prepared with [default: read from the data]
    #[arg(short = 's', long, value_parser = parse_scale)]
    pub scale: Option<u32>,
    /// Random seed; the same seed gives the same transaction parameters (pgbench's
    /// --random-seed is the same flag) [default: time-based]
    #[arg(long, visible_alias = "random-seed")]
    pub seed: Option<u64>,
    /// Results dir [default: ./results/<UTC time>-<preset, run file or workload>/]
    #[arg(short = 'o', long)]
    pub out: Option<PathBuf>,
    /// Check the flags and the run file or preset (every run of an experiment) and say what
    /// would run, then exit: nothing is started, connected to or run
    #[arg(long)]
    pub dry_run: bool,
}

impl RunArgs {
    /// The flags as raw config, to be laid over the file's values; `workload` holds the
    /// workloads' own flags.
    pub fn to_raw(&self, workload: &WorkloadFlags) -> RawRun {
        let name = workload.shorthand.clone().or_else(|| self.workload.clone());
        RawRun {
            workload: name.map(WorkloadName),
            scale: self.scale,
            target: self.target.clone(),
            clients: self.clients,
            jobs: self.jobs,
            duration: self.duration.clone(),
            transactions: self.transactions,
            connect: self.connect.then_some(true),
            protocol: self.protocol,
            rate: self.rate,
            max_tries: self.max_tries,
            continue_on_error: self.continue_on_error.then_some(true),
            exit_on_abort: self.exit_on_abort.then_some(true),
            verbose_errors: self.verbose_errors.then_some(true),
            txn_timeout: self.txn_timeout.clone(),
            progress: self.progress.clone(),
            interval: self.interval.clone(),
            seed: self.seed,
            out: self.out.clone(),
            iterations: self.iterations,
            ramp_up: self.ramp_up.clone(),
            ramp_down: self.ramp_down.clone(),
            deck_size: self.deck_size,
            card_run: self.card_run,
            pin_threads: self.pin_threads,
            poll: self.poll.clone(),
            mix_log: self.mix_log.then_some(true),
            latency_limit: self.latency_limit,
            log: self.log.then_some(true),
            log_prefix: self.log_prefix.clone(),
            sampling_rate: self.sampling_rate,
            aggregate_interval: self.aggregate_interval,
            sample: self.sample.clone(),
            sample_waits: self.sample_waits,
            prometheus: self.prometheus.clone(),
            session_set: (!self.session_set.is_empty()).then(|| self.session_set.clone()),
            profile: self.profile.clone(),
            profile_hz: self.profile_hz,
            profile_call_graph: self.profile_call_graph.clone(),
            phase_duration: self.phase_duration.clone(),
            isolation: self.isolation,
            options: workload.options.clone(),
            preset: self.knobs.to_knobs(),
            ..RawRun::default()
        }
    }

    /// Where the file settings come from.
    pub fn source(&self) -> RunSource<'_> {
        match (&self.config, &self.preset) {
            (Some(path), _) => RunSource::File(path),
            (None, Some(name)) => RunSource::Preset(name),
            (None, None) => RunSource::None,
        }
    }
}

/// `run`'s flags: a run's, and those of one shard of a run on many driver hosts.
#[derive(Debug, Args)]
pub struct RunCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub shard: super::shard_args::ShardArgs,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub experiment: ExperimentArgs,
    /// A key and its values, KEY=V1,V2,... or a range (1..64x2, 1..16+4); repeat for a grid
    #[arg(long = "vary", value_name = "KEY=VALUES", help_heading = EXPERIMENT)]
    pub vary: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DensityArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub experiment: ExperimentArgs,
    /// Instances per step: 1..N, a list (1,2,4,8) or a range with a step [default: preset: as many as fit the host]
    #[arg(long, value_name = "STEPS", help_heading = EXPERIMENT)]
    pub instances: Option<String>,
    /// CPU quota of every instance in cores (cgroup)
    #[arg(long, help_heading = EXPERIMENT)]
    pub cpus: Option<f64>,
    /// Memory limit of every instance, e.g. 2GB (cgroup)
    #[arg(long, value_name = "SIZE", help_heading = EXPERIMENT)]
    pub memory: Option<String>,
    /// Name the instances PREFIX-1, PREFIX-2, ... (control groups are per host: two homes on one host need two prefixes)
    #[arg(long, value_name = "PREFIX", default_value = crate::experiment::density::INSTANCE_PREFIX, help_heading = EXPERIMENT)]
    pub instance_prefix: String,
    /// A server setting of every instance, KEY=VALUE; repeat for more
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = super::instance_cmd::parse_setting, help_heading = EXPERIMENT)]
    pub settings: Vec<(String, String)>,
}

/// `--hypervisor qemu [--accel kvm|tcg]`: managed instances as real VMs (issue 40). One flag
/// for every command that makes instances: an experiment's own, the tpcv preset's (`run`,
/// `prepare`, `presets --show`), so it lives with the preset knobs that every run flattens.
#[derive(Debug, Args)]
pub struct GuestArgs {
    /// Make the managed instances real VMs: QEMU guests with --cpus whole vCPUs and --memory RAM (an experiment's instances, or preset tpcv's)
    #[arg(long, value_enum, help_heading = GUESTS)]
    pub hypervisor: Option<crate::instance::vm::Hypervisor>,
    /// With --hypervisor: force KVM or TCG (software emulation) [default: KVM when a KVM guest boots, else TCG]
    #[arg(long, value_enum, requires = "hypervisor", help_heading = GUESTS)]
    pub accel: Option<crate::instance::vm::Accel>,
}

const GUESTS: &str = "Virtual machines";

#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub experiment: ExperimentArgs,
    /// Schemes to run, e.g. 1/1/M,M/M/M [default: 1/1/M,1/M/M,M/M/M]
    #[arg(long, value_name = "LIST", help_heading = CONSOLIDATE)]
    pub schemes: Option<String>,
    /// Memory overcommitment rates in percent, e.g. 0,10,20,30,40,50,55 (0, the baseline, is always run)
    #[arg(long, value_name = "LIST", help_heading = CONSOLIDATE)]
    pub overcommit: Option<String>,
    /// Databases consolidated [default: 2]
    #[arg(long, help_heading = CONSOLIDATE)]
    pub databases: Option<u32>,
    /// Traffic periods; the busy database changes each period [default: 4]
    #[arg(long, help_heading = CONSOLIDATE)]
    pub periods: Option<u32>,
    /// Measured length of each period [default: 10m] (--point-duration says the same)
    #[arg(long, value_name = "DUR", help_heading = CONSOLIDATE)]
    pub period: Option<String>,
    /// Clients of the busy database in a period [default: 30]
    #[arg(long, help_heading = CONSOLIDATE)]
    pub high: Option<u32>,
    /// Clients of each quiet database [default: 2]
    #[arg(long, help_heading = CONSOLIDATE)]
    pub low: Option<u32>,
    /// CPU quota of every VM in cores (cgroup)
    #[arg(long, help_heading = CONSOLIDATE)]
    pub cpus: Option<f64>,
    /// Memory of each M/M/M VM, e.g. 4GB; a one-VM scheme gets databases x this (cgroup)
    #[arg(long, value_name = "SIZE", help_heading = CONSOLIDATE)]
    pub memory: Option<String>,
    /// shared_buffers: a share of the VM's memory split among its instances (25%) or a size [default: 25%]
    #[arg(long, value_name = "SHARE|SIZE", help_heading = CONSOLIDATE)]
    pub shared_buffers: Option<String>,
    /// Take the overcommitted memory with a locked balloon in the host group (the study's dummy VM) instead of a limit alone
    #[arg(long, help_heading = CONSOLIDATE)]
    pub balloon: bool,
    /// The parent control group standing for the host (control groups are per host) [default: consolidate]
    #[arg(long, value_name = "NAME", help_heading = CONSOLIDATE)]
    pub host_group: Option<String>,
    /// Each database's VM memory working set (SIZE, e.g. 1376MB, or a `tidebench knee` dir): the analysis marks the rates that still cover every working set
    #[arg(long, value_name = "SIZE|DIR", help_heading = CONSOLIDATE)]
    pub working_set: Option<String>,
    /// With --hypervisor: KSM on or off during the runs (/sys/kernel/mm/ksm/run, QEMU's mem-merge) [default: as the host has it]
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"], requires = "hypervisor", help_heading = CONSOLIDATE)]
    pub ksm: Option<String>,
    /// A server setting of every instance, KEY=VALUE; repeat for more (shared_buffers comes from --shared-buffers)
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = super::instance_cmd::parse_setting, help_heading = CONSOLIDATE)]
    pub settings: Vec<(String, String)>,
}

const CONSOLIDATE: &str = "Consolidation";

const CONSOLIDATE_AFTER_HELP: &str = "\
Schemes (the vPostgres study's): 1/1/M one VM, one instance holding every database;
1/M/M one VM, an instance per database; M/M/M a VM per database. A VM is a control group with
--cpus and --memory (page cache charged to it); all VMs sit in one parent group, the host.
The study's scheme 4 (the vPostgres database balloon) has no PostgreSQL equivalent.

Traffic (Figure 6): in period p the database ((p-1) mod M)+1 gets --high clients, the others
--low, zero think time for TPC-C; a ramp (--ramp-up, not measured) before each period.
Overcommitment (Equation 1): rate = 100% - MEM_avail / MEM_config, MEM_config the sum of the
VMs' memory; MEM_avail is the host group's memory limit during each run (--balloon: a locked
balloon takes the difference instead). Each scheme runs 0% first: its own baseline.
--hypervisor qemu makes each VM a real QEMU guest (1/M/M's instances share one) whose QEMU sits in the
host group; --balloon then inflates each guest's virtio-balloon to its share of MEM_avail.

Results: per scheme and rate, NOTPM per database and period, the sum averaged over periods,
relative to the scheme's baseline, the coefficient of variation across periods, CPU seconds,
NOTPM per fully used CPU, OOM kills; each VM's memory over time in experiment.html.

A consolidation file holds the load's run keys and a [consolidate] table with the same keys as
these flags (schemes, databases, periods, period, ramp_up, high, low, cpus, memory,
shared_buffers, overcommit, balloon, host_group, hypervisor, accel, ksm); `tidebench presets --show
vpostgres-consolidation` prints one.

Examples:
  tidebench consolidate --preset vpostgres-consolidation            the study (about 15 hours)
  tidebench consolidate -w tpcc -s 2 --memory 512MB --cpus 1 --schemes 1/1/M,M/M/M \\
      --overcommit 0,40 --periods 2 --period 1m --ramp-up 10s --high 8 --low 1   (about 12 minutes)";

#[derive(Debug, Args)]
pub struct KneeArgs {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub experiment: ExperimentArgs,
    /// VM memory sizes: LO..HI (--steps sizes evenly spaced) or a list, e.g. 512MB..8GB or 512MB,1GB,2GB [preset: 1280MB..4GB]
    #[arg(long, value_name = "SIZES", help_heading = EXPERIMENT)]
    pub memory: Option<String>,
    /// Points of a LO..HI range, both ends included (at least 3) [default: 6]
    #[arg(long, value_name = "K", help_heading = EXPERIMENT)]
    pub steps: Option<u32>,
    /// Keep shared_buffers at SIZE: x = VM memory (Figures 7/9), e.g. shared_buffers=1GB
    #[arg(long, value_name = "shared_buffers=SIZE", help_heading = EXPERIMENT)]
    pub keep: Option<String>,
    /// Keep memory - shared_buffers at SIZE: x = shared_buffers (Figures 8/10), e.g. 352MB
    #[arg(long, value_name = "SIZE", help_heading = EXPERIMENT)]
    pub keep_difference: Option<String>,
}

const EXPERIMENT: &str = "Experiment";

/// What every experiment takes besides the run flags.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// Run the whole series this many times back to back [default: 1; presets: theirs]
    #[arg(long, value_name = "R", help_heading = EXPERIMENT, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// Every run's length (every phase's, for runs with phases), e.g. 1m to shorten a preset
    #[arg(long, value_name = "DUR", help_heading = EXPERIMENT, allow_hyphen_values = true)]
    pub point_duration: Option<String>,
}

#[derive(Debug, Args)]
pub struct PrepareArgs {
    /// A run file: prepare every set of every group it names
    pub config: Option<PathBuf>,
    /// A built-in run (see `tidebench presets`): prepare its groups (and start its instances);
    /// presets ch and ch-interference take --scale/--warehouses as their size (give run the
    /// same)
    #[arg(long, conflicts_with = "config")]
    pub preset: Option<String>,
    #[command(flatten)]
    pub knobs: PresetKnobArgs,
    /// Workload whose tables to load (workloads of one family, e.g. pgbench's scripts, share them)
    #[arg(short = 'w', long)]
    pub workload: Option<String>,
    /// Scale: for pgbench's scripts 1 = 100,000 accounts, as pgbench -s [default: 1; tpce: 1000]
    #[arg(short = 's', long, value_parser = parse_scale)]
    pub scale: Option<u32>,
    /// Where to load: DSN or instance:NAME[/DB] [default: instance:default]
    #[arg(long)]
    pub target: Option<String>,
    /// Parallel COPY connections [default: half the cores; 1 uses COPY FREEZE like pgbench -i]
    #[arg(short = 'j', long)]
    pub jobs: Option<u32>,
    /// Drop and reload tables that already exist
    #[arg(long)]
    pub force: bool,
    /// Check the flags and the run file or preset and say what would be loaded where, then
    /// exit: nothing is started or loaded
    #[arg(long)]
    pub dry_run: bool,
    /// Targets of a run file or preset loaded at a time [default: the host's cores over
    /// --jobs, at least 1]
    #[arg(long, value_name = "N")]
    pub parallel_targets: Option<u32>,
    /// Load the I-th share of a run file's targets (I from 0; auto/N under a launcher), so
    /// several hosts load a large rig together
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
}

const KNOBS: &str = "Preset tpcv (and hci)";

/// The knobs of presets `tpcv` and `ch` (`run`, `prepare` and `presets --show` take them
/// alike).
#[derive(Debug, Args)]
pub struct PresetKnobArgs {
    /// Load units of group A (1 LU = 1,000 customers); B, C and D get 2, 3 and 4 times as many [default: 1]
    #[arg(long, value_name = "N", help_heading = KNOBS, value_parser = clap::value_parser!(u32).range(1..))]
    pub lu_base: Option<u32>,
    /// Sets per group (1-6), each an oltp and a dss instance [default: 1]
    #[arg(long, value_name = "N", help_heading = KNOBS, conflicts_with = "target_tpsv")]
    pub sets: Option<u32>,
    /// Choose the sets per group from TPC-V's Table 1 for this throughput (the smallest valid count)
    #[arg(long, value_name = "TPSV", help_heading = KNOBS)]
    pub target_tpsv: Option<f64>,
    /// Presets ch and ch-interference: the tpcc group's clients (the OLTP tenant) [default: 2]
    #[arg(long, value_name = "N", help_heading = CH_KNOBS)]
    pub oltp_clients: Option<u32>,
    /// Preset ch: the ch group's clients, each an analytic query stream [default: 1];
    /// ch-interference: its last step of streams (1, 2, 4, ... up to N) [default: 4]
    #[arg(long = "ch-streams", value_name = "N", help_heading = CH_KNOBS)]
    pub streams: Option<u32>,
    #[command(flatten)]
    pub guest: GuestArgs,
}

const CH_KNOBS: &str = "Presets ch and ch-interference";

impl PresetKnobArgs {
    /// The knobs a preset's TOML is made with; `--hypervisor` is one of them (preset tpcv
    /// writes it into each `[[instance]]`).
    pub fn to_knobs(&self) -> PresetKnobs {
        PresetKnobs {
            lu_base: self.lu_base,
            sets: self.sets,
            target_tpsv: self.target_tpsv,
            hypervisor: self.guest.hypervisor.map(|h| h.name()),
            accel: self.guest.accel.map(|a| a.name()),
            oltp_clients: self.oltp_clients,
            streams: self.streams,
            // `run` and `prepare` take it as `--scale` (`--warehouses`), `presets --show` as
            // its own flag.
            warehouses: None,
        }
    }
}

#[derive(Debug, Args)]
pub struct PresetsArgs {
    /// Print this preset's TOML (a run file to copy), made with the knobs given
    #[arg(long, value_name = "NAME")]
    pub show: Option<String>,
    /// Presets ch and ch-interference: every group's warehouses, as `run` and `prepare` take
    /// them [default: 1]
    #[arg(long, value_name = "N", visible_alias = "scale", help_heading = CH_KNOBS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub warehouses: Option<u32>,
    #[command(flatten)]
    pub knobs: PresetKnobArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results dir written by `tidebench run`, or an experiment dir (rewrites experiment.html).
    /// A `<dir>.partial` left by a killed driver gets its summary.json rebuilt from the
    /// intervals on disk first (complete: false, the reason in `failure`); it stays .partial
    pub dir: PathBuf,
    /// Print a table re-aggregated by any of: type, group, set, role, iteration, phase, target
    /// (comma-separated, e.g. group,phase) instead of writing report.html
    #[arg(long, value_delimiter = ',')]
    pub by: Option<Vec<String>>,
    /// Include ramp-up and ramp-down (unmeasured) rows
    #[arg(long)]
    pub all: bool,
    /// Print the merged per-transaction mix log as CSV instead (runs with --mix-log)
    #[arg(long)]
    pub mix_log: bool,
    /// Generate a large made-up results dir at DIR (2 h, 40 targets, 10 types) to time the
    /// reporter on (`make bench`)
    #[arg(long, hide = true, conflicts_with_all = ["by", "mix_log", "all"])]
    pub synthetic: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Workload whose checks to run
    #[arg(short = 'w', long)]
    pub workload: String,
    /// Where to check: DSN or instance:NAME[/DB] [default: instance:default]
    #[arg(long)]
    pub target: Option<String>,
}

/// `tidebench slurm`: the generator's flags, and whether to submit the script.
#[derive(Debug, Args)]
pub struct SlurmCommand {
    #[command(flatten)]
    pub slurm: crate::launch::args::SlurmArgs,
    /// Write the script into the results dir and submit it with sbatch instead of printing it
    #[arg(long)]
    pub submit: bool,
    /// With --submit: wait for the job to end (sbatch --wait) and exit with its status
    #[arg(long, requires = "submit")]
    pub wait: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' results dirs (one per shard of the run)
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// The merged results dir (must not exist)
    #[arg(short = 'o', long)]
    pub out: PathBuf,
    /// Merge even when shards are missing: the result is marked incomplete and covers the
    /// given shards' clients only (nothing is scaled up)
    #[arg(long)]
    pub allow_missing: bool,
}

const MERGE_AFTER_HELP: &str = "\
The dirs must be the shards of one run (the same run id and shard count, each shard once); a dir of
another run, a shard given twice or a missing one is refused with exit 2. The merged dir is an
ordinary results dir: report, compare and the experiments read it. Its summary is built from every
shard's intervals at once, so totals are the shards' sums and percentiles come from their merged
histograms; intervals.csv gains a shard column (report DIR --by shard); the server check compares
each database's commits, from the earliest shard's idle reading to the latest final one, with the
sum of every shard's.

Example (two hosts, a shared results dir):
  host-a$ tidebench run run.toml --shard 0/2 --start-at +30s@/shared/start --out /shared/r/shard-0
  host-b$ tidebench run run.toml --shard 1/2 --start-at +30s@/shared/start --out /shared/r/shard-1
  tidebench merge /shared/r/shard-0 /shared/r/shard-1 --out /shared/r/merged";

/// The command line with the workloads' own flags added from the registry.
pub fn command() -> clap::Command {
    workload_args::add(Cli::command())
}

/// Parses `args` (the program name first): the commands and the workloads' flags.
pub fn parse_from<I, T>(args: I) -> Result<(Cli, WorkloadFlags), clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = command().try_get_matches_from(args)?;
    from_matches(&matches)
}

fn from_matches(matches: &ArgMatches) -> Result<(Cli, WorkloadFlags), clap::Error> {
    let cli = Cli::from_arg_matches(matches)?;
    let flags = match matches.subcommand() {
        Some(("run", sub)) => workload_args::read(sub, true, false),
        Some(("prepare", sub)) => workload_args::read(sub, true, true),
        Some(("sweep" | "density" | "knee", sub)) => workload_args::read(sub, true, false),
        _ => WorkloadFlags {
            shorthand: None,
            options: OptionValues::new(),
        },
    };
    Ok((cli, flags))
}

/// Parses the process's command line.
pub fn parse() -> Result<(Cli, WorkloadFlags), clap::Error> {
    from_matches(&command().try_get_matches()?)
}

/// `--scale`: a whole number; a size in bytes (`10GB`) is a `--size`, which says so, with
/// the workloads that declare that option.
fn parse_scale(text: &str) -> Result<u32, String> {
    use crate::config::Catalog;
    text.parse::<u32>().map_err(|_| {
        if crate::config::size::parse_size(text).is_ok()
            && text.ends_with(|c: char| c.is_alphabetic())
        {
            let takers: Vec<&str> = crate::workload::Registry
                .all()
                .into_iter()
                .filter(|w| w.options().iter().any(|o| o.key == "size"))
                .map(|w| w.name())
                .collect();
            format!(
                "'{text}' is a size, and --scale takes a whole number; for a size in bytes give \
                 --size {text} (a workload's option: {})",
                takers.join(", ")
            )
        } else if text.parse::<f64>().is_ok_and(|x| x.is_finite() && x > 0.0) {
            fractional_scale(text)
        } else {
            format!("'{text}' is not a whole number")
        }
    })
}

/// `--scale 0.1`: the workloads whose scale may be a fraction take it as an option of their
/// own (a `Fraction` kind), which the message names.
fn fractional_scale(text: &str) -> String {
    use crate::config::{Catalog, OptionKind};
    let takers: Vec<String> = crate::workload::Registry
        .all()
        .into_iter()
        .flat_map(|w| {
            w.options()
                .iter()
                .filter(|o| matches!(o.kind, OptionKind::Fraction { .. }) && o.load)
                .map(move |o| format!("--{} {text} for {}", o.flag(), w.name()))
        })
        .collect();
    if takers.is_empty() {
        return format!("'{text}' is not a whole number");
    }
    format!(
        "'{text}' is a fraction, and --scale takes a whole number; a workload whose scale may \
         be fractional takes it as its own option: {}",
        takers.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn a_fractional_scale_names_the_options_that_take_one() {
        let e = parse_scale("0.1").unwrap_err();
        assert!(
            e.contains("is a fraction") && e.contains("--sf 0.1 for tpch"),
            "{e}"
        );
        assert_eq!(parse_scale("x").unwrap_err(), "'x' is not a whole number");
    }

    #[test]
    fn pgbench_short_flags_parse() {
        let (cli, flags) = parse_from([
            "tidebench",
            "run",
            "-S",
            "-c",
            "4",
            "-j",
            "2",
            "-T",
            "10",
            "-P",
            "2",
            "-M",
            "simple",
            "-R",
            "100",
            "-s",
            "3",
        ])
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        let raw = run.run.to_raw(&flags);
        assert_eq!(raw.workload, Some(WorkloadName::new("select-only")));
        assert_eq!(
            (raw.clients, raw.jobs, raw.scale),
            (Some(4), Some(2), Some(3))
        );
        assert_eq!(raw.duration.as_deref(), Some("10"));
        assert_eq!(raw.protocol, Some(ProtocolName::Simple));
    }

    #[test]
    fn preset_knobs_parse_for_run_prepare_and_presets() {
        let (cli, flags) = parse_from([
            "tidebench",
            "run",
            "--preset",
            "tpcv",
            "--lu-base",
            "2",
            "--sets",
            "3",
        ])
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        let raw = run.run.to_raw(&flags);
        assert_eq!((raw.preset.lu_base, raw.preset.sets), (Some(2), Some(3)));
        let (cli, _) = parse_from([
            "tidebench",
            "prepare",
            "--preset",
            "tpcv",
            "--target-tpsv",
            "4000",
            "--trade-days",
            "1",
        ])
        .unwrap();
        let Command::Prepare(prepare) = cli.command else {
            panic!("not prepare")
        };
        assert_eq!(prepare.knobs.to_knobs().target_tpsv, Some(4000.0));
        let (cli, _) =
            parse_from(["tidebench", "presets", "--show", "tpcv", "--sets", "2"]).unwrap();
        let Command::Presets(p) = cli.command else {
            panic!("not presets")
        };
        assert_eq!(p.knobs.to_knobs().sets, Some(2));
        assert!(parse_from(["tidebench", "run", "--sets", "2", "--target-tpsv", "9"]).is_err());
        assert!(parse_from(["tidebench", "run", "--lu-base", "0"]).is_err());
    }
}
