//! Experiments: series of ordinary runs plus their analysis, as the seed studies made them
//! (a scalability sweep over client counts, a density series adding one instance at a time,
//! a working-set knee over VM memory sizes).
//! Each run is a normal results dir made by `runner::run`; the experiment dir adds
//! `experiment.json` (`results::experiment`) and `experiment.html` (`report::experiment`).
//! Experiments are resumable: a run whose results dir is complete is never made again, and a
//! dir made by another command is refused with the difference named.
//!
//! ```text
//! <out>/
//!   experiment.json            the request, every point and run, the analysis
//!   experiment.html            the curves and the analysis, linking each run's report
//!   01-clients=1-r1/           one ordinary results dir per run (`run_dir_name`)
//!   02-clients=2-r1/ ...
//! ```

pub mod analysis;
pub mod base;
pub mod consolidate;
pub mod density;
pub mod execute;
pub mod knee;
pub mod presets;
pub mod records;
pub mod resume;
pub mod schedule;
pub mod vary;

use std::path::PathBuf;

use crate::config::Catalog;
use crate::results::experiment::{
    ExperimentKind, Request, KNEE_MEMORY_KEY, KNEE_SHARED_BUFFERS_KEY,
};

pub use base::{BaseRun, PointRun};
pub use execute::{execute, Finished};
pub use schedule::PointValues;
pub use vary::Vary;
use vary::{InstanceValue, VaryKey};

/// Why an experiment cannot start or go on; each names what it is about and the fix. The
/// CLI exits 2 for all of them.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// A sweep without a varied key.
    #[error("a sweep needs at least one --vary KEY=V1,V2,... (e.g. --vary clients=1..64x2)")]
    NoVary,
    /// One key varied twice.
    #[error("--vary {key} is given twice; give all its values in one list")]
    VariedTwice { key: String },
    /// A point's run cannot be planned (a bad value, an unknown key).
    #[error("point {point}: {message}")]
    Point { point: String, message: String },
    /// A consolidation scheme cannot be laid out over the instances.
    #[error("scheme {scheme}: {message}")]
    Scheme { scheme: String, message: String },
    /// The base run does not fit the experiment (its targets, its instances).
    #[error("{message}")]
    Base { message: String },
    /// `knee` was given DSN targets; it steps an instance's memory limit.
    #[error(
        "knee steps a managed instance's memory limit (the emulated VM), and the run's targets \
         are DSNs: give --target instance:NAME (or leave --target out for instance:default)"
    )]
    KneeNeedsInstance,
    /// A run's plan cannot run as given: trying its repeats cannot help.
    #[error(transparent)]
    Run(Box<crate::runner::RunError>),
    /// `--out` holds an experiment made by another command.
    #[error(
        "{} holds an experiment made by another command ({diff}); run the same command to \
         resume it, or choose another --out", .dir.display()
    )]
    Changed { dir: PathBuf, diff: String },
    /// `--out` holds something else than an experiment.
    #[error(
        "{} exists and is not an experiment dir (no {}); choose another --out",
        .dir.display(), crate::results::experiment::FILE
    )]
    NotExperiment { dir: PathBuf },
    /// The experiment's own file cannot be read back.
    #[error(transparent)]
    Unreadable(#[from] crate::results::experiment::ReadError),
    /// The experiment dir cannot be created, listed or written.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The experiment's report page cannot be written (its message names the file).
    #[error(
        "{message}; the runs are kept, draw the page again with `tidebench report` on the dir"
    )]
    Report { message: String },
}

/// An experiment ready to execute: its points and each point's run.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub kind: ExperimentKind,
    pub dir: PathBuf,
    pub request: Request,
    /// The varied keys in grid order.
    pub varied: Vec<String>,
    pub repeat: u32,
    pub points: Vec<PointValues>,
    /// The run of each point (same order as `points`).
    pub runs: Vec<PointRun>,
    pub point_duration: Option<String>,
}

