//! Several hosts in one connection string (`host=a,b port=5432,5433`), as libpq tries them
//! (issue 28, item 3): in order, the first that answers and fits `target_session_attrs`
//! (any, read-write, read-only, primary, standby, prefer-standby) is the run's. The choice is
//! made once, when the target is resolved, by a control session asking the server
//! `pg_is_in_recovery()` and `transaction_read_only`; every session of the run then goes to
//! that host, and `runtime.toml` records it (`servers[].address`). Patroni-style clusters list
//! their members this way.

use super::{ResolvedTarget, TargetError};

/// libpq's `target_session_attrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionAttrs {
    #[default]
    Any,
    ReadWrite,
    ReadOnly,
    Primary,
    Standby,
    PreferStandby,
}

impl SessionAttrs {
    pub fn parse(text: &str) -> Result<SessionAttrs, String> {
        Ok(match text {
            "any" => SessionAttrs::Any,
            "read-write" => SessionAttrs::ReadWrite,
            "read-only" => SessionAttrs::ReadOnly,
            "primary" => SessionAttrs::Primary,
            "standby" => SessionAttrs::Standby,
            "prefer-standby" => SessionAttrs::PreferStandby,
            other => {
                return Err(format!(
                    "target_session_attrs '{other}' is not one of any, read-write, read-only, \
                     primary, standby, prefer-standby"
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SessionAttrs::Any => "any",
            SessionAttrs::ReadWrite => "read-write",
            SessionAttrs::ReadOnly => "read-only",
            SessionAttrs::Primary => "primary",
            SessionAttrs::Standby => "standby",
            SessionAttrs::PreferStandby => "prefer-standby",
        }
    }

    /// Whether a server in recovery or not, read-only or not, fits.
    fn accepts(self, in_recovery: bool, read_only: bool) -> bool {
        match self {
            SessionAttrs::Any => true,
            SessionAttrs::ReadWrite => !read_only,
            SessionAttrs::ReadOnly => read_only,
            SessionAttrs::Primary => !in_recovery,
            SessionAttrs::Standby | SessionAttrs::PreferStandby => in_recovery,
        }
    }
}

/// The hosts a connection string names, in order, and what the chosen one must be.
#[derive(Debug, Clone, Default)]
pub struct HostChoice {
    pub hosts: Vec<(pgwire::Host, u16)>,
    pub attrs: SessionAttrs,
    /// The password file each host looks its password up in, when no password was given
    /// (libpq matches its lines per host and port).
    pub passfile: Option<std::path::PathBuf>,
    /// Each host's `hostaddr`, in the order of `hosts` (missing: none).
    pub hostaddrs: Vec<Option<std::net::IpAddr>>,
    /// Each host's name in the password file, in the order of `hosts`.
    pub pass_hosts: Vec<String>,
    /// `requirepeer`: the OS user a server behind a Unix socket must run as.
    pub requirepeer: Option<String>,
}

impl HostChoice {
    /// Only a list of hosts or a demand on the server needs a session to choose.
    pub fn needs_probe(&self) -> bool {
        self.hosts.len() > 1 || self.attrs != SessionAttrs::Any
    }
}

impl ResolvedTarget {
    /// `requirepeer`, over a Unix socket: the server must run as that OS user (libpq ignores
    /// it for TCP).
    fn check_peer(&self) -> Result<(), String> {
        match (&self.choice.requirepeer, &self.params.host) {
            (Some(want), pgwire::Host::Unix(dir)) => {
                super::keywords::check_peer(dir, self.params.port, want)
            }
            _ => Ok(()),
        }
    }
}

fn address(host: &pgwire::Host, port: u16) -> String {
    match host {
        pgwire::Host::Tcp(h) => format!("{h}:{port}"),
        pgwire::Host::Unix(dir) => format!("{}:{port}", dir.display()),
    }
}

impl ResolvedTarget {
    /// The target on its `i`th host, with that host's address and password.
    fn on_host(&self, i: usize) -> ResolvedTarget {
        let mut candidate = self.clone();
        if let Some((host, port)) = self.choice.hosts.get(i) {
            candidate.params.host = host.clone();
            candidate.params.port = *port;
            candidate.params.hostaddr = self.choice.hostaddrs.get(i).copied().flatten();
            if let (Some(path), Some(name)) = (&self.choice.passfile, self.choice.pass_hosts.get(i))
            {
                let p = &candidate.params;
                // The file's warning, if any, was noted when the string was parsed.
                candidate.params.password =
                    super::libpq_files::lookup_password(path, name, *port, &p.dbname, &p.user)
                        .password(&mut Vec::new());
            }
        }
        candidate
    }

    /// The target on the first of its hosts that answers and fits its `target_session_attrs`
    /// (prefer-standby: a standby, else any); unchanged when it names one host and no demand.
    pub async fn choose_host(self) -> Result<ResolvedTarget, TargetError> {
        if !self.choice.needs_probe() {
            self.check_peer().map_err(|message| TargetError::Connect {
                label: self.label.clone(),
                message,
            })?;
            return Ok(self);
        }
        let attrs = self.choice.attrs;
        let passes = match attrs {
            SessionAttrs::PreferStandby => vec![SessionAttrs::Standby, SessionAttrs::Any],
            other => vec![other],
        };
        let mut tried: Vec<String> = Vec::new();
        // A host list asking for a writable server: clients look for it again on reconnect.
        let follow: Vec<pgwire::ConnectParams> =
            match matches!(attrs, SessionAttrs::ReadWrite | SessionAttrs::Primary) {
                true => (0..self.choice.hosts.len())
                    .map(|i| self.on_host(i).params)
                    .collect(),
                false => Vec::new(),
            };
        for want in &passes {
            for (i, (host, port)) in self.choice.hosts.iter().enumerate() {
                let mut candidate = self.on_host(i);
                let at = address(host, *port);
                if let Err(e) = candidate.check_peer() {
                    tried.push(format!("{at}: {e}"));
                    continue;
                }
                let client = match candidate.connect_tokio().await {
                    Ok(c) => c,
                    Err(e) => {
                        tried.push(format!("{at}: {e}"));
                        continue;
                    }
                };
                let state = client
                    .query_typed_one(
                        "SELECT pg_is_in_recovery(), \
                         current_setting('transaction_read_only') = 'on'",
                        &[],
                    )
                    .await;
                let (in_recovery, read_only): (bool, bool) = match state {
                    Ok(row) => (row.get(0), row.get(1)),
                    Err(e) => {
                        tried.push(format!("{at}: {}", super::describe_pg_error(&e)));
                        continue;
                    }
                };
                if want.accepts(in_recovery, read_only) {
                    candidate.notes.push(format!(
                        "target '{}': {at} chosen (target_session_attrs={})",
                        self.label,
                        attrs.name()
                    ));
                    candidate.choice.hosts = vec![(host.clone(), *port)];
                    candidate.choice.hostaddrs = vec![candidate.params.hostaddr];
                    candidate.choice.pass_hosts =
                        self.choice.pass_hosts.get(i).cloned().into_iter().collect();
                    candidate.choice.attrs = SessionAttrs::Any;
                    candidate.follow = follow;
                    return Ok(candidate);
                }
                tried.push(format!(
                    "{at}: {}",
                    if in_recovery {
                        "a standby"
                    } else if read_only {
                        "read-only"
                    } else {
                        "a primary"
                    }
                ));
            }
        }
        Err(TargetError::Connect {
            label: self.label.clone(),
            message: format!(
                "no host fits target_session_attrs={} ({}); start a server that does, or ask \
                 for another kind (any, read-write, read-only, primary, standby, prefer-standby)",
                attrs.name(),
                tried.join("; ")
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attrs_parse_and_accept_as_libpq() {
        let p = |s| SessionAttrs::parse(s).unwrap();
        assert!(p("read-write").accepts(false, false));
        assert!(!p("read-write").accepts(true, true));
        assert!(p("standby").accepts(true, true));
        assert!(!p("primary").accepts(true, true));
        assert!(p("read-only").accepts(false, true));
        assert!(p("any").accepts(true, true));
        assert!(SessionAttrs::parse("master").is_err());
    }
}
