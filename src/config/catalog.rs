//! What configuration knows about workloads, without importing them: each workload describes
//! itself through [`WorkloadInfo`] (name, data family, roles, its own options and their
//! validation, transaction type names), and the caller hands config a [`Catalog`] of them.
//! So `config` validates `workload = "tpcc"`, `procedures = true` or a phase's `mix` without
//! naming any workload, and a new workload needs no line here.

use std::collections::BTreeMap;

/// A workload's own option values by key (`procedures = true`), as written or resolved.
pub type OptionValues = BTreeMap<String, toml::Value>;

/// The role a set's single target plays when a workload declares only one.
pub const DEFAULT_ROLE: &str = "oltp";

/// The kind of value an option takes; config checks it before the workload sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `true`/`false`; on the command line a flag without value.
    Flag,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A whole number, at least 1.
    Count,
    /// A byte size as people write it (`512MB`, `10GB`), kept as written.
    Size,
    /// A number of cores, fractions allowed (`1.5`).
    Cores,
    /// A positive number, fractions allowed (a scale factor such as `0.01`); `value_name`
    /// names it on the command line.
    Fraction { value_name: &'static str },
    /// A whole number from `min` to `max` (pgbench's `--fillfactor` 10..100); on the command
    /// line negative numbers reach the check, so both places refuse them alike.
    Number { min: i64, max: i64 },
    /// A free-form string the workload checks itself in `resolve_options` (pgbench's
    /// `--init-steps dtgvp`, `--tablespace NAME`).
    Text { value_name: &'static str },
    /// A list of distinct words out of these (possibly empty); on the command line
    /// comma-separated.
    Names(&'static [&'static str]),
    /// A list of free-form strings (or, in run files, tables) the workload checks itself
    /// (pgbench's `-f FILE@W`); on the command line the flag repeated, with `short` as its
    /// pgbench letter. With `selects`, giving the flag chooses the declaring workload when no
    /// `--workload` is given. With `paths`, each string starts with a file path, as does a
    /// table's `file`, which a run file gives relative to itself.
    Entries {
        short: Option<char>,
        value_name: &'static str,
        selects: bool,
        paths: bool,
    },
}

/// One option a workload declares: its key in run files (also `--key-with-dashes` on the
/// command line), the kind of value, and a help line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    pub key: &'static str,
    pub kind: OptionKind,
    pub help: &'static str,
    /// The data depends on it: `prepare` takes it too, and a run with another value than the
    /// load's is refused (TPC-E's initial trade days).
    pub load: bool,
}

impl OptionSpec {
    /// The command-line flag: the key with dashes.
    pub fn flag(&self) -> String {
        self.key.replace('_', "-")
    }

    /// How the option is written, for messages: `think = "spec" (--think spec)`.
    pub fn written(&self, value: &toml::Value) -> String {
        match (self.kind, value) {
            (OptionKind::Flag, _) => format!("{} (--{})", self.key, self.flag()),
            (_, toml::Value::String(s)) => {
                format!("{} = \"{s}\" (--{} {s})", self.key, self.flag())
            }
            (_, toml::Value::Array(items)) => {
                let words: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
                format!(
                    "{} = {value} (--{} {})",
                    self.key,
                    self.flag(),
                    words.join(",")
                )
            }
            (_, v) => format!("{} = {v} (--{} {v})", self.key, self.flag()),
        }
    }

    /// Checks a value's type; the message names the option and what it takes.
    pub fn check(&self, value: &toml::Value) -> Result<(), String> {
        let ok = match (self.kind, value) {
            (OptionKind::Flag, toml::Value::Boolean(_)) => true,
            (OptionKind::Choice(words), toml::Value::String(s)) => words.contains(&s.as_str()),
            (OptionKind::Count, toml::Value::Integer(n)) => *n >= 1 && *n <= i64::from(u32::MAX),
            (OptionKind::Size, toml::Value::String(s)) => super::size::parse_size(s).is_ok(),
            (OptionKind::Cores, toml::Value::Float(c)) => c.is_finite() && *c >= 0.01,
            (OptionKind::Cores, toml::Value::Integer(n)) => *n >= 1,
            (OptionKind::Fraction { .. }, toml::Value::Float(x)) => x.is_finite() && *x > 0.0,
            (OptionKind::Fraction { .. }, toml::Value::Integer(n)) => *n >= 1,
            (OptionKind::Number { min, max }, toml::Value::Integer(n)) => (min..=max).contains(n),
            (OptionKind::Text { .. }, toml::Value::String(_)) => true,
            // Strings, or tables a run file writes (`{ file = "a.sql", role = "dss" }`);
            // the workload checks what they say.
            (OptionKind::Entries { .. }, toml::Value::Array(items)) => items
                .iter()
                .all(|v| v.as_str().is_some_and(|s| !s.is_empty()) || v.is_table()),
            (OptionKind::Names(words), toml::Value::Array(items)) => {
                let names: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
                names.len() == items.len()
                    && names.iter().all(|n| words.contains(n))
                    && (1..names.len()).all(|i| !names[..i].contains(&names[i]))
            }
            _ => false,
        };
        if ok {
            return Ok(());
        }
        Err(match self.kind {
            OptionKind::Flag => format!("{} takes true or false, not {value}", self.key),
            OptionKind::Choice(words) => format!(
                "{} takes one of {}, not {value}",
                self.key,
                words.join(", ")
            ),
            OptionKind::Count => format!(
                "{} must be a whole number of at least 1, not {value}",
                self.key
            ),
            OptionKind::Size => format!(
                "{} takes a size such as \"512MB\" or \"10GB\", not {value}",
                self.key
            ),
            OptionKind::Cores => format!(
                "{} takes a number of cores such as 2 or 1.5 (at least 0.01), not {value}",
                self.key
            ),
            OptionKind::Fraction { value_name } => format!(
                "{} takes a positive number such as {value_name}, not {value}",
                self.key
            ),
            OptionKind::Number { min, max } => format!(
                "{} must be a whole number from {min} to {max}, not {value}",
                self.key
            ),
            OptionKind::Text { value_name } => format!(
                "{} takes a string such as \"{value_name}\", not {value}",
                self.key
            ),
            OptionKind::Entries { value_name, .. } => format!(
                "{} takes a list of strings such as [\"{value_name}\"], not {value}",
                self.key
            ),
            OptionKind::Names(words) => format!(
                "{} takes a list of distinct names out of {}, not {value}",
                self.key,
                words.join(", ")
            ),
        })
    }
}

