//! `[[instance]]` tables of a run file: the managed instances (emulated VMs) the run's targets
//! live on, with the CPU quota, memory limit and server settings `run` and `prepare` create and
//! start them with, as `tidebench instance start NAME --cpus .. --memory .. --set k=v` would.
//! Only validation happens here (no I/O); the runner starts them. The rules an instance's
//! values obey live here too, so a run file and the `instance` command refuse the same things.
//!
//! ```toml
//! [[instance]]
//! name = "vm-a"
//! cpus = 0.5                                  # optional: cgroup CPU quota in cores
//! memory = "1GiB"                             # optional: cgroup memory limit
//! settings = { shared_buffers = "256MB" }     # optional: server settings
//! vm = "host/vm1"                             # optional: a VM (cgroup) shared with others
//!
//! [[instance]]
//! name = "vm-b"
//! standby_of = "vm-a"                         # optional: a streaming standby (issue 54)...
//! sync = true                                 # ...the primary waits for it on commit
//! ```

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::groups::Source;
use super::plan::GroupPlan;
use super::size::{format_size, parse_size};
use super::target::check_name;
use super::ConfigError;

mod standby;

/// A VM smaller than this cannot hold a postmaster and a few backends.
pub const MIN_MEMORY: u64 = 64 << 20;
/// CPU quotas in cores: the kernel's smallest quota is 1 ms per 100 ms period.
pub const CPUS: RangeInclusive<f64> = 0.01..=4096.0;

/// Settings tidebench owns: changing them would make the instance unreachable by name.
const RESERVED_SETTINGS: [(&str, &str); 2] = [
    ("port", "it picks a free port when the instance is created"),
    ("unix_socket_directories", "sockets live in <home>/sockets"),
];

/// A server setting's name must look like one (`work_mem`, `auto_explain.log_min_duration`)
/// and not be one tidebench sets itself.
pub fn check_setting_key(key: &str) -> Result<(), String> {
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !ok {
        return Err(format!(
            "'{key}' is not a server setting name; use a name like shared_buffers or work_mem"
        ));
    }
    if let Some((_, why)) = RESERVED_SETTINGS
        .iter()
        .find(|(k, _)| key.eq_ignore_ascii_case(k))
    {
        return Err(format!(
            "{key} is not allowed: tidebench sets it itself ({why})"
        ));
    }
    Ok(())
}

/// A group path below `tidebench/`: one or more names (letters, digits, `-`, `_`) joined
/// by `/`, e.g. `host/vm1`.
pub fn check_vm(path: &str) -> Result<(), String> {
    let ok = !path.is_empty()
        && path.split('/').all(|seg| {
            !seg.is_empty()
                && seg.len() <= 63
                && seg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{path}' is not a VM name; give names of letters, digits, '-' and '_' joined by '/', \
             e.g. vm1 or host/vm1"
        ))
    }
}

/// An `[[instance]]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstance {
    pub name: Spanned<String>,
    pub cpus: Option<Spanned<Number>>,
    pub memory: Option<Spanned<Size>>,
    pub settings: Option<Spanned<toml::Table>>,
    pub vm: Option<Spanned<String>>,
    pub ssl: Option<bool>,
    pub hypervisor: Option<Spanned<String>>,
    pub accel: Option<Spanned<String>>,
    pub cgroup: Option<Spanned<String>>,
    pub mem_merge: Option<Spanned<bool>>,
    pub standby_of: Option<Spanned<String>>,
    pub sync: Option<Spanned<bool>>,
}

/// A number written as an integer (`cpus = 2`) or a float (`cpus = 0.5`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn value(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

/// A size written as text (`"1GiB"`) or as bytes (`1073741824`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Size {
    Bytes(u64),
    Text(String),
}

