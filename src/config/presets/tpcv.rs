//! The `tpcv` preset: TPC-V as the TPC-V kit paper describes it, on the `tpce` workload, sized for one
//! machine. Its TOML is generated from the knobs so that it stays a run file a user can copy
//! (`tidebench presets --show tpcv`).
//!
//! - Groups A-D hold N, 2N, 3N and 4N load units (`--lu-base N`; §3.3: database sizes follow the
//!   groups' 10/20/30/40 % of the load; Table 3 used 50/100/150/200 LU). A load unit is 1,000
//!   customers (§6.2), tpce's scale.
//! - Sets per group: `--sets N`, or the smallest count TPC-V's Table 1 allows for
//!   `--target-tpsv T`; every set is a full copy of its group's databases (DESIGN.md's *set*).
//! - Each set has an `oltp` and a `dss` database, each on its own managed instance (§3.2: VM3 and
//!   VM2), with CPU and memory limits proportional to Table 3's VM sizes, scaled to the host:
//!   the largest OLTP VM (group D's, 40 vCPUs) gets the host's cores and every other VM its
//!   vCPUs in proportion, so CPUs are overcommitted as in the paper (146 database vCPUs on 80
//!   threads there, ×3.65 here); all instances together get half the host's memory, each in
//!   proportion to its VM's, so memory is not overcommitted (979 GB on 1 TB there). With N sets
//!   per group each instance gets 1/N of its VM's share. Floors keep tiny VMs usable.
//! - One shared client pool, Table 2's ten 12-minute elasticity phases measured as one
//!   iteration, after a ramp-up as long as one phase (the market emulator fills its queues).

use std::fmt::Write as _;
use std::time::Duration;

use super::PresetInput;
use crate::config::duration::format_duration;
use crate::config::size::format_size;

/// TPC-V's Table 1 (the TPC-V paper): the tpsV range each sets-per-group count is valid for
/// (from, to, sets). The ranges overlap so a sponsor near an edge may keep either count.
pub const SETS_BY_TPSV: [(f64, f64, u32); 6] = [
    (100.0, 1_600.0, 1),
    (400.0, 25_600.0, 2),
    (6_300.0, 409_500.0, 3),
    (102_400.0, 6_553_600.0, 4),
    (1_638_400.0, 104_857_600.0, 5),
    (26_214_000.0, f64::INFINITY, 6),
];

/// TPC-V's Table 2: each group's share (A, B, C, D) in percent in each elasticity phase.
pub const PHASE_SHARES: [[u32; 4]; 10] = [
    [10, 20, 30, 40],
    [5, 10, 25, 60],
    [10, 5, 20, 65],
    [5, 10, 5, 80],
    [10, 5, 30, 55],
    [5, 35, 20, 40],
    [35, 25, 15, 25],
    [5, 65, 20, 10],
    [10, 15, 70, 5],
    [5, 10, 65, 20],
];

/// One VM of Table 3.
#[derive(Debug, Clone, Copy)]
struct Vm {
    vcpus: u32,
    memory_gb: u32,
}

/// One group: its name, its load units per `--lu-base`, and Table 3's VM2 (dss) and VM3 (oltp).
#[derive(Debug, Clone, Copy)]
struct GroupShape {
    name: char,
    lu: u32,
    dss: Vm,
    oltp: Vm,
}

const GROUPS: [GroupShape; 4] = [
    GroupShape {
        name: 'A',
        lu: 1,
        dss: Vm {
            vcpus: 4,
            memory_gb: 88,
        },
        oltp: Vm {
            vcpus: 12,
            memory_gb: 39,
        },
    },
    GroupShape {
        name: 'B',
        lu: 2,
        dss: Vm {
            vcpus: 8,
            memory_gb: 146,
        },
        oltp: Vm {
            vcpus: 24,
            memory_gb: 54,
        },
    },
    GroupShape {
        name: 'C',
        lu: 3,
        dss: Vm {
            vcpus: 12,
            memory_gb: 220,
        },
        oltp: Vm {
            vcpus: 30,
            memory_gb: 68,
        },
    },
    GroupShape {
        name: 'D',
        lu: 4,
        dss: Vm {
            vcpus: 16,
            memory_gb: 278,
        },
        oltp: Vm {
            vcpus: 40,
            memory_gb: 78,
        },
    },
];

