//! A consolidation experiment's sections of `experiment.html` (`tidebench consolidate`, the
//! vPostgres study's schemes under memory overcommitment): the layout of every
//! scheme and what the emulation models, each database's rate per period stacked (Figures
//! 11–12), each scheme's mean relative to its own baseline (Figures 13–14), the analysis
//! table with its rules, and each VM's memory over time from the runs' `system.csv`.

use std::fmt::Write as _;

use super::num;
use super::SamplesReader;
use crate::report::html::markup::{esc, note_to, table_to};
use crate::results::experiment::consolidate::{
    mem_avail, ConsolidateAnalysis, ConsolidateRequest, ConsolidateRow,
};
use crate::results::experiment::ExperimentFile;

mod figures;
mod guests;
mod memory;
#[cfg(test)]
mod tests;

/// What a VM is here, in one line (the issue asks the page to say it, not only the README).
pub(super) const EMULATION: &str = "Emulation: a VM is a control group with a CPU quota and a memory limit, its page cache charged to it; all VMs sit in one host group whose limit is MEM_avail, so overcommitment shows as reclaim, major faults and OOM kills. Not modelled: a guest kernel, ballooning between guests, hypervisor swapping. The study's scheme 4 (the vPostgres database balloon) has no PostgreSQL equivalent and is not run.";

/// Appends the consolidation sections; `samples` reads a run's `system.csv`.
pub fn sections(p: &mut String, file: &ExperimentFile, samples: SamplesReader) {
    p.push_str("<h2>Layout</h2>\n");
    match file
        .request
        .consolidate
        .as_ref()
        .and_then(|r| r.guests.as_ref())
    {
        Some(g) => note_to(p, &guests::what_vms_are(file, g)),
        None => note_to(p, EMULATION),
    }
    match &file.request.consolidate {
        Some(req) => {
            layout_to(p, req);
            guests::balloons_to(p, file, req);
        }
        None => note_to(
            p,
            "The request holds no consolidation layout (experiment.json written by an older tidebench?).",
        ),
    }
    let Some(a) = &file.analysis.consolidate else {
        p.push_str("<h2>Analysis</h2>\n");
        note_to(
            p,
            "No consolidation analysis in the file yet: no run has completed.",
        );
        return;
    };
    let order = schemes(file.request.consolidate.as_ref(), a);
    figures::periods_to(p, a, &order);
    figures::relative_to(p, a, &order);
    analysis_to(p, a);
    memory::section(p, file, a, samples);
}

/// Scheme names in the request's order, then any the rows add.
fn schemes(req: Option<&ConsolidateRequest>, a: &ConsolidateAnalysis) -> Vec<String> {
    let mut out: Vec<String> = req
        .map(|r| r.schemes.iter().map(|s| s.scheme.clone()).collect())
        .unwrap_or_default();
    for r in &a.rows {
        if !out.contains(&r.scheme) {
            out.push(r.scheme.clone());
        }
    }
    out
}

/// Bytes as GiB when whole, else MiB.
pub(super) fn size(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    }
}

