//! Server configuration for a benchmark instance: the defaults, `--set` overrides, pg_hba rules,
//! sizes (`512MB`, `2GiB`) and choosing a free port. No processes are started here.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;

use super::error::InstanceError;
pub use crate::config::size::{format_size, parse_size};

/// The conf file tidebench writes into the data dir, included from postgresql.conf.
pub(crate) const CONF_FILE: &str = "tidebench.conf";

/// A group role kept for instances and scripts made before every TCP login needed a password
/// (issue 28): its members had to give one while others were trusted.
pub const PASSWORD_GROUP: &str = "tidebench_password";

/// Only the owner reaches the unix socket (`unix_socket_permissions = 0700`), and every TCP
/// login gives a password (scram-sha-256): the superuser's is made at creation and kept in the
/// instance's passfile (0600, see `password`), so other local users are refused.
pub(crate) const HBA: &str = "\
# Written by tidebench. The server listens on its unix socket (mode 0700) and 127.0.0.1 only.
# TYPE  DATABASE  USER                 ADDRESS        METHOD
local   all       all                                 trust
local   replication all                               trust
host    all       all                  127.0.0.1/32   scram-sha-256
";

/// Checks `--set` pairs: key syntax, reserved keys (the rules run files share).
pub(crate) fn validate(settings: &[(String, String)]) -> Result<(), InstanceError> {
    for (key, _) in settings {
        crate::config::instances::check_setting_key(key).map_err(|message| {
            InstanceError::BadSetting {
                key: key.clone(),
                message,
            }
        })?;
    }
    Ok(())
}

/// The conf file text: defaults, then the user's settings (later lines win in PostgreSQL).
pub(crate) fn server_conf(
    port: u16,
    socket_dir: &Path,
    memory: Option<u64>,
    settings: &[(String, String)],
) -> String {
    // 1GB is enough to keep a scale-100 pgbench hot; inside a memory-limited VM a quarter of its
    // memory is the usual sizing and leaves room for backends and the page cache.
    let shared_buffers = match memory {
        Some(m) => format_size((m / 4).min(1 << 30) / 1024 * 1024),
        None => "1GB".to_string(),
    };
    let mut lines = vec![
        "# Written by tidebench: defaults for a benchmark instance, then --set values.".to_string(),
        kv("listen_addresses", "127.0.0.1"),
        kv("port", &port.to_string()),
        kv("unix_socket_directories", &socket_dir.to_string_lossy()),
        // The local socket is trusted (see HBA): only the server's OS user (and root, which
        // tidebench may run as) may connect to it, not every user of the host.
        kv("unix_socket_permissions", "0700"),
        kv("max_connections", "300"),
        kv("shared_buffers", &shared_buffers.replace("iB", "B")),
        // pg_ctl -l already sends everything to server.log.
        kv("logging_collector", "off"),
    ];
    lines.extend(settings.iter().map(|(k, v)| kv(k, v)));
    lines.join("\n") + "\n"
}

/// `key = 'value'` with the value quoted as postgresql.conf reads it.
fn kv(key: &str, value: &str) -> String {
    let quoted = value.replace('\\', "\\\\").replace('\'', "''");
    format!("{key} = '{quoted}'")
}

/// A free TCP port on 127.0.0.1 for a new instance, outside the kernel's ephemeral range.
///
/// Why not the range's ports (binding port 0): every outgoing connection on the host takes
/// its local port from that range, and between choosing a port and the server binding it
/// (after initdb, a second or more) one of them could take it; with many instances and
/// clients starting at once that happened. Ports below the range are never handed out by the
/// kernel. The search starts at a per-process offset so concurrent creations spread out.
pub(crate) fn choose_port(socket_dir: &Path, taken: &[u16]) -> Result<u16, InstanceError> {
    let candidates = port_candidates(ephemeral_range(), seed());
    for port in candidates.into_iter().take(2000) {
        let socket_free = !socket_dir.join(format!(".s.PGSQL.{port}")).exists();
        if socket_free
            && !taken.contains(&port)
            && TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
        {
            return Ok(port);
        }
    }
    Err(InstanceError::NoFreePort)
}

/// `net.ipv4.ip_local_port_range`, or Linux's default.
fn ephemeral_range() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| {
            let mut it = t.split_whitespace().map(|v| v.parse::<u16>().ok());
            Some((it.next()??, it.next()??))
        })
        .unwrap_or((32768, 60999))
}

fn seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 20)
}

/// Ports outside the ephemeral range `(low, high)`, from 10000 below it (or above it when it
/// starts too low), in an order that starts at `seed` and visits each once.
fn port_candidates((low, high): (u16, u16), seed: u64) -> Vec<u16> {
    let (from, to) = if low > 11_000 {
        (10_000u16, low - 1)
    } else {
        (high.saturating_add(1).max(1024), 65_535)
    };
    if from > to {
        return Vec::new();
    }
    let n = u64::from(to - from) + 1;
    // A step coprime with n visits every port once.
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let step = match 7_919u64 % n {
        s if s > 0 && gcd(s, n) == 1 => s,
        _ => 1,
    };
    (0..n)
        .map(|i| from + ((seed + i * step) % n) as u16)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_chosen_outside_the_ephemeral_range() {
        let ports = port_candidates((32768, 60999), 12345);
        assert_eq!(ports.len(), 32768 - 10000);
        assert!(ports.iter().all(|p| (10000..32768).contains(p)));
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ports.len(), "each port once");
        let high = port_candidates((1024, 40000), 1);
        assert!(high.iter().all(|p| *p > 40000));
        let dir = tempfile::tempdir().unwrap();
        let p = choose_port(dir.path(), &[]).unwrap();
        let (low, high) = ephemeral_range();
        assert!(!(low..=high).contains(&p), "{p} in {low}-{high}");
    }

    #[test]
    fn shared_buffers_is_capped_by_memory_and_set_values_come_last() {
        let set = vec![("work_mem".to_string(), "it's".to_string())];
        let conf = server_conf(5433, Path::new("/h/sockets"), Some(512 << 20), &set);
        assert!(conf.contains("shared_buffers = '128MB'"), "{conf}");
        assert!(conf.contains("port = '5433'"));
        assert!(conf.trim_end().ends_with("work_mem = 'it''s'"), "{conf}");
        let conf = server_conf(5433, Path::new("/h"), None, &[]);
        assert!(conf.contains("shared_buffers = '1GB'"), "{conf}");
    }

    #[test]
    fn reserved_and_malformed_keys_are_refused() {
        let one = |k: &str| vec![(k.to_string(), "1".to_string())];
        assert!(validate(&one("port")).is_err());
        assert!(validate(&one("bad key")).is_err());
        assert!(validate(&one("auto_explain.log_min_duration")).is_ok());
    }
}
