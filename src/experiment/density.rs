//! A density series (the Nutanix study: add one database VM at a time until the host is
//! full): step n runs n managed instances at once, each in its own control group with the
//! same CPU quota and memory limit, each with its own database and its own clients under the
//! same load — the base run's — on one clock. The steps are ordinary independent-mode runs
//! made from the base: one `[[instance]]`, one `[[group]]` and one phase column per instance.

use toml::{Table, Value};

use crate::config::{self, defaults, Catalog};

use super::base::{BaseRun, PointRun};

/// Instance names are `density-1`, `density-2`, ... unless `--instance-prefix` says otherwise.
pub const INSTANCE_PREFIX: &str = "density";
/// The varied key of a density series.
pub use crate::results::experiment::DENSITY_KEY as KEY;

/// What every instance of a density series gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// CPU quota per instance in cores.
    pub cpus: Option<f64>,
    /// Memory limit per instance, as written (`8GB`).
    pub memory: Option<String>,
    /// Instance `i` is named `{prefix}-{i}`. Control groups are per host: two homes on one
    /// host need different prefixes.
    pub prefix: String,
}

/// Instance `i` (1-based) of a density series.
pub fn instance_name(prefix: &str, i: u32) -> String {
    format!("{prefix}-{i}")
}

/// The run of step `n`: the base run's load on each of `n` instances.
pub fn step(
    base: &BaseRun,
    n: u32,
    shape: &Shape,
    catalog: &dyn Catalog,
) -> Result<PointRun, String> {
    let raw = base.one_group(
        "density takes a one-group run (flags, or a file without tables): every instance gets that run's load",
        catalog,
    )?;
    if raw.target.is_some() {
        return Err(format!(
            "density makes its own instances ({0}-1, {0}-2, ...); leave --target out",
            shape.prefix
        ));
    }
    if raw.mode.is_some() {
        return Err(
            "density runs its instances side by side (independent mode); leave mode out".into(),
        );
    }
    let Some(workload) = raw.workload.clone() else {
        return Err("density needs a workload: give --workload (e.g. --workload tpcb)".into());
    };
    let clients = raw.clients.unwrap_or(defaults::CLIENTS);
    let mut doc = Table::new();
    doc.insert("mode".into(), Value::String("independent".into()));
    let mut instances = Vec::new();
    let mut groups = Vec::new();
    let mut per_group_clients = Table::new();
    let mut per_group_rate = Table::new();
    for i in 1..=n {
        let name = instance_name(&shape.prefix, i);
        let mut inst = Table::new();
        inst.insert("name".into(), Value::String(name.clone()));
        if let Some(c) = shape.cpus {
            inst.insert("cpus".into(), Value::Float(c));
        }
        if let Some(m) = &shape.memory {
            inst.insert("memory".into(), Value::String(m.clone()));
        }
        instances.push(Value::Table(inst));
        let group = format!("db{i}");
        let mut g = Table::new();
        g.insert("name".into(), Value::String(group.clone()));
        g.insert(
            "workload".into(),
            Value::String(workload.as_str().to_string()),
        );
        if let Some(s) = raw.scale {
            g.insert("scale".into(), Value::Integer(s.into()));
        }
        g.insert(
            "target".into(),
            Value::String(format!(
                "instance:{name}/{}",
                config::target::DEFAULT_DBNAME
            )),
        );
        groups.push(Value::Table(g));
        per_group_clients.insert(group.clone(), Value::Integer(clients.into()));
        if let Some(r) = raw.rate {
            per_group_rate.insert(group, Value::Float(r));
        }
    }
    let mut phase = Table::new();
    phase.insert("name".into(), Value::String(format!("{n}-instances")));
    phase.insert(
        "duration".into(),
        Value::String(raw.duration.clone().unwrap_or(defaults::DURATION.into())),
    );
    phase.insert("clients".into(), Value::Table(per_group_clients));
    if !per_group_rate.is_empty() {
        phase.insert("rate".into(), Value::Table(per_group_rate));
    }
    doc.insert("instance".into(), Value::Array(instances));
    doc.insert("group".into(), Value::Array(groups));
    doc.insert("phase".into(), Value::Array(vec![Value::Table(phase)]));
    // What stays of the base is run-wide (protocol, max_tries, progress, options...); what
    // describes the one group moved into the tables above.
    let mut over = raw;
    over.workload = None;
    over.scale = None;
    over.clients = None;
    over.duration = None;
    over.rate = None;
    over.out = None;
    Ok(PointRun {
        label: format!("density step {n}"),
        text: toml::to_string(&doc).map_err(|e| e.to_string())?,
        over,
        host: None,
    })
}
