//! The hosts a connection string names, as libpq 15 pairs them (issue 39): `host`, `hostaddr`
//! and `port` are comma-separated lists; with `hostaddr` given, its count is the number of
//! hosts (and a `host` list must have as many entries), else `host`'s; `port` gives one port
//! for all or one per host. An empty host entry is the default socket directory (or, with a
//! `hostaddr`, that address); an empty port is 5432. `load_balance_hosts=random`
//! (PostgreSQL 16) shuffles the list once.

use std::net::IpAddr;
use std::path::PathBuf;

/// The default socket directory of Debian's and Ubuntu's libpq (`DEFAULT_PGSOCKET_DIR`).
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// PostgreSQL's default port.
pub const DEFAULT_PORT: u16 = 5432;

/// One host to try: where it is, its port, and the address to use instead of looking the
/// name up (`hostaddr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: pgwire::Host,
    pub port: u16,
    pub addr: Option<IpAddr>,
    /// The host as the password file knows it (libpq's): the name given, else the address,
    /// with `localhost` for none and for the default socket directory.
    pub pass_host: String,
}

/// The endpoints of the `host`, `hostaddr` and `port` values (each already taken from the
/// string, its service or the environment).
pub fn endpoints(
    host: Option<&str>,
    hostaddr: Option<&str>,
    port: Option<&str>,
) -> Result<Vec<Endpoint>, String> {
    let split = |v: Option<&str>| -> Vec<String> {
        v.map_or_else(Vec::new, |v| v.split(',').map(str::to_string).collect())
    };
    let (names, addrs, ports) = (split(host), split(hostaddr), split(port));
    let count = if addrs.is_empty() {
        names.len().max(1)
    } else {
        if !names.is_empty() && names.len() != addrs.len() {
            return Err(format!(
                "could not match {} host names to {} hostaddr values; give as many hostaddr values as hosts",
                names.len(),
                addrs.len()
            ));
        }
        addrs.len()
    };
    let ports = match ports.len() {
        0 => vec![DEFAULT_PORT; count],
        1 => vec![parse_port(&ports[0])?; count],
        n if n == count => ports
            .iter()
            .map(|p| parse_port(p))
            .collect::<Result<_, _>>()?,
        n => {
            return Err(format!(
                "could not match {n} port numbers to {count} hosts; give one port for all of them, or one per host"
            ))
        }
    };
    (0..count)
        .map(|i| {
            let name = names.get(i).map_or("", String::as_str);
            let addr = addrs.get(i).map_or("", String::as_str);
            endpoint(name, addr, ports[i])
        })
        .collect()
}

fn endpoint(name: &str, addr: &str, port: u16) -> Result<Endpoint, String> {
    let addr: Option<IpAddr> = match addr {
        "" => None,
        text => Some(text.parse().map_err(|_| {
            format!("could not parse network address \"{text}\"; hostaddr takes IP addresses, put a host name in host= instead")
        })?),
    };
    // libpq: a `hostaddr` makes the connection TCP whatever `host` says; with no host name
    // (or a socket directory, no name either), the address is the host itself.
    let unnamed = name.is_empty() || name.starts_with('/');
    let host = match (name, addr) {
        (_, Some(a)) if unnamed => pgwire::Host::Tcp(a.to_string()),
        ("", None) => pgwire::Host::Unix(PathBuf::from(DEFAULT_SOCKET_DIR)),
        (n, None) if n.starts_with('/') => pgwire::Host::Unix(PathBuf::from(n)),
        (n, _) => pgwire::Host::Tcp(n.to_string()),
    };
    let pass_host = match (name, addr) {
        ("", Some(a)) => a.to_string(),
        ("", None) | (DEFAULT_SOCKET_DIR, _) => "localhost".to_string(),
        (n, _) => n.to_string(),
    };
    // The address stays beside an unnamed host: the host's text then equals it, which is how
    // TLS knows there is no name to verify (`pgwire::Tls::verified_name`).
    Ok(Endpoint {
        host,
        port,
        addr,
        pass_host,
    })
}