impl Experiment {
    /// A sweep over the grid of `varies`.
    pub fn sweep(
        dir: PathBuf,
        request: Request,
        base: &BaseRun,
        varies: &[Vary],
        catalog: &dyn Catalog,
    ) -> Result<Experiment, ExperimentError> {
        if varies.is_empty() {
            return Err(ExperimentError::NoVary);
        }
        if let Some(dup) = varies
            .iter()
            .enumerate()
            .find(|(i, v)| varies[..*i].iter().any(|w| w.key == v.key))
        {
            return Err(ExperimentError::VariedTwice {
                key: dup.1.name.clone(),
            });
        }
        let points = schedule::grid(varies);
        let runs = points
            .iter()
            .map(|p| {
                let values: Vec<(&Vary, &str)> = varies
                    .iter()
                    .zip(&p.0)
                    .map(|(v, (_, value))| (v, value.as_str()))
                    .collect();
                base.point(&values, catalog)
                    .map_err(|message| ExperimentError::Point {
                        point: p.describe(),
                        message,
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Experiment {
            kind: ExperimentKind::Sweep,
            dir,
            varied: varies.iter().map(|v| v.name.clone()).collect(),
            repeat: request.repeat,
            point_duration: request.point_duration.clone(),
            request,
            points,
            runs,
        })
    }

    /// A density series over `instances` (each ≥ 1), every instance shaped by `shape`.
    pub fn density(
        dir: PathBuf,
        request: Request,
        base: &BaseRun,
        instances: &[u32],
        shape: &density::Shape,
        catalog: &dyn Catalog,
    ) -> Result<Experiment, ExperimentError> {
        let points: Vec<PointValues> = instances
            .iter()
            .map(|n| PointValues(vec![(density::KEY.to_string(), n.to_string())]))
            .collect();
        let runs = instances
            .iter()
            .map(|n| {
                density::step(base, *n, shape, catalog).map_err(|message| ExperimentError::Point {
                    point: format!("{}={n}", density::KEY),
                    message,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Experiment {
            kind: ExperimentKind::Density,
            dir,
            varied: vec![density::KEY.to_string()],
            repeat: request.repeat,
            point_duration: request.point_duration.clone(),
            request,
            points,
            runs,
        })
    }

    /// A knee: one point per `(memory, shared_buffers)` (bytes, from `knee::points`), every
    /// managed instance of the run restarted with that memory limit and shared_buffers.
    pub fn knee(
        dir: PathBuf,
        request: Request,
        base: &BaseRun,
        points: &[(u64, u64)],
        catalog: &dyn Catalog,
    ) -> Result<Experiment, ExperimentError> {
        if base
            .instances()
            .map_err(|message| ExperimentError::Base { message })?
            .is_empty()
        {
            return Err(ExperimentError::KneeNeedsInstance);
        }
        let memory = Vary {
            name: KNEE_MEMORY_KEY.into(),
            key: VaryKey::Instance {
                instance: None,
                what: InstanceValue::Memory,
            },
            values: Vec::new(),
        };
        let shared_buffers = Vary {
            name: KNEE_SHARED_BUFFERS_KEY.into(),
            key: VaryKey::Instance {
                instance: None,
                what: InstanceValue::Setting("shared_buffers".into()),
            },
            values: Vec::new(),
        };
        let values: Vec<PointValues> = points
            .iter()
            .map(|&(m, sb)| {
                PointValues(vec![
                    (memory.name.clone(), knee::pg_size(m)),
                    (shared_buffers.name.clone(), knee::pg_size(sb)),
                ])
            })
            .collect();
        let runs = values
            .iter()
            .map(|p| {
                let (m, sb) = (&p.0[0].1, &p.0[1].1);
                base.point(&[(&memory, m), (&shared_buffers, sb)], catalog)
                    .map_err(|message| ExperimentError::Point {
                        point: p.describe(),
                        message,
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Experiment {
            kind: ExperimentKind::Knee,
            dir,
            varied: vec![KNEE_MEMORY_KEY.into()],
            repeat: request.repeat,
            point_duration: request.point_duration.clone(),
            request,
            points: values,
            runs,
        })
    }
}
