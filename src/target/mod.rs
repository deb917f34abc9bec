//! Resolving a [`TargetSpec`] to a server address: DSNs are parsed with libpq's rules and
//! defaults (issue 39: [`conninfo`] parses, this resolves), managed instances are looked up
//! (and, for the `default` instance, started on demand). A value comes, as in libpq, from the
//! connection string, else from its service (`service=` or PGSERVICE, in the service file),
//! else from the keyword's environment variable (PGHOST, PGPORT, PGUSER, ...; see
//! [`conninfo::KEYWORDS`]), else libpq's default; a password still missing is looked up in the
//! password file (see [`libpq_files`]). Hosts, addresses and ports pair as in
//! [`endpoints`]; the other keywords are checked, applied or recorded in [`keywords`].

mod check;
pub mod conninfo;
mod control;
pub mod endpoints;
mod guards;
mod hosts;
mod keywords;
mod libpq_files;
mod pooler;
mod tls;
mod tokio_tls;

/// A keyword lookup over fixed pairs, standing in for a connection string and its
/// environment in the keyword tests.
#[cfg(test)]
fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.to_string())
    }
}

pub use check::Landing;
use guards::check_keyword_case;
pub use hosts::{HostChoice, SessionAttrs};

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
    /// Where a client looks for the primary again when its session is lost (issue 54): every
    /// host of `instance:a,b`, or of a host list asking for `read-write` or `primary`, in
    /// order; empty: a lost session reconnects to `params`.
    pub follow: Vec<pgwire::ConnectParams>,
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
                follow: Vec::new(),
            })
        }
        TargetSpec::Instance { also, .. } if !also.is_empty() => resolve_primary(spec, home),
        TargetSpec::Instance { name, dbname, .. } => {
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
                follow: Vec::new(),
            })
        }
    }
}

/// `instance:a,b`: the run starts on whichever of the instances runs and is not a standby
/// (its database is created there, and replicated); every one of them is kept in `follow`.
fn resolve_primary(spec: &TargetSpec, home: &Home) -> Result<ResolvedTarget, TargetError> {
    let label = spec.redacted();
    let wrap = |source| TargetError::Instance {
        label: label.clone(),
        source,
    };
    let TargetSpec::Instance { dbname, .. } = spec else {
        return Err(TargetError::Dsn {
            label,
            message: "not a list of instances".into(),
        });
    };
    let mut follow = Vec::new();
    let mut primary = None;
    for name in spec.instances() {
        let inst = instance::find(home, name).map_err(wrap)?;
        follow.push(inst.target_params(dbname).map_err(wrap)?);
        let running = inst
            .pid()
            .is_some_and(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        if primary.is_none() && running && !inst.in_recovery() {
            primary = Some(inst);
        }
    }
    let Some(inst) = primary else {
        return Err(TargetError::Connect {
            label: label.clone(),
            message: format!(
                "none of {} runs as a primary; start the primary (`tidebench instance start \
                 NAME`), or name an instance that is not a standby",
                spec.instances().join(", ")
            ),
        });
    };
    instance::ensure_database(&inst, dbname).map_err(wrap)?;
    Ok(ResolvedTarget {
        params: inst.target_params(dbname).map_err(wrap)?,
        notes: vec![format!(
            "target '{label}': {} is the primary; clients look for the primary again on \
             every reconnect",
            inst.name
        )],
        label,
        choice: HostChoice::default(),
        follow,
    })
}

/// Parses a libpq URI or keyword/value string into connection parameters, applying libpq's
/// service file, environment defaults and password file, on the first of its hosts.
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
    let looks_like_dsn = conninfo::is_uri(dsn) || dsn.contains('=');
    if !looks_like_dsn {
        return Err(
            "not a connection string; write a URI like postgresql://user@host:5432/db, \
             keywords like 'host=/tmp port=5432 dbname=db', service=NAME, or instance:NAME[/DB]"
                .into(),
        );
    }
    check_keyword_case(dsn)?;
    let given = conninfo::parse(dsn).map_err(|e| withheld(dsn, e))?;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let service = match given.get("service").cloned().or_else(|| env("PGSERVICE")) {
        Some(name) => libpq_files::find_service(&name)?,
        None => libpq_files::Service::new(),
    };
    // libpq's order: the string, else its service, else the environment.
    let value = |k: &str| {
        given
            .get(k)
            .or_else(|| service.get(k))
            .cloned()
            .or_else(|| conninfo::env_var(k).and_then(env))
    };
    let tls = tls::tls_of(&value)?;
    let extras = keywords::extras(&value)?;
    let attrs = match value("target_session_attrs").filter(|a| !a.is_empty()) {
        Some(a) => SessionAttrs::parse(&a)?,
        None => SessionAttrs::Any,
    };
    let mut list = endpoints::endpoints(
        value("host").as_deref(),
        value("hostaddr").as_deref().filter(|a| !a.is_empty()),
        value("port").as_deref(),
    )?;
    endpoints::balance(&mut list, value("load_balance_hosts").as_deref())?;
    let first = list
        .first()
        .cloned()
        .ok_or("the connection string names no host")?;
    let user = value("user")
        .filter(|u| !u.is_empty())
        .unwrap_or_else(os_user);
    let dbname = value("dbname")
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| user.clone());
    let mut notes = Vec::new();
    if !extras.recorded.is_empty() {
        notes.push(format!(
            "accepted, not applied by tidebench's sessions: {}",
            extras.recorded.join(" ")
        ));
    }
    let (password, passfile) = password_of(&value, &first, &dbname, &user, &mut notes);
    let tcp = list.iter().any(|e| matches!(e.host, pgwire::Host::Tcp(_)));
    let keepalive = match keywords::keepalive(&value) {
        Err(e) if tcp => return Err(e),
        other => other.unwrap_or_default(),
    };
    let params = pgwire::ConnectParams {
        host: first.host.clone(),
        port: first.port,
        user,
        password,
        dbname,
        application_name: application_name(&value),
        options: value("options").unwrap_or_default(),
        connect_timeout: connect_timeout(value("connect_timeout"))?,
        hostaddr: first.addr,
        tls,
        keepalive,
    };
    Ok(ParsedDsn {
        params,
        notes,
        choice: HostChoice {
            hosts: list.iter().map(|e| (e.host.clone(), e.port)).collect(),
            hostaddrs: list.iter().map(|e| e.addr).collect(),
            pass_hosts: list.iter().map(|e| e.pass_host.clone()).collect(),
            attrs,
            passfile,
            requirepeer: extras.requirepeer,
        },
    })
}

