//! `--vary KEY=V1,V2,...`: which setting a sweep varies and its values. A value list may mix
//! plain values and ranges: `1..64x2` doubles from 1 while ≤ 64 (1, 2, 4, ... 64), `1..16+4`
//! steps by 4 while ≤ 16 (1, 5, 9, 13), `a..b` steps by 1.
//!
//! Keys:
//! - a run key, as in a run file: `clients`, `scale`, `protocol`, `rate`, `duration`, or a
//!   workload option (`think`, `procedures`);
//! - `group.NAME.KEY`: one group's key (`scale`, `workload`, `isolation`, a workload option);
//!   `group.NAME.clients` sets that group's clients in every phase (independent mode);
//! - `instance.cpus`, `instance.memory`, `instance.set.SETTING` (every managed instance the
//!   run uses), or `instance.NAME.cpus` ... (one of them): the instance is restarted with the
//!   new value before the point runs.

/// Values per key beyond which a list is refused (a typo like `1..100000` would plan a
/// series that never ends).
pub const MAX_VALUES: usize = 1000;

/// Run-file keys a sweep cannot vary, with the reason.
const FIXED_KEYS: [(&str, &str); 7] = [
    (
        "out",
        "the experiment chooses each run's dir (use --out for the experiment dir)",
    ),
    ("group", "vary one group's key with group.NAME.KEY"),
    (
        "phase",
        "phases are part of the run file; vary a run key instead",
    ),
    (
        "instance",
        "vary instance.cpus, instance.memory or instance.set.SETTING",
    ),
    (
        "mode",
        "shared and independent runs are different experiments",
    ),
    (
        "prometheus",
        "one endpoint serves one run at a time; set it once",
    ),
    ("phase_duration", "use --point-duration"),
];

/// A key a sweep varies.
#[derive(Debug, Clone, PartialEq)]
pub enum VaryKey {
    /// A top-level run key (or workload option).
    Run(String),
    /// A key of the group named `group`.
    Group { group: String, key: String },
    /// A managed instance's value: `instance` `None` means every managed instance of the run.
    Instance {
        instance: Option<String>,
        what: InstanceValue,
    },
}

/// What of an instance a sweep varies.
#[derive(Debug, Clone, PartialEq)]
pub enum InstanceValue {
    Cpus,
    Memory,
    Setting(String),
}

impl VaryKey {
    /// Parses a key as written after `--vary`.
    pub fn parse(key: &str) -> Result<VaryKey, String> {
        let parts: Vec<&str> = key.split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(format!(
                "--vary {key}=...: '{key}' is not a key; use e.g. clients, group.A.scale or instance.set.shared_buffers"
            ));
        }
        let key_of = |k: &str| k.replace('-', "_");
        match parts.as_slice() {
            [k] => {
                let k = key_of(k);
                if let Some((_, why)) = FIXED_KEYS.iter().find(|(f, _)| *f == k) {
                    return Err(format!("--vary {key}: {key} cannot be varied ({why})"));
                }
                Ok(VaryKey::Run(k))
            }
            ["group", name, k] => Ok(VaryKey::Group {
                group: name.to_string(),
                key: key_of(k),
            }),
            ["instance", rest @ ..] => instance_key(key, rest),
            _ => Err(format!(
                "--vary {key}=...: unknown key; use a run key (clients, scale, protocol, rate...), group.NAME.KEY or instance.cpus / instance.memory / instance.set.SETTING"
            )),
        }
    }
}

fn instance_key(key: &str, rest: &[&str]) -> Result<VaryKey, String> {
    let what = |parts: &[&str]| -> Option<InstanceValue> {
        match parts {
            ["cpus"] => Some(InstanceValue::Cpus),
            ["memory"] => Some(InstanceValue::Memory),
            ["set", setting] => Some(InstanceValue::Setting(setting.to_string())),
            _ => None,
        }
    };
    if let Some(w) = what(rest) {
        return Ok(VaryKey::Instance {
            instance: None,
            what: w,
        });
    }
    if let [name, tail @ ..] = rest {
        if let Some(w) = what(tail) {
            return Ok(VaryKey::Instance {
                instance: Some(name.to_string()),
                what: w,
            });
        }
    }
    Err(format!(
        "--vary {key}=...: an instance key is instance[.NAME].cpus, instance[.NAME].memory or instance[.NAME].set.SETTING"
    ))
}

