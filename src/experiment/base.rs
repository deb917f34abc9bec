//! The run an experiment varies, and each point's run made from it. A point is the base run
//! file's text with the point's group and instance values written into it, and the flags with
//! the point's run keys laid over them (a varied key wins over the same flag), so every point
//! compiles through the same parser and validation as `tidebench run`.

use toml::{Table, Value};

use crate::config::groups::Source;
use crate::config::{self, Catalog, ConfigError, RawRun, RunPlan, TargetSpec};

use super::vary::{toml_value, InstanceValue, Vary, VaryKey};

/// The run file's (or preset's) text and the flags given with it.
#[derive(Debug, Clone)]
pub struct BaseRun {
    /// The file's path, `preset NAME` or `flags`.
    pub label: String,
    pub text: String,
    /// The run flags (never `out`: the experiment chooses each run's dir).
    pub flags: RawRun,
}

/// One run of an experiment before validation.
#[derive(Debug, Clone)]
pub struct PointRun {
    pub label: String,
    pub text: String,
    /// Flags and the point's run keys, laid over the text's values.
    pub over: RawRun,
    /// The host group to set around the run (consolidate); `None` for other experiments.
    pub host: Option<HostSetup>,
}

/// What a consolidation point sets around its run besides its instances.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSetup {
    /// The parent control group of the point's VMs.
    pub group: String,
    /// MEM_avail: the memory the VMs together may use during the run.
    pub avail: u64,
    /// With `--balloon`: the group is limited to MEM_config and a balloon locks this much in
    /// it, leaving `avail` to the VMs.
    pub balloon: Option<u64>,
    /// The experiment's other instances (other schemes'), stopped so they take nothing.
    pub idle: Vec<String>,
    /// Real VMs: the point's QEMU guests, each ballooned to its share with `--balloon`.
    pub guests: Vec<GuestShare>,
    /// KSM on or off for the run (`--ksm`); `None`: as the host has it.
    pub ksm: Option<bool>,
}

/// One QEMU guest of a consolidation point.
#[derive(Debug, Clone, PartialEq)]
pub struct GuestShare {
    pub vm: String,
    pub instance: String,
    /// Its RAM.
    pub memory: u64,
    /// The memory its balloon leaves it during the run; `None`: all of it.
    pub target: Option<u64>,
}

impl PointRun {
    /// The names of the `[[instance]]` tables of the run's text (none when it does not parse:
    /// its plan then fails with the reason).
    pub fn declared_instances(&self) -> Vec<String> {
        toml::from_str::<Table>(&self.text)
            .map(|doc| {
                tables(&doc, "instance")
                    .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The run's plan, validated as `tidebench run` validates one.
    pub fn plan(
        &self,
        cores: u32,
        seed: u64,
        catalog: &dyn Catalog,
    ) -> Result<RunPlan, ConfigError> {
        let src = Source {
            file: &self.label,
            text: &self.text,
        };
        let raw = config::parse_run_text(&src, catalog)?.overlay(self.over.clone());
        config::validate_run(&src, raw, cores, seed, catalog)
    }
}

impl BaseRun {
    /// The run's keys (text and flags) for an experiment that makes its own groups, phases
    /// and instances from them (density, consolidate): a base with tables is refused, with
    /// `why` saying what the experiment does instead.
    pub fn one_group(&self, why: &str, catalog: &dyn Catalog) -> Result<RawRun, String> {
        let src = Source {
            file: &self.label,
            text: &self.text,
        };
        let raw = config::parse_run_text(&src, catalog)
            .map_err(|e| e.to_string())?
            .overlay(self.flags.clone());
        if !raw.group.is_empty() || !raw.phase.is_empty() || !raw.instance.is_empty() {
            return Err(format!(
                "{}: {why}; leave out [[group]], [[phase]] and [[instance]]",
                self.label
            ));
        }
        Ok(raw)
    }

    /// The run of a point: `values` pairs each `--vary` with this point's value.
    pub fn point(
        &self,
        values: &[(&Vary, &str)],
        catalog: &dyn Catalog,
    ) -> Result<PointRun, String> {
        let mut doc: Table =
            toml::from_str(&self.text).map_err(|e| format!("{}: {}", self.label, e.message()))?;
        let mut top = Table::new();
        for (vary, value) in values {
            match &vary.key {
                VaryKey::Run(key) => {
                    top.insert(key.clone(), toml_value(value));
                }
                VaryKey::Group { group, key } => set_group_key(&mut doc, vary, group, key, value)?,
                VaryKey::Instance { instance, what } => {
                    let names = match instance {
                        Some(n) => vec![n.clone()],
                        None => self.managed_instances(&doc)?,
                    };
                    for name in names {
                        set_instance_value(&mut doc, &name, what, value)?;
                    }
                }
            }
        }
        let text = toml::to_string(&doc).map_err(|e| e.to_string())?;
        let top_text = toml::to_string(&top).map_err(|e| e.to_string())?;
        let varied = config::parse_run_text(
            &Source {
                file: "--vary",
                text: &top_text,
            },
            catalog,
        )
        .map_err(|e| e.to_string())?;
        Ok(PointRun {
            label: self.label.clone(),
            text,
            over: self.flags.clone().overlay(varied),
            host: None,
        })
    }

    /// The managed instances the run uses (empty when its targets are all DSNs).
    pub fn instances(&self) -> Result<Vec<String>, String> {
        let doc: Table =
            toml::from_str(&self.text).map_err(|e| format!("{}: {}", self.label, e.message()))?;
        Ok(self.managed_instances(&doc).unwrap_or_default())
    }

    /// The managed instances the run uses: its `[[instance]]` tables and every `instance:`
    /// target of its groups (or of the one-group run, `default` when it names none).
    fn managed_instances(&self, doc: &Table) -> Result<Vec<String>, String> {
        let mut names: Vec<String> = tables(doc, "instance")
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
            .collect();
        let mut add = |spec: &str| {
            if let Ok(TargetSpec::Instance { name, .. }) = TargetSpec::parse(spec) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        };
        let groups: Vec<&Table> = tables(doc, "group").collect();
        if groups.is_empty() {
            let target = self.flags.target.clone().or_else(|| {
                doc.get("target")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            add(target.as_deref().unwrap_or("instance:default"));
        }
        for g in groups {
            if let Some(i) = g.get("instance").and_then(Value::as_str) {
                add(&format!("instance:{i}"));
            }
            if let Some(t) = g.get("target").and_then(Value::as_str) {
                add(t);
            }
            for set in g.get("set").and_then(Value::as_array).into_iter().flatten() {
                for t in set.as_table().into_iter().flat_map(|t| t.values()) {
                    if let Some(t) = t.as_str() {
                        add(t);
                    }
                }
            }
        }
        if names.is_empty() {
            return Err("--vary instance...: the run uses no managed instance (its targets are DSNs); vary a run key instead".into());
        }
        Ok(names)
    }
}

/// The tables of the array `key` (`[[group]]`, `[[instance]]`).
fn tables<'a>(doc: &'a Table, key: &str) -> impl Iterator<Item = &'a Table> {
    doc.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_table)
}

fn tables_mut<'a>(doc: &'a mut Table, key: &str) -> impl Iterator<Item = &'a mut Table> {
    doc.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_table_mut)
}

