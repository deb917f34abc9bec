//! The TLS a connection string asks for, found where libpq finds it: the string's keywords
//! (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`, `sslnegotiation`), else its service, else
//! the PGSSL* variables, else libpq's defaults (`prefer`, and the files under
//! `~/.postgresql/` when they exist). The keywords are taken out of the string before the
//! parser sees it: it knows only some of them, and only some of their values.

use std::path::{Path, PathBuf};

use pgwire::{Negotiation, RootCert, SslMode, Tls, TlsFiles};

use super::libpq_files::take_keyword;

/// Keywords libpq takes that tidebench refuses, with the reason and the way round.
const REFUSED: &[(&str, &str)] = &[
    (
        "sslpassword",
        "encrypted client keys are not supported: decrypt the key with 'openssl pkey -in KEY -out KEY.plain' (kept at 0600) and name that in sslkey",
    ),
    (
        "sslcrl",
        "certificate revocation lists are not checked: leave sslcrl out, or verify with psql",
    ),
    (
        "sslcrldir",
        "certificate revocation lists are not checked: leave sslcrldir out, or verify with psql",
    ),
];

/// Takes the TLS keywords out of `dsn` and builds the session's TLS. `fallback(keyword,
/// variable)` gives the service's value, else the environment's.
pub(super) fn take_tls(
    dsn: &str,
    fallback: &dyn Fn(&str, &str) -> Option<String>,
) -> Result<(Tls, String), String> {
    let mut rest = dsn.to_string();
    let mut take = |key: &str| {
        let (value, left) = take_keyword(&rest, key);
        rest = left;
        value
    };
    for (key, why) in REFUSED {
        if take(key).is_some_and(|v| !v.is_empty()) {
            return Err(format!("{key}: {why}"));
        }
    }
    let mode = take("sslmode");
    // The old spelling: requiressl=1 is require.
    let required = take("requiressl").is_some_and(|v| v == "1");
    let root = take("sslrootcert");
    let cert = take("sslcert");
    let key = take("sslkey");
    let negotiation = take("sslnegotiation");
    let pick = |given: Option<String>, key: &str, var: &str| {
        given
            .filter(|v| !v.is_empty())
            .or_else(|| fallback(key, var))
    };
    let mode = match pick(mode, "sslmode", "PGSSLMODE") {
        Some(m) => SslMode::parse(&m)?,
        None if required => SslMode::Require,
        None => SslMode::Prefer,
    };
    let negotiation = match pick(negotiation, "sslnegotiation", "PGSSLNEGOTIATION").as_deref() {
        None | Some("postgres") => Negotiation::Postgres,
        Some("direct") => Negotiation::Direct,
        Some(other) => {
            return Err(format!(
                "sslnegotiation '{other}' is not one of postgres, direct"
            ))
        }
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let files = files(
        pick(root, "sslrootcert", "PGSSLROOTCERT"),
        pick(cert, "sslcert", "PGSSLCERT"),
        pick(key, "sslkey", "PGSSLKEY"),
        home.as_deref(),
    );
    Ok((Tls::new(mode, negotiation, &files)?, rest))
}

/// The files to use: those named, else libpq's defaults in `~/.postgresql/` when present.
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
    let cert = cert
        .map(PathBuf::from)
        .or_else(|| default("postgresql.crt"));
    // A key is looked for only beside a certificate: libpq sends none without one.
    let key = match &cert {
        Some(_) => key.map(PathBuf::from).or_else(|| default("postgresql.key")),
        None => None,
    };
    TlsFiles {
        root_cert,
        cert,
        key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str, _: &str) -> Option<String> {
        None
    }

    #[test]
    fn keywords_are_taken_out_and_the_default_is_prefer() {
        let (tls, rest) = take_tls("host=db sslmode=require dbname=x", &none).unwrap();
        assert_eq!(tls.mode, SslMode::Require);
        assert_eq!(rest, "host=db dbname=x");
        let (tls, rest) =
            take_tls("postgresql://u@db/x?sslmode=allow&connect_timeout=3", &none).unwrap();
        assert_eq!(tls.mode, SslMode::Allow);
        assert_eq!(rest, "postgresql://u@db/x?connect_timeout=3");
        let (tls, _) = take_tls("host=db", &none).unwrap();
        assert_eq!(tls.mode, SslMode::Prefer);
        let (tls, _) = take_tls("host=db requiressl=1", &none).unwrap();
        assert_eq!(tls.mode, SslMode::Require);
    }

    #[test]
    fn the_environment_fills_in_and_the_string_wins() {
        let env = |_: &str, var: &str| (var == "PGSSLMODE").then(|| "disable".to_string());
        assert_eq!(take_tls("host=db", &env).unwrap().0.mode, SslMode::Disable);
        let given = take_tls("host=db sslmode=require", &env).unwrap().0;
        assert_eq!(given.mode, SslMode::Require);
    }

    #[test]
    fn bad_values_and_refused_keywords_say_why() {
        let e = take_tls("host=db sslmode=on", &none).unwrap_err();
        assert!(e.contains("verify-full"), "{e}");
        let e = take_tls("host=db sslpassword=x", &none).unwrap_err();
        assert!(e.contains("openssl pkey") && !e.contains("=x"), "{e}");
        let e = take_tls("host=db sslnegotiation=fast", &none).unwrap_err();
        assert!(e.contains("direct"), "{e}");
        let e = take_tls(
            "host=db sslmode=verify-full sslrootcert=/nonexistent/ca.crt",
            &none,
        )
        .unwrap_err();
        assert!(e.contains("/nonexistent/ca.crt"), "{e}");
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
        let system = files(
            Some("system".into()),
            Some("/c".into()),
            None,
            Some(dir.path()),
        );
        assert_eq!(system.root_cert, Some(RootCert::System));
        assert_eq!(system.key, Some(pg.join("postgresql.key")));
    }
}
