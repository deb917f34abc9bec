//! Built-in run files (`tidebench run --preset NAME`, listed by `tidebench presets`). They are
//! TOML text compiled by the same parser as a user's file, so a preset is also an example to
//! copy (`tidebench presets --show NAME` prints it). `--phase-duration` sets every phase's
//! length: the papers' 12- or 10-minute phases and short demo phases are the same preset.
//!
//! Most presets are fixed text. Those with knobs (`tpcv` and `hci`: `--lu-base`, `--sets`,
//! `--target-tpsv`, from which and the host's size it generates its text; `ch`:
//! `--oltp-clients`, `--ch-streams`) generate it, still as plain TOML.

mod ch;
mod tpcv;

use std::time::Duration;

use super::{duration, ConfigError, RawRun};

pub use tpcv::{sets_for_tpsv, PHASE_SHARES, SETS_BY_TPSV};

pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    text: PresetText,
}

enum PresetText {
    Fixed(&'static str),
    /// Text made from the knobs; the error names the knob and the fix.
    Generated(fn(&PresetInput) -> Result<String, String>),
}

/// The command-line knobs of a generated preset. Only flags set them, never a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PresetKnobs {
    /// `--lu-base N`: group A gets N load units, B 2N, C 3N, D 4N.
    pub lu_base: Option<u32>,
    /// `--sets N`: sets per group.
    pub sets: Option<u32>,
    /// `--target-tpsv T`: sets per group from TPC-V's Table 1.
    pub target_tpsv: Option<f64>,
    /// `--hypervisor qemu`: every instance a real VM (a QEMU guest); the name a run file's
    /// `hypervisor` key takes.
    pub hypervisor: Option<&'static str>,
    /// `--accel kvm|tcg` with `--hypervisor`.
    pub accel: Option<&'static str>,
    /// `--oltp-clients N` (preset ch): the tpcc group's clients.
    pub oltp_clients: Option<u32>,
    /// `--ch-streams N` (preset ch): the ch group's query streams.
    pub streams: Option<u32>,
    /// `--warehouses N` (preset ch): both groups' scale, moved here from `--scale` by
    /// [`scale_as_knob`].
    pub warehouses: Option<u32>,
}

impl PresetKnobs {
    /// The knobs without `--hypervisor` and `--accel`, for the experiments, which make their
    /// instances VMs themselves (a preset they start from stays as it is).
    pub fn without_guest(&self) -> PresetKnobs {
        PresetKnobs {
            hypervisor: None,
            accel: None,
            ..self.clone()
        }
    }

    /// The flags given, as typed.
    pub fn given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.lu_base.is_some() {
            out.push("--lu-base");
        }
        if self.sets.is_some() {
            out.push("--sets");
        }
        if self.target_tpsv.is_some() {
            out.push("--target-tpsv");
        }
        if self.hypervisor.is_some() {
            out.push("--hypervisor");
        }
        if self.accel.is_some() {
            out.push("--accel");
        }
        if self.oltp_clients.is_some() {
            out.push("--oltp-clients");
        }
        if self.streams.is_some() {
            out.push("--ch-streams");
        }
        if self.warehouses.is_some() {
            out.push("--warehouses");
        }
        out
    }
}

/// What a generated preset is made from: the knobs and the host it sizes its instances for.
#[derive(Debug, Clone)]
pub struct PresetInput<'a> {
    pub knobs: &'a PresetKnobs,
    /// CPUs the driver's host has.
    pub cores: u32,
    /// The host's memory in bytes, when known.
    pub memory: Option<u64>,
    /// `--phase-duration`, when given (a preset may size its ramp-up by it).
    pub phase_duration: Option<Duration>,
}

impl Preset {
    /// The preset's TOML for `input`. A fixed preset refuses knobs, naming the presets that
    /// take them.
    pub fn toml(&self, input: &PresetInput) -> Result<String, String> {
        match self.text {
            PresetText::Generated(make) => make(input),
            PresetText::Fixed(text) => match input.knobs.given().first() {
                None => Ok(text.to_string()),
                Some(flag) => Err(format!(
                    "{flag} is a knob of preset {}; preset {} has none (leave it out)",
                    owner(flag),
                    self.name
                )),
            },
        }
    }
}