fn set_group_key(
    doc: &mut Table,
    vary: &Vary,
    group: &str,
    key: &str,
    value: &str,
) -> Result<(), String> {
    let known: Vec<String> = tables(doc, "group")
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    if !known.iter().any(|g| g == group) {
        return Err(format!(
            "--vary {}: the run has no group '{group}' ({})",
            vary.name,
            if known.is_empty() {
                "it is a one-group run: vary the run key instead".to_string()
            } else {
                format!("its groups: {}", known.join(", "))
            }
        ));
    }
    if key == "clients" {
        // Independent mode gives clients per group in each phase.
        let mut phases = 0;
        for phase in tables_mut(doc, "phase") {
            let clients = phase
                .entry("clients")
                .or_insert_with(|| Value::Table(Table::new()));
            if let Some(c) = clients.as_table_mut() {
                c.insert(group.to_string(), toml_value(value));
                phases += 1;
            }
        }
        if phases == 0 {
            return Err(format!(
                "--vary {}: the run has no [[phase]] tables to give group '{group}' clients in; vary clients (the shared pool) instead",
                vary.name
            ));
        }
        return Ok(());
    }
    for g in tables_mut(doc, "group") {
        if g.get("name").and_then(Value::as_str) == Some(group) {
            g.insert(key.to_string(), toml_value(value));
        }
    }
    Ok(())
}

fn set_instance_value(
    doc: &mut Table,
    name: &str,
    what: &InstanceValue,
    value: &str,
) -> Result<(), String> {
    let list = doc
        .entry("instance")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or("the run file's `instance` is not a list of [[instance]] tables")?;
    let at = match list
        .iter()
        .position(|t| t.get("name").and_then(Value::as_str) == Some(name))
    {
        Some(i) => i,
        None => {
            let mut t = Table::new();
            t.insert("name".into(), Value::String(name.to_string()));
            list.push(Value::Table(t));
            list.len() - 1
        }
    };
    let table = list[at]
        .as_table_mut()
        .ok_or("an [[instance]] entry is not a table")?;
    match what {
        InstanceValue::Cpus => {
            table.insert("cpus".into(), toml_value(value));
        }
        InstanceValue::Memory => {
            table.insert("memory".into(), Value::String(value.to_string()));
        }
        InstanceValue::Setting(key) => {
            let settings = table
                .entry("settings")
                .or_insert_with(|| Value::Table(Table::new()));
            settings
                .as_table_mut()
                .ok_or("an [[instance]]'s settings are not a table")?
                .insert(key.clone(), Value::String(value.to_string()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
