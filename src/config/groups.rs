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
//! oltp = "postgresql://bench@db2/b"    # one target per role the workload declares
//! # dss = "instance:vm_dss/b"          # (a single target serves every role)
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

use super::catalog::{self, Catalog, OptionValues, WorkloadInfo};
use super::duration::parse_duration;
use super::options::{GroupOptions, Isolation};
use super::plan::{GroupPlan, PhaseGroup, PhasePlan, SetPlan, WorkloadName};
use super::target::{check_name, TargetSpec};
use super::ConfigError;

/// A `[[group]]` table. Keys that are not fields here are the workload's options (see
/// `config::extra`), collected into `options`.
#[derive(Debug, Clone, Deserialize)]
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
    /// `[[group.set]]` tables: an optional `name`, and a target per role.
    #[serde(default)]
    pub set: Vec<Spanned<BTreeMap<String, String>>>,
    /// Overrides the run-level isolation for this group.
    pub isolation: Option<Isolation>,
    #[serde(skip)]
    pub options: OptionValues,
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

/// Validates `[[group]]` tables. `run_options` and `run_isolation` are the top level's,
/// which groups inherit (a workload option only by groups whose workload declares it).
pub fn groups(
    src: &Source,
    raw: &[Spanned<RawGroup>],
    run_options: &OptionValues,
    run_isolation: Option<Isolation>,
    catalog: &dyn Catalog,
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
        let fail = |m: String| src.error(span.clone(), format!("group '{name}': {m}"));
        let workload = g.workload.clone().ok_or_else(|| {
            src.error(
                span.clone(),
                format!("group '{name}' has no workload; add e.g. workload = \"tpcb\""),
            )
        })?;
        let info = catalog.get(workload.as_str()).map_err(fail)?;
        if g.scale == Some(0) {
            return Err(fail("scale must be at least 1".into()));
        }
        let sets = sets(src, g, span.clone(), &name, info)?;
        let mut given = catalog::inherited(info, run_options);
        given.extend(g.options.clone());
        let options = GroupOptions {
            isolation: g.isolation.or(run_isolation).unwrap_or_default(),
            workload: catalog::validate_options(catalog, info, &given).map_err(fail)?,
        };
        out.push(GroupPlan {
            name,
            workload,
            scale: g.scale,
            sets,
            options,
        });
    }
    for key in run_options.keys() {
        let taken = out.iter().any(|g| {
            catalog
                .find(g.workload.as_str())
                .is_some_and(|w| w.options().iter().any(|o| o.key == key))
        });
        if !taken {
            return Err(ConfigError::Invalid(format!(
                "{}: {key} sets {} groups, and this run has none; remove it",
                src.file,
                catalog.declaring(key).join(" and ")
            )));
        }
    }
    check_shared_targets(src, raw, &out, catalog)?;
    Ok(out)
}

