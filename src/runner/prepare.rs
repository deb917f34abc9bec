//! Loading what a run needs when it is missing: an experiment's point may ask for another
//! scale, or a density step for a new instance's database. Data already there at the asked
//! scale (or any scale when the run asks for none) is kept, so a series re-prepares only when
//! a point changes what the data must be.

use std::sync::Arc;

use crate::config::{self, RunPlan};
use crate::event::{Event, Sink};
use crate::instance::Home;
use crate::workload::{Registry, WorkloadError};

use super::{resolve_target, RunError};

/// Loads every database of `plan` whose data is missing or of another scale than its group
/// asks for (reloading it as `prepare --force` would). Returns how many were loaded.
pub async fn ensure_prepared(
    plan: &RunPlan,
    jobs: u32,
    home: &Home,
    events: &Arc<dyn Sink>,
) -> Result<usize, RunError> {
    let loads = config::load_plans(plan, jobs, true, &Registry)?;
    let mut loaded = 0;
    for (load, scale_asked) in &loads {
        let kind = Registry::kind(load.workload.as_str())
            .map_err(|_| RunError::unknown_workload(load.workload.as_str()))?;
        let target = resolve_target(&load.target, home).await?;
        let client = target.connect_tokio().await?;
        let found = kind.check_ready(&load.options, &client).await;
        drop(client);
        let why = match found {
            Ok(ready) if !scale_asked || ready.scale == load.scale => continue,
            Ok(ready) => format!("it holds scale {}", ready.scale),
            Err(e) if e.is_not_prepared() => "it has no usable data".to_string(),
            Err(source) => {
                return Err(RunError::Check {
                    target: target.label.clone(),
                    source,
                })
            }
        };
        events.send(Event::Note(format!(
            "preparing {} scale {} on '{}' ({why})",
            load.workload, load.scale, target.label
        )));
        match kind.prepare(load, &target, events).await {
            Ok(()) => loaded += 1,
            Err(WorkloadError::Interrupted) => {
                return Err(RunError::interrupted("prepare interrupted"))
            }
            Err(source) => {
                return Err(RunError::PrepareFailed {
                    target: target.label.clone(),
                    source,
                })
            }
        }
    }
    Ok(loaded)
}
