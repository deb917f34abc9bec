//! `runtime.toml`: what ran, where, on which servers: enough to reproduce or to explain a
//! result. The fact types live here, with the format, so that `report` can read them back
//! without importing the samplers that collect them (`sampler::host`, `sampler::server`).
//!
//! Secrets: the plan's targets serialize redacted (`TargetSpec`), and no connection parameters
//! are stored, so no password can reach this file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{ResultsError, RUNTIME_FILE, SCHEMA_VERSION, TIDEBENCH_VERSION};
use crate::config::RunPlan;
use crate::metrics::KeySpace;

/// The machine the driver ran on. Every field is optional: a fact that cannot be read is left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// CPUs this process may use (affinity and cgroup quota applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_available: Option<u64>,
    /// Logical CPUs the kernel reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_online: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total_bytes: Option<u64>,
    /// Kernel release (`uname -r`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// `PRETTY_NAME` of /etc/os-release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// True when the CPU reports running under a hypervisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<bool>,
    /// DMI system vendor and product name (e.g. `QEMU`, `Standard PC (Q35 + ICH9, 2009)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dmi_vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dmi_product: Option<String>,
    /// Container runtime when the driver runs inside one (`docker`, `podman`, `kubernetes`, `lxc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// 1 or 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_version: Option<u8>,
}

/// One target's server, as read at the start of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerFacts {
    /// The target's label (passwords redacted).
    pub label: String,
    /// `server_version` (e.g. `15.8 (Debian 15.8-0+deb12u1)`).
    pub server_version: String,
    /// Setting name → value as `SHOW` prints it, units included (`128MB`, `5min`).
    pub settings: BTreeMap<String, String>,
    /// The host (or socket dir) and port the run reached it at: the one chosen when its
    /// connection string names several (`host=a,b`, `target_session_attrs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// When the server is a managed instance in a real VM (issue 40): which, and how run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmFacts>,
}

/// A server that runs in a QEMU guest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VmFacts {
    pub hypervisor: String,
    /// `kvm` or `tcg`.
    pub accel: String,
    /// TCG: every guest instruction is translated, so the figures are an emulator's, not a
    /// VM's real overhead.
    pub emulated: bool,
    pub vcpus: u32,
    pub memory_bytes: u64,
    /// The guest's kernel release.
    pub kernel: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuntimeInfo {
    pub schema_version: u32,
    pub tidebench_version: String,
    /// The full plan, seed included.
    pub plan: RunPlan,
    pub host: HostFacts,
    /// One per target, in the plan's target order.
    #[serde(default)]
    pub servers: Vec<ServerFacts>,
    /// Which block device holds each managed instance's data dir and WAL (from the sampler).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<InstanceDevices>,
    /// The run's transaction types in key order: the role each ran on and whether the
    /// workload's emulator issued it. Empty in files written before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub txn_types: Vec<TxnTypeFacts>,
}

/// One transaction type of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnTypeFacts {
    pub name: String,
    pub role: String,
    /// Issued by the workload's emulator (TPC-E's Trade-Result): outside the mix shares.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub emulated: bool,
    /// The isolation level the workload fixes for the type ("repeatable read"); absent when
    /// it runs at the session's default, the group's `isolation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
}

impl TxnTypeFacts {
    /// Every type of `keys`, in key order (the runner adds each one's isolation level).
    pub fn of(keys: &KeySpace) -> Vec<TxnTypeFacts> {
        keys.txn_types
            .iter()
            .enumerate()
            .map(|(t, name)| TxnTypeFacts {
                name: name.clone(),
                role: keys.role_of(t).to_string(),
                emulated: keys.is_emulated(t),
                isolation: None,
            })
            .collect()
    }
}

/// Where a managed instance's files live, so IO per device reads as data vs WAL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstanceDevices {
    pub instance: String,
    /// Block device name (`vda`, `nvme0n1p2`, `dm-0`); absent when not on a block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_device: Option<String>,
}

impl RuntimeInfo {
    pub fn new(plan: RunPlan, host: HostFacts, servers: Vec<ServerFacts>) -> RuntimeInfo {
        RuntimeInfo {
            schema_version: SCHEMA_VERSION,
            tidebench_version: TIDEBENCH_VERSION.to_string(),
            plan,
            host,
            servers,
            devices: Vec::new(),
            txn_types: Vec::new(),
        }
    }

    pub fn to_toml(&self) -> Result<String, ResultsError> {
        toml::to_string(self).map_err(|e| ResultsError::Encode {
            file: RUNTIME_FILE,
            message: e.to_string(),
        })
    }

    /// Reads `runtime.toml` from a results dir.
    pub fn read(dir: &Path) -> Result<RuntimeInfo, ResultsError> {
        let path = dir.join(RUNTIME_FILE);
        let text = std::fs::read_to_string(&path).map_err(ResultsError::io("read", &path))?;
        toml::from_str(&text).map_err(|e| ResultsError::Decode {
            file: RUNTIME_FILE,
            path,
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_with_password() -> RunPlan {
        let raw = crate::config::RawRun {
            workload: Some(crate::config::WorkloadName::new("tpcb")),
            target: Some("postgresql://u:SECRETPW@127.0.0.1/db".into()),
            seed: Some(42),
            ..Default::default()
        };
        let src = crate::config::groups::Source {
            file: "t",
            text: "",
        };
        crate::config::validate_run(&src, raw, 2, 1, &crate::workload::Registry).unwrap()
    }

    #[test]
    fn toml_round_trips_without_secrets() {
        let host = HostFacts {
            hostname: Some("h".into()),
            cpus_available: Some(2),
            memory_total_bytes: Some(8 << 30),
            ..HostFacts::default()
        };
        let server = ServerFacts {
            label: "postgresql://u:********@127.0.0.1/db".into(),
            server_version: "15.8".into(),
            settings: BTreeMap::from([("shared_buffers".to_string(), "128MB".to_string())]),
            address: Some("127.0.0.1:5432".into()),
            vm: None,
        };
        let mut info = RuntimeInfo::new(plan_with_password(), host.clone(), vec![server.clone()]);
        let mut keys = crate::results::intervals::tests::two_phase_keys();
        keys.txn_emulated = vec![false, true];
        info.txn_types = TxnTypeFacts::of(&keys);
        let text = info.to_toml().unwrap();
        assert_eq!(text.matches("emulated = true").count(), 1, "{text}");
        assert!(!text.contains("SECRETPW"), "{text}");
        assert!(text.contains("seed = 42"), "{text}");
        let back: RuntimeInfo = toml::from_str(&text).unwrap();
        assert_eq!(
            (back.schema_version, back.host, back.servers),
            (1, host, vec![server])
        );
        assert_eq!(back.plan.seed, 42);
        let emulated: Vec<(&str, bool)> = back
            .txn_types
            .iter()
            .map(|t| (t.name.as_str(), t.emulated))
            .collect();
        assert_eq!(emulated, [("a", false), ("b", true)]);
    }
}