/// libpq's port: a whole number from 1 to 65535; empty is the default.
pub fn parse_port(text: &str) -> Result<u16, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(DEFAULT_PORT);
    }
    let n: i64 = trimmed.parse().map_err(|_| {
        format!(
            "invalid integer value \"{text}\" for connection option \"port\"; give a port number"
        )
    })?;
    u16::try_from(n)
        .ok()
        .filter(|p| *p >= 1)
        .ok_or_else(|| format!("invalid port number: \"{text}\"; give a port from 1 to 65535"))
}

/// `load_balance_hosts` (PostgreSQL 16): `disable` keeps the order, `random` shuffles it.
pub fn balance(list: &mut [Endpoint], mode: Option<&str>) -> Result<(), String> {
    match mode.unwrap_or("disable") {
        "disable" | "" => Ok(()),
        "random" => {
            use rand::seq::SliceRandom;
            use rand::SeedableRng;
            // libpq seeds from the time and its process id; so does this.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let seed = nanos ^ u64::from(std::process::id()).rotate_left(32);
            list.shuffle(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed));
            Ok(())
        }
        other => Err(format!(
            "invalid load_balance_hosts value: \"{other}\"; use disable or random"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(h: &str) -> pgwire::Host {
        pgwire::Host::Tcp(h.into())
    }

    #[test]
    fn lists_pair_as_libpq_pairs_them() {
        let e = endpoints(Some("a,b"), None, Some("1")).unwrap();
        assert_eq!((e[0].port, e[1].port), (1, 1));
        let e = endpoints(Some("a,,/s"), None, Some("1,,3")).unwrap();
        assert_eq!(e[1].host, pgwire::Host::Unix(DEFAULT_SOCKET_DIR.into()));
        assert_eq!((e[1].port, e[2].port), (DEFAULT_PORT, 3));
        assert_eq!(e[2].host, pgwire::Host::Unix("/s".into()));
        let e = endpoints(None, Some("127.0.0.1,::1"), Some("7")).unwrap();
        let local = Some("127.0.0.1".parse().unwrap());
        assert_eq!((e[0].host.clone(), e[0].addr), (tcp("127.0.0.1"), local));
        let e = endpoints(Some("/s"), Some("127.0.0.1"), None).unwrap();
        assert_eq!((e[0].host.clone(), e[0].addr), (tcp("127.0.0.1"), local));
        let e = endpoints(Some("db,db2"), Some("127.0.0.1,10.0.0.1"), None).unwrap();
        assert_eq!(e[1].host, tcp("db2"));
        assert_eq!(e[1].addr, Some("10.0.0.1".parse().unwrap()));
        let err = |h, a, p| endpoints(h, a, p).unwrap_err();
        assert!(err(Some("a,b"), Some("1.2.3.4"), None)
            .contains("could not match 2 host names to 1 hostaddr"));
        assert!(err(Some("a,b"), None, Some("1,2,3"))
            .contains("could not match 3 port numbers to 2 hosts"));
        assert!(err(None, Some("x"), None).contains("could not parse network address \"x\""));
        assert!(err(None, None, Some("abc")).contains("invalid integer value \"abc\""));
        assert!(err(None, None, Some("99999")).contains("invalid port number"));
    }

    #[test]
    fn balance_keeps_or_shuffles_the_hosts() {
        let mut e = endpoints(Some("a,b,c"), None, None).unwrap();
        balance(&mut e, Some("disable")).unwrap();
        assert_eq!(e[0].host, tcp("a"));
        balance(&mut e, Some("random")).unwrap();
        assert_eq!(e.len(), 3);
        assert!(balance(&mut e, Some("on"))
            .unwrap_err()
            .contains("disable or random"));
    }
}
