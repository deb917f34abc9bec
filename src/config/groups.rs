//! Groups, sets and phases as written in a run file (TPC-V's model, DESIGN.md terms), and their
//! validation into the typed plan. Every error names the file, the line and the fix.
//!
//! ```toml
//! mode = "shared"            # or "independent"
//! clients = 8                # shared mode: the pool
//! iterations = 1
//! ramp_up = "10s"
//!
//! [[group]]
//! name = "A"
//! workload = "tpcb"
//! scale = 1
//! instance = "default"       # sets become databases a_1, a_2... on this managed instance
//! sets = 1
//!
//! [[group]]
//! name = "B"
//! workload = "select-only"
//! [[group.set]]
//! oltp = "postgresql://bench@db2/b"
//!
//! [[phase]]
//! duration = "12m"
//! shares = { A = 40, B = 60 }          # shared mode, sums to 100
//! clients = { A = 30, B = 2 }          # independent mode
//! mix = { tpcb = 90, select-only = 10 }
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::duration::parse_duration;
use super::options::{Isolation, RawOptions, ThinkMode};
use super::plan::{GroupPlan, PhaseGroup, PhasePlan, SetPlan, WorkloadName};
use super::target::{check_name, TargetSpec};
use super::ConfigError;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGroup {
    pub name: Spanned<String>,
    pub workload: Option<WorkloadName>,
    pub scale: Option<u32>,
    /// Managed instance holding this group's sets (one database per set).
    pub instance: Option<String>,
    /// Number of sets created on `instance`.
    pub sets: Option<u32>,
    /// A single set's target (shorthand for one `[[group.set]]`).
    pub target: Option<String>,
    #[serde(default)]
    pub set: Vec<Spanned<RawSet>>,
    /// Overrides the run-level options for this group.
    pub isolation: Option<Isolation>,
    pub think: Option<ThinkMode>,
    pub procedures: Option<bool>,
    pub clients_per_warehouse: Option<u32>,
}

