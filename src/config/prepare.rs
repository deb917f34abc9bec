//! Prepare validation and plans: `prepare`'s flags into a [`PreparePlan`], and the loads a
//! run's plan needs (every distinct database once, with its group's load options).

use super::catalog::{self, Catalog, OptionValues, WorkloadInfo};
use super::plan::{PreparePlan, RunPlan, WorkloadName};
use super::target::TargetSpec;
use super::{setting, value, ConfigError};

/// `prepare`'s settings as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct PrepareRequest<'a> {
    pub workload: Option<&'a str>,
    pub scale: Option<u32>,
    pub target: Option<&'a str>,
    pub jobs: Option<u32>,
    pub force: bool,
    /// Workload options the data depends on (`--trade-days`).
    pub options: OptionValues,
}

/// Validates `prepare` settings.
pub fn validate_prepare(
    request: &PrepareRequest,
    cores: u32,
    catalog: &dyn Catalog,
) -> Result<PreparePlan, ConfigError> {
    let PrepareRequest {
        workload,
        scale,
        target,
        jobs,
        force,
        ref options,
    } = *request;
    let workload = workload.ok_or_else(|| {
        let families: Vec<&str> = catalog.all().iter().map(|w| w.name()).collect();
        ConfigError::NoPrepareWorkload {
            families: families.join(", "),
        }
    })?;
    let info = catalog.get(workload).map_err(setting("workload"))?;
    let options = load_options(
        info,
        &catalog::validate_options(catalog, info, options).map_err(setting("workload option"))?,
    );
    let workload = WorkloadName::new(info.name());
    let scale = scale.unwrap_or(info.default_scale());
    if scale == 0 {
        return Err(ConfigError::TooSmall {
            setting: "scale",
            least: 1,
            how: " (--scale / -s)",
        });
    }
    let jobs = match jobs {
        Some(0) => {
            return Err(ConfigError::TooSmall {
                setting: "jobs",
                least: 1,
                how: " (--jobs / -j)",
            })
        }
        Some(j) => j,
        None => default_load_jobs(cores),
    };
    let target = match target {
        Some(t) => TargetSpec::parse(t).map_err(value("target"))?,
        None => TargetSpec::default_instance(),
    };
    Ok(PreparePlan {
        workload,
        scale,
        target,
        jobs,
        force,
        options,
    })
}

/// The options of `resolved` that `workload`'s data depends on: what a load records.
pub fn load_options(workload: &dyn WorkloadInfo, resolved: &OptionValues) -> OptionValues {
    resolved
        .iter()
        .filter(|(k, _)| {
            workload
                .options()
                .iter()
                .any(|o| o.load && o.key == k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What `prepare` loads for a run: every distinct database of every set (a set's `oltp` and
/// `dss` databases are independent copies, loaded alike), once, with its group's workload,
/// scale and load options; a database that groups of one family share is loaded for the
/// member that adds to the family's tables (`ch` beside `tpcc`), whichever group comes first. `scale_asked` is false when the group names no scale (the data's
/// own scale is then used by a run, whatever it is).
pub fn load_plans(
    run: &RunPlan,
    jobs: u32,
    force: bool,
    catalog: &dyn Catalog,
) -> Result<Vec<(PreparePlan, bool)>, ConfigError> {
    let mut plans: Vec<(PreparePlan, bool)> = Vec::new();
    for g in &run.groups {
        let info = catalog
            .get(g.workload.as_str())
            .map_err(setting("workload"))?;
        for set in &g.sets {
            for (target, _) in set.distinct_targets() {
                if let Some((p, asked)) = plans.iter_mut().find(|(p, _)| p.target == *target) {
                    // A family's namesake (tpcc) loads less than a member that adds to its
                    // tables (ch): the database is loaded for the member, whichever comes first.
                    let first = catalog.find(p.workload.as_str());
                    if first.is_some_and(|f| f.name() == f.family() && info.family() == f.name())
                        && info.name() != info.family()
                    {
                        p.workload = g.workload.clone();
                        p.options = load_options(info, &g.options.workload);
                        *asked |= g.scale.is_some();
                    }
                    continue;
                }
                let plan = PreparePlan {
                    workload: g.workload.clone(),
                    scale: g.scale.unwrap_or(info.default_scale()),
                    target: target.clone(),
                    jobs,
                    force,
                    options: load_options(info, &g.options.workload),
                };
                plans.push((plan, g.scale.is_some()));
            }
        }
    }
    Ok(plans)
}

/// COPY sessions when `--jobs` is not given: half the cores, since the server's backends need the
/// other half. With one session the loader can use `COPY FREEZE` (as `pgbench -i` does), which
/// on 2 cores beat two parallel sessions plus the vacuum that unfrozen rows then need.
pub fn default_load_jobs(cores: u32) -> u32 {
    (cores / 2).max(1)
}
