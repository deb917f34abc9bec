//! The TLS a connection string asks for, found where libpq finds it: the string's keywords
//! (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`, `sslnegotiation`,
//! `ssl_min_protocol_version`, `ssl_max_protocol_version`, `sslcertmode`), else its service,
//! else the PGSSL* variables, else libpq's defaults (`prefer`, and the files under
//! `~/.postgresql/` when they exist).

use std::path::{Path, PathBuf};

use pgwire::{Negotiation, RootCert, SslMode, Tls, TlsFiles, TlsVersions};

/// Builds the session's TLS from the keywords' values: `value(keyword)` gives the string's,
/// else its service's, else the environment's.
pub(super) fn tls_of(value: &dyn Fn(&str) -> Option<String>) -> Result<Tls, String> {
    let value = |key: &str| value(key).filter(|v| !v.is_empty());
    let mode = match value("sslmode") {
        Some(m) => SslMode::parse(&m).map_err(|e| crate::error_chain::one_line(&e))?,
        None => SslMode::Prefer,
    };
    let negotiation = match value("sslnegotiation").as_deref() {
        None | Some("postgres") => Negotiation::Postgres,
        Some("direct") => Negotiation::Direct,
        Some(other) => {
            return Err(format!(
                "sslnegotiation '{other}' is not one of postgres, direct"
            ))
        }
    };
    let versions = protocol_range(
        value("ssl_min_protocol_version").as_deref(),
        value("ssl_max_protocol_version").as_deref(),
    )?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut files = files(
        value("sslrootcert"),
        value("sslcert"),
        value("sslkey"),
        home.as_deref(),
    );
    files.password = value("sslpassword").map(pgwire::KeyPassword);
    (files.crl, files.crl_dir) = crls(value("sslcrl"), value("sslcrldir"), home.as_deref());
    // sslcertmode (PostgreSQL 16): `disable` sends no client certificate; `allow` (the
    // default) sends one when there is one and the server asks; `require` sends one likewise
    // and fails the connection when the server did not ask for one.
    let mut require_request = false;
    match value("sslcertmode").as_deref() {
        None | Some("allow") => {}
        Some("require") => require_request = true,
        Some("disable") => {
            files.cert = None;
            files.key = None;
        }
        Some(other) => {
            return Err(format!(
                "invalid sslcertmode value: \"{other}\"; use disable, allow or require"
            ))
        }
    }
    let tls = Tls::new_limited(mode, negotiation, &files, versions)
        .map_err(|e| crate::error_chain::one_line(&e))?;
    Ok(match require_request {
        true => tls.requiring_cert_request(),
        false => tls,
    })
}

/// libpq's `ssl_min_protocol_version`/`ssl_max_protocol_version` (TLSv1, TLSv1.1, TLSv1.2,
/// TLSv1.3; the minimum defaults to TLSv1.2) as rustls's versions. rustls speaks 1.2 and 1.3
/// only, so a range that needs 1.0 or 1.1 is refused.
fn protocol_range(min: Option<&str>, max: Option<&str>) -> Result<TlsVersions, String> {
    let rank = |key: &str, v: &str| -> Result<u8, String> {
        match v {
            "TLSv1" => Ok(0),
            "TLSv1.1" => Ok(1),
            "TLSv1.2" => Ok(2),
            "TLSv1.3" => Ok(3),
            other => Err(format!(
                "invalid {key} value: \"{other}\"; use TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3"
            )),
        }
    };
    let lo = min.map_or(Ok(2), |v| rank("ssl_min_protocol_version", v))?;
    let hi = max.map_or(Ok(3), |v| rank("ssl_max_protocol_version", v))?;
    if lo > hi {
        return Err(
            "invalid SSL protocol version range; ssl_min_protocol_version must not be above ssl_max_protocol_version"
                .into(),
        );
    }
    if hi < 2 {
        return Err(
            "tidebench's TLS (rustls) speaks TLS 1.2 and 1.3 only; raise ssl_max_protocol_version to TLSv1.2 or TLSv1.3, or leave it out"
                .into(),
        );
    }
    Ok(match (lo, hi) {
        (3, _) => TlsVersions::Tls13,
        (_, 2) => TlsVersions::Tls12,
        _ => TlsVersions::Both,
    })
}

/// The revocation lists: those named, else `~/.postgresql/root.crl` (used when it exists).
fn crls(
    crl: Option<String>,
    dir: Option<String>,
    home: Option<&Path>,
) -> (Option<PathBuf>, Option<PathBuf>) {
    match (crl, dir) {
        (None, None) => (home.map(|h| h.join(".postgresql").join("root.crl")), None),
        (crl, dir) => (crl.map(PathBuf::from), dir.map(PathBuf::from)),
    }
}

/// The files to use: those named, else libpq's defaults in `~/.postgresql/`. A certificate
/// file that does not exist is no certificate (libpq goes on without one); a key is looked
/// for only beside a certificate, and its absence is then an error.
fn files(
    root: Option<String>,
    cert: Option<String>,
    key: Option<String>,
    home: Option<&Path>,
) -> TlsFiles {
    let default = |name: &str| {
        home.map(|h| h.join(".postgresql").join(name))
            .filter(|p| p.exists())
    };
    let root_cert = match root.as_deref() {
        Some("system") => Some(RootCert::System),
        Some(path) => Some(RootCert::File(PathBuf::from(path))),
        None => default("root.crt").map(RootCert::File),
    };
    let cert = match cert {
        Some(path) => Some(PathBuf::from(path)).filter(|p| !missing(p)),
        None => default("postgresql.crt"),
    };
    let key = match &cert {
        Some(_) => key
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".postgresql").join("postgresql.key"))),
        None => None,
    };
    TlsFiles {
        root_cert,
        cert,
        key,
        ..TlsFiles::default()
    }
}