/// A declared managed instance, validated; recorded in `runtime.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstancePlan {
    pub name: String,
    /// CPU quota in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// Memory limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Server settings, the names as written (dotted names of nested tables joined).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// The emulated VM (control group below `tidebench/`) the server runs in when it shares
    /// one with other instances; `cpus` and `memory` are then the VM's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<String>,
    /// Serves TLS; its targets connect with verify-full against the instance's own CA.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ssl: bool,
    /// A real VM (issue 40): `qemu`; `cpus` are then whole vCPUs and `memory` its RAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
    /// With a hypervisor: `kvm` or `tcg` forced; absent: KVM when it boots, else TCG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<String>,
    /// With a hypervisor: the control group (below `tidebench/`) QEMU runs in, with no
    /// limits of its own (a consolidation experiment's host group holds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// With a hypervisor: QEMU's `mem-merge` (KSM may merge the guest's memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_merge: Option<bool>,
    /// A streaming standby of this instance (`instance start --standby-of`): declared before
    /// it in the file, or a managed instance of the home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standby_of: Option<String>,
    /// With `standby_of`: named in the primary's `synchronous_standby_names` (`--sync`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sync: bool,
}

impl InstancePlan {
    /// What it is, in a few words for a dry run: a real VM's vCPUs, RAM and accelerator, or
    /// a local server's limits.
    pub fn shape(&self) -> String {
        let memory = self.memory_bytes.map(crate::config::size::format_size);
        match &self.hypervisor {
            Some(h) => format!(
                "a {h} guest: {} vCPU, {} RAM, accelerator {}",
                self.cpus.unwrap_or(1.0),
                memory.unwrap_or_else(|| "1GiB".into()),
                self.accel
                    .as_deref()
                    .unwrap_or("kvm when it boots, else tcg")
            ),
            None if self.standby_of.is_some() => format!(
                "a local server, a {} standby of {}",
                if self.sync {
                    "synchronous"
                } else {
                    "asynchronous"
                },
                self.standby_of.as_deref().unwrap_or_default()
            ),
            None => match (self.cpus, memory) {
                (None, None) => "a local server".into(),
                (c, m) => format!(
                    "a local server in a control group: {} cores, {}",
                    c.map_or("any".into(), |c| c.to_string()),
                    m.unwrap_or_else(|| "no memory limit".into())
                ),
            },
        }
    }