/// A group's sets, from `[[group.set]]` tables, `target = ...` and `instance = ...`.
fn sets(
    src: &Source,
    g: &RawGroup,
    span: std::ops::Range<usize>,
    name: &str,
    info: &dyn WorkloadInfo,
) -> Result<Vec<SetPlan>, ConfigError> {
    let roles = info.roles();
    let every_role = |t: TargetSpec| -> BTreeMap<String, TargetSpec> {
        roles.iter().map(|r| (r.to_string(), t.clone())).collect()
    };
    let mut sets = Vec::new();
    for (i, s) in g.set.iter().enumerate() {
        let fail = |m: String| src.error(s.span(), format!("group '{name}' set {}: {m}", i + 1));
        let mut written = s.get_ref().clone();
        let set_name = written
            .remove("name")
            .unwrap_or_else(|| (i + 1).to_string());
        let mut targets = BTreeMap::new();
        for (role, text) in &written {
            if !roles.contains(&role.as_str()) {
                return Err(fail(format!(
                    "'{role}' is not a role of workload {} (its roles: {})",
                    info.name(),
                    roles.join(", ")
                )));
            }
            targets.insert(role.clone(), TargetSpec::parse(text).map_err(fail)?);
        }
        let targets = match targets.len() {
            0 => {
                return Err(fail(format!(
                    "no target; add e.g. {} = \"DSN or instance:NAME/DB\"",
                    roles[0]
                )))
            }
            1 => every_role(
                targets
                    .into_values()
                    .next()
                    .unwrap_or_else(TargetSpec::default_instance),
            ),
            n if n < roles.len() => {
                let missing: Vec<&str> = roles
                    .iter()
                    .copied()
                    .filter(|r| !targets.contains_key(*r))
                    .collect();
                return Err(fail(format!(
                    "no target for role {}; give every role a target, or one target for all",
                    missing.join(", ")
                )));
            }
            _ => targets,
        };
        sets.push(SetPlan {
            name: set_name,
            targets,
        });
    }
    let span_fail = |m: String| src.error(span.clone(), format!("group '{name}': {m}"));
    if let Some(t) = &g.target {
        let target = TargetSpec::parse(t).map_err(span_fail)?;
        sets.push(SetPlan {
            name: (sets.len() + 1).to_string(),
            targets: every_role(target),
        });
    }
    if let Some(instance) = &g.instance {
        check_name("instance", instance).map_err(span_fail)?;
        let count = g.sets.unwrap_or(1);
        if count == 0 {
            return Err(span_fail("sets must be at least 1".into()));
        }
        for i in 1..=count {
            sets.push(SetPlan {
                name: i.to_string(),
                targets: every_role(TargetSpec::Instance {
                    name: instance.clone(),
                    dbname: format!("{}_{i}", name.to_lowercase()),
                }),
            });
        }
    } else if g.sets.is_some() {
        return Err(span_fail(
            "`sets = N` needs `instance = \"NAME\"` to create the sets' databases on".into(),
        ));
    }
    if sets.is_empty() {
        return Err(src.error(span, format!(
            "group '{name}' has no sets; add `instance = \"default\"` (one database per set) or a [[group.set]] with {} = \"DSN or instance:NAME/DB\"",
            roles[0]
        )));
    }
    Ok(sets)
}

/// A database used by two sets must hold the same data: same workload family and scale.
fn check_shared_targets(
    src: &Source,
    raw: &[Spanned<RawGroup>],
    groups: &[GroupPlan],
    catalog: &dyn Catalog,
) -> Result<(), ConfigError> {
    let family = |g: &GroupPlan| {
        catalog
            .find(g.workload.as_str())
            .map_or(g.workload.as_str(), |w| w.family())
            .to_string()
    };
    let mut seen: Vec<(&TargetSpec, usize)> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        for s in &g.sets {
            for (target, _) in s.distinct_targets() {
                let Some((_, other)) = seen.iter().find(|(t, _)| *t == target) else {
                    seen.push((target, gi));
                    continue;
                };
                let o = &groups[*other];
                let clash = family(o) != family(g)
                    || (o.scale.is_some() && g.scale.is_some() && o.scale != g.scale);
                if clash {
                    return Err(src.error(raw[gi].span(), format!(
                        "target {} is used by groups '{}' ({} scale {}) and '{}' ({} scale {}), which need different data; give each group its own database",
                        target.redacted(), o.name, o.workload, fmt_scale(o.scale), g.name, g.workload, fmt_scale(g.scale)
                    )));
                }
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
    catalog: &dyn Catalog,
) -> Result<Vec<PhasePlan>, ConfigError> {
    let type_names: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            catalog
                .find(g.workload.as_str())
                .map_or_else(Vec::new, |w| w.txn_type_names())
        })
        .collect();
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
            Some(m) => mix(src, m, &type_names, &name)?,
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
/// `type_names` holds each group's transaction type names.
fn mix(
    src: &Source,
    m: &Spanned<BTreeMap<String, f64>>,
    type_names: &[Vec<String>],
    phase: &str,
) -> Result<Vec<Vec<(String, f64)>>, ConfigError> {
    for (txn, w) in m.get_ref() {
        if !type_names.iter().any(|names| names.contains(txn)) {
            let mut known: Vec<&str> = type_names.iter().flatten().map(String::as_str).collect();
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
    Ok(type_names
        .iter()
        .map(|names| {
            m.get_ref()
                .iter()
                .filter(|(t, _)| names.contains(t))
                .map(|(t, w)| (t.clone(), *w))
                .collect()
        })
        .collect())
}