/// The workload and its scale unit (the TPC-V paper §6.2).
const WORKLOAD: &str = "tpce";
const CUSTOMERS_PER_LU: u32 = 1_000;
/// Clients of the shared pool: enough to keep 2-8 cores busy with tpce's short transactions
/// while the slow decision-support ones wait; `--clients` changes it.
pub const CLIENTS: u32 = 8;
/// Tries per transaction: tpce runs Trade-Order, Trade-Update and Market-Feed at repeatable
/// read and Trade-Result serializable, and DBT-5 retries them up to 10 times.
const MAX_TRIES: u32 = 10;
/// Table 2's phase length.
const PHASE: Duration = Duration::from_secs(12 * 60);
/// All instances together get this share of the host's memory.
const MEMORY_SHARE: f64 = 0.5;
/// The host's memory when it cannot be read.
const ASSUMED_MEMORY: u64 = 8 << 30;
/// Floors under the proportional sizes: below them a VM is too small to measure anything.
const MIN_CPUS: f64 = 0.05;
const MIN_MEMORY: u64 = 128 << 20;
/// With `--hypervisor`: a guest's least RAM (its kernel and page cache as well as the server).
const MIN_GUEST_MEMORY: u64 = 512 << 20;
/// Table 1's sets-per-group counts.
const MAX_SETS: u32 = 6;

/// The smallest sets-per-group count whose Table 1 range holds `tpsv`; 1 below the table's
/// lowest throughput (100 tpsV), which one machine may well not reach.
pub fn sets_for_tpsv(tpsv: f64) -> u32 {
    SETS_BY_TPSV
        .iter()
        .find(|(from, to, _)| (*from..=*to).contains(&tpsv))
        .map_or(1, |(_, _, sets)| *sets)
}

/// The managed instance of a group's set and role: `tpcv-a1-oltp`.
pub fn instance_name(group: char, set: u32, role: &str) -> String {
    format!("tpcv-{}{set}-{role}", group.to_ascii_lowercase())
}

/// The database of a group's set and role, named alike so the end-of-run lines that name
/// databases tell the eight apart: `a1_oltp`.
pub fn database_name(group: char, set: u32, role: &str) -> String {
    format!("{}{set}_{role}", group.to_ascii_lowercase())
}

/// The largest OLTP VM's vCPUs: that VM gets the host's cores.
fn largest_vcpus() -> u32 {
    GROUPS.iter().map(|g| g.oltp.vcpus).max().unwrap_or(1)
}

/// Table 3's memory of all database VMs (VM2 and VM3), in GB.
fn total_memory_gb() -> u32 {
    GROUPS
        .iter()
        .map(|g| g.dss.memory_gb + g.oltp.memory_gb)
        .sum()
}

/// A VM's CPU quota on a host of `cores`, one of `sets` per group: cores in proportion to
/// its vCPUs, in hundredths of a core.
fn cpus(vm: Vm, cores: u32, sets: u32) -> f64 {
    let share = f64::from(cores) * f64::from(vm.vcpus) / f64::from(largest_vcpus() * sets);
    ((share * 100.0).round() / 100.0).max(MIN_CPUS)
}

/// With `--hypervisor`, a real VM's whole vCPUs: its share of the host's cores rounded, at
/// least one (vCPUs are overcommitted as in the paper; the host's scheduler shares them).
fn vcpus(vm: Vm, cores: u32, sets: u32) -> u32 {
    cpus(vm, cores, sets).round().max(1.0) as u32
}

/// A VM's memory limit on a host of `memory` bytes, one of `sets` per group, in whole MiB.
fn memory(vm: Vm, memory: u64, sets: u32) -> u64 {
    let share = memory as f64 * MEMORY_SHARE * f64::from(vm.memory_gb)
        / f64::from(total_memory_gb() * sets);
    ((share as u64) >> 20 << 20).max(MIN_MEMORY)
}

/// The knobs resolved: load units of group A and sets per group.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    lu_base: u32,
    sets: u32,
}