/// Knobs given without a preset that takes them: an error naming the flag and the fix.
pub fn refuse_knobs(knobs: &PresetKnobs) -> Result<(), String> {
    match knobs.given().first() {
        None => Ok(()),
        Some(&"--hypervisor") => Err(format!(
            "--hypervisor makes preset {}'s instances VMs (add --preset {0}); in a run file write \
             hypervisor = \"qemu\" in each [[instance]]; for one instance: \
             `tidebench instance start NAME --hypervisor qemu`",
            owner("--hypervisor")
        )),
        Some(flag) => Err(format!(
            "{flag} is a knob of preset {}; add --preset {0}",
            owner(flag)
        )),
    }
}

/// The preset a knob belongs to.
fn owner(flag: &str) -> &'static str {
    match flag {
        "--oltp-clients" | "--ch-streams" | "--warehouses" => "ch",
        _ => "tpcv",
    }
}

/// The presets whose load size is a knob: `--scale` (`--warehouses`) sizes their groups.
const SCALE_KNOB: &[&str] = &["ch", "ch-interference"];

/// `flags` for preset `name`: a preset whose size is a knob takes `--scale` (`--warehouses`)
/// as that knob, which its text writes into every group; for any other preset the flag stays
/// where it is, and the run refuses it as a one-group flag.
pub fn scale_as_knob(name: &str, mut flags: RawRun) -> RawRun {
    if SCALE_KNOB.contains(&name) {
        if let Some(scale) = flags.scale.take() {
            flags.preset.warehouses = Some(scale);
        }
    }
    flags
}

/// Whether preset `name` takes `--scale` (`--warehouses`) as a knob.
pub fn takes_scale(name: &str) -> bool {
    SCALE_KNOB.contains(&name)
}

/// Preset `name`'s name for messages and its TOML, made with the knobs of `flags` for a host
/// of `cores` and `memory` bytes.
pub(super) fn text(
    name: &str,
    flags: &RawRun,
    cores: u32,
    memory: Option<u64>,
) -> Result<(String, String), ConfigError> {
    let preset = find(name).ok_or_else(|| ConfigError::UnknownPreset {
        name: name.to_string(),
        names: names().join(", "),
    })?;
    let phase_duration = match flags.phase_duration.as_deref() {
        Some(t) => Some(
            duration::parse_duration(t).map_err(|message| ConfigError::Value {
                setting: "phase-duration".into(),
                message,
            })?,
        ),
        None => None,
    };
    let input = PresetInput {
        knobs: &flags.preset,
        cores,
        memory,
        phase_duration,
    };
    let text = preset
        .toml(&input)
        .map_err(|message| ConfigError::Setting {
            setting: "preset",
            message,
        })?;
    Ok((format!("preset {name}"), text))
}

