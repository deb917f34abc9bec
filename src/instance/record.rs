//! `instance.toml`: what an instance was created with, so later commands find it by name and
//! refuse to silently start it differently. Also the instance's on-disk layout.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::InstanceError;
use super::types::InstanceOptions;

pub(crate) const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Setting {
    pub key: String,
    pub value: String,
}

impl Setting {
    /// The records of `--set KEY=VALUE` pairs, in their order.
    pub fn all_of(pairs: &[(String, String)]) -> Vec<Setting> {
        pairs
            .iter()
            .map(|(key, value)| Setting {
                key: key.clone(),
                value: value.clone(),
            })
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    pub schema_version: u32,
    pub name: String,
    pub port: u16,
    /// The PostgreSQL superuser role, named after `os_user`.
    pub superuser: String,
    /// The OS user initdb, pg_ctl and postgres run as.
    pub os_user: String,
    pub pg_bin_dir: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    #[serde(default)]
    pub settings: Vec<Setting>,
    /// The emulated VM (control group, a path below `tidebench/`) the server runs in, when
    /// it is not the instance's own: instances naming the same VM share its limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<String>,
    /// Serves TLS with the certificate in `tls/` (`--ssl`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ssl: bool,
    /// A real VM (issue 40): the server runs in a QEMU guest (see `vm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<super::vm::GuestRecord>,
    /// A streaming standby made from another instance's base backup (issue 54).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standby: Option<StandbyRecord>,
}

/// What a standby was made from: its primary, and whether the primary waits for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StandbyRecord {
    /// The instance it was copied from and streams from.
    pub primary: String,
    /// Named in the primary's `synchronous_standby_names`: a commit there waits for it.
    #[serde(default)]
    pub synchronous: bool,
}

/// Where an instance's files are: `<home>/instances/<name>/{instance.toml,data/,server.log}`
/// and the shared `<home>/sockets/`.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub home: PathBuf,
    pub dir: PathBuf,
    pub sockets: PathBuf,
}

impl Layout {
    pub fn new(home: &Path, name: &str) -> Layout {
        Layout {
            home: home.to_path_buf(),
            dir: instances_dir(home).join(name),
            sockets: home.join("sockets"),
        }
    }
    pub fn record(&self) -> PathBuf {
        self.dir.join("instance.toml")
    }
    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }
    pub fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }
}

pub(crate) fn instances_dir(home: &Path) -> PathBuf {
    home.join("instances")
}

