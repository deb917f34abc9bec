//! `experiment.json`: what an experiment asked for, every run it made (or still has to make)
//! and the analysis of the runs that completed. Written after every point (temp file and
//! rename), so an interrupted experiment leaves a file that says exactly what is done; the
//! same file is what `resume` compares the new command against and what `experiment.html`
//! and `compare` read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod consolidate;

use consolidate::{ConsolidateAnalysis, ConsolidateRequest, ConsolidateRun};

/// Bumped when a field changes meaning or goes away (readers refuse newer versions).
pub const SCHEMA_VERSION: u32 = 1;
/// The file's name inside an experiment dir.
pub const FILE: &str = "experiment.json";
/// The page's name inside an experiment dir.
pub const PAGE: &str = "experiment.html";

/// Which experiment made the dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExperimentKind {
    /// Runs over a grid of run or instance settings (`tidebench sweep`).
    Sweep,
    /// One more instance per step, all driven at once (`tidebench density`).
    Density,
    /// Consolidation schemes under memory overcommitment (`tidebench consolidate`).
    Consolidate,
    /// One VM's memory stepped with shared_buffers tied to it, read for its knee
    /// (`tidebench knee`).
    Knee,
}

impl ExperimentKind {
    pub fn name(self) -> &'static str {
        match self {
            ExperimentKind::Sweep => "sweep",
            ExperimentKind::Density => "density",
            ExperimentKind::Consolidate => "consolidate",
            ExperimentKind::Knee => "knee",
        }
    }
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentFile {
    pub schema_version: u32,
    pub tidebench_version: String,
    pub kind: ExperimentKind,
    /// The command that made the dir, as `resume` compares it (see [`Request`]).
    pub request: Request,
    /// The varied keys in the order the grid nests them (the last varies fastest). A density
    /// experiment varies `instances`.
    pub varied: Vec<String>,
    /// How many times the whole series runs back to back.
    pub repeat: u32,
    /// UTC, RFC 3339: when the experiment first started, and when this file was written.
    pub started_at: String,
    pub updated_at: String,
    /// Every run of every point is complete.
    pub complete: bool,
    /// One per combination of the varied values, in grid order.
    pub points: Vec<Point>,
    pub analysis: Analysis,
}

/// What the user asked for, in a canonical form: two commands that would run the same
/// experiment have equal requests, and a changed one names the field that differs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The run file's path, `preset NAME`, or `flags`.
    pub source: String,
    /// The run file's or preset's text as read when the experiment started.
    pub base_text: String,
    /// The run flags given besides the experiment's own, as `--key value` pairs in order.
    pub flags: Vec<String>,
    /// `KEY` → its values as given (ranges expanded), in grid order.
    pub vary: Vec<Varied>,
    pub repeat: u32,
    /// `--point-duration`, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_duration: Option<String>,
    /// Density: each instance's CPU quota (cores) and memory limit, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Consolidate: the traffic, the rates and every scheme's layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidate: Option<ConsolidateRequest>,
    /// Knee: what is kept while the memory (in `vary`) steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<KneeRequest>,
}

/// What a knee experiment keeps constant while the VM memory steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KneeRequest {
    pub mode: KneeMode,
    /// shared_buffers (`keep-shared-buffers`) or memory − shared_buffers (`keep-difference`),
    /// as PostgreSQL writes a size (`1GB`, `352MB`).
    pub kept: String,
}

/// The two curves of the vPostgres study's working-set sizing (Figures 7-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KneeMode {
    /// shared_buffers fixed, x = VM memory (Figures 7 and 9): the VM memory working set.
    KeepSharedBuffers,
    /// memory − shared_buffers fixed, x = shared_buffers (Figures 8 and 10): the
    /// shared-buffers working set.
    KeepDifference,
}

impl KneeMode {
    /// The mode as `experiment.json` writes it.
    pub fn name(self) -> &'static str {
        match self {
            KneeMode::KeepSharedBuffers => "keep-shared-buffers",
            KneeMode::KeepDifference => "keep-difference",
        }
    }
}

/// The varied key of a knee experiment: the VM's memory limit.
pub const KNEE_MEMORY_KEY: &str = "instance.memory";
/// The point value a knee experiment ties to the memory.
pub const KNEE_SHARED_BUFFERS_KEY: &str = "instance.set.shared_buffers";

/// One varied key and its values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Varied {
    pub key: String,
    pub values: Vec<String>,
}

/// One combination of the varied values and its runs (one per repeat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Key → value, for every varied key.
    pub values: BTreeMap<String, String>,
    pub runs: Vec<RunRecord>,
    /// tps over the complete runs; absent when none completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// The workload's headline (NOTPM, tpsE) over the complete runs, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline_median: Option<f64>,
}