    /// The settings as `--set` pairs.
    pub fn setting_pairs(&self) -> Vec<(String, String)> {
        self.settings
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// "cpus=0.5 memory=1GiB", or "no limits".
    pub fn describe_limits(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.cpus {
            parts.push(format!("cpus={c}"));
        }
        if let Some(m) = self.memory_bytes {
            parts.push(format!("memory={}", format_size(m)));
        }
        if parts.is_empty() {
            "no limits".into()
        } else {
            parts.join(" ")
        }
    }
}

/// Validates the `[[instance]]` tables: names, limits, settings; a name declared once.
pub fn instances(
    src: &Source,
    raw: &[Spanned<RawInstance>],
) -> Result<Vec<InstancePlan>, ConfigError> {
    let mut out: Vec<InstancePlan> = Vec::with_capacity(raw.len());
    for r in raw {
        let r = r.get_ref();
        let name = r.name.get_ref().clone();
        check_name("instance", &name).map_err(|m| src.error(r.name.span(), m))?;
        if out.iter().any(|o| o.name == name) {
            return Err(src.error(
                r.name.span(),
                format!("instance '{name}' is declared twice; declare each instance once"),
            ));
        }
        let fail = |span: std::ops::Range<usize>, m: String| {
            src.error(span, format!("instance '{name}': {m}"))
        };
        let cpus = match &r.cpus {
            Some(c) => {
                let cores = c.get_ref().value();
                if !CPUS.contains(&cores) {
                    return Err(fail(c.span(), format!(
                        "cpus = {cores} is out of range; give a number of cores between {} and {}, e.g. 0.5 or 2",
                        CPUS.start(), CPUS.end()
                    )));
                }
                Some(cores)
            }
            None => None,
        };
        let memory_bytes = match &r.memory {
            Some(m) => Some(memory(m.get_ref()).map_err(|e| fail(m.span(), e))?),
            None => None,
        };
        let settings = match &r.settings {
            Some(s) => settings(s.get_ref()).map_err(|e| fail(s.span(), e))?,
            None => BTreeMap::new(),
        };
        let vm = match &r.vm {
            Some(v) => {
                check_vm(v.get_ref()).map_err(|e| fail(v.span(), e))?;
                Some(v.get_ref().clone())
            }
            None => None,
        };
        let (hypervisor, accel) = guest(r, cpus).map_err(|(span, m)| fail(span, m))?;
        let (cgroup, mem_merge) = guest_host(r).map_err(|(span, m)| fail(span, m))?;
        let (standby_of, sync) =
            standby::standby(r, &out, raw).map_err(|(span, m)| fail(span, m))?;
        out.push(InstancePlan {
            name,
            cpus,
            memory_bytes,
            settings,
            vm,
            ssl: r.ssl.unwrap_or(false),
            hypervisor,
            accel,
            cgroup,
            mem_merge,
            standby_of,
            sync,
        });
    }
    Ok(out)
}

type Span = std::ops::Range<usize>;

/// `hypervisor` and `accel` of an `[[instance]]`: a real VM's, checked against the rest.
fn guest(
    r: &RawInstance,
    cpus: Option<f64>,
) -> Result<(Option<String>, Option<String>), (Span, String)> {
    let Some(h) = &r.hypervisor else {
        return match &r.accel {
            Some(a) => Err((a.span(), "accel needs hypervisor = \"qemu\"".into())),
            None => Ok((None, None)),
        };
    };
    if h.get_ref() != "qemu" {
        return Err((
            h.span(),
            format!(
            "hypervisor = \"{}\" is not known; give \"qemu\" (or leave it out for a local server)",
            h.get_ref()
        ),
        ));
    }
    if let (Some(c), Some(raw)) = (cpus, &r.cpus) {
        if c < 1.0 || c.fract() != 0.0 {
            return Err((
                raw.span(),
                format!("cpus = {c} is not a number of vCPUs; give a whole number with hypervisor"),
            ));
        }
    }
    let accel = match &r.accel {
        Some(a) if ["kvm", "tcg"].contains(&a.get_ref().as_str()) => Some(a.get_ref().clone()),
        Some(a) => {
            return Err((
                a.span(),
                format!(
                    "accel = \"{}\" is not known; give \"kvm\" or \"tcg\"",
                    a.get_ref()
                ),
            ))
        }
        None => None,
    };
    Ok((Some(h.get_ref().clone()), accel))
}

/// `cgroup` and `mem_merge` of an `[[instance]]`: where a real VM's QEMU runs on the host.
fn guest_host(r: &RawInstance) -> Result<(Option<String>, Option<bool>), (Span, String)> {
    if r.hypervisor.is_none() {
        if let Some(c) = &r.cgroup {
            return Err((
                c.span(),
                "cgroup places a VM's QEMU and needs hypervisor = \"qemu\"; for an emulated VM give vm".into(),
            ));
        }
        if let Some(m) = &r.mem_merge {
            return Err((m.span(), "mem_merge needs hypervisor = \"qemu\"".into()));
        }
        return Ok((None, None));
    }
    let cgroup = match &r.cgroup {
        Some(c) => {
            check_vm(c.get_ref()).map_err(|e| (c.span(), e))?;
            Some(c.get_ref().clone())
        }
        None => None,
    };
    Ok((cgroup, r.mem_merge.as_ref().map(|m| *m.get_ref())))
}

/// A declared instance that no target uses is most likely a typo in a target or a name.
pub fn check_used(
    src: &Source,
    raw: &[Spanned<RawInstance>],
    groups: &[GroupPlan],
) -> Result<(), ConfigError> {
    let used = |name: &str| {
        groups
            .iter()
            .flat_map(|g| &g.sets)
            .any(|s| s.targets.values().any(|t| t.instances().contains(&name)))
    };
    for r in raw {
        let name = r.get_ref().name.get_ref();
        if !used(name) {
            return Err(src.error(
                r.get_ref().name.span(),
                format!(
                    "instance '{name}' is declared but no target uses it; name it in a target (e.g. oltp = \"instance:{name}/DB\" or instance = \"{name}\") or remove the [[instance]] table"
                ),
            ));
        }
    }
    Ok(())
}

fn memory(size: &Size) -> Result<u64, String> {
    let bytes = match size {
        Size::Bytes(b) => *b,
        Size::Text(t) => parse_size(t)?,
    };
    if bytes < MIN_MEMORY {
        return Err(format!(
            "memory = {} is too small for PostgreSQL; give at least {}",
            format_size(bytes),
            format_size(MIN_MEMORY)
        ));
    }
    Ok(bytes)
}

/// Server settings as text, as postgresql.conf reads them: booleans as on/off, numbers as
/// written; a nested table (`auto_explain.log_min_duration = "1s"` written unquoted) gives
/// dotted names.
fn settings(table: &toml::Table) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    flatten(table, "", &mut out)?;
    Ok(out)
}

