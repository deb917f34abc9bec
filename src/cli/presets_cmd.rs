//! `tidebench presets`: the list of presets, or one preset's TOML sized for this host.

use super::common::{cores, host_memory};
use super::{args, console, CliError};
use crate::config;

/// `tidebench presets`: the list, or one preset's TOML (`--show`).
pub fn presets(args: args::PresetsArgs) -> Result<u8, CliError> {
    let knobs = config::PresetKnobs {
        warehouses: args.warehouses,
        ..args.knobs.to_knobs()
    };
    let Some(name) = args.show else {
        if let Some(flag) = knobs.given().first() {
            return Err(CliError::usage(format!(
                "{flag} shapes a preset's TOML; add --show NAME to print it"
            )));
        }
        print!("{}", console::presets());
        return Ok(0);
    };
    if let Some(exp) = crate::experiment::presets::find(&name) {
        print!("{}", exp.run);
        print!("{}", exp.shape.describe());
        return Ok(0);
    }
    let preset = config::presets::find(&name).ok_or_else(|| {
        CliError::usage(format!(
            "no preset named '{name}'; `tidebench presets` lists them ({})",
            config::presets::names().join(", ")
        ))
    })?;
    let input = config::presets::PresetInput {
        knobs: &knobs,
        cores: cores(),
        memory: host_memory(),
        phase_duration: None,
    };
    print!("{}", preset.toml(&input).map_err(CliError::usage)?);
    Ok(0)
}