impl Point {
    /// The point's values in the order the grid varies them, e.g. `clients=16 scale=10`.
    pub fn label(&self, varied: &[String]) -> String {
        let mut parts: Vec<String> = varied
            .iter()
            .filter_map(|k| self.values.get(k).map(|v| format!("{k}={v}")))
            .collect();
        parts.extend(
            self.values
                .iter()
                .filter(|(k, _)| !varied.contains(k))
                .map(|(k, v)| format!("{k}={v}")),
        );
        parts.join(" ")
    }
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Not started yet.
    Pending,
    /// Ran its whole duration; its results dir is complete.
    Complete,
    /// Stopped early (Ctrl-C, a killed experiment): its dir holds what was measured.
    Interrupted,
    /// Could not run (a target down, data missing); `error` says why.
    Failed,
}

impl RunStatus {
    /// The status as `experiment.json` writes it.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Pending => "pending",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

/// The varied key of a density series: its points' values hold the step's instance count.
pub const DENSITY_KEY: &str = "instances";

/// One run of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The results dir, relative to the experiment dir.
    pub dir: String,
    /// 1-based.
    pub repeat: u32,
    pub status: RunStatus,
    pub complete: bool,
    /// Committed and expected rollbacks per second over the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<HeadlineValue>,
    /// Density: each instance's (group's) tps, in instance order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_instance_tps: Vec<f64>,
    /// Mean host CPU busy over the measured window, percent of all cores (from `system.csv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Consolidate: each period's rates and each VM's usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidation: Option<ConsolidateRun>,
    /// What happened to the run's managed instances (OOM kills, killed backends, crash
    /// restarts, a server gone): the count of each kind from its `summary.json`. A run with
    /// incidents can still be complete; its figures then include the crash.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub incidents: BTreeMap<String, u64>,
}

impl RunRecord {
    /// A run of `dir` (relative to the experiment dir) not made yet.
    pub fn pending(dir: &str, repeat: u32) -> RunRecord {
        RunRecord {
            dir: dir.to_string(),
            repeat,
            status: RunStatus::Pending,
            complete: false,
            tps: None,
            headline: None,
            per_instance_tps: Vec::new(),
            host_cpu_percent: None,
            error: None,
            consolidation: None,
            incidents: BTreeMap::new(),
        }
    }

    /// Counts `incidents` in, each by its kind.
    pub fn count_incidents(&mut self, incidents: &[super::Incident]) {
        for i in incidents {
            *self.incidents.entry(i.kind.name().to_string()).or_insert(0) += i.count;
        }
    }

    /// The run's incidents in words, `oom_kill ×3, crash_restart ×1`; `None` without any.
    pub fn incidents_said(&self) -> Option<String> {
        (!self.incidents.is_empty()).then(|| {
            let kinds: Vec<String> = self
                .incidents
                .iter()
                .map(|(kind, n)| format!("{kind} \u{d7}{n}"))
                .collect();
            kinds.join(", ")
        })
    }
}

/// The workload's headline rate of a run, with its label and unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadlineValue {
    /// `NOTPM`, `tpsE`, `tpsV`.
    pub label: String,
    pub value: f64,
    /// `per minute` or `per second`.
    pub unit: String,
}

/// What the complete runs say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Sweeps: one per series (the last numeric varied key against tps, one series per
    /// combination of the other keys).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<SeriesAnalysis>,
    /// Density experiments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<DensityAnalysis>,
    /// Knee experiments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<KneeAnalysis>,
    /// Why an analysis could not be made (a key that is not a number, too few points).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Consolidate: per scheme and overcommitment rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consolidate: Option<ConsolidateAnalysis>,
}

/// One curve of a sweep: median tps against the numeric key `x`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesAnalysis {
    /// The key on the x axis.
    pub x: String,
    /// The other varied keys' values of this series (empty for a one-key sweep).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fixed: BTreeMap<String, String>,
    /// (x, median tps) of the points with a median, in x order.
    pub curve: Vec<(f64, f64)>,
    /// The point with the highest median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<CurvePoint>,
    /// tps per unit of x along the line through the origin and the first point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope: Option<f64>,
    /// The last x whose median stays within `linear_tolerance` of the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear_until: Option<f64>,
    /// The first x after which the median no longer rises by more than
    /// `saturation_threshold`; absent when it still rises at the last point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturation: Option<f64>,
    /// The rules, in words, with their thresholds.
    pub rules: Vec<String>,
    /// The analysis in one or two sentences.
    pub summary: String,
}

