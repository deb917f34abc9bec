//! Reading a run's settings: the run file or preset text ([`RunSource`], [`run_text`]), TOML
//! with file:line errors ([`read_toml`], [`parse_toml`]), and [`build_run_plan`], which reads,
//! lays the flags over the file and validates: the only I/O config does.

use std::path::Path;

use serde::Deserialize;

use super::catalog::Catalog;
use super::plan::RunPlan;
use super::raw::RawRun;
use super::run::validate_run;
use super::{extra, groups, presets, setting, ConfigError};

/// Where a run's file settings come from: a file on disk, a built-in preset, or nothing.
pub enum RunSource<'a> {
    None,
    File(&'a Path),
    Preset(&'a str),
    /// A preset sized for a host with this much memory (bytes): what the CLI passes, so a
    /// preset with instances (`tpcv`) can size their memory limits. `Preset` knows none.
    PresetOnHost(&'a str, Option<u64>),
}

/// The run file's or preset's text and its name for messages (`flags` and an empty text when
/// there is neither): what [`build_run_plan`] parses, and what an experiment edits per point.
pub fn run_text(
    source: RunSource,
    flags: &RawRun,
    cores: u32,
) -> Result<(String, String), ConfigError> {
    Ok(match source {
        RunSource::None => {
            presets::refuse_knobs(&flags.preset).map_err(setting("preset"))?;
            (String::from("flags"), String::new())
        }
        RunSource::Preset(name) => presets::text(name, flags, cores, None)?,
        RunSource::PresetOnHost(name, memory) => presets::text(name, flags, cores, memory)?,
        RunSource::File(path) => {
            presets::refuse_knobs(&flags.preset).map_err(setting("preset"))?;
            let file = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                file: file.clone(),
                source,
            })?;
            (file, text)
        }
    })
}

/// Reads the run file or preset (if any), lays the flags over it, and validates the result.
/// `cores` decides the default number of driver threads (and sizes a generated preset's
/// instances); `catalog` names the workloads.
pub fn build_run_plan(
    source: RunSource,
    flags: RawRun,
    cores: u32,
    default_seed: u64,
    catalog: &dyn Catalog,
) -> Result<RunPlan, ConfigError> {
    let (preset, run_file) = match &source {
        RunSource::None => (None, None),
        RunSource::File(path) => (None, Some(path.to_path_buf())),
        RunSource::Preset(name) | RunSource::PresetOnHost(name, _) => {
            (Some(name.to_string()), None)
        }
    };
    let flags = match &preset {
        Some(name) => presets::scale_as_knob(name, flags),
        None => flags,
    };
    let (file, text) = run_text(source, &flags, cores)?;
    let src = groups::Source {
        file: &file,
        text: &text,
    };
    let from_file = parse_run_text(&src, catalog)?;
    let mut plan = validate_run(&src, from_file.overlay(flags), cores, default_seed, catalog)?;
    plan.preset = preset;
    plan.run_file = run_file;
    Ok(plan)
}

/// Parses a run file's text, workload options included.
pub fn parse_run_text(src: &groups::Source, catalog: &dyn Catalog) -> Result<RawRun, ConfigError> {
    let mut raw: RawRun = parse_toml(src.file, src.text)?;
    let extra = extra::workload_options::<RawRun, groups::RawGroup>(src, catalog)?;
    raw.options = extra.top;
    for (g, options) in raw.group.iter_mut().zip(extra.groups) {
        g.get_mut().options = options;
    }
    Ok(raw)
}

/// Reads and deserializes a TOML file; errors carry file and line.
pub fn read_toml<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    parse_toml(&file, &text)
}

/// Deserializes TOML text; `file` is only used in messages.
pub fn parse_toml<T: for<'de> Deserialize<'de>>(file: &str, text: &str) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        ConfigError::File {
            file: file.to_string(),
            line,
            message: e.message().trim().to_string(),
        }
    })
}