impl RawGroup {
    fn options(&self) -> RawOptions {
        RawOptions {
            isolation: self.isolation,
            think: self.think,
            procedures: self.procedures,
            clients_per_warehouse: self.clients_per_warehouse,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSet {
    pub name: Option<String>,
    pub oltp: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    pub name: Option<String>,
    pub duration: Option<String>,
    pub shares: Option<Spanned<BTreeMap<String, f64>>>,
    pub clients: Option<Spanned<BTreeMap<String, u32>>>,
    pub think: Option<Spanned<BTreeMap<String, String>>>,
    pub rate: Option<Spanned<BTreeMap<String, f64>>>,
    pub mix: Option<Spanned<BTreeMap<String, f64>>>,
}

/// Where a raw value came from, to turn byte spans into `file:line` messages.
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    pub fn error(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> ConfigError {
        let end = span.start.min(self.text.len());
        ConfigError::File {
            file: self.file.to_string(),
            line: self.text[..end].matches('\n').count() + 1,
            message: message.into(),
        }
    }
}

/// Validates `[[group]]` tables; `run_options` are the top level's, which groups inherit.
pub fn groups(
    src: &Source,
    raw: &[Spanned<RawGroup>],
    run_options: RawOptions,
) -> Result<Vec<GroupPlan>, ConfigError> {
    let mut out: Vec<GroupPlan> = Vec::with_capacity(raw.len());
    for g in raw {
        let span = g.span();
        let g = g.get_ref();
        let name = g.name.get_ref().clone();
        check_name("group", &name).map_err(|m| src.error(g.name.span(), m))?;
        if out.iter().any(|o| o.name == name) {
            return Err(src.error(
                g.name.span(),
                format!("group '{name}' is defined twice; group names must be unique"),
            ));
        }
        let workload = g.workload.ok_or_else(|| {
            src.error(
                span.clone(),
                format!("group '{name}' has no workload; add e.g. workload = \"tpcb\""),
            )
        })?;
        if g.scale == Some(0) {
            return Err(src.error(
                span.clone(),
                format!("group '{name}': scale must be at least 1"),
            ));
        }
        let mut sets = Vec::new();
        for (i, s) in g.set.iter().enumerate() {
            let oltp = TargetSpec::parse(&s.get_ref().oltp)
                .map_err(|m| src.error(s.span(), format!("group '{name}' set {}: {m}", i + 1)))?;
            let set_name = s
                .get_ref()
                .name
                .clone()
                .unwrap_or_else(|| (i + 1).to_string());
            sets.push(SetPlan {
                name: set_name,
                oltp,
            });
        }
        if let Some(t) = &g.target {
            let oltp = TargetSpec::parse(t)
                .map_err(|m| src.error(span.clone(), format!("group '{name}': {m}")))?;
            sets.push(SetPlan {
                name: (sets.len() + 1).to_string(),
                oltp,
            });
        }
        if let Some(instance) = &g.instance {
            check_name("instance", instance)
                .map_err(|m| src.error(span.clone(), format!("group '{name}': {m}")))?;
            let count = g.sets.unwrap_or(1);
            if count == 0 {
                return Err(src.error(
                    span.clone(),
                    format!("group '{name}': sets must be at least 1"),
                ));
            }
            for i in 1..=count {
                sets.push(SetPlan {
                    name: i.to_string(),
                    oltp: TargetSpec::Instance {
                        name: instance.clone(),
                        dbname: format!("{}_{i}", name.to_lowercase()),
                    },
                });
            }
        } else if g.sets.is_some() {
            return Err(src.error(span.clone(), format!(
                "group '{name}': `sets = N` needs `instance = \"NAME\"` to create the sets' databases on"
            )));
        }
        if sets.is_empty() {
            return Err(src.error(span.clone(), format!(
                "group '{name}' has no sets; add `instance = \"default\"` (one database per set) or a [[group.set]] with oltp = \"DSN or instance:NAME/DB\""
            )));
        }
        let options = g
            .options()
            .or(run_options.inherited_by(workload))
            .validate(workload)
            .map_err(|m| src.error(span.clone(), format!("group '{name}': {m}")))?;
        out.push(GroupPlan {
            name,
            workload,
            scale: g.scale,
            sets,
            options,
        });
    }
    let any_tpcc = out.iter().any(|g| g.workload == WorkloadName::Tpcc);
    let sets_tpcc = run_options.inherited_by(WorkloadName::Tpcb) != run_options;
    if sets_tpcc && !any_tpcc {
        return Err(ConfigError::Invalid(format!(
            "{}: think, procedures and clients_per_warehouse set TPC-C groups, and this run has none; remove them",
            src.file
        )));
    }
    check_shared_targets(src, raw, &out)?;
    Ok(out)
}

/// A database used by two sets must hold the same data: same workload family and scale.
fn check_shared_targets(
    src: &Source,
    raw: &[Spanned<RawGroup>],
    groups: &[GroupPlan],
) -> Result<(), ConfigError> {
    let mut seen: Vec<(&TargetSpec, usize)> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        for s in &g.sets {
            if let Some((_, other)) = seen.iter().find(|(t, _)| **t == s.oltp) {
                let o = &groups[*other];
                let clash = o.workload.family() != g.workload.family()
                    || (o.scale.is_some() && g.scale.is_some() && o.scale != g.scale);
                if clash {
                    return Err(src.error(raw[gi].span(), format!(
                        "target {} is used by groups '{}' ({} scale {}) and '{}' ({} scale {}), which need different data; give each group its own database",
                        s.oltp.redacted(), o.name, o.workload.as_str(), fmt_scale(o.scale), g.name, g.workload.as_str(), fmt_scale(g.scale)
                    )));
                }
            } else {
                seen.push((&s.oltp, gi));
            }
        }
    }
    Ok(())
}

fn fmt_scale(s: Option<u32>) -> String {
    s.map_or_else(|| "any".to_string(), |s| s.to_string())
}

/// Validates `[[phase]]` tables against the groups. `shared` selects which per-group keys apply.
pub fn phases(
    src: &Source,
    raw: &[Spanned<RawPhase>],
    groups: &[GroupPlan],
    shared: bool,
    phase_duration: Option<Duration>,
) -> Result<Vec<PhasePlan>, ConfigError> {
    if raw.is_empty() {
        return Err(ConfigError::Invalid(format!(
            "{}: no [[phase]]; add at least one with a duration and {}",
            src.file,
            if shared { "shares" } else { "clients" }
        )));
    }
    let mut out = Vec::with_capacity(raw.len());
    for (pi, p) in raw.iter().enumerate() {
        let span = p.span();
        let p = p.get_ref();
        let name = p.name.clone().unwrap_or_else(|| format!("p{}", pi + 1));
        let duration = match (phase_duration, &p.duration) {
            (Some(d), _) => d,
            (None, Some(text)) => parse_duration(text)
                .map_err(|m| src.error(span.clone(), format!("phase '{name}' duration: {m}")))?,
            (None, None) => {
                return Err(src.error(
                    span.clone(),
                    format!("phase '{name}' has no duration; add e.g. duration = \"10m\""),
                ))
            }
        };
        if duration < Duration::from_secs(1) || duration.subsec_nanos() != 0 {
            return Err(src.error(
                span.clone(),
                format!("phase '{name}': duration must be a whole number of seconds, at least 1s"),
            ));
        }
        let shares = per_group(src, &p.shares, groups, &name, "shares")?;
        let clients = per_group(src, &p.clients, groups, &name, "clients")?;
        let rates = per_group(src, &p.rate, groups, &name, "rate")?;
        let thinks = per_group(src, &p.think, groups, &name, "think")?;
        if shared {
            let Some(sh) = &p.shares else {
                return Err(src.error(span.clone(), format!("phase '{name}' has no shares; shared mode needs e.g. shares = {{ {} = 100 }}", groups[0].name)));
            };
            let sum: f64 = shares.iter().flatten().sum();
            if (sum - 100.0).abs() > 0.01 {
                return Err(src.error(
                    sh.span(),
                    format!("phase '{name}': shares sum to {sum}, not 100"),
                ));
            }
            if shares.iter().flatten().any(|s| *s < 0.0) {
                return Err(src.error(
                    sh.span(),
                    format!("phase '{name}': shares cannot be negative"),
                ));
            }
            for key in ["clients", "rate", "think"] {
                let present = match key {
                    "clients" => p.clients.is_some(),
                    "rate" => p.rate.is_some(),
                    _ => p.think.is_some(),
                };
                if present {
                    return Err(src.error(span.clone(), format!("phase '{name}': `{key}` per group applies to mode = \"independent\"; shared mode uses shares")));
                }
            }
        } else {
            if p.clients.is_none() {
                return Err(src.error(span.clone(), format!("phase '{name}' has no clients; independent mode needs e.g. clients = {{ {} = 8 }}", groups[0].name)));
            }
            if p.shares.is_some() {
                return Err(src.error(span.clone(), format!("phase '{name}': shares apply to mode = \"shared\"; independent mode uses clients per group")));
            }
        }
        let mix = match &p.mix {
            Some(m) => mix(src, m, groups, &name)?,
            None => vec![Vec::new(); groups.len()],
        };
        let mut pgs = Vec::with_capacity(groups.len());
        for (gi, g) in groups.iter().enumerate() {
            let think = match &thinks[gi] {
                Some(t) => parse_duration(t).map_err(|m| {
                    src.error(
                        span.clone(),
                        format!("phase '{name}' think of '{}': {m}", g.name),
                    )
                })?,
                None => Duration::ZERO,
            };
            if let Some(r) = rates[gi] {
                if !(r.is_finite() && r > 0.0) {
                    return Err(src.error(span.clone(), format!("phase '{name}': rate of '{}' must be a positive number of transactions per second", g.name)));
                }
            }
            pgs.push(PhaseGroup {
                share: shares[gi].unwrap_or(0.0),
                clients: clients[gi].unwrap_or(0),
                think,
                rate: rates[gi],
                mix: mix[gi].clone(),
            });
        }
        out.push(PhasePlan {
            name,
            duration,
            groups: pgs,
        });
    }
    if !shared && out.iter().all(|p| p.groups.iter().all(|g| g.clients == 0)) {
        return Err(ConfigError::Invalid(format!(
            "{}: no phase gives any group a client",
            src.file
        )));
    }
    Ok(out)
}

/// Values of a `{ GROUP = value }` table in group order; unknown group names are errors.
fn per_group<T: Clone>(
    src: &Source,
    table: &Option<Spanned<BTreeMap<String, T>>>,
    groups: &[GroupPlan],
    phase: &str,
    key: &str,
) -> Result<Vec<Option<T>>, ConfigError> {
    let mut out = vec![None; groups.len()];
    if let Some(t) = table {
        for (name, v) in t.get_ref() {
            let Some(i) = groups.iter().position(|g| &g.name == name) else {
                let known: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
                return Err(src.error(
                    t.span(),
                    format!(
                        "phase '{phase}' {key} names unknown group '{name}'; groups are: {}",
                        known.join(", ")
                    ),
                ));
            };
            out[i] = Some(v.clone());
        }
    }
    Ok(out)
}

/// A phase's mix, split per group: each group keeps the entries its workload can run.
fn mix(
    src: &Source,
    m: &Spanned<BTreeMap<String, f64>>,
    groups: &[GroupPlan],
    phase: &str,
) -> Result<Vec<Vec<(String, f64)>>, ConfigError> {
    for (txn, w) in m.get_ref() {
        if !groups
            .iter()
            .any(|g| g.workload.txn_types().contains(&txn.as_str()))
        {
            let mut known: Vec<&str> = groups
                .iter()
                .flat_map(|g| g.workload.txn_types().iter().copied())
                .collect();
            known.sort_unstable();
            known.dedup();
            return Err(src.error(m.span(), format!(
                "phase '{phase}' mix names unknown transaction '{txn}'; the groups' workloads have: {}",
                known.join(", ")
            )));
        }
        if !(w.is_finite() && *w >= 0.0) {
            return Err(src.error(
                m.span(),
                format!("phase '{phase}' mix: weight of '{txn}' must be zero or positive"),
            ));
        }
    }
    Ok(groups
        .iter()
        .map(|g| {
            m.get_ref()
                .iter()
                .filter(|(t, _)| g.workload.txn_types().contains(&t.as_str()))
                .map(|(t, w)| (t.clone(), *w))
                .collect()
        })
        .collect())
}
