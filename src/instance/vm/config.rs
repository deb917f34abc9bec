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
/// The console line a guest prints when PostgreSQL accepts connections, followed by its
/// kernel release.
pub const READY_LINE: &str = "tidebench-guest: READY";
/// The console line a guest prints when its init fails, followed by why.
pub const FAILED_LINE: &str = "tidebench-guest: FAILED";
/// The port PostgreSQL listens on inside the guest; the host forwards its own port to it.
pub const GUEST_PORT: u16 = 5432;
/// The config file is padded to this (one sector multiple), so the namespace has a size.
const CONFIG_PAD: usize = 64 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestConfig {
    /// The PostgreSQL superuser role (the host's name for it, so DSNs look the same).
    pub superuser: String,
    /// Its password, set by initdb on first boot (as a SCRAM verifier; PG15's default).
    pub password: String,
    /// The host's PostgreSQL bin dir, present at the same path in the guest.
    pub bin_dir: String,
    /// tidebench.conf: defaults and `--set` values.
    pub conf: String,
    /// pg_hba.conf.
    pub hba: String,
    /// With `--ssl`: the instance's server certificate and key (made on the host, see
    /// `instance::tls`), written into PGDATA at 0600 on every boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<GuestTls>,
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

/// tidebench.conf for the guest: the host's defaults for this memory size with the guest's
/// own port and socket dir, then the user's settings, then listening on the guest's network
/// (the host's forward binds 127.0.0.1 only).
pub fn guest_conf(memory: u64, settings: &[(String, String)], tls: bool) -> String {
    let mut all = match tls {
        true => vec![
            ("ssl".to_string(), "on".to_string()),
            ("ssl_cert_file".to_string(), GUEST_CERT.to_string()),
            ("ssl_key_file".to_string(), GUEST_KEY.to_string()),
        ],
        false => Vec::new(),
    };
    all.extend_from_slice(settings);
    let mut conf = crate::instance::settings::server_conf(
        GUEST_PORT,
        std::path::Path::new("/tmp"),
        Some(memory),
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
        let config = GuestConfig {
            superuser: "postgres".into(),
            password: "pw".into(),
            bin_dir: "/usr/lib/postgresql/15/bin".into(),
            conf: guest_conf(512 << 20, &[("work_mem".into(), "8MB".into())], true),
            hba: GUEST_HBA.into(),
            tls: Some(GuestTls {
                cert: "CERT".into(),
                key: "KEY".into(),
            }),
        };
        let disk = config.to_disk().unwrap();
        assert_eq!(disk.len(), CONFIG_PAD);
        let end = disk.iter().position(|b| *b == 0).unwrap();
        let back: GuestConfig = toml::from_str(std::str::from_utf8(&disk[..end]).unwrap()).unwrap();
        assert_eq!(back.password, "pw");
        assert_eq!(back.tls.map(|t| t.key), Some("KEY".to_string()));
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
