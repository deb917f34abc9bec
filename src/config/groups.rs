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

use serde::Deserialize;
use toml::Spanned;

use super::catalog::{self, Catalog, OptionValues, WorkloadInfo};
use super::options::{GroupOptions, Isolation};
use super::plan::{GroupPlan, SetPlan, WorkloadName};
use super::target::{check_name, TargetSpec};
use super::ConfigError;

mod phase;
pub use phase::phases;

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
    if raw.len() > super::MAX_GROUPS {
        return Err(ConfigError::TooManyGroups {
            file: src.file.to_string(),
            groups: raw.len(),
            cap: super::MAX_GROUPS,
        });
    }
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
            return Err(ConfigError::GroupKeyWithoutGroups {
                file: src.file.to_string(),
                key: key.to_string(),
                declaring: catalog.declaring(key).join(" and "),
            });
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
    let mut sets = Vec::new();
    for (i, s) in g.set.iter().enumerate() {
        sets.push(written_set(src, s, i, name, info)?);
    }
    shorthand_sets(src, g, &span, name, roles, &mut sets)?;
    if sets.len() > super::MAX_SETS {
        return Err(src.error(
            span,
            format!(
                "group '{name}' has {} sets, more than tidebench's cap of {}",
                sets.len(),
                super::MAX_SETS
            ),
        ));
    }
    for (i, s) in sets.iter().enumerate() {
        if sets[..i].iter().any(|o| o.name == s.name) {
            return Err(src.error(
                span,
                format!(
                    "group '{name}' has two sets named '{}'; set names must be unique in a group",
                    s.name
                ),
            ));
        }
    }
    if sets.is_empty() {
        return Err(src.error(span, format!(
            "group '{name}' has no sets; add `instance = \"default\"` (one database per set) or a [[group.set]] with {} = \"DSN or instance:NAME/DB\"",
            roles[0]
        )));
    }
    Ok(sets)
}

/// The `i`th (from 0) `[[group.set]]` table of group `name`: its name and a target per role.
fn written_set(
    src: &Source,
    s: &Spanned<BTreeMap<String, String>>,
    i: usize,
    name: &str,
    info: &dyn WorkloadInfo,
) -> Result<SetPlan, ConfigError> {
    let roles = info.roles();
    let fail = |m: String| src.error(s.span(), format!("group '{name}' set {}: {m}", i + 1));
    let mut written = s.get_ref().clone();
    let set_name = written
        .remove("name")
        .unwrap_or_else(|| (i + 1).to_string());
    check_name("set", &set_name).map_err(fail)?;
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
        // One target with no role to say otherwise serves them all.
        1 => every_role(
            roles,
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
    Ok(SetPlan {
        name: set_name,
        targets,
    })
}

/// Appends to `sets` the sets written as `target = ...` (one) and `instance = ...` with
/// `sets = N` (N databases, `<group>_1`...), numbered after those already there.
fn shorthand_sets(
    src: &Source,
    g: &RawGroup,
    span: &std::ops::Range<usize>,
    name: &str,
    roles: &[&str],
    sets: &mut Vec<SetPlan>,
) -> Result<(), ConfigError> {
    let span_fail = |m: String| src.error(span.clone(), format!("group '{name}': {m}"));
    if let Some(t) = &g.target {
        let target = TargetSpec::parse(t).map_err(span_fail)?;
        sets.push(SetPlan {
            name: (sets.len() + 1).to_string(),
            targets: every_role(roles, target),
        });
    }
    if let Some(instance) = &g.instance {
        check_name("instance", instance).map_err(span_fail)?;
        let count = g.sets.unwrap_or(1);
        if count == 0 {
            return Err(span_fail("sets must be at least 1".into()));
        }
        if count as usize > super::MAX_SETS {
            return Err(span_fail(format!(
                "sets = {count} is more than tidebench's cap of {}",
                super::MAX_SETS
            )));
        }
        // The databases are named `<group>_<n>`: the longest must still be a valid name
        // (PostgreSQL would cut it at 63 bytes, and two sets would share a database).
        check_name("database", &format!("{}_{count}", name.to_lowercase()))
            .map_err(|m| span_fail(format!("{m}; shorten the group's name")))?;
        for i in 1..=count {
            sets.push(SetPlan {
                name: i.to_string(),
                targets: every_role(
                    roles,
                    TargetSpec::instance(instance, &format!("{}_{i}", name.to_lowercase())),
                ),
            });
        }
    } else if g.sets.is_some() {
        return Err(span_fail(
            "`sets = N` needs `instance = \"NAME\"` to create the sets' databases on".into(),
        ));
    }
    Ok(())
}

/// The same target for each of the workload's `roles`.
fn every_role(roles: &[&str], t: TargetSpec) -> BTreeMap<String, TargetSpec> {
    roles.iter().map(|r| (r.to_string(), t.clone())).collect()
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
