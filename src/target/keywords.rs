//! libpq's keywords beyond where and who (issue 39, item 2): each is checked as libpq checks
//! its value, then applied where it touches a benchmark session, or accepted and recorded (in
//! the target's notes) where tidebench's sessions have nothing to apply it to.
//!
//! - `client_encoding`: tidebench's sessions read rows as UTF-8 and always ask for it, so
//!   `UTF8` (and `auto`, which libpq takes from the locale) is applied as UTF8; another
//!   encoding is refused with the fix rather than silently read wrong.
//! - `requirepeer`: checked before the first session over a Unix socket (see
//!   [`check_peer`]), as libpq checks it with `SO_PEERCRED`.
//! - `require_auth` (PostgreSQL 16): its value is checked as libpq 16 checks it.
//! - `keepalives*`, `tcp_user_timeout`: set on the session's TCP socket ([`keepalive`]).
//! - `sslcompression`, `sslsni`, `krbsrvname`, `gsslib`, `gssdelegation`: accepted and
//!   recorded.
//! - `gssencmode=require`, `channel_binding=require` and `replication`: refused with the fix
//!   (tidebench has no GSSAPI, no channel binding, and runs no replication protocol).

/// What the keywords ask for that the resolver applies.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Extras {
    /// The OS user the server must run as (`requirepeer`, Unix sockets only).
    pub requirepeer: Option<String>,
    /// Keywords accepted but not applied, as `key=value` (passwords are never among them).
    pub recorded: Vec<String>,
}

/// Keywords accepted and recorded only.
const RECORDED: &[&str] = &[
    "sslcompression",
    "sslsni",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "require_auth",
];

/// Checks the keywords' values (`value(keyword)`: the string's, else the service's, else the
/// environment's) and returns what is applied or recorded.
pub fn extras(value: &dyn Fn(&str) -> Option<String>) -> Result<Extras, String> {
    let value = |k: &str| value(k).filter(|v| !v.is_empty());
    check_choice(
        value("channel_binding"),
        "channel_binding",
        &["disable", "prefer", "require"],
    )?;
    if value("channel_binding").as_deref() == Some("require") {
        return Err("channel_binding=require: tidebench's sessions authenticate without channel binding; leave channel_binding out, or use prefer".into());
    }
    check_choice(
        value("gssencmode"),
        "gssencmode",
        &["disable", "prefer", "require"],
    )?;
    if value("gssencmode").as_deref() == Some("require") {
        return Err("gssencmode=require: tidebench has no GSSAPI encryption; use sslmode=require for an encrypted session, or leave gssencmode out".into());
    }
    if let Some(r) =
        value("replication").filter(|r| !matches!(r.as_str(), "0" | "false" | "off" | "no"))
    {
        return Err(format!("replication={r}: a benchmark session is an ordinary session, not a replication connection; leave replication out"));
    }
    if let Some(enc) = value("client_encoding") {
        check_encoding(&enc)?;
    }
    if let Some(methods) = value("require_auth") {
        check_require_auth(&methods)?;
    }
    let mut extras = Extras {
        requirepeer: value("requirepeer"),
        ..Extras::default()
    };
    for key in RECORDED {
        if let Some(v) = value(key) {
            extras.recorded.push(format!("{key}={v}"));
        }
    }
    Ok(extras)
}

/// libpq's keepalive keywords: whole numbers (`keepalives` on unless 0; seconds for idle and
/// interval, milliseconds for `tcp_user_timeout`, where zero or less keeps the system's).
/// libpq checks them only for a TCP connection, so the caller ignores an error otherwise.
pub fn keepalive(value: &dyn Fn(&str) -> Option<String>) -> Result<pgwire::KeepAlive, String> {
    let int = |key: &str| -> Result<Option<i64>, String> {
        match value(key).filter(|v| !v.trim().is_empty()) {
            None => Ok(None),
            Some(v) => v.trim().parse::<i64>().map(Some).map_err(|_| {
                format!("invalid integer value \"{v}\" for connection option \"{key}\"; give a whole number")
            }),
        }
    };
    let on = int("keepalives")? != Some(0);
    // libpq sets these only with keepalives on, and a value below 1 makes the kernel refuse.
    let timing = |key: &str, option: &str| -> Result<Option<u64>, String> {
        match int(key)? {
            Some(n) if on && n < 1 => Err(format!(
                "setsockopt({option}) failed: Invalid argument; {key} must be at least 1"
            )),
            Some(n) if on => Ok(Some(n as u64)),
            _ => Ok(None),
        }
    };
    let secs = |n: Option<u64>| n.map(std::time::Duration::from_secs);
    Ok(pgwire::KeepAlive {
        on,
        idle: secs(timing("keepalives_idle", "TCP_KEEPIDLE")?),
        interval: secs(timing("keepalives_interval", "TCP_KEEPINTVL")?),
        count: timing("keepalives_count", "TCP_KEEPCNT")?
            .map(|n| n.min(u64::from(u32::MAX)) as u32),
        // Zero or less: the system's own timeout.
        user_timeout: int("tcp_user_timeout")?
            .filter(|n| *n > 0)
            .map(|n| std::time::Duration::from_millis(n as u64)),
    })
}

fn check_choice(given: Option<String>, key: &str, allowed: &[&str]) -> Result<(), String> {
    match given {
        Some(v) if !allowed.contains(&v.as_str()) => Err(format!(
            "invalid {key} value: \"{v}\"; use one of {}",
            allowed.join(", ")
        )),
        _ => Ok(()),
    }
}