impl Record {
    pub fn load(path: &Path) -> Result<Record, InstanceError> {
        let text = std::fs::read_to_string(path).map_err(InstanceError::io("read", path))?;
        let record: Record = toml::from_str(&text).map_err(|e| InstanceError::RecordDamaged {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if record.schema_version != SCHEMA_VERSION {
            return Err(InstanceError::RecordVersion {
                path: path.to_path_buf(),
                found: record.schema_version,
                reads: SCHEMA_VERSION,
            });
        }
        Ok(record)
    }

    pub fn save(&self, path: &Path) -> Result<(), InstanceError> {
        let text = toml::to_string(self).map_err(|e| InstanceError::RecordEncode {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        std::fs::write(path, text).map_err(InstanceError::io("write", path))
    }

    /// The control group the server runs in, below `tidebench/`: its VM, or its own name.
    pub fn cgroup_name(&self) -> &str {
        self.vm.as_deref().unwrap_or(&self.name)
    }

    /// Whether the server runs in a control group (limits given, or a VM named).
    pub fn has_cgroup(&self) -> bool {
        self.guest.is_none() && (self.cpus.is_some() || self.memory.is_some() || self.vm.is_some())
    }

    /// The conf file for this record: defaults, TLS when on, then the user's settings.
    pub fn server_conf(&self, layout: &Layout) -> String {
        let mut settings = match self.ssl {
            true => super::tls::conf_lines(&layout.dir),
            false => Vec::new(),
        };
        // pg_stat_statements for the wait sampler's statement deltas (issue 41), where the
        // binaries have it; a `--set shared_preload_libraries` comes later and wins. Debian's
        // packages keep contrib in lib/, a build from source (and the server packages
        // `make test-versions` uses) in lib/postgresql/.
        let has_module = ["../lib", "../lib/postgresql"].iter().any(|d| {
            self.pg_bin_dir
                .join(d)
                .join("pg_stat_statements.so")
                .exists()
        });
        if has_module {
            settings.push((
                "shared_preload_libraries".into(),
                "pg_stat_statements".into(),
            ));
        }
        settings.extend(self.settings());
        super::settings::server_conf(self.port, &layout.sockets, self.memory, &settings)
    }

    /// Whether the settings turn `fsync` off (the last value of the key wins). Such a server
    /// never syncs its data, so its initdb need not either (`--no-sync`, as PostgreSQL makes
    /// its own test clusters): a second or more per instance on a busy disk (issue 49).
    pub fn fsync_off(&self) -> bool {
        effective(&self.settings()).get("fsync").is_some_and(|v| {
            let v = v.trim().trim_matches('\'').to_ascii_lowercase();
            matches!(v.as_str(), "off" | "false" | "no" | "0")
        })
    }

    pub fn settings(&self) -> Vec<(String, String)> {
        self.settings
            .iter()
            .map(|s| (s.key.clone(), s.value.clone()))
            .collect()
    }

    /// Options given (not `None`/empty) must match what the instance was created with.
    pub fn check_matches(&self, opts: &InstanceOptions) -> Result<(), InstanceError> {
        let conflict = |recorded: String, requested: String| InstanceError::Conflict {
            name: self.name.clone(),
            recorded,
            requested,
        };
        if let Some(port) = opts.port.filter(|p| *p != self.port) {
            return Err(conflict(
                format!("--port {}", self.port),
                format!("--port {port}"),
            ));
        }
        // A guest's --cpus and --memory are its vCPUs and RAM.
        let (cpus, memory) = match &self.guest {
            Some(g) => (Some(f64::from(g.vcpus)), Some(g.memory)),
            None => (self.cpus, self.memory),
        };
        if opts.cpus.is_some() && opts.cpus != cpus {
            return Err(conflict(show_cpus(cpus), show_cpus(opts.cpus)));
        }
        if opts.memory.is_some() && opts.memory != memory {
            return Err(conflict(show_memory(memory), show_memory(opts.memory)));
        }
        if opts.guest.is_some() && self.guest.is_none() {
            return Err(conflict(
                "no --hypervisor".into(),
                "--hypervisor qemu".into(),
            ));
        }
        if opts.vm.is_some() && opts.vm != self.vm {
            return Err(conflict(
                show_vm(self.vm.as_deref()),
                show_vm(opts.vm.as_deref()),
            ));
        }
        if let Some(dir) = &opts.pg_bin {
            let same = |a: &std::path::Path, b: &std::path::Path| {
                a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
            };
            if !same(dir, &self.pg_bin_dir) {
                return Err(conflict(
                    format!("--pg-bin {}", self.pg_bin_dir.display()),
                    format!("--pg-bin {}", dir.display()),
                ));
            }
        }
        let primary = self.standby.as_ref().map(|s| s.primary.as_str());
        if opts.standby_of.is_some() && opts.standby_of.as_deref() != primary {
            let show = |p: Option<&str>| {
                p.map_or("no --standby-of".into(), |p| format!("--standby-of {p}"))
            };
            return Err(conflict(show(primary), show(opts.standby_of.as_deref())));
        }
        if opts.ssl && !self.ssl {
            return Err(conflict("no --ssl".into(), "--ssl".into()));
        }
        if !opts.settings.is_empty() && effective(&opts.settings) != effective(&self.settings()) {
            return Err(conflict(
                show_settings(&self.settings()),
                show_settings(&opts.settings),
            ));
        }
        Ok(())
    }
}

/// Settings as the server sees them: the last value of each key wins, order does not matter.
fn effective(settings: &[(String, String)]) -> std::collections::BTreeMap<String, String> {
    settings
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect()
}

fn show_cpus(cpus: Option<f64>) -> String {
    cpus.map_or("no --cpus".into(), |c| format!("--cpus {c}"))
}

fn show_memory(memory: Option<u64>) -> String {
    memory.map_or("no --memory".into(), |m| {
        format!("--memory {}", super::settings::format_size(m))
    })
}

fn show_vm(vm: Option<&str>) -> String {
    vm.map_or("no --vm".into(), |v| format!("--vm {v}"))
}

fn show_settings(settings: &[(String, String)]) -> String {
    if settings.is_empty() {
        return "no --set".into();
    }
    settings
        .iter()
        .map(|(k, v)| format!("--set {k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            schema_version: SCHEMA_VERSION,
            name: "a".into(),
            port: 5433,
            superuser: "postgres".into(),
            os_user: "postgres".into(),
            pg_bin_dir: "/usr/lib/postgresql/15/bin".into(),
            cpus: Some(0.5),
            memory: None,
            settings: vec![Setting {
                key: "fsync".into(),
                value: "off".into(),
            }],
            vm: None,
            ssl: false,
            guest: None,
            standby: None,
        }
    }

    #[test]
    fn fsync_off_reads_the_last_value_of_the_key_in_any_spelling() {
        let with = |pairs: &[(&str, &str)]| Record {
            settings: pairs
                .iter()
                .map(|(k, v)| Setting {
                    key: k.to_string(),
                    value: v.to_string(),
                })
                .collect(),
            ..record()
        };
        assert!(record().fsync_off());
        assert!(with(&[("FSYNC", "'False'")]).fsync_off());
        assert!(with(&[("fsync", "on"), ("fsync", "0")]).fsync_off());
        assert!(!with(&[("fsync", "off"), ("fsync", "on")]).fsync_off());
        assert!(!with(&[("synchronous_commit", "off")]).fsync_off());
        assert!(!with(&[]).fsync_off());
    }

    #[test]
    fn round_trips_through_toml() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("instance.toml");
        record().save(&path).unwrap();
        let back = Record::load(&path).unwrap();
        assert_eq!(back.port, 5433);
        assert_eq!(back.cpus, Some(0.5));
        assert_eq!(back.settings(), vec![("fsync".into(), "off".into())]);
    }

    #[test]
    fn unspecified_options_match_and_differences_are_named() {
        let r = record();
        assert!(r.check_matches(&InstanceOptions::default()).is_ok());
        let opts = InstanceOptions {
            port: Some(6000),
            ..Default::default()
        };
        let err = r.check_matches(&opts).unwrap_err().to_string();
        assert!(err.contains("--port 5433, not --port 6000"), "{err}");
        assert!(err.contains("tidebench instance destroy a"), "{err}");
        let opts = InstanceOptions {
            memory: Some(1 << 30),
            ..Default::default()
        };
        let err = r.check_matches(&opts).unwrap_err().to_string();
        assert!(err.contains("no --memory, not --memory 1GiB"), "{err}");
        let opts = InstanceOptions {
            settings: vec![("FSYNC".into(), "off".into())],
            ..Default::default()
        };
        assert!(r.check_matches(&opts).is_ok());
    }
}
