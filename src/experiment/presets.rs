//! Built-in experiments: the seed studies as one command each (`tidebench sweep --preset
//! vpostgres-scalability`, `tidebench density --preset nutanix-density`, `tidebench knee
//! --preset vpostgres-knee`). Each is a run file's
//! text and the experiment's own settings; flags given with the preset still apply (a
//! `--vary` replaces the preset's, `--point-duration` shortens every run).

use super::vary::{Vary, MAX_VALUES};

/// One built-in experiment.
pub struct ExperimentPreset {
    pub name: &'static str,
    pub description: &'static str,
    /// The run every point varies.
    pub run: &'static str,
    pub shape: PresetShape,
}

/// What the preset varies.
pub enum PresetShape {
    Sweep {
        vary: &'static [&'static str],
        repeat: u32,
    },
    /// One instance per step with this CPU quota and memory, up to the host's fill.
    Density { cpus: f64, memory_gib: u64 },
    /// Schemes under overcommitment: the run text carries its `[consolidate]` table.
    Consolidate,
    /// `tidebench knee --memory MEMORY --steps STEPS --keep KEEP`.
    Knee {
        memory: &'static str,
        steps: u32,
        keep: &'static str,
    },
}

impl PresetShape {
    /// The command that runs a preset of this shape.
    pub fn command(&self) -> &'static str {
        match self {
            PresetShape::Sweep { .. } => "sweep",
            PresetShape::Density { .. } => "density",
            PresetShape::Consolidate => "consolidate",
            PresetShape::Knee { .. } => "knee",
        }
    }

    /// The experiment's own settings as TOML comments, after the run text.
    pub fn describe(&self) -> String {
        match self {
            PresetShape::Sweep { vary, repeat } => {
                let flags: Vec<String> = vary.iter().map(|v| format!("--vary {v}")).collect();
                format!("# tidebench sweep: {} --repeat {repeat}\n", flags.join(" "))
            }
            PresetShape::Density { cpus, memory_gib } => format!(
                "# tidebench density: --cpus {cpus} --memory {memory_gib}GB --instances 1..N (N: as many as fit the host)\n"
            ),
            PresetShape::Consolidate => {
                "# tidebench consolidate: the [consolidate] table above; flags override its keys\n"
                    .into()
            }
            PresetShape::Knee {
                memory,
                steps,
                keep,
            } => format!("# tidebench knee: --memory {memory} --steps {steps} --keep {keep}\n"),
        }
    }
}

pub const PRESETS: [ExperimentPreset; 4] = [
    ExperimentPreset {
        name: "vpostgres-scalability",
        description: "vPostgres vertical scalability: pgbench select-only and TPC-B-like at scale 100, 1-64 clients, 5-minute sessions, the series run 3 times, medians reported",
        run: r#"# The vPostgres study's vertical scalability series ("Workload" and "Tests"):
# pgbench at scale 100 (about 1.5 GB), clients in a tight loop over unix sockets, each client
# count a 5-minute session, the whole series run three times back to back, medians reported.
workload = "tpcb"
scale = 100
duration = "5m"
protocol = "simple"
"#,
        shape: PresetShape::Sweep {
            vary: &[
                "workload=select-only,tpcb",
                "clients=1,2,4,8,12,16,20,24,32,40,48,56,64",
            ],
            repeat: 3,
        },
    },
    ExperimentPreset {
        name: "nutanix-density",
        description: "Nutanix database density: one pgbench VM (4 CPUs, 8 GB) more per step until the host's CPUs or memory are used, total tps against n x one VM",
        run: r#"# The Nutanix density study: identical database VMs of 4 vCPU and 8 GB, each
# running pgbench's TPC-B-like script on data that fits in memory, added one at a time until
# the host is full; total tps against the ideal of n times one VM (they reached ~90 %).
workload = "tpcb"
scale = 50
clients = 8
duration = "5m"
protocol = "simple"
"#,
        shape: PresetShape::Density {
            cpus: 4.0,
            memory_gib: 8,
        },
    },
    ExperimentPreset {
        name: "vpostgres-consolidation",
        description: "vPostgres consolidation: two TPC-C databases (30 warehouses) under complementary traffic (30 and 2 clients, swapped each 10-minute period), schemes 1/1/M, 1/M/M and M/M/M, memory overcommitted 0-55 %",
        run: r#"# The vPostgres consolidation study (Table 2-3, Figure 6, Equation 1): two DBT-2
# databases of 30 warehouses; four 10-minute periods, the busy database (30 clients, zero
# think time) alternating with the quiet one (2 clients), a ramp before each period; VMs of 3
# CPUs, 8 GB for the one-VM schemes and 4 GB each for M/M/M, shared_buffers 25 % of the VM
# (Table 4 uses 75 %); memory overcommitted step by step, each scheme against its own 0 %.
workload = "tpcc"
scale = 30

[consolidate]
schemes = ["1/1/M", "1/M/M", "M/M/M"]
databases = 2
periods = 4
period = "10m"
ramp_up = "30s"
high = 30
low = 2
cpus = 3
memory = "4GB"
shared_buffers = "25%"
overcommit = [0, 10, 20, 30, 40, 50, 55]
"#,
        shape: PresetShape::Consolidate,
    },
    ExperimentPreset {
        name: "vpostgres-knee",
        description: "vPostgres working-set sizing (Figure 7): TPC-C, 20 warehouses, 30 clients, zero think; VM memory 1280MB..4GB in 12 steps, shared_buffers kept at 1GB; the knee of normalized NOTPM is the VM memory working set",
        run: r#"# The vPostgres study's working-set sizing ("Memory Working Set Sizes", Figure 7):
# DBT-2 (TPC-C) with 30 clients and zero think time (tpcc's default) on one VM whose memory
# steps while shared_buffers stays at 1GB; the knee of normalized NOTPM is the VM memory
# working set. The study used 30 warehouses (about 3 GB); 20 (about 2 GB) puts the knee
# inside 1.25-4 GB and loads faster. The instance restarts cold at each point, hence the
# ramp-up. For Figure 8, run `tidebench knee` again with --keep-difference (the VM working
# set read here minus 1GB; the study's was 352MB) and a --memory range around it.
workload = "tpcc"
scale = 20
clients = 30
ramp_up = "1m"
duration = "5m"
"#,
        shape: PresetShape::Knee {
            memory: "1280MB..4GB",
            steps: 12,
            keep: "shared_buffers=1GB",
        },
    },
];