fn layout_to(p: &mut String, req: &ConsolidateRequest) {
    let mut rows = Vec::new();
    for s in &req.schemes {
        let mut first_of_scheme = true;
        for vm in &s.vms {
            let mut first_of_vm = true;
            let instances: Vec<Option<_>> = if vm.instances.is_empty() {
                vec![None]
            } else {
                vm.instances.iter().map(Some).collect()
            };
            for inst in instances {
                let (scheme, config) = if first_of_scheme {
                    (s.scheme.clone(), size(s.mem_config_bytes))
                } else {
                    (String::new(), String::new())
                };
                let vm_cells = if first_of_vm {
                    vec![
                        vm.name.clone(),
                        vm.cgroup.clone(),
                        vm.cpus.map_or("unlimited".into(), num),
                        size(vm.memory_bytes),
                    ]
                } else {
                    vec![String::new(); 4]
                };
                let mut row = vec![scheme, config];
                row.extend(vm_cells);
                row.extend(match inst {
                    Some(i) => [
                        i.name.clone(),
                        i.shared_buffers.clone(),
                        i.databases.join(", "),
                    ],
                    None => ["-".into(), "-".into(), "-".into()],
                });
                rows.push(row);
                first_of_scheme = false;
                first_of_vm = false;
            }
        }
    }
    table_to(
        p,
        &[
            "scheme",
            "MEM_config",
            "VM",
            "control group",
            "CPUs",
            "memory",
            "instance",
            "shared_buffers",
            "databases",
        ],
        &rows,
    );
    let balloon = if req.balloon && req.guests.is_some() {
        "yes: each guest's virtio-balloon (QMP) leaves it its share of MEM_avail"
    } else if req.balloon {
        "yes: a locked balloon process takes MEM_config − MEM_avail inside the host group (the study's dummy VM)"
    } else {
        "no: the host group's memory limit alone is MEM_avail"
    };
    let facts = vec![
        vec!["databases".into(), req.databases.to_string()],
        vec![
            "traffic".into(),
            format!(
                "{} periods of {} (ramp {}); in each, one database has {} clients and the others {}",
                req.periods, req.period, req.ramp_up, req.high, req.low
            ),
        ],
        vec!["memory per VM (as given)".into(), req.memory.clone()],
        vec!["shared_buffers (as given)".into(), req.shared_buffers.clone()],
        vec!["host group".into(), req.host_group.clone()],
        vec!["balloon".into(), balloon.into()],
    ];
    table_to(p, &["", ""], &facts);
    // One MEM_avail column per distinct MEM_config (schemes usually share one).
    let mut configs: Vec<(u64, Vec<&str>)> = Vec::new();
    for s in &req.schemes {
        match configs.iter_mut().find(|c| c.0 == s.mem_config_bytes) {
            Some(c) => c.1.push(&s.scheme),
            None => configs.push((s.mem_config_bytes, vec![&s.scheme])),
        }
    }
    let heads: Vec<String> =
        std::iter::once("overcommit".to_string())
            .chain(configs.iter().map(|(bytes, names)| {
                format!("MEM_avail of {} ({})", size(*bytes), names.join(", "))
            }))
            .collect();
    let rows: Vec<Vec<String>> = req
        .overcommit
        .iter()
        .map(|rate| {
            let mut row = vec![format!("{rate} %")];
            row.extend(
                configs
                    .iter()
                    .map(|(bytes, _)| size(mem_avail(*bytes, *rate))),
            );
            row
        })
        .collect();
    let heads: Vec<&str> = heads.iter().map(String::as_str).collect();
    table_to(p, &heads, &rows);
    note_to(
        p,
        "Overcommitment rate = 100 % − MEM_avail / MEM_config (Equation 1); 0 % is each scheme's baseline.",
    );
}

fn analysis_to(p: &mut String, a: &ConsolidateAnalysis) {
    p.push_str("<h2>Analysis</h2>\n");
    let one = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    let rows: Vec<Vec<String>> = a
        .rows
        .iter()
        .map(|r: &ConsolidateRow| {
            vec![
                r.scheme.clone(),
                format!("{} %", r.overcommit),
                size(r.host_limit_bytes),
                one(r.mean),
                r.relative.map_or("-".into(), |v| format!("{v:.3}")),
                r.cov.map_or("-".into(), |v| format!("{:.1}", v * 100.0)),
                one(r.cpu_seconds),
                r.cpus_used.map_or("-".into(), |v| format!("{v:.2}")),
                one(r.productivity),
                r.oom_kills.to_string(),
                r.incidents.to_string(),
                match r.covers_working_sets {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "-".into(),
                },
                r.runs.to_string(),
            ]
        })
        .collect();
    let mean = format!("mean {}", a.unit);
    let productivity = format!("{} per CPU", a.unit);
    table_to(
        p,
        &[
            "scheme",
            "overcommit",
            "MEM_avail",
            &mean,
            "relative",
            "CoV (%)",
            "CPU s",
            "CPUs used",
            &productivity,
            "OOM kills",
            "incidents",
            "covers working sets",
            "runs",
        ],
        &rows,
    );
    if !a.rules.is_empty() {
        p.push_str("<ul>");
        for r in &a.rules {
            let _ = write!(p, "<li>{}</li>", esc(r));
        }
        p.push_str("</ul>\n");
    }
    let _ = writeln!(p, "<p>{}</p>", esc(&a.summary));
}
