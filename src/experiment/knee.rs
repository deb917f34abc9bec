//! A working-set knee ("Memory Working Set Sizes", Figures 7-10): the same load at
//! a series of VM memory sizes — a managed instance's control-group memory limit — keeping
//! shared_buffers constant (x = VM memory: the VM memory working set) or keeping memory −
//! shared_buffers constant (x = shared_buffers: the shared-buffers working set). Each point is
//! an ordinary sweep point varying `instance.memory` and `instance.set.shared_buffers` together;
//! `analysis::knee` reads the curve.
//!
//! `--hypervisor qemu` ([`on_vms`]) makes the base run's instances QEMU guests: the memory
//! that steps is then the guest's RAM (each point reboots it), shared_buffers its server's.

use toml::{Table, Value};

use crate::config::instances::MIN_MEMORY;
use crate::config::size::{format_size, parse_size};
use crate::instance::vm::Accel;
use crate::results::experiment::{KneeMode, KneeRequest};

/// Points of `--memory LO..HI` without `--steps`.
pub const DEFAULT_STEPS: u32 = 6;
/// A knee needs a bend, and a bend needs three points.
pub const MIN_STEPS: u32 = 3;
/// More points than this is a typo, not a study.
pub const MAX_STEPS: u32 = 100;

const MIB: u64 = 1 << 20;

/// What stays constant while the memory steps, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// `--keep shared_buffers=SIZE` (Figures 7 and 9).
    SharedBuffers(u64),
    /// `--keep-difference SIZE`: memory − shared_buffers (Figures 8 and 10).
    Difference(u64),
}

impl Keep {
    /// Exactly one of `--keep shared_buffers=SIZE` and `--keep-difference SIZE`.
    pub fn parse(keep: Option<&str>, difference: Option<&str>) -> Result<Keep, String> {
        match (keep, difference) {
            (Some(_), Some(_)) => Err(
                "give --keep shared_buffers=SIZE (x = VM memory, Figures 7/9) or --keep-difference SIZE (x = shared_buffers, Figures 8/10), not both".into(),
            ),
            (None, None) => Err(
                "knee needs what to keep constant: --keep shared_buffers=1GB (x = VM memory, Figures 7/9) or --keep-difference 352MB (memory − shared_buffers; x = shared_buffers, Figures 8/10)".into(),
            ),
            (Some(k), None) => {
                let Some(("shared_buffers", size)) =
                    k.split_once('=').map(|(a, b)| (a.trim(), b.trim()))
                else {
                    return Err(format!(
                        "--keep {k}: write --keep shared_buffers=SIZE, e.g. --keep shared_buffers=1GB"
                    ));
                };
                let bytes = parse_size(size).map_err(|e| format!("--keep {k}: {e}"))?;
                Ok(Keep::SharedBuffers(whole_mib(bytes)))
            }
            (None, Some(d)) => {
                if d.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<f64>() == Ok(0.0) {
                    return Err(format!(
                        "--keep-difference {d}: shared_buffers would be the VM's whole memory; the control group charges shared buffers, backends and page cache alike, so the server would be OOM-killed. Leave the backends room, e.g. --keep-difference 64MB"
                    ));
                }
                let bytes = parse_size(d).map_err(|e| format!("--keep-difference {d}: {e}"))?;
                Ok(Keep::Difference(whole_mib(bytes)))
            }
        }
    }

    /// The request's form of it.
    pub fn request(self) -> KneeRequest {
        match self {
            Keep::SharedBuffers(b) => KneeRequest {
                mode: KneeMode::KeepSharedBuffers,
                kept: pg_size(b),
            },
            Keep::Difference(b) => KneeRequest {
                mode: KneeMode::KeepDifference,
                kept: pg_size(b),
            },
        }
    }
}