/// One `--vary` as given: the key as written, its parsed form and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Vary {
    pub name: String,
    pub key: VaryKey,
    pub values: Vec<String>,
}

impl Vary {
    /// Parses `KEY=V1,V2,...`.
    pub fn parse(spec: &str) -> Result<Vary, String> {
        let Some((name, list)) = spec.split_once('=') else {
            return Err(format!(
                "--vary {spec}: give KEY=V1,V2,... (e.g. --vary clients=1,2,4 or --vary clients=1..64x2)"
            ));
        };
        let name = name.trim();
        let key = VaryKey::parse(name)?;
        let mut values = Vec::new();
        for item in list.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(format!(
                    "--vary {spec}: an empty value; separate values with single commas"
                ));
            }
            match item.split_once("..") {
                Some((from, to)) => values.extend(range(name, from, to)?),
                None => values.push(item.to_string()),
            }
            if values.len() > MAX_VALUES {
                return Err(format!(
                    "--vary {name}: more than {MAX_VALUES} values; use a larger step"
                ));
            }
        }
        if let Some(dup) = values
            .iter()
            .enumerate()
            .find(|(i, v)| values[..*i].contains(v))
        {
            return Err(format!("--vary {name}: value {} is given twice", dup.1));
        }
        Ok(Vary {
            name: name.to_string(),
            key,
            values,
        })
    }
}

/// `from..to`, `from..toxF` (multiply by F) or `from..to+S` (add S), integers or decimals.
fn range(name: &str, from: &str, to: &str) -> Result<Vec<String>, String> {
    let bad = |why: &str| {
        format!(
            "--vary {name}: '{from}..{to}' {why}; write A..B (step 1), A..BxF (times F) or A..B+S (plus S), e.g. 1..64x2"
        )
    };
    let (end, step) = match to.rfind(['x', '+']) {
        Some(i) => (&to[..i], Some((&to[i..i + 1], &to[i + 1..]))),
        None => (to, None),
    };
    let num = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    let (Some(a), Some(b)) = (num(from), num(end)) else {
        return Err(bad("is not a range of numbers"));
    };
    if b < a {
        return Err(bad("ends below its start"));
    }
    let integral = [from, end].iter().all(|s| s.trim().parse::<i64>().is_ok());
    let (op, by) = match step {
        None => ("+", 1.0),
        Some((op, s)) => (
            op,
            num(s).ok_or_else(|| bad("has a step that is not a number"))?,
        ),
    };
    let grows = match op {
        "x" => by > 1.0 && a > 0.0,
        _ => by > 0.0,
    };
    if !grows {
        return Err(bad(
            "never grows (a factor must be > 1 from a start > 0, a step > 0)",
        ));
    }
    let integral = integral && by.fract() == 0.0;
    let mut out = Vec::new();
    let mut v = a;
    // A little slack so decimal steps (0.1 + 0.2) still reach their end.
    while v <= b * (1.0 + 1e-9) {
        out.push(if integral {
            format!("{}", v.round() as i64)
        } else {
            format!("{}", (v * 1e6).round() / 1e6)
        });
        if out.len() > MAX_VALUES {
            return Err(format!(
                "--vary {name}: more than {MAX_VALUES} values; use a larger step"
            ));
        }
        v = if op == "x" { v * by } else { v + by };
    }
    Ok(out)
}

/// A value as TOML: an integer, a decimal, true/false, or else a string.
pub fn toml_value(text: &str) -> toml::Value {
    if let Ok(i) = text.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = text.parse::<f64>() {
        if f.is_finite() {
            return toml::Value::Float(f);
        }
    }
    match text {
        "true" => toml::Value::Boolean(true),
        "false" => toml::Value::Boolean(false),
        _ => toml::Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests;
