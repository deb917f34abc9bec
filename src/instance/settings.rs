//! Server configuration for a benchmark instance: the defaults, `--set` overrides, pg_hba rules,
//! sizes (`512MB`, `2GiB`) and choosing a free port. No processes are started here.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;

use super::InstanceError;

/// The conf file tidebench writes into the data dir, included from postgresql.conf.
pub(crate) const CONF_FILE: &str = "tidebench.conf";

/// The group role whose members must log in over TCP with a password (scram-sha-256), so tests
/// can exercise password authentication; everyone else is trusted on the local socket and
/// 127.0.0.1 (the instance only listens there).
pub const PASSWORD_GROUP: &str = "tidebench_password";

pub(crate) const HBA: &str = "\
# Written by tidebench. The server listens on its unix socket and 127.0.0.1 only.
# TYPE  DATABASE  USER                 ADDRESS        METHOD
local   all       all                                 trust
host    all       +tidebench_password  127.0.0.1/32   scram-sha-256
host    all       all                  127.0.0.1/32   trust
";

/// Settings tidebench owns: changing them would make the instance unreachable by name.
const RESERVED: [(&str, &str); 2] = [
    ("port", "use --port"),
    ("unix_socket_directories", "sockets live in <home>/sockets"),
];

/// Checks `--set` pairs: key syntax, reserved keys.
pub(crate) fn validate(settings: &[(String, String)]) -> Result<(), InstanceError> {
    for (key, _) in settings {
        let ok = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !ok {
            return Err(InstanceError::Setup(format!(
                "'{key}' is not a server setting name; write --set NAME=VALUE with a name like \
                 shared_buffers or work_mem"
            )));
        }
        if let Some((_, why)) = RESERVED.iter().find(|(k, _)| key.eq_ignore_ascii_case(k)) {
            return Err(InstanceError::Setup(format!(
                "--set {key}=... is not allowed: tidebench sets it itself ({why})"
            )));
        }
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

/// Parses `512MB`, `2GiB`, `1G`, `300kB`, `1048576` (bytes). Units are binary, as in PostgreSQL.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("'{text}' is not a size; write e.g. 512MB, 2GiB or 1G");
    let value: f64 = num.parse().map_err(|_| bad())?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(bad()),
    };
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// The largest binary unit that divides `bytes` exactly: `512MiB`, `1GiB`, `1536kiB`.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "kiB")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

/// A TCP port free on 127.0.0.1 whose socket file is free too and no other instance records.
pub(crate) fn choose_port(socket_dir: &Path, taken: &[u16]) -> Result<u16, InstanceError> {
    for _ in 0..50 {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| {
            InstanceError::Setup(format!(
                "cannot find a free port on 127.0.0.1 ({e}); give one with --port"
            ))
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| {
                InstanceError::Setup(format!(
                    "cannot find a free port ({e}); give one with --port"
                ))
            })?
            .port();
        let socket_free = !socket_dir.join(format!(".s.PGSQL.{port}")).exists();
        if socket_free && !taken.contains(&port) {
            return Ok(port);
        }
    }
    Err(InstanceError::Setup(
        "cannot find a free port on 127.0.0.1; give one with --port".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("512MB"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5XB").is_err());
        assert!(parse_size("0MB").is_err());
    }

    #[test]
    fn sizes_format_exactly() {
        assert_eq!(format_size(512 << 20), "512MiB");
        assert_eq!(format_size(3 << 29), "1536MiB");
        assert_eq!(format_size(1000), "1000B");
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