/// libpq's test for a certificate file it skips: stat fails with ENOENT or ENOTDIR.
fn missing(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(_) => false,
        Err(e) => matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::target::lookup as from;

    #[test]
    fn the_default_is_prefer_and_values_apply() {
        assert_eq!(tls_of(&from(&[])).unwrap().mode, SslMode::Prefer);
        assert_eq!(
            tls_of(&from(&[("sslmode", "require")])).unwrap().mode,
            SslMode::Require
        );
        assert_eq!(
            tls_of(&from(&[("sslmode", "")])).unwrap().mode,
            SslMode::Prefer
        );
    }

    #[test]
    fn bad_values_and_refused_keywords_say_why() {
        let e = |pairs: &[(&str, &str)]| tls_of(&from(pairs)).unwrap_err();
        assert!(e(&[("sslmode", "on")]).contains("verify-full"));
        assert!(e(&[("sslnegotiation", "fast")]).contains("direct"));
        let root = e(&[
            ("sslmode", "verify-full"),
            ("sslrootcert", "/nonexistent/ca.crt"),
        ]);
        assert!(root.contains("/nonexistent/ca.crt"), "{root}");
        // Under require, a root file that is not there is ignored, as libpq ignores it.
        let ok = |pairs: &[(&str, &str)]| tls_of(&from(pairs)).is_ok();
        assert!(ok(&[
            ("sslmode", "require"),
            ("sslrootcert", "/nonexistent/ca.crt")
        ]));
        assert!(ok(&[
            ("sslpassword", "x"),
            ("sslcrl", "/x.crl"),
            ("sslcrldir", "/d")
        ]));
        assert!(e(&[("sslcertmode", "maybe")]).contains("disable, allow or require"));
        let old = e(&[
            ("ssl_min_protocol_version", "TLSv1"),
            ("ssl_max_protocol_version", "TLSv1.1"),
        ]);
        assert!(old.contains("rustls"), "{old}");
        assert!(e(&[("ssl_min_protocol_version", "TLSv2")])
            .contains("invalid ssl_min_protocol_version"));
        let range = e(&[
            ("ssl_min_protocol_version", "TLSv1.3"),
            ("ssl_max_protocol_version", "TLSv1.2"),
        ]);
        assert!(range.contains("range"), "{range}");
    }

    #[test]
    fn protocol_versions_map_to_rustls() {
        let r = |lo, hi| protocol_range(lo, hi).unwrap();
        assert_eq!(r(None, None), TlsVersions::Both);
        assert_eq!(r(Some("TLSv1"), Some("TLSv1.3")), TlsVersions::Both);
        assert_eq!(r(Some("TLSv1.3"), None), TlsVersions::Tls13);
        assert_eq!(r(None, Some("TLSv1.2")), TlsVersions::Tls12);
    }

    #[test]
    fn default_files_are_used_only_when_present() {
        let dir = tempfile::tempdir().unwrap();
        let pg = dir.path().join(".postgresql");
        std::fs::create_dir(&pg).unwrap();
        assert_eq!(
            files(None, None, None, Some(dir.path())),
            TlsFiles::default()
        );
        std::fs::write(pg.join("root.crt"), "x").unwrap();
        std::fs::write(pg.join("postgresql.key"), "x").unwrap();
        let found = files(None, None, None, Some(dir.path()));
        assert_eq!(found.root_cert, Some(RootCert::File(pg.join("root.crt"))));
        assert_eq!(found.key, None, "no key without a certificate");
        // A named certificate that is not there is none (libpq goes on without it).
        let gone = files(None, Some("/nonexistent/c".into()), None, Some(dir.path()));
        assert_eq!((gone.cert, gone.key), (None, None));
        std::fs::write(pg.join("postgresql.crt"), "x").unwrap();
        let system = files(Some("system".into()), None, None, Some(dir.path()));
        assert_eq!(system.root_cert, Some(RootCert::System));
        assert_eq!(system.cert, Some(pg.join("postgresql.crt")));
        assert_eq!(system.key, Some(pg.join("postgresql.key")));
        // The key beside a certificate is libpq's default even when absent: its absence is
        // then the refusal "certificate present, but not private key file".
        std::fs::remove_file(pg.join("postgresql.key")).unwrap();
        let keyless = files(None, None, None, Some(dir.path()));
        assert_eq!(keyless.key, Some(pg.join("postgresql.key")));
    }

    #[test]
    fn crl_defaults_to_root_crl_only_when_none_is_named() {
        let home = Path::new("/h");
        assert_eq!(
            crls(None, None, Some(home)),
            (Some(home.join(".postgresql/root.crl")), None)
        );
        assert_eq!(
            crls(None, Some("/d".into()), Some(home)),
            (None, Some(PathBuf::from("/d")))
        );
    }
}
