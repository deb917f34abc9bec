//! What the host tells a guest at each boot, and the guest's fixed device names.
//!
//! The host writes a [`GuestConfig`] as TOML into a small raw file that QEMU attaches as the
//! third NVMe namespace: no file system, no network, nothing to mount. The guest reads it on
//! every boot, so `--set` values and pg_hba follow the host's record.

use serde::{Deserialize, Serialize};

/// The root disk (namespace 1 of the one NVMe controller: numbered by nsid, not by probe order).
pub const ROOT_DEVICE: &str = "/dev/nvme0n1";
/// The data disk (PGDATA lives on it), namespace 2.
pub const DATA_DEVICE: &str = "/dev/nvme0n2";
/// The config namespace, 3.
pub const CONFIG_DEVICE: &str = "/dev/nvme0n3";
/// A seed of PGDATA dirs the host made for servers new to an existing data disk (see `seed`),
/// namespace 4, there only at the boot that needs it.
pub const SEED_DEVICE: &str = "/dev/nvme0n4";
/// The console line a guest prints when PostgreSQL accepts connections, followed by its
/// kernel release.
pub const READY_LINE: &str = "tidebench-guest: READY";
/// The console line a guest prints when its init fails, followed by why.
pub const FAILED_LINE: &str = "tidebench-guest: FAILED";
/// The port PostgreSQL listens on inside a guest of its own; the host forwards its own port to
/// it. In a VM several instances share, each listens on its host port number (all distinct).
pub const GUEST_PORT: u16 = 5432;
/// The PGDATA of an instance in a shared VM: its own dir on the VM's data disk, named by the
/// instance and its password, which is new at each creation. So an instance destroyed and
/// made again under its name (while the VM was down) gets a fresh initdb, never the old data
/// with the old password; the old dir is removed at the next boot, which no longer names it.
/// The hash is FNV-1a, spelled out here so the name stays the same across builds.
pub fn shared_pgdata(name: &str, password: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in password.bytes() {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("/data/i-{name}-{:08x}", hash as u32)
}
/// The config file is padded to this (one sector multiple), so the namespace has a size.
const CONFIG_PAD: usize = 64 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestConfig {
    /// The host's PostgreSQL bin dir, present at the same path in the guest.
    pub bin_dir: String,
    /// The servers the guest runs: one for a VM instance, one per instance in a VM that
    /// several share (`--vm PATH --hypervisor qemu`).
    pub clusters: Vec<ClusterConfig>,
}

/// One PostgreSQL server in the guest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// The instance's name (the log's prefix when several share the guest).
    pub name: String,
    /// Its PGDATA on the data disk: [`GUEST_PGDATA`](super::image::GUEST_PGDATA) alone, or
    /// [`shared_pgdata`] in a shared VM.
    pub pgdata: String,
    /// The PostgreSQL superuser role (the host's name for it, so DSNs look the same).
    pub superuser: String,
    /// Its password, set by initdb on first boot (as a SCRAM verifier; PG15's default).
    pub password: String,
    /// tidebench.conf: defaults and `--set` values.
    pub conf: String,
    /// pg_hba.conf.
    pub hba: String,
    /// With `--ssl`: the instance's server certificate and key (made on the host, see
    /// `instance::tls`), written into PGDATA at 0600 on every boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<GuestTls>,
    /// The server runs with fsync off, so its initdb need not sync either (`--no-sync`).
    #[serde(default)]
    pub initdb_no_sync: bool,
}

/// A guest's TLS files, as PEM.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestTls {
    pub cert: String,
    pub key: String,
}

/// Their names in the guest's PGDATA (relative paths in the conf are PGDATA's).
pub const GUEST_CERT: &str = "server.crt";
pub const GUEST_KEY: &str = "server.key";

/// Connections arrive from QEMU's user network gateway (10.0.2.2): a password always.
pub const GUEST_HBA: &str = "\
# Written by tidebench. The host reaches the guest through QEMU's user network (10.0.2.2).
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 trust
host    all       all   0.0.0.0/0     scram-sha-256
";