fn flatten(
    table: &toml::Table,
    prefix: &str,
    out: &mut BTreeMap<String, String>,
) -> Result<(), String> {
    for (key, value) in table {
        let key = format!("{prefix}{key}");
        let text = match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
            toml::Value::Table(t) => {
                flatten(t, &format!("{key}."), out)?;
                continue;
            }
            other => {
                return Err(format!(
                    "setting {key} = {other} is not a single value; write e.g. {key} = \"...\""
                ))
            }
        };
        check_setting_key(&key)?;
        out.insert(key, text);
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct File {
        #[serde(default)]
        instance: Vec<Spanned<RawInstance>>,
    }

    fn parse(text: &str) -> Result<Vec<InstancePlan>, ConfigError> {
        let src = Source {
            file: "run.toml",
            text,
        };
        let file: File = super::super::parse_toml(src.file, text)?;
        instances(&src, &file.instance)
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    /// For the child modules' tests: the plans of `text`, which must be valid.
    pub(super) fn parse_ok(text: &str) -> Vec<InstancePlan> {
        parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// For the child modules' tests: why `text` is refused.
    pub(super) fn parse_err(text: &str) -> String {
        err(text)
    }

    #[test]
    fn limits_and_settings_are_read() {
        let text = "[[instance]]\nname = \"a\"\ncpus = 0.5\nmemory = \"1GiB\"\nsettings = { shared_buffers = \"256MB\", fsync = false, max_connections = 50, \"auto_explain.log_min_duration\" = \"1s\" }\n[[instance]]\nname = \"b\"\ncpus = 2\nmemory = 134217728\n[[instance]]\nname = \"c\"\n";
        let got = parse(text).unwrap();
        assert_eq!(got[0].cpus, Some(0.5));
        assert_eq!(got[0].memory_bytes, Some(1 << 30));
        assert_eq!(got[0].settings["fsync"], "off");
        assert_eq!(got[0].settings["max_connections"], "50");
        assert_eq!(got[0].settings["auto_explain.log_min_duration"], "1s");
        assert_eq!(got[1].cpus, Some(2.0));
        assert_eq!(got[1].memory_bytes, Some(128 << 20));
        assert_eq!(got[2].describe_limits(), "no limits");
        assert_eq!(got[0].describe_limits(), "cpus=0.5 memory=1GiB");
    }

    #[test]
    fn an_unquoted_dotted_setting_is_one_name() {
        let text =
            "[[instance]]\nname = \"a\"\nsettings = { auto_explain.log_min_duration = \"1s\" }\n";
        assert_eq!(
            parse(text).unwrap()[0].settings["auto_explain.log_min_duration"],
            "1s"
        );
    }

    #[test]
    fn errors_name_the_line_and_the_fix() {
        let e = err("[[instance]]\nname = \"a\"\n\nmemroy = \"1GiB\"\n");
        assert!(e.starts_with("run.toml:4:") && e.contains("memroy"), "{e}");
        let e = err("[[instance]]\nname = \"a\"\nmemory = \"lots\"\n");
        assert!(
            e.starts_with("run.toml:3:") && e.contains("not a size") && e.contains("2GiB"),
            "{e}"
        );
        let e = err("[[instance]]\nname = \"a\"\nmemory = \"1MB\"\n");
        assert!(e.contains("at least 64MiB"), "{e}");
        let e = err("[[instance]]\nname = \"a\"\n\ncpus = 0\n");
        assert!(e.starts_with("run.toml:4:") && e.contains("0.01"), "{e}");
        let e = err("[[instance]]\nname = \"a\"\nsettings = { port = 5 }\n");
        assert!(
            e.starts_with("run.toml:3:") && e.contains("port is not allowed"),
            "{e}"
        );
        let e = err("[[instance]]\nname = \"a\"\nsettings = { x = [1] }\n");
        assert!(e.contains("not a single value"), "{e}");
        let e = err("[[instance]]\nname = \"a/b\"\n");
        assert!(
            e.starts_with("run.toml:2:") && e.contains("not a valid instance name"),
            "{e}"
        );
        let e = err("[[instance]]\nname = \"a\"\n[[instance]]\nname = \"a\"\n");
        assert!(
            e.starts_with("run.toml:4:") && e.contains("declared twice"),
            "{e}"
        );
        let e = err("[[instance]]\ncpus = 1\n");
        assert!(e.starts_with("run.toml:1:") && e.contains("name"), "{e}");
    }

    #[test]
    fn a_declared_vms_qemu_takes_a_group_and_memory_merging() {
        let text = "[[instance]]\nname = \"g\"\nhypervisor = \"qemu\"\ncgroup = \"host/vm1\"\nmem_merge = false\n";
        let got = parse(text).unwrap();
        assert_eq!(got[0].cgroup.as_deref(), Some("host/vm1"));
        assert_eq!(got[0].mem_merge, Some(false));
        let e = err("[[instance]]\nname = \"g\"\ncgroup = \"host/vm1\"\n");
        assert!(e.starts_with("run.toml:3:") && e.contains("give vm"), "{e}");
        let e = err("[[instance]]\nname = \"g\"\nmem_merge = true\n");
        assert!(e.contains("hypervisor"), "{e}");
    }

    #[test]
    fn a_declared_vm_names_its_hypervisor_and_whole_vcpus() {
        let text = "[[instance]]\nname = \"g\"\nhypervisor = \"qemu\"\naccel = \"tcg\"\ncpus = 2\nmemory = \"512MiB\"\n";
        let got = parse(text).unwrap();
        assert_eq!(got[0].hypervisor.as_deref(), Some("qemu"));
        assert_eq!(got[0].accel.as_deref(), Some("tcg"));
        let e = err("[[instance]]\nname = \"g\"\nhypervisor = \"xen\"\n");
        assert!(
            e.starts_with("run.toml:3:") && e.contains("\"qemu\""),
            "{e}"
        );
        let e = err("[[instance]]\nname = \"g\"\nhypervisor = \"qemu\"\ncpus = 1.5\n");
        assert!(
            e.starts_with("run.toml:4:") && e.contains("whole number"),
            "{e}"
        );
        let e = err("[[instance]]\nname = \"g\"\naccel = \"kvm\"\n");
        assert!(
            e.starts_with("run.toml:3:") && e.contains("hypervisor"),
            "{e}"
        );
        // With a hypervisor, vm names a real VM that several instances share.
        let shared = "[[instance]]\nname = \"g\"\nhypervisor = \"qemu\"\nvm = \"h/v\"\n";
        assert_eq!(parse(shared).unwrap()[0].vm.as_deref(), Some("h/v"));
    }

    #[test]
    fn setting_keys_follow_the_instance_rules() {
        assert!(check_setting_key("work_mem").is_ok());
        assert!(check_setting_key("auto_explain.log_min_duration").is_ok());
        assert!(check_setting_key("bad key").is_err());
        assert!(check_setting_key("Unix_Socket_Directories").is_err());
    }
}