/// The password, and the password file the other hosts look theirs up in: a password the
/// string, the service or PGPASSWORD gives serves every host; else each host looks its own up
/// in the password file (see `hosts::HostChoice::passfile`), the first one here.
fn password_of(
    value: &dyn Fn(&str) -> Option<String>,
    first: &endpoints::Endpoint,
    dbname: &str,
    user: &str,
    notes: &mut Vec<String>,
) -> (Option<String>, Option<std::path::PathBuf>) {
    if let Some(given) = value("password").filter(|p| !p.is_empty()) {
        return (Some(given), None);
    }
    let passfile = libpq_files::passfile_path(value("passfile").as_deref());
    let password = passfile.as_ref().and_then(|path| {
        libpq_files::lookup_password(path, &first.pass_host, first.port, dbname, user)
            .password(notes)
    });
    (password, passfile)
}

/// A parse error of a keyword string may quote a key made of a mistyped password's pieces:
/// it is kept only when the string holds no password. (URI errors redact on their own.)
fn withheld(dsn: &str, error: String) -> String {
    if conninfo::is_uri(dsn) || crate::config::target::password_spans(dsn).is_empty() {
        return error;
    }
    "malformed connection string (details withheld: it holds a password); check quoting and \
     key names (host, port, user, password, dbname)"
        .into()
}

/// `application_name`, else `fallback_application_name` (what the application would call
/// itself: given in the string, it replaces tidebench's own `tidebench/GROUP/SET`), else
/// tidebench's.
fn application_name(value: &dyn Fn(&str) -> Option<String>) -> String {
    value("application_name")
        .or_else(|| value("fallback_application_name"))
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| crate::config::target::APPLICATION_NAME.into())
}

/// libpq's `connect_timeout`: whole seconds, anything from 1 below 2 means 2; zero or none
/// means no limit in libpq, where tidebench keeps a 10 s bound so a run ends on time.
fn connect_timeout(given: Option<String>) -> Result<Duration, String> {
    let Some(text) = given.filter(|t| !t.trim().is_empty()) else {
        return Ok(Duration::from_secs(10));
    };
    let secs: i64 = text.trim().parse().map_err(|_| {
        format!("invalid integer value \"{text}\" for connection option \"connect_timeout\"; give whole seconds")
    })?;
    Ok(match secs {
        s if s <= 0 => Duration::from_secs(10),
        s => Duration::from_secs(s.max(2) as u64),
    })
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
            .contains("unterminated quoted string"));
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
        // An address alone is the host too, and leaves verify-full no name to check.
        let p = parse_dsn("hostaddr=127.0.0.1 port=6000 dbname=x").unwrap();
        let addr = Some("127.0.0.1".parse().unwrap());
        assert_eq!(
            (p.host, p.hostaddr, p.port),
            (pgwire::Host::Tcp("127.0.0.1".into()), addr, 6000)
        );
        assert_eq!(pgwire::Tls::verified_name("127.0.0.1", addr), "");
        assert_eq!(
            pgwire::Tls::verified_name("127.000.000.001", addr),
            "127.000.000.001"
        );
        assert!(parse_dsn("host=a hostaddr=db.example")
            .unwrap_err()
            .contains("takes IP addresses"));
        assert!(parse_dsn("host=a,b hostaddr=127.0.0.1")
            .unwrap_err()
            .contains("could not match 2 host names to 1 hostaddr"));
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