impl GuestConfig {
    /// The bytes of the config namespace.
    pub fn to_disk(&self) -> Result<Vec<u8>, String> {
        let text =
            toml::to_string(self).map_err(|e| format!("cannot encode the guest config: {e}"))?;
        let mut bytes = text.into_bytes();
        if bytes.len() >= CONFIG_PAD {
            return Err(format!(
                "the guest config is {} bytes, more than {CONFIG_PAD}; give fewer or shorter --set values",
                bytes.len()
            ));
        }
        bytes.resize(CONFIG_PAD, 0);
        Ok(bytes)
    }
}

/// How a guest's server is set up, beside the user's settings.
pub struct ConfShape {
    /// The port it listens on in the guest.
    pub port: u16,
    /// The memory its defaults are sized for (the VM's, over the servers it holds).
    pub memory: u64,
    /// Serves TLS with the files of [`GuestTls`].
    pub tls: bool,
    /// The log's line prefix names the instance (several share the VM's log).
    pub shared_log: Option<String>,
}

/// tidebench.conf for the guest: the host's defaults for this memory size with the guest's
/// own port and socket dir, then the user's settings, then listening on the guest's network
/// (the host's forward binds 127.0.0.1 only).
pub fn guest_conf(shape: &ConfShape, settings: &[(String, String)]) -> String {
    let mut all = match shape.tls {
        true => vec![
            ("ssl".to_string(), "on".to_string()),
            ("ssl_cert_file".to_string(), GUEST_CERT.to_string()),
            ("ssl_key_file".to_string(), GUEST_KEY.to_string()),
        ],
        false => Vec::new(),
    };
    if let Some(name) = &shape.shared_log {
        all.push(("log_line_prefix".into(), format!("[{name}] %m [%p] ")));
    }
    all.extend_from_slice(settings);
    let mut conf = crate::instance::settings::server_conf(
        shape.port,
        std::path::Path::new("/tmp"),
        Some(shape.memory),
        &all,
    );
    conf.push_str("listen_addresses = '*'\n");
    conf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_round_trips_through_its_padded_disk() {
        let shape = ConfShape {
            port: GUEST_PORT,
            memory: 512 << 20,
            tls: true,
            shared_log: Some("a".into()),
        };
        let config = GuestConfig {
            bin_dir: "/usr/lib/postgresql/15/bin".into(),
            clusters: vec![ClusterConfig {
                name: "a".into(),
                pgdata: shared_pgdata("a", "pw"),
                superuser: "postgres".into(),
                password: "pw".into(),
                conf: guest_conf(&shape, &[("work_mem".into(), "8MB".into())]),
                hba: GUEST_HBA.into(),
                tls: Some(GuestTls {
                    cert: "CERT".into(),
                    key: "KEY".into(),
                }),
                initdb_no_sync: true,
            }],
        };
        let disk = config.to_disk().unwrap();
        assert_eq!(disk.len(), CONFIG_PAD);
        let end = disk.iter().position(|b| *b == 0).unwrap();
        let back: GuestConfig = toml::from_str(std::str::from_utf8(&disk[..end]).unwrap()).unwrap();
        let back = back.clusters.into_iter().next().unwrap();
        assert!(back.pgdata.starts_with("/data/i-a-"), "{}", back.pgdata);
        assert_ne!(back.pgdata, shared_pgdata("a", "another password"));
        assert!(
            back.conf.contains("log_line_prefix = '[a] %m [%p] '"),
            "{}",
            back.conf
        );
        assert_eq!(back.password, "pw");
        assert_eq!(back.tls.map(|t| t.key), Some("KEY".to_string()));
        assert!(back.initdb_no_sync);
        assert!(
            back.conf.contains("ssl_key_file = 'server.key'"),
            "{}",
            back.conf
        );
        assert!(back.conf.contains("work_mem = '8MB'"), "{}", back.conf);
        assert!(back.conf.contains("port = '5432'"), "{}", back.conf);
        assert!(
            back.conf.ends_with("listen_addresses = '*'\n"),
            "{}",
            back.conf
        );
    }
}
