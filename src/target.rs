//! Resolving a [`TargetSpec`] to a server address: DSNs are parsed with libpq's rules and
//! defaults, managed instances are looked up (and, for the `default` instance, started on
//! demand). A value comes, as in libpq, from the connection string, else from its service
//! (`service=` or PGSERVICE, in the service file), else from the environment (PGHOST,
//! PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGAPPNAME, PGCONNECT_TIMEOUT, PGOPTIONS), else
//! libpq's default; a password still missing is looked up in the password file (see
//! [`libpq_files`]).

mod control;
mod guards;
mod hosts;
mod libpq_files;
mod tls;
mod tokio_tls;

use guards::{check_keyword_case, malformed};
pub use hosts::{HostChoice, SessionAttrs};

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::config::target::DEFAULT_INSTANCE;
use crate::config::TargetSpec;
use crate::instance::{self, Home};

/// A target ready to connect to. `label` is safe to print; `params` holds the password, if any.
#[derive(Debug, Clone)]
pub struct ResolvedTarget {
    pub label: String,
    pub params: pgwire::ConnectParams,
    /// What resolving it noticed, for the caller to say (a password file ignored because
    /// others may read it, the host chosen among several).
    pub notes: Vec<String>,
    /// The hosts its connection string names and what the chosen one must be; `params` holds
    /// the first until [`ResolvedTarget::choose_host`] has chosen.
    pub choice: HostChoice,
}

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("target '{label}': {message}")]
    Dsn { label: String, message: String },
    #[error("target '{label}': {source}")]
    Instance {
        label: String,
        source: instance::InstanceError,
    },
    #[error("cannot connect to target '{label}': {message}")]
    Connect { label: String, message: String },
}

/// Resolves a spec. Managed instances must exist (and run) except `default`, which is created
/// and started on demand; their database is created if missing.
pub fn resolve(spec: &TargetSpec, home: &Home) -> Result<ResolvedTarget, TargetError> {
    let label = spec.redacted();
    match spec {
        TargetSpec::Dsn(dsn) => {
            let parsed = parse_dsn_full(dsn).map_err(|message| TargetError::Dsn {
                label: label.clone(),
                message,
            })?;
            Ok(ResolvedTarget {
                params: parsed.params,
                label,
                notes: parsed.notes,
                choice: parsed.choice,
            })
        }
        TargetSpec::Instance { name, dbname } => {
            let wrap = |source| TargetError::Instance {
                label: label.clone(),
                source,
            };
            let inst = if name == DEFAULT_INSTANCE {
                instance::ensure_running(home, name).map_err(wrap)?
            } else {
                instance::find_running(home, name).map_err(wrap)?
            };
            instance::ensure_database(&inst, dbname).map_err(wrap)?;
            Ok(ResolvedTarget {
                params: inst.target_params(dbname).map_err(wrap)?,
                label,
                notes: Vec::new(),
                choice: HostChoice::default(),
            })
        }
    }
}

/// Parses a libpq URI or keyword/value string into connection parameters, applying libpq's
/// service file, environment defaults and password file. Only the first host is used.
pub fn parse_dsn(dsn: &str) -> Result<pgwire::ConnectParams, String> {
    parse_dsn_full(dsn).map(|p| p.params)
}

/// A connection string parsed: the parameters (on its first host), what was noticed on the
/// way (a password file ignored), and the hosts to choose from.
pub struct ParsedDsn {
    pub params: pgwire::ConnectParams,
    pub notes: Vec<String>,
    pub choice: HostChoice,
}

