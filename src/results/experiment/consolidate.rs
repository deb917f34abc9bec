//! The parts of `experiment.json` only a consolidation experiment has (`tidebench
//! consolidate`, the vPostgres study's schemes under memory overcommitment): the layout of
//! every scheme in the request, what each run measured per traffic period and per VM, and the
//! per-scheme, per-rate analysis (sum over databases averaged over periods, relative to the
//! scheme's own 0 % baseline, coefficient of variation, CPU and productivity).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The varied keys of a consolidation experiment, in grid order (schemes outer).
pub const SCHEME_KEY: &str = "scheme";
pub const OVERCOMMIT_KEY: &str = "overcommit";

/// MEM_avail at `rate` percent of `mem_config` bytes (Equation 1: rate = 100 % − MEM_avail /
/// MEM_config), rounded down to whole MiB: what the experiment sets, the analysis reports
/// and the page shows.
pub fn mem_avail(mem_config: u64, rate: u32) -> u64 {
    let avail = mem_config as f64 * f64::from(100 - rate.min(100)) / 100.0;
    ((avail as u64) >> 20) << 20
}

/// What was asked for, with every scheme's layout spelled out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsolidateRequest {
    pub databases: u32,
    pub periods: u32,
    /// Each period's measured length, and the ramp before it, as given.
    pub period: String,
    pub ramp_up: String,
    /// Clients of the busy database and of each quiet one in a period.
    pub high: u32,
    pub low: u32,
    /// Memory overcommitment rates in percent (Equation 1), 0 = the baseline.
    pub overcommit: Vec<u32>,
    /// A locked balloon takes the difference inside the host group (the study's dummy VM)
    /// instead of the host group's limit alone.
    pub balloon: bool,
    /// The parent control group standing for the host.
    pub host_group: String,
    /// CPU quota of every VM in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Memory of each VM of the one-VM-per-database scheme, as given; a single VM holding
    /// every database gets that times the number of databases.
    pub memory: String,
    /// shared_buffers as given: a fraction of the VM's memory (split among its instances) or
    /// a size per instance.
    pub shared_buffers: String,
    /// Each database's VM memory working set (as a knee experiment finds it), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_set: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_set_bytes: Option<u64>,
    pub schemes: Vec<SchemeLayout>,
    /// Real VMs (`--hypervisor qemu`): every VM a QEMU guest below the host group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guests: Option<GuestRequest>,
}

/// How the VMs were real ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestRequest {
    pub hypervisor: String,
    /// Forced with `--accel`; absent: KVM when it boots, else TCG (each run's guests say
    /// which they had).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<String>,
    /// KSM on or off during the runs (`--ksm`); absent: left as the host had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ksm: Option<bool>,
    /// What the host group's limit allows each QEMU beyond its share of MEM_avail (its own
    /// memory: devices, TCG's translated code).
    pub qemu_allowance_bytes: u64,
}

/// A scheme as laid out on VMs and instances.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemeLayout {
    /// `1/1/M`, `1/M/M` or `M/M/M`.
    pub scheme: String,
    /// MEM_config: the sum of the VMs' memory limits.
    pub mem_config_bytes: u64,
    pub vms: Vec<VmLayout>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmLayout {
    pub name: String,
    /// The control group below `tidebench/` (`<host group>/<vm>`).
    pub cgroup: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    pub memory_bytes: u64,
    pub instances: Vec<InstanceLayout>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceLayout {
    pub name: String,
    pub shared_buffers: String,
    pub databases: Vec<String>,
}

/// What one run measured, beside the common fields of its record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsolidateRun {
    /// MEM_avail as the kernel reported the host group's limit during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_limit_bytes: Option<u64>,
    /// The balloon's locked memory, with `--balloon`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balloon_bytes: Option<u64>,
    /// The headline's unit: `NOTPM` for TPC-C, else the workload's headline or `tps`.
    pub unit: String,
    /// One per measured traffic period, in order.
    pub periods: Vec<PeriodRate>,
    pub vms: Vec<VmUsage>,
    /// OOM kills and crash restarts seen during the run, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<RunIncident>,
    /// Why the point's instances were restarted under the host group's limit (the kernel
    /// refused it while they ran), so their shared buffers started cold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarted_under_limit: Option<String>,
    /// Real VMs: each guest's balloon during the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guests: Vec<GuestBalloon>,
    /// The most pages KSM shared during the run (`/sys/kernel/mm/ksm/pages_sharing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ksm_pages_sharing: Option<u64>,
}