/// The preset named `name`.
pub fn find(name: &str) -> Option<&'static ExperimentPreset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The names, for messages.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// Density's step count on a host of `cores` and `memory` bytes: as many instances as fit by
/// CPU quota and by memory, at least 2 (a series of one step shows nothing).
pub fn density_steps(cpus: f64, memory_gib: u64, cores: u32, memory: Option<u64>) -> u32 {
    let by_cpu = (f64::from(cores) / cpus).floor() as u32;
    let by_memory = memory.map_or(u32::MAX, |m| (m / (memory_gib << 30)) as u32);
    by_cpu.min(by_memory).max(2)
}

/// `--instances 1..N` or `1,2,4`: step sizes, each at least 1.
pub fn parse_instances(text: &str) -> Result<Vec<u32>, String> {
    let vary = Vary::parse(&format!("clients={text}"))
        .map_err(|e| e.replace("--vary clients", "--instances"))?;
    let steps: Vec<u32> = vary
        .values
        .iter()
        .map(|v| {
            v.parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_VALUES as u32).contains(n))
        })
        .collect::<Option<_>>()
        .ok_or_else(|| {
            format!(
                "--instances {text}: give whole numbers of instances from 1, e.g. 1..4 or 1,2,4,8"
            )
        })?;
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn density_fills_the_host_by_cpu_or_memory_and_runs_two_steps_at_least() {
        assert_eq!(density_steps(4.0, 8, 160, Some(1 << 40)), 40);
        assert_eq!(density_steps(4.0, 8, 160, Some(64 << 30)), 8);
        assert_eq!(density_steps(4.0, 8, 2, Some(24 << 30)), 2);
    }

    #[test]
    fn instance_steps_parse() {
        assert_eq!(parse_instances("1..4").unwrap(), [1, 2, 3, 4]);
        assert_eq!(parse_instances("1..8x2").unwrap(), [1, 2, 4, 8]);
        assert!(parse_instances("0..2").unwrap_err().contains("--instances"));
        assert!(parse_instances("a").is_err());
    }

    #[test]
    fn presets_vary_valid_keys() {
        for p in &PRESETS {
            if let PresetShape::Sweep { vary, .. } = p.shape {
                for v in vary {
                    Vary::parse(v).unwrap();
                }
            }
            if let PresetShape::Knee {
                memory,
                steps,
                keep,
            } = p.shape
            {
                let sizes = super::super::knee::memory_sizes(memory, Some(steps)).unwrap();
                let keep = super::super::knee::Keep::parse(Some(keep), None).unwrap();
                assert_eq!(super::super::knee::points(&sizes, keep).unwrap().len(), 12);
            }
            assert!(toml::from_str::<toml::Table>(p.run).is_ok(), "{}", p.name);
        }
    }
}