/// Groups A, B and C of TPC-B-like at scale 1 on the default instance: three of the four
/// groups of `tpcv-elastic` and `demo`, which differ in group D and the phases.
macro_rules! groups_abc {
    () => {
        r#"[[group]]
name = "A"
workload = "tpcb"
scale = 1
instance = "default"

[[group]]
name = "B"
workload = "tpcb"
scale = 1
instance = "default"

[[group]]
name = "C"
workload = "tpcb"
scale = 1
instance = "default"
"#
    };
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "tpcv",
        description: "TPC-V end to end on tpce: groups A-D of 1:2:3:4 load units (--lu-base), each set an oltp and a dss instance sized from the paper's VMs, Table 2's 10 phases of 12 min after a one-phase ramp-up (--sets or --target-tpsv)",
        text: PresetText::Generated(tpcv::toml),
    },
    Preset {
        name: "hci",
        description: "TPCx-HCI's data-accessibility test on preset tpcv (its knobs too): every oltp instance with a synchronous standby, the oltp targets over both, group A's first primary killed in the middle of the measured window and its standby promoted 1s later",
        text: PresetText::Generated(tpcv::hci_toml),
    },
    Preset {
        name: "ch",
        description: "CH-benCHmark: a tpcc group (--oltp-clients, default 2) and a ch group of analytic query streams (--ch-streams, default 1) on the default instance's database of 1 warehouse (--warehouses): a phase of 1 min with the OLTP group alone, then one beside the streams",
        text: PresetText::Generated(ch::toml),
    },
    Preset {
        name: "ch-interference",
        description: "CH-benCHmark's interference curve in one run: a tpcc group (--oltp-clients, default 2) alone, then beside 1, 2, 4 analytic streams (--ch-streams, the last step) on its own database, then the same with the streams on a database of a second instance (ch-split); ends with NOTPM and New-Order p90 against analytic queries per hour, one line per placement",
        text: PresetText::Generated(ch::interference_toml),
    },
    Preset {
        name: "tpcv-elastic",
        description: "TPC-V elasticity: 4 groups, the 10 phases of its Table 2 (10/20/30/40% on average), 12 min each, one shared client pool",
        text: PresetText::Fixed(concat!(r#"# TPC-V's elasticity model (reference kit paper, Table 2): the total load stays constant while
# each group's share changes every phase; a deck of cards per client keeps the shares exact.
mode = "shared"
clients = 16

"#, groups_abc!(), r#"
[[group]]
name = "D"
workload = "tpcb"
scale = 1
instance = "default"

[[phase]]
duration = "12m"
shares = { A = 10, B = 20, C = 30, D = 40 }
[[phase]]
duration = "12m"
shares = { A = 5, B = 10, C = 25, D = 60 }
[[phase]]
duration = "12m"
shares = { A = 10, B = 5, C = 20, D = 65 }
[[phase]]
duration = "12m"
shares = { A = 5, B = 10, C = 5, D = 80 }
[[phase]]
duration = "12m"
shares = { A = 10, B = 5, C = 30, D = 55 }
[[phase]]
duration = "12m"
shares = { A = 5, B = 35, C = 20, D = 40 }
[[phase]]
duration = "12m"
shares = { A = 35, B = 25, C = 15, D = 25 }
[[phase]]
duration = "12m"
shares = { A = 5, B = 65, C = 20, D = 10 }
[[phase]]
duration = "12m"
shares = { A = 10, B = 15, C = 70, D = 5 }
[[phase]]
duration = "12m"
shares = { A = 5, B = 10, C = 65, D = 20 }
"#)),
    },
    Preset {
        name: "consolidation-2db",
        description: "vPostgres consolidation: two TPC-C databases of 30 warehouses with complementary traffic, 30 vs 2 clients, swapped every 10 min, four periods",
        text: PresetText::Fixed(r#"# Two databases with negatively correlated traffic (vPostgres consolidation study, Figure 6):
# in each period one database gets 30 clients and the other 2, zero think time, then they swap.
# As in the study, each is a DBT-2 (TPC-C) database of 30 warehouses, about 3 GB: prepare
# takes a few minutes. `tidebench prepare --preset consolidation-2db` loads both.
mode = "independent"

[[group]]
name = "DB_1"
workload = "tpcc"
scale = 30
instance = "default"

[[group]]
name = "DB_2"
workload = "tpcc"
scale = 30
instance = "default"

[[phase]]
name = "period1"
duration = "10m"
clients = { DB_1 = 30, DB_2 = 2 }
[[phase]]
name = "period2"
duration = "10m"
clients = { DB_1 = 2, DB_2 = 30 }
[[phase]]
name = "period3"
duration = "10m"
clients = { DB_1 = 30, DB_2 = 2 }
[[phase]]
name = "period4"
duration = "10m"
clients = { DB_1 = 2, DB_2 = 30 }
"#),
    },
    Preset {
        name: "overhead",
        description: "the native-vs-virtual run of PostgreSQL virtualization revisited (Cybertec): pgbench's TPC-B-like script at scale 10, 10 clients, synchronous_commit off (what `tidebench overhead` runs on each side)",
        text: PresetText::Fixed(r#"# The Cybertec study's run of the overhead of virtualization: pgbench's TPC-B-like script at scale 10,
# 10 clients, synchronous_commit off. `tidebench overhead` runs it on --native and --virtual.
workload = "tpcb"
scale = 10
clients = 10
session_set = ["synchronous_commit=off"]
"#),
    },
    Preset {
        name: "demo",
        description: "a one-minute tour: 4 groups as 4 databases on the default instance, TPC-V's first 3 phases of 10 s and a select-heavy one",
        text: PresetText::Fixed(concat!(r#"# Four groups as four databases of one managed instance, with shifting shares.
mode = "shared"
clients = 4
poll = "5s"
interval = "5s"

"#, groups_abc!(), r#"
[[group]]
name = "D"
workload = "select-only"
scale = 1
instance = "default"

[[phase]]
duration = "10s"
shares = { A = 10, B = 20, C = 30, D = 40 }
[[phase]]
duration = "10s"
shares = { A = 5, B = 10, C = 25, D = 60 }
[[phase]]
duration = "10s"
shares = { A = 10, B = 5, C = 20, D = 65 }
[[phase]]
name = "reads"
duration = "10s"
shares = { A = 25, B = 25, C = 25, D = 25 }
mix = { tpcb = 20, select-only = 80 }
"#)),
    },
];

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}