/// One QEMU guest during a run: its balloon as QMP reported it, and its own view of its
/// memory once ballooned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestBalloon {
    pub vm: String,
    pub instance: String,
    /// The guest's RAM.
    pub memory_bytes: u64,
    /// The memory the balloon left it for the run (its share of MEM_avail); absent: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_bytes: Option<u64>,
    /// `query-balloon`'s `actual` (the memory the guest has), last read during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_bytes: Option<u64>,
    /// The least `actual` read during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_actual_bytes: Option<u64>,
    /// Reads of `query-balloon` during the run.
    pub samples: u32,
    /// The guest's MemTotal and MemAvailable (its /proc/meminfo) once ballooned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_total_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_available_bytes: Option<u64>,
    /// The accelerator the guest booted with (`kvm`, `tcg`: emulated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<String>,
}

impl GuestBalloon {
    /// The balloon's size: the guest's RAM less what it had at the last read.
    pub fn balloon_bytes(&self) -> Option<u64> {
        self.actual_bytes
            .map(|a| self.memory_bytes.saturating_sub(a))
    }
}

/// One traffic period: each database's rate and their sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeriodRate {
    pub period: String,
    pub duration_s: f64,
    pub by_database: BTreeMap<String, f64>,
    pub sum: f64,
}

/// One VM over the measured periods, from its control group (`system.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmUsage {
    pub vm: String,
    /// The `system.csv` source its series are read from (`instance:<first instance>`).
    pub source: String,
    /// CPU seconds used during the measured periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_usage_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_cache_bytes: Option<u64>,
    /// Over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major_faults: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<u64>,
    /// Reclaim over the whole run: pages reclaimed and needed again (`mem_refaults`), and
    /// times the VM's usage hit its limit (`mem_limit_hits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refaults: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_hits: Option<u64>,
}

/// Something that went wrong on a VM during a run, at `t_s` seconds after its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunIncident {
    pub t_s: f64,
    pub vm: String,
    pub kind: String,
    pub detail: String,
}

/// Per scheme and rate, over the complete runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsolidateAnalysis {
    pub unit: String,
    pub rows: Vec<ConsolidateRow>,
    /// How each figure is made, in words.
    pub rules: Vec<String>,
    pub summary: String,
    /// With working sets given: the highest rate whose MEM_avail still holds every
    /// database's working set (the study's "real consolidation opportunities", up to 69 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_real_rate: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsolidateRow {
    pub scheme: String,
    pub overcommit: u32,
    /// MEM_avail asked for.
    pub host_limit_bytes: u64,
    /// The run the figures come from (the median one by `mean`), relative to the experiment dir.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// That run's periods (each database's rate and the sum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub periods: Vec<PeriodRate>,
    /// The sum over databases averaged over periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// `mean` over the scheme's 0 % `mean`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative: Option<f64>,
    /// Sample standard deviation of the period sums over their mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cov: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    /// CPU seconds over the measured seconds: fully used CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_used: Option<f64>,
    /// `mean` per fully used CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub productivity: Option<f64>,
    pub oom_kills: u64,
    pub incidents: usize,
    /// With working sets given: MEM_avail holds every database's working set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers_working_sets: Option<bool>,
    /// Complete runs behind the row.
    pub runs: usize,
}

impl ConsolidateRow {
    /// A row with no figures yet: what a point without a complete run shows.
    pub fn empty(scheme: &str, overcommit: u32, host_limit_bytes: u64) -> ConsolidateRow {
        ConsolidateRow {
            scheme: scheme.to_string(),
            overcommit,
            host_limit_bytes,
            run: None,
            periods: Vec::new(),
            mean: None,
            relative: None,
            cov: None,
            cpu_seconds: None,
            cpus_used: None,
            productivity: None,
            oom_kills: 0,
            incidents: 0,
            covers_working_sets: None,
            runs: 0,
        }
    }
}

/// The accelerators a consolidation's guests booted with (`--hypervisor`), in first-seen
/// order: what the page and the console say the VMs were.
pub fn guest_accels(file: &super::ExperimentFile) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let guests = file
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .filter_map(|r| r.consolidation.as_ref())
        .flat_map(|c| &c.guests);
    for a in guests.filter_map(|g| g.accel.clone()) {
        if !seen.contains(&a) {
            seen.push(a);
        }
    }
    seen
}