/// As [`parse_dsn`], with the notes and the host choice.
pub fn parse_dsn_full(dsn: &str) -> Result<ParsedDsn, String> {
    let looks_like_dsn =
        dsn.starts_with("postgres://") || dsn.starts_with("postgresql://") || dsn.contains('=');
    if !looks_like_dsn {
        return Err(
            "not a connection string; write a URI like postgresql://user@host:5432/db, \
             keywords like 'host=/tmp port=5432 dbname=db', service=NAME, or instance:NAME[/DB]"
                .into(),
        );
    }
    check_keyword_case(dsn)?;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    // The parser knows neither keyword: they are taken out and applied here.
    let (service_name, rest) = libpq_files::take_keyword(dsn, "service");
    let (passfile, rest) = libpq_files::take_keyword(&rest, "passfile");
    let (attrs, rest) = libpq_files::take_keyword(&rest, "target_session_attrs");
    let service = match service_name.or_else(|| env("PGSERVICE")) {
        Some(name) => libpq_files::find_service(&name)?,
        None => libpq_files::Service::new(),
    };
    let svc = |k: &str| service.get(k).cloned().filter(|v| !v.is_empty());
    let fallback = |k: &str, var: &str| svc(k).or_else(|| env(var));
    let (tls, rest) = tls::take_tls(&rest, &fallback)?;
    let (hostaddr, rest) = libpq_files::take_keyword(&rest, "hostaddr");
    let cfg = if rest.trim().is_empty() {
        tokio_postgres::Config::new()
    } else {
        tokio_postgres::Config::from_str(&rest).map_err(|e| malformed(dsn, &e))?
    };
    if cfg.get_channel_binding() == tokio_postgres::config::ChannelBinding::Require {
        return Err("channel_binding=require: tidebench's sessions authenticate without channel binding; leave channel_binding out, or use prefer"
            .into());
    }
    let attrs = match attrs.or_else(|| fallback("target_session_attrs", "PGTARGETSESSIONATTRS")) {
        Some(a) => SessionAttrs::parse(&a)?,
        None => SessionAttrs::Any,
    };
    let hostaddr = hostaddr
        .filter(|a| !a.is_empty())
        .or_else(|| fallback("hostaddr", "PGHOSTADDR"));
    let no_host_named = cfg.get_hosts().is_empty() && fallback("host", "PGHOST").is_none();
    let (hosts, hostaddr) = hosts_and_address(hosts_of(&cfg, &fallback)?, hostaddr, no_host_named)?;
    let (host, port) = hosts
        .first()
        .cloned()
        .ok_or("the connection string names no host")?;
    let user = match cfg.get_user() {
        Some(u) => u.to_string(),
        None => fallback("user", "PGUSER").unwrap_or_else(os_user),
    };
    let dbname = match cfg.get_dbname() {
        Some(d) => d.to_string(),
        None => fallback("dbname", "PGDATABASE").unwrap_or_else(|| user.clone()),
    };
    let mut notes = Vec::new();
    // A password the string, the service or PGPASSWORD gives serves every host; else each
    // host looks itself up in the password file (see `hosts::HostChoice::passfile`).
    let given = match cfg.get_password() {
        Some(p) => Some(String::from_utf8_lossy(p).into_owned()),
        None => fallback("password", "PGPASSWORD"),
    };
    let passfile = match given {
        Some(_) => None,
        None => libpq_files::passfile_path(passfile.or_else(|| svc("passfile")).as_deref()),
    };
    let password = match (&given, &passfile) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(path)) => {
            libpq_files::lookup_password(path, &host, port, &dbname, &user).password(&mut notes)
        }
        (None, None) => None,
    };
    let connect_timeout = match cfg.get_connect_timeout() {
        Some(t) => *t,
        None => match fallback("connect_timeout", "PGCONNECT_TIMEOUT") {
            // libpq: seconds, and anything below 2 means 2.
            Some(t) => Duration::from_secs(t.parse::<u64>().map_err(|_| {
                format!("connect_timeout '{t}' (service file or PGCONNECT_TIMEOUT) is not whole seconds")
            })?.max(2)),
            None => Duration::from_secs(10),
        },
    };
    let options = match cfg.get_options() {
        Some(o) => o.to_string(),
        None => fallback("options", "PGOPTIONS").unwrap_or_default(),
    };
    let application_name = match cfg.get_application_name() {
        Some(a) => a.to_string(),
        None => fallback("application_name", "PGAPPNAME")
            .unwrap_or_else(|| crate::config::target::APPLICATION_NAME.into()),
    };
    let params = pgwire::ConnectParams {
        host,
        port,
        user,
        password,
        dbname,
        application_name,
        options,
        connect_timeout,
        hostaddr,
        tls,
    };
    Ok(ParsedDsn {
        params,
        notes,
        choice: HostChoice {
            hosts,
            attrs,
            passfile,
        },
    })
}

/// Hosts and their ports, in the order they are tried.
type HostList = Vec<(pgwire::Host, u16)>;