/// `LO..HI` (`steps` points evenly spaced, both ends included, whole MiB) or a list
/// `512MB,1GB,2GB`; in increasing order.
pub fn memory_sizes(text: &str, steps: Option<u32>) -> Result<Vec<u64>, String> {
    let size = |s: &str| {
        parse_size(s)
            .map(whole_mib)
            .map_err(|e| format!("--memory {text}: {e}"))
    };
    let mut sizes = match text.split_once("..") {
        Some((lo, hi)) => {
            let (lo, hi) = (size(lo)?, size(hi)?);
            if hi <= lo {
                return Err(format!(
                    "--memory {text}: the range must grow (LO..HI with HI > LO), e.g. 512MB..8GB"
                ));
            }
            let k = steps.unwrap_or(DEFAULT_STEPS);
            if !(MIN_STEPS..=MAX_STEPS).contains(&k) {
                return Err(format!(
                    "--steps {k}: give {MIN_STEPS} to {MAX_STEPS} points (a knee needs a bend, and a bend needs {MIN_STEPS})"
                ));
            }
            let span = (hi - lo) as f64;
            (0..k)
                .map(|i| whole_mib(lo + (span * f64::from(i) / f64::from(k - 1)).round() as u64))
                .collect::<Vec<u64>>()
        }
        None => {
            if steps.is_some() {
                return Err(format!(
                    "--steps applies to a range (--memory LO..HI); the list {text} gives its own points"
                ));
            }
            text.split(',')
                .map(|s| size(s.trim()))
                .collect::<Result<Vec<u64>, String>>()?
        }
    };
    sizes.sort_unstable();
    if let Some(w) = sizes.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "--memory {text}: {} comes twice (sizes are taken in whole MiB); use fewer --steps or distinct sizes",
            pg_size(w[0])
        ));
    }
    if sizes.len() < MIN_STEPS as usize {
        return Err(format!(
            "--memory {text}: {} size(s); a knee needs at least {MIN_STEPS} (e.g. --memory 512MB..2GB --steps 4)",
            sizes.len()
        ));
    }
    Ok(sizes)
}

/// Each memory size with its shared_buffers; refuses a point where the VM is below the
/// smallest tidebench runs or shared_buffers does not fit in it.
pub fn points(memory: &[u64], keep: Keep) -> Result<Vec<(u64, u64)>, String> {
    memory
        .iter()
        .map(|&m| {
            if m < MIN_MEMORY {
                return Err(format!(
                    "--memory: {} is below the smallest VM tidebench runs PostgreSQL in ({})",
                    pg_size(m),
                    format_size(MIN_MEMORY)
                ));
            }
            let sb = match keep {
                Keep::SharedBuffers(sb) if sb >= m => {
                    return Err(format!(
                        "--keep shared_buffers={}: at --memory {} shared_buffers would not fit in the VM (the control group charges shared buffers, backends and page cache alike); start --memory above {0}",
                        pg_size(sb),
                        pg_size(m)
                    ))
                }
                Keep::SharedBuffers(sb) => sb,
                Keep::Difference(d) if d >= m => {
                    return Err(format!(
                        "--keep-difference {}: at --memory {} nothing is left for shared_buffers; start --memory above {0}",
                        pg_size(d),
                        pg_size(m)
                    ))
                }
                Keep::Difference(d) => m - d,
            };
            Ok((m, sb))
        })
        .collect()
}

/// `knee --hypervisor qemu`: every managed instance of the base run `text` (its
/// `[[instance]]` tables, and those only its targets name) made a QEMU guest; returns the
/// new text. An instance in an emulated VM (`vm = ...`) is refused: it cannot be both.
pub fn on_vms(text: &str, instances: &[String], accel: Option<Accel>) -> Result<String, String> {
    let mut doc: Table = toml::from_str(text).map_err(|e| e.message().to_string())?;
    let list = doc
        .entry("instance")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or("the run's `instance` is not a list of [[instance]] tables")?;
    for name in instances {
        let at = match list
            .iter()
            .position(|t| t.get("name").and_then(Value::as_str) == Some(name.as_str()))
        {
            Some(i) => i,
            None => {
                let mut t = Table::new();
                t.insert("name".into(), Value::String(name.clone()));
                list.push(Value::Table(t));
                list.len() - 1
            }
        };
        let table = list[at]
            .as_table_mut()
            .ok_or("an [[instance]] entry is not a table")?;
        if table.contains_key("vm") {
            return Err(format!(
                "instance '{name}' is declared in an emulated VM (vm = ...); leave out vm to run \
                 the knee on real VMs, or leave out --hypervisor"
            ));
        }
        table.insert("hypervisor".into(), Value::String("qemu".into()));
        if let Some(a) = accel {
            table.insert("accel".into(), Value::String(a.name().into()));
        }
    }
    toml::to_string(&doc).map_err(|e| e.to_string())
}

/// A size as PostgreSQL and tidebench both read it: `2GB` when whole GiB, else `1536MB`.
pub fn pg_size(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{}GB", bytes >> 30)
    } else {
        format!("{}MB", bytes / MIB)
    }
}

/// Rounded to whole MiB (at least 1): PostgreSQL takes MB, and points stay readable.
fn whole_mib(bytes: u64) -> u64 {
    ((bytes + MIB / 2) / MIB).max(1) * MIB
}

#[cfg(test)]
mod tests;
