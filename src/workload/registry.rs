//! The registry: every workload tidebench can run, one line each. Adding a workload is a new
//! folder beside this file and a line here; config, the CLI and the driver learn its name,
//! options, roles and transaction types from what it declares.

use crate::config::{Catalog, WorkloadInfo};

use super::{ch, pgbench, probe, retail, script, tpcc, tpce, tpch, Kind};

/// The workloads, in the order `--help` lists them.
pub static WORKLOADS: &[&dyn Kind] = &[
    &pgbench::TPCB,
    &pgbench::SELECT_ONLY,
    &pgbench::SIMPLE_UPDATE,
    &tpcc::TPCC,
    &tpce::TPCE,
    &tpch::TPCH,
    &ch::CH,
    &retail::RETAIL,
    &probe::PROBE,
    &script::SCRIPT,
];

/// The registry as config's catalog of workloads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Registry;

impl Registry {
    /// The workload called `name`, or a message listing the ones there are.
    pub fn kind(name: &str) -> Result<&'static dyn Kind, String> {
        WORKLOADS
            .iter()
            .copied()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown workload '{name}'; choose from {}",
                    Registry::names().join(", ")
                )
            })
    }

    pub fn names() -> Vec<&'static str> {
        WORKLOADS.iter().map(|k| k.name()).collect()
    }
}

impl Catalog for Registry {
    fn find(&self, name: &str) -> Option<&dyn WorkloadInfo> {
        WORKLOADS
            .iter()
            .find(|k| k.name() == name)
            .map(|k| k.info())
    }

    fn all(&self) -> Vec<&dyn WorkloadInfo> {
        WORKLOADS.iter().map(|k| k.info()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_options_and_shorthands_are_unique() {
        let mut names = Registry::names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WORKLOADS.len());
        let mut shorts: Vec<char> = WORKLOADS.iter().filter_map(|k| k.shorthand()).collect();
        shorts.sort_unstable();
        shorts.dedup();
        assert_eq!(
            shorts.len(),
            WORKLOADS.iter().filter(|k| k.shorthand().is_some()).count()
        );
        // An option key means one thing for every workload that declares it.
        for k in WORKLOADS {
            for o in k.options() {
                assert_eq!(Registry.option_spec(o.key), Some(*o), "{}", o.key);
            }
        }
    }

    #[test]
    fn every_type_runs_on_a_declared_role() {
        for k in WORKLOADS {
            // The script workload's types are its scripts: built from one, it has that one.
            let options = match k.resolve_options(&Default::default()) {
                Ok(options) => options,
                Err(_) => k
                    .resolve_options(
                        &[(
                            "builtin".to_string(),
                            toml::Value::Array(vec!["select-only".into()]),
                        )]
                        .into(),
                    )
                    .unwrap(),
            };
            // tpce's scale is customers: one load unit at least.
            let w = k
                .build(1, &options)
                .or_else(|_| k.build(1_000, &options))
                .unwrap();
            // A phase's mix may name the drawn types, never the emulated ones.
            let names: Vec<String> = w
                .txn_types()
                .iter()
                .filter(|t| !t.emulated)
                .map(|t| t.name.clone())
                .collect();
            // What config lets a phase's mix name: the types the options make.
            assert_eq!(names, k.txn_type_names_for(&options), "{}", k.name());
            for t in w.txn_types() {
                assert!(
                    k.roles().contains(&t.role.as_str()),
                    "{}: {}",
                    k.name(),
                    t.name
                );
            }
        }
    }
}