fn shape(input: &PresetInput) -> Result<Shape, String> {
    let k = input.knobs;
    if let Some(flag) = k
        .given()
        .into_iter()
        .find(|f| ["--oltp-clients", "--ch-streams", "--warehouses"].contains(f))
    {
        return Err(format!(
            "{flag} is a knob of preset ch, not tpcv; leave it out"
        ));
    }
    let lu_base = k.lu_base.unwrap_or(1);
    let largest = GROUPS.iter().map(|g| g.lu).max().unwrap_or(1);
    let fits = lu_base
        .checked_mul(largest)
        .and_then(|lu| lu.checked_mul(CUSTOMERS_PER_LU));
    if lu_base == 0 || fits.is_none() {
        return Err(format!(
            "--lu-base {lu_base} is out of range; give 1 or more (group D gets 4 times as many load units of 1,000 customers)"
        ));
    }
    let sets = match (k.sets, k.target_tpsv) {
        (Some(_), Some(_)) => {
            return Err("--sets and --target-tpsv both choose the sets per group; give one".into())
        }
        (Some(s), None) if (1..=MAX_SETS).contains(&s) => s,
        (Some(s), None) => {
            return Err(format!(
                "--sets {s} is out of range; TPC-V's Table 1 has 1 to {MAX_SETS} sets per group"
            ))
        }
        (None, Some(t)) if t.is_finite() && t > 0.0 => sets_for_tpsv(t),
        (None, Some(t)) => {
            return Err(format!(
                "--target-tpsv {t} is not a positive throughput; give the tpsV you expect, e.g. 200"
            ))
        }
        (None, None) => 1,
    };
    Ok(Shape { lu_base, sets })
}

/// The preset's TOML for `input`.
pub fn toml(input: &PresetInput) -> Result<String, String> {
    generate(input, false)
}

/// Preset `hci`'s TOML for `input`: tpcv's, with a synchronous standby beside every `oltp`
/// instance, the `oltp` targets over both, and group A's first primary failed in the middle of
/// the measured window, its standby promoted a second later (see [`hci`]).
pub fn hci_toml(input: &PresetInput) -> Result<String, String> {
    if input.knobs.hypervisor.is_some() {
        return Err(
            "--hypervisor is not for preset hci: its standbys are local servers of their own \
             (pg_basebackup of a local primary); leave it out, or use preset tpcv"
                .into(),
        );
    }
    generate(input, true)
}

/// tpcv's TOML, with `hci`'s standbys, targets and events when asked.
fn generate(input: &PresetInput, with_standbys: bool) -> Result<String, String> {
    let shape = shape(input)?;
    let host_memory = input.memory.unwrap_or(ASSUMED_MEMORY);
    let phase = format_duration(input.phase_duration.unwrap_or(PHASE));
    let mut out = String::new();
    header(&mut out, input, shape, host_memory);
    if with_standbys {
        hci::header(&mut out);
    }
    let _ = write!(
        out,
        "mode = \"shared\"\nclients = {CLIENTS}\nmax_tries = {MAX_TRIES}\nramp_up = \"{phase}\"\n"
    );
    for g in GROUPS {
        for set in 1..=shape.sets {
            for (role, vm, table3) in [("oltp", g.oltp, "VM3"), ("dss", g.dss, "VM2")] {
                let _ = write!(
                    out,
                    "\n# group {} set {set} {role}: Table 3's {table3} has {} vCPUs and {} GB\n[[instance]]\nname = \"{}\"\n",
                    g.name,
                    vm.vcpus,
                    vm.memory_gb,
                    instance_name(g.name, set, role),
                );
                instance_size(&mut out, input, vm, host_memory, shape.sets);
                if with_standbys && role == "oltp" {
                    hci::standby(&mut out, &instance_name(g.name, set, role));
                    instance_size(&mut out, input, vm, host_memory, shape.sets);
                }
            }
        }
    }
    for g in GROUPS {
        let lu = shape.lu_base * g.lu;
        let _ = write!(
            out,
            "\n[[group]]\nname = \"{}\"\nworkload = \"{WORKLOAD}\"\nscale = {}   # customers: {lu} LU\n",
            g.name,
            lu * CUSTOMERS_PER_LU
        );
        for set in 1..=shape.sets {
            let oltp = instance_name(g.name, set, "oltp");
            let oltp = match with_standbys {
                true => format!("{oltp},{}", hci::standby_name(&oltp)),
                false => oltp,
            };
            let _ = write!(
                out,
                "[[group.set]]\noltp = \"instance:{oltp}/{}\"\ndss = \"instance:{}/{}\"\n",
                database_name(g.name, set, "oltp"),
                instance_name(g.name, set, "dss"),
                database_name(g.name, set, "dss"),
            );
        }
    }
    out.push('\n');
    for shares in PHASE_SHARES {
        let _ = writeln!(
            out,
            "[[phase]]\nduration = \"{}\"\nshares = {{ A = {}, B = {}, C = {}, D = {} }}",
            format_duration(PHASE),
            shares[0],
            shares[1],
            shares[2],
            shares[3]
        );
    }
    if with_standbys {
        hci::events(
            &mut out,
            &instance_name(GROUPS[0].name, 1, "oltp"),
            input.phase_duration.unwrap_or(PHASE),
        );
    }
    Ok(out)
}