/// A workload as configuration sees it.
pub trait WorkloadInfo: Sync {
    /// The name users type (`--workload tpcc`).
    fn name(&self) -> &'static str;
    /// One line for `--help` and listings.
    fn about(&self) -> &'static str;
    /// Workloads of one family use the same tables, so they may share a database and one
    /// group's phase mix may name another's transaction types.
    fn family(&self) -> &'static str {
        self.name()
    }
    /// What the workload calls its scale (TPC-C: "warehouses"), accepted as `--NAME` too.
    fn scale_name(&self) -> Option<&'static str> {
        None
    }
    /// The scale `prepare` loads when none is given (tpce: one load unit, 1,000 customers).
    fn default_scale(&self) -> u32 {
        1
    }
    /// A pgbench-style short flag that selects this workload (`-S` for select-only).
    fn shorthand(&self) -> Option<char> {
        None
    }
    /// The roles a set's targets play for this workload; its transaction types each run on one.
    fn roles(&self) -> &'static [&'static str] {
        &[DEFAULT_ROLE]
    }
    /// The options the workload takes beyond the generic ones.
    fn options(&self) -> &'static [OptionSpec] {
        &[]
    }
    /// pgbench's one-letter flags of some of those options, by key (`("fillfactor", 'F')`);
    /// an `Entries` option carries its own.
    fn option_shorts(&self) -> &'static [(&'static str, char)] {
        &[]
    }
    /// Checks the combination of `given` options (each already of the right kind) and returns
    /// them with the workload's defaults filled in, as the run will use them.
    fn resolve_options(&self, given: &OptionValues) -> Result<OptionValues, String> {
        Ok(given.clone())
    }
    /// The names of the transaction types a phase's `mix` may give weights to.
    fn txn_type_names(&self) -> Vec<String>;
    /// Transactions each of the workload's clients runs before it ends (TPC-H: a stream's 22
    /// queries), the run ending when every client has; `None`: clients run for the duration.
    /// A run of such a workload with no duration given lasts until its clients are done
    /// (the duration, if given, is a cap), and it runs in a group of its own clients only:
    /// shared mode's cards would deal its units to any client.
    fn units_per_client(&self) -> Option<u64> {
        None
    }
    /// The same for a group with these `options`, for workloads where an option makes clients
    /// run for the duration instead (CH-benCHmark's `repeat`).
    fn units_per_client_for(&self, _options: &OptionValues) -> Option<u64> {
        self.units_per_client()
    }
    /// The same for a group with these resolved `options`, for workloads whose types come
    /// from their options (the script workload's scripts).
    fn txn_type_names_for(&self, _options: &OptionValues) -> Vec<String> {
        self.txn_type_names()
    }
}

/// The workloads configuration may name.
pub trait Catalog {
    fn find(&self, name: &str) -> Option<&dyn WorkloadInfo>;
    fn all(&self) -> Vec<&dyn WorkloadInfo>;

    /// The workload called `name`, or a message listing the ones there are.
    fn get(&self, name: &str) -> Result<&dyn WorkloadInfo, String> {
        self.find(name).ok_or_else(|| {
            format!(
                "unknown workload '{name}'; choose from {}",
                self.all()
                    .iter()
                    .map(|w| w.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// The workloads declaring option `key`, by name.
    fn declaring(&self, key: &str) -> Vec<&'static str> {
        self.all()
            .into_iter()
            .filter(|w| w.options().iter().any(|o| o.key == key))
            .map(|w| w.name())
            .collect()
    }

    /// The spec of option `key` as the first workload declaring it has it.
    fn option_spec(&self, key: &str) -> Option<OptionSpec> {
        self.all()
            .into_iter()
            .find_map(|w| w.options().iter().find(|o| o.key == key).copied())
    }
}

/// Checks `given` against what `workload` declares and lets the workload resolve them. The
/// message names the option, which workloads take it, and the fix.
pub fn validate_options(
    catalog: &dyn Catalog,
    workload: &dyn WorkloadInfo,
    given: &OptionValues,
) -> Result<OptionValues, String> {
    for (key, value) in given {
        match workload.options().iter().find(|o| o.key == key) {
            Some(spec) => spec.check(value)?,
            None => {
                let owners = catalog.declaring(key);
                let Some(spec) = catalog.option_spec(key) else {
                    return Err(format!("unknown key '{key}'"));
                };
                return Err(format!(
                    "{} applies to the {} workload{} only, not {}; remove it",
                    spec.written(value),
                    owners.join(", "),
                    if owners.len() > 1 { "s" } else { "" },
                    workload.name()
                ));
            }
        }
    }
    workload.resolve_options(given)
}

/// The run-level options a group of `workload` inherits: the ones it declares.
pub fn inherited(workload: &dyn WorkloadInfo, run: &OptionValues) -> OptionValues {
    run.iter()
        .filter(|(k, _)| workload.options().iter().any(|o| o.key == k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
