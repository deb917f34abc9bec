//! Consolidation under memory overcommitment (the vPostgres study): the same
//! databases laid out by several schemes (`1/1/M`, `1/M/M`, `M/M/M`), each VM a control group
//! with a CPU quota and a memory limit, all VMs of the experiment below one parent group that
//! stands for the host; complementary traffic over periods; and for every scheme a series of
//! overcommitment rates (Equation 1), realized as the parent group's memory limit (MEM_avail)
//! or, with `--balloon`, as a locked balloon inside it. Points are (scheme, rate), schemes
//! outer, so each scheme's VMs are set up once and its baseline (0 %) runs first.
//!
//! What this emulates and what it does not is in the README: a memory limit with page cache
//! charged to the VM, reclaim and OOM kills under pressure; no guest kernel, no ballooning
//! between guests, no hypervisor swapping or compression.
//!
//! With `--hypervisor qemu` the VMs are real: each a QEMU guest whose QEMU runs below the
//! host group, so MEM_avail limits real guests' memory, and `--balloon` drives each guest's
//! virtio-balloon to its share of MEM_avail (the guests' kernels reclaim inside); `--ksm`
//! turns the host's page merging on or off for the runs.

pub(super) mod guests;
pub(super) mod host;
pub mod layout;
pub mod records;
pub mod spec;

use std::path::PathBuf;

use crate::config::Catalog;
use crate::results::experiment::consolidate::{
    ConsolidateRequest, GuestRequest, SchemeLayout, OVERCOMMIT_KEY, SCHEME_KEY,
};
use crate::results::experiment::{ExperimentKind, Request};

use super::base::{BaseRun, GuestShare, HostSetup};
use super::schedule::PointValues;
use super::{Experiment, ExperimentError};

pub use spec::{RawSpec, Scheme, Spec};

/// The `[consolidate]` table's name in a consolidation file.
pub const TABLE: &str = "consolidate";

/// Splits a consolidation file into its run text (everything else) and its `[consolidate]`
/// table.
pub fn split_file(label: &str, text: &str) -> Result<(String, RawSpec), String> {
    let mut doc: toml::Table =
        toml::from_str(text).map_err(|e| format!("{label}: {}", e.message()))?;
    let spec = match doc.remove(TABLE) {
        Some(toml::Value::Table(t)) => t
            .try_into::<RawSpec>()
            .map_err(|e| format!("{label}: [{TABLE}]: {}", e.message()))?,
        Some(_) => return Err(format!("{label}: {TABLE} must be a table: [{TABLE}]")),
        None => RawSpec::default(),
    };
    let run = toml::to_string(&doc).map_err(|e| e.to_string())?;
    Ok((run, spec))
}

/// A point's QEMU guests (none for control groups), each with its share of `avail` (in
/// proportion to its RAM, whole MiB) when `ballooned`.
fn guest_shares(spec: &Spec, lay: &SchemeLayout, avail: u64, ballooned: bool) -> Vec<GuestShare> {
    if spec.guests.is_none() {
        return Vec::new();
    }
    lay.vms
        .iter()
        .filter_map(|vm| {
            let first = vm.instances.first()?;
            let share = (avail as u128 * vm.memory_bytes as u128
                / lay.mem_config_bytes.max(1) as u128) as u64;
            Some(GuestShare {
                vm: vm.name.clone(),
                instance: first.name.clone(),
                memory: vm.memory_bytes,
                target: ballooned.then_some((share >> 20) << 20),
            })
        })
        .collect()
}

impl Experiment {
    /// Every scheme of `spec` at every rate, each run made from `base`'s load.
    pub fn consolidate(
        dir: PathBuf,
        mut request: Request,
        base: &BaseRun,
        spec: &Spec,
        catalog: &dyn Catalog,
    ) -> Result<Experiment, ExperimentError> {
        let layouts: Vec<_> = spec
            .schemes
            .iter()
            .map(|s| layout::layout(spec, *s))
            .collect();
        let mut points = Vec::new();
        let mut runs = Vec::new();
        for lay in &layouts {
            let run = layout::run(base, spec, lay, catalog).map_err(|message| {
                ExperimentError::Scheme {
                    scheme: lay.scheme.to_string(),
                    message,
                }
            })?;
            let idle: Vec<String> = layouts
                .iter()
                .filter(|other| other.scheme != lay.scheme)
                .flat_map(|other| other.vms.iter().flat_map(|v| &v.instances))
                .map(|i| i.name.clone())
                .collect();
            for rate in &spec.overcommit {
                points.push(PointValues(vec![
                    (SCHEME_KEY.to_string(), lay.scheme.clone()),
                    (OVERCOMMIT_KEY.to_string(), rate.to_string()),
                ]));
                let avail = spec.mem_avail(*rate);
                let ballooned = spec.balloon && *rate > 0;
                // Real VMs balloon inside themselves; emulated ones get the dummy VM.
                let balloon =
                    (ballooned && spec.guests.is_none()).then(|| lay.mem_config_bytes - avail);
                let mut run = run.clone();
                run.host = Some(HostSetup {
                    group: spec.host_group.clone(),
                    avail,
                    balloon,
                    idle: idle.clone(),
                    guests: guest_shares(spec, lay, avail, ballooned),
                    ksm: spec.guests.as_ref().and_then(|g| g.ksm),
                });
                runs.push(run);
            }
        }
        request.consolidate = Some(ConsolidateRequest {
            databases: spec.databases,
            periods: spec.periods,
            period: spec.period.clone(),
            ramp_up: spec.ramp_up.clone(),
            high: spec.high,
            low: spec.low,
            overcommit: spec.overcommit.clone(),
            balloon: spec.balloon,
            host_group: spec.host_group.clone(),
            cpus: spec.cpus,
            memory: spec.memory.clone(),
            shared_buffers: spec.shared_buffers_text.clone(),
            working_set: spec.working_set.as_ref().map(|w| w.0.clone()),
            working_set_bytes: spec.working_set.as_ref().map(|w| w.1),
            schemes: layouts,
            guests: spec.guests.as_ref().map(|g| GuestRequest {
                hypervisor: "qemu".into(),
                accel: g.accel.map(|a| a.name().to_string()),
                ksm: g.ksm,
                qemu_allowance_bytes: guests::QEMU_ALLOWANCE,
            }),
        });
        Ok(Experiment {
            kind: ExperimentKind::Consolidate,
            dir,
            varied: vec![SCHEME_KEY.to_string(), OVERCOMMIT_KEY.to_string()],
            repeat: request.repeat,
            point_duration: None,
            request,
            points,
            runs,
        })
    }
}