/// The hosts and ports to try, in order: the string's, else the service's or PGHOST and
/// PGPORT (comma-separated lists, as libpq takes them), else the default socket and 5432.
fn hosts_of(
    cfg: &tokio_postgres::Config,
    fallback: &dyn Fn(&str, &str) -> Option<String>,
) -> Result<Vec<(pgwire::Host, u16)>, String> {
    let hosts: Vec<pgwire::Host> = if cfg.get_hosts().is_empty() {
        match fallback("host", "PGHOST") {
            Some(h) => h.split(',').map(|h| host_from_text(h.trim())).collect(),
            None => vec![pgwire::Host::Unix(PathBuf::from("/var/run/postgresql"))],
        }
    } else {
        cfg.get_hosts()
            .iter()
            .map(|h| match h {
                tokio_postgres::config::Host::Tcp(h) => host_from_text(h),
                #[cfg(unix)]
                tokio_postgres::config::Host::Unix(p) => pgwire::Host::Unix(p.clone()),
            })
            .collect()
    };
    let ports = match (cfg.get_ports(), fallback("port", "PGPORT")) {
        (given, _) if !given.is_empty() => given.to_vec(),
        (_, Some(text)) => text
            .split(',')
            .map(|p| {
                p.trim().parse().map_err(|_| {
                    format!("port '{p}' (service file or PGPORT) is not a port number")
                })
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    hosts::pair(hosts, &ports, 5432)
}

/// libpq's `hostaddr`: the address to connect to, while the host name still serves the
/// certificate check and the password file. With no host named, the address is the host.
fn hosts_and_address(
    hosts: HostList,
    hostaddr: Option<String>,
    no_host_named: bool,
) -> Result<(HostList, Option<std::net::IpAddr>), String> {
    let Some(text) = hostaddr else {
        return Ok((hosts, None));
    };
    let addr: std::net::IpAddr = text.trim().parse().map_err(|_| {
        format!("hostaddr '{text}' is not an IP address; put a host name in host= instead")
    })?;
    if hosts.len() > 1 {
        return Err(
            "hostaddr with several hosts is not supported: list the addresses in host= instead"
                .into(),
        );
    }
    let port = hosts.first().map_or(5432, |(_, p)| *p);
    if no_host_named {
        return Ok((vec![(pgwire::Host::Tcp(addr.to_string()), port)], None));
    }
    Ok((hosts, Some(addr)))
}

fn host_from_text(h: &str) -> pgwire::Host {
    if h.starts_with('/') {
        pgwire::Host::Unix(PathBuf::from(h))
    } else {
        pgwire::Host::Tcp(h.to_string())
    }
}

/// The OS user name, libpq's default role.
fn os_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| {
            // SAFETY: geteuid cannot fail.
            let uid = unsafe { libc::geteuid() };
            if uid == 0 {
                "root".to_string()
            } else {
                uid.to_string()
            }
        })
}

/// One line for a tokio-postgres error, with the server's message when there is one.
pub fn describe_pg_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(": ");
                text.push_str(&s.to_string());
                source = s.source();
            }
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_dsn_syntaxes() {
        let p = parse_dsn("postgresql://bob:pw@127.0.0.1:5433/app").unwrap();
        assert_eq!(p.host, pgwire::Host::Tcp("127.0.0.1".into()));
        assert_eq!(
            (p.port, p.user.as_str(), p.dbname.as_str()),
            (5433, "bob", "app")
        );
        assert_eq!(p.password.as_deref(), Some("pw"));
        let p = parse_dsn("host=/tmp/sock port=6000 user=u dbname=d").unwrap();
        assert_eq!(p.host, pgwire::Host::Unix("/tmp/sock".into()));
        assert_eq!(p.port, 6000);
    }

    #[test]
    fn malformed_dsn_says_how_to_write_one() {
        assert!(parse_dsn("localhost")
            .unwrap_err()
            .contains("postgresql://"));
        assert!(parse_dsn("host='unterminated")
            .unwrap_err()
            .contains("malformed"));
    }

    #[test]
    fn errors_never_echo_a_password() {
        for dsn in [
            "host=h PASSWORD=hunter2",
            "host=h Password='hunter2'",
            "host=h password=hun ter2 dbname=d",
            "host='x password=hunter2",
            "postgresql://u:hunter2@h:notaport/db",
            "postgresql://u@h/db?PASSWORD=hunter2",
        ] {
            let e = parse_dsn(dsn).unwrap_err();
            assert!(!e.contains("hunter2") && !e.contains("ter2"), "{dsn}: {e}");
            let label = crate::config::TargetSpec::Dsn(dsn.into()).redacted();
            assert!(
                !label.contains("hunter2") && !label.contains("ter2"),
                "{label}"
            );
        }
        assert!(parse_dsn("host=h PASSWORD=x")
            .unwrap_err()
            .contains("password=..."));
    }

    #[test]
    fn tls_and_hostaddr_reach_the_session_parameters() {
        let p = parse_dsn("host=db.example hostaddr=127.0.0.1 sslmode=require dbname=x").unwrap();
        assert_eq!(p.tls.mode, pgwire::SslMode::Require);
        assert_eq!(p.host, pgwire::Host::Tcp("db.example".into()));
        assert_eq!(p.hostaddr, Some("127.0.0.1".parse().unwrap()));
        let p = parse_dsn("hostaddr=127.0.0.1 port=6000 dbname=x").unwrap();
        assert_eq!(
            (p.host, p.hostaddr, p.port),
            (pgwire::Host::Tcp("127.0.0.1".into()), None, 6000)
        );
        assert!(parse_dsn("host=a hostaddr=db.example")
            .unwrap_err()
            .contains("not an IP"));
        assert!(parse_dsn("host=a,b hostaddr=127.0.0.1")
            .unwrap_err()
            .contains("several hosts"));
        assert!(parse_dsn("host=a channel_binding=require")
            .unwrap_err()
            .contains("channel binding"));
    }

    #[test]
    fn tls_spelling_mistakes_are_named() {
        for (dsn, says) in [
            ("host=db SSLMODE=require", "lowercase"),
            ("host=db sslmode=requires", "verify-full"),
            (
                "postgresql://u:pw@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca",
                "/nonexistent/ca",
            ),
        ] {
            let e = parse_dsn(dsn).unwrap_err();
            assert!(e.contains(says) && !e.contains(":pw@"), "{dsn}: {e}");
        }
    }

    #[test]
    fn debug_output_hides_password() {
        let p = parse_dsn("postgresql://bob:hunter2@h/db").unwrap();
        assert!(!format!("{p:?}").contains("hunter2"));
    }
}
