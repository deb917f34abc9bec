//! Built-in run files (`tidebench run --preset NAME`, listed by `tidebench presets`). They are
//! TOML text compiled by the same parser as a user's file, so a preset is also an example to
//! copy. `--phase-duration` sets every phase's length: the papers' 12- or 10-minute phases and
//! short demo phases are the same preset.

pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub toml: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "tpcv-elastic",
        description: "TPC-V elasticity: 4 groups, the 10 phases of its Table 2 (10/20/30/40% on average), 12 min each, one shared client pool",
        toml: r#"# TPC-V's elasticity model (reference kit paper, Table 2): the total load stays constant while
# each group's share changes every phase; a deck of cards per client keeps the shares exact.
mode = "shared"
clients = 16

[[group]]
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
"#,
    },
    Preset {
        name: "consolidation-2db",
        description: "vPostgres consolidation: two TPC-C databases of 30 warehouses with complementary traffic, 30 vs 2 clients, swapped every 10 min, four periods",
        toml: r#"# Two databases with negatively correlated traffic (vPostgres consolidation study, Figure 6):
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
"#,
    },
    Preset {
        name: "demo",
        description: "a one-minute tour: 4 groups as 4 databases on the default instance, TPC-V's first 3 phases of 10 s and a select-heavy one",
        toml: r#"# Four groups as four databases of one managed instance, with shifting shares.
mode = "shared"
clients = 4
poll = "5s"
interval = "5s"

[[group]]
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
"#,
    },
];

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}