/// UTF-8 under any of PostgreSQL's spellings, or `auto`.
fn check_encoding(enc: &str) -> Result<(), String> {
    let plain: String = enc
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    if matches!(plain.as_str(), "utf8" | "unicode" | "auto") {
        return Ok(());
    }
    Err(format!(
        "client_encoding={enc}: tidebench's sessions read rows as UTF-8 (the server converts); leave client_encoding out, or use UTF8"
    ))
}

/// libpq 16's `require_auth`: a comma-separated list of methods, all negated (`!md5`) or none.
fn check_require_auth(methods: &str) -> Result<(), String> {
    const METHODS: &[&str] = &["password", "md5", "gss", "sspi", "scram-sha-256", "none"];
    let mut negated = None;
    for m in methods.split(',') {
        let (neg, name) = match m.strip_prefix('!') {
            Some(n) => (true, n),
            None => (false, m),
        };
        if !METHODS.contains(&name) {
            return Err(format!(
                "invalid require_auth value: \"{m}\"; use {} (each may start with '!')",
                METHODS.join(", ")
            ));
        }
        if negated.is_some_and(|n| n != neg) {
            return Err(format!(
                "require_auth '{methods}' mixes negated and plain methods; use one kind"
            ));
        }
        negated = Some(neg);
    }
    Ok(())
}

/// `requirepeer`: the server behind a Unix socket must run as this OS user. Checked as libpq
/// does, by the socket's peer credentials, on a connection of its own (the server sees it
/// open and close before any startup message).
pub fn check_peer(dir: &std::path::Path, port: u16, want: &str) -> Result<(), String> {
    use std::os::unix::io::AsRawFd;
    let path = dir.join(format!(".s.PGSQL.{port}"));
    let socket = std::os::unix::net::UnixStream::connect(&path).map_err(|e| {
        format!(
            "cannot connect to {}: {e} (is the server running and accepting connections there?)",
            path.display()
        )
    })?;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(format!(
            "could not get peer credentials: {}",
            std::io::Error::last_os_error()
        ));
    }
    let actual = user_name(cred.uid).ok_or_else(|| {
        format!(
            "local user with ID {} does not exist; requirepeer cannot be checked",
            cred.uid
        )
    })?;
    if actual != want {
        return Err(format!(
            "requirepeer specifies \"{want}\", but actual peer user name is \"{actual}\"; name the server's OS user in requirepeer, or leave it out"
        ));
    }
    Ok(())
}

fn user_name(uid: libc::uid_t) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffers outlive the call; `out` is set to `&pwd` or null.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: pw_name points into `buf`, NUL-terminated by getpwuid_r.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::target::lookup as with;

    #[test]
    fn values_are_checked_applied_or_recorded() {
        let e = extras(&with(&[("krbsrvname", "pg"), ("requirepeer", "postgres")])).unwrap();
        assert_eq!(e.recorded, vec!["krbsrvname=pg".to_string()]);
        assert_eq!(e.requirepeer.as_deref(), Some("postgres"));
        assert!(extras(&with(&[("client_encoding", "utf-8")])).is_ok());
        let err = |pairs: &[(&str, &str)]| extras(&with(pairs)).unwrap_err();
        assert!(err(&[("client_encoding", "LATIN1")]).contains("UTF8"));
        assert!(err(&[("gssencmode", "require")]).contains("sslmode=require"));
        assert!(err(&[("gssencmode", "maybe")]).contains("invalid gssencmode value"));
        assert!(err(&[("channel_binding", "1")]).contains("invalid channel_binding value"));
        assert!(err(&[("replication", "database")]).contains("leave replication out"));
        assert!(err(&[("require_auth", "md5,!scram-sha-256")]).contains("mixes"));
        assert!(err(&[("require_auth", "kerberos")]).contains("invalid require_auth"));
        assert!(extras(&with(&[("require_auth", "!md5,!password")])).is_ok());
    }

    #[test]
    fn keepalives_are_libpqs_numbers() {
        let k = keepalive(&with(&[
            ("keepalives_idle", "30"),
            ("tcp_user_timeout", "1500"),
        ]))
        .unwrap();
        assert!(k.on);
        assert_eq!(k.idle, Some(std::time::Duration::from_secs(30)));
        assert_eq!(k.user_timeout, Some(std::time::Duration::from_millis(1500)));
        assert!(!keepalive(&with(&[("keepalives", "0")])).unwrap().on);
        let e = keepalive(&with(&[("keepalives_count", "-1")])).unwrap_err();
        assert!(e.contains("TCP_KEEPCNT"), "{e}");
        let off = keepalive(&with(&[("keepalives", "0"), ("keepalives_count", "-1")])).unwrap();
        assert_eq!(off.count, None);
        let e = keepalive(&with(&[("keepalives", "x")])).unwrap_err();
        assert!(
            e.contains("invalid integer value \"x\" for connection option \"keepalives\""),
            "{e}"
        );
    }

    #[test]
    fn requirepeer_names_both_users() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".s.PGSQL.7");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let me = user_name(unsafe { libc::geteuid() }).unwrap();
        check_peer(dir.path(), 7, &me).unwrap();
        let e = check_peer(dir.path(), 7, "nobody-else").unwrap_err();
        assert!(
            e.contains(&format!("actual peer user name is \"{me}\"")),
            "{e}"
        );
    }
}