/// An (x, tps) point of a curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub x: f64,
    pub tps: f64,
}

/// Density: total throughput against the ideal of n independent instances.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DensityAnalysis {
    /// Median tps of the 1-instance step: the unit of the ideal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_median: Option<f64>,
    pub steps: Vec<DensityStep>,
    pub summary: String,
}

/// One step of a density series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DensityStep {
    pub instances: u32,
    /// Median over the complete runs of the step's total tps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tps: Option<f64>,
    /// Median of each instance's tps over the complete runs, in instance order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_instance_tps: Vec<f64>,
    /// `instances` × the single-instance median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ideal: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_of_ideal: Option<f64>,
    /// Median of the runs' mean host CPU busy, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_percent: Option<f64>,
}

/// A knee experiment's curve, its best point and its knee: the working-set size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KneeAnalysis {
    pub mode: KneeMode,
    /// The kept size, as in the request.
    pub kept: String,
    /// The key on the x axis: [`KNEE_MEMORY_KEY`] or [`KNEE_SHARED_BUFFERS_KEY`].
    pub x: String,
    /// What the curve measures: the workload's headline (`NOTPM`) or `tps`.
    pub metric: String,
    /// The points with a complete run, in x order.
    pub curve: Vec<KneePoint>,
    /// The point with the highest value (normalized 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<KneePoint>,
    /// The knee's x in MiB: the working-set size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_mib: Option<f64>,
    /// Why there is no knee (too few points, a flat or falling curve, no bend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_knee: Option<String>,
    /// The method, in words, with its thresholds.
    pub method: Vec<String>,
    /// The result in one or two sentences.
    pub summary: String,
}

/// One point of a knee curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KneePoint {
    /// VM memory or shared_buffers, MiB.
    pub x_mib: f64,
    /// Median over the complete runs, in `metric`'s unit.
    pub value: f64,
    /// `value` over the best point's value.
    pub normalized: f64,
}

/// A varied value as a number on a chart's x axis: a number as written, or a size (`256MB`,
/// `1GiB`) in MiB, so memory and `shared_buffers` series have curves too. `None` for
/// anything else (`simple`, `prepared`).
pub fn axis_value(value: &str) -> Option<f64> {
    let v = value.trim();
    if let Ok(x) = v.parse::<f64>() {
        return x.is_finite().then_some(x);
    }
    let bytes = crate::config::size::parse_size(v).ok()?;
    Some(bytes as f64 / f64::from(1u32 << 20))
}

/// True when `value` is a size (`1GB`), which [`axis_value`] reads in MiB.
pub fn is_size(value: &str) -> bool {
    value.trim().parse::<f64>().is_err() && axis_value(value).is_some()
}

/// Why an experiment dir cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0} is not an experiment dir (no {FILE}); experiments are made by `tidebench sweep`, `tidebench density` and `tidebench knee`")]
    Missing(PathBuf),
    #[error("cannot read {path}: {message}")]
    Damaged { path: PathBuf, message: String },
}

/// True when `dir` holds an `experiment.json`.
pub fn is_experiment(dir: &Path) -> bool {
    dir.join(FILE).is_file()
}

/// Reads `dir/experiment.json`, refusing versions this build does not know.
pub fn read(dir: &Path) -> Result<ExperimentFile, ReadError> {
    let path = dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReadError::Missing(dir.to_path_buf()))
        }
        Err(e) => {
            return Err(ReadError::Damaged {
                path,
                message: e.to_string(),
            })
        }
    };
    let damaged = |message: String| ReadError::Damaged {
        path: path.clone(),
        message,
    };
    let probe: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| damaged(e.to_string()))?;
    let version = probe.get("schema_version").and_then(|v| v.as_u64());
    match version {
        Some(v) if v as u32 == SCHEMA_VERSION => {}
        Some(v) => {
            return Err(damaged(format!(
                "schema_version {v}; this tidebench reads {SCHEMA_VERSION} (use the tidebench that wrote it)"
            )))
        }
        None => return Err(damaged("no schema_version: not written by tidebench".into())),
    }
    serde_json::from_value(probe).map_err(|e| damaged(e.to_string()))
}

/// Writes `dir/experiment.json` through a temp file and a rename, so a reader (or a resume
/// after a crash) never sees half a file.
pub fn write(dir: &Path, file: &ExperimentFile) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
    // The error keeps its kind (callers match on it) and names the file and the free space.
    super::atomic::write(&dir.join(FILE), (text + "\n").as_bytes())
        .map_err(|e| std::io::Error::new(e.source.kind(), e.to_string()))
}