/// An `[[instance]]`'s size: a CPU quota and memory limit (an emulated VM, a cgroup), or with
/// `--hypervisor` a real VM's whole vCPUs and RAM and the hypervisor's keys.
fn instance_size(out: &mut String, input: &PresetInput, vm: Vm, host_memory: u64, sets: u32) {
    let (cores, memory) = (input.cores.max(1), memory(vm, host_memory, sets));
    let Some(hypervisor) = input.knobs.hypervisor else {
        let _ = write!(
            out,
            "cpus = {}\nmemory = \"{}\"\n",
            cpus(vm, cores, sets),
            format_size(memory)
        );
        return;
    };
    let _ = write!(
        out,
        "cpus = {}\nmemory = \"{}\"\nhypervisor = \"{hypervisor}\"\n",
        vcpus(vm, cores, sets),
        format_size(memory.max(MIN_GUEST_MEMORY))
    );
    if let Some(accel) = input.knobs.accel {
        let _ = writeln!(out, "accel = \"{accel}\"");
    }
}

/// The comment at the top: what the preset is, the knobs it was made with, and the sizing rule.
fn header(out: &mut String, input: &PresetInput, shape: Shape, host_memory: u64) {
    let lus: Vec<String> = GROUPS
        .iter()
        .map(|g| (shape.lu_base * g.lu).to_string())
        .collect();
    let memory_known = if input.memory.is_some() {
        ""
    } else {
        " (assumed: unreadable)"
    };
    let sets = match shape.sets {
        1 => "1 set".to_string(),
        n => format!("{n} sets"),
    };
    let memory_gib = host_memory as f64 / f64::from(1u32 << 30);
    let _ = write!(
        out,
        "\
# TPC-V (the TPC-V kit paper, Bond et al.) on the tpce workload: groups A-D of {lus} load
# units (--lu-base {lu_base}; the paper's Table 3 used 50/100/150/200), {sets} per group
# (--sets, or --target-tpsv by Table 1), each set an oltp and a dss database on its own
# managed instance ({vm}). Ten 12-minute phases with Table 2's group shares (--phase-duration shortens them),
# measured as one iteration after a ramp-up of one phase.
# Instance sizes follow Table 3's VM3 (oltp) and VM2 (dss), scaled to this host ({cores} cores,
# {memory_gib:.1}GiB{memory_known}): group D's oltp VM (40 vCPUs) gets the host's cores and every other
# VM its vCPUs in proportion (CPUs overcommitted, as in the paper); all instances together
# get half the host's memory in Table 3's proportions; with N sets per group each gets 1/N
# (at least {min_cpus} cores and {min_memory}{guest_floor}).
#   tidebench prepare --preset tpcv [--lu-base N] [--trade-days D]{knob}
#   tidebench run --preset tpcv [--lu-base N] [--phase-duration 1m] [--clients N]{knob}
",
        vm = match input.knobs.hypervisor {
            Some(_) => "a real VM, a QEMU guest",
            None => "an emulated VM",
        },
        guest_floor = match input.knobs.hypervisor {
            Some(_) => format!(
                "; a guest has whole vCPUs, at least 1, and at least {} of RAM",
                format_size(MIN_GUEST_MEMORY)
            ),
            None => String::new(),
        },
        knob = match (input.knobs.hypervisor, input.knobs.accel) {
            (Some(h), Some(a)) => format!(" --hypervisor {h} --accel {a}"),
            (Some(h), None) => format!(" --hypervisor {h}"),
            _ => String::new(),
        },
        lus = lus.join("/"),
        lu_base = shape.lu_base,
        cores = input.cores.max(1),
        min_cpus = MIN_CPUS,
        min_memory = format_size(MIN_MEMORY),
    );
}

mod hci;
#[cfg(test)]
mod tests;
