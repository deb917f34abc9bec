//! Why a connection string's TLS cannot be set up (its mode, its root certificates, the
//! client's certificate and key), or why a server's certificate does not name the host: each variant in libpq's words where libpq has some, naming the setting and the
//! fix. A cause from OpenSSL or rustls stays the error's `source()`, not part of its text.

use std::path::PathBuf;

use crate::tls::SslMode;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `sslmode` holds none of libpq's six.
    #[error("sslmode '{0}' is not one of disable, allow, prefer, require, verify-ca, verify-full")]
    UnknownMode(String),
    /// `sslcertmode=require`, and the handshake finished without the server asking for a
    /// client certificate.
    #[error(
        "server accepted connection without a valid SSL certificate (sslcertmode=require): \
         the server did not ask for a client certificate; set ssl_ca_file on the server, or \
         use sslcertmode=allow"
    )]
    CertNotRequested,
    /// `sslnegotiation=direct` with a mode that may fall back to plaintext.
    #[error(
        "sslnegotiation=direct needs sslmode require, verify-ca or verify-full, not {}",
        .0.name()
    )]
    DirectNeedsTls(SslMode),
    /// `sslrootcert=system` with a mode that does not check the host name.
    #[error(
        "sslrootcert=system checks the host name, so it needs sslmode=verify-full, not {}",
        .0.name()
    )]
    SystemRootNeedsVerifyFull(SslMode),
    /// A verify mode names a root certificate file that is not there.
    #[error(
        "sslrootcert file {} does not exist: provide the file (sslrootcert, PGSSLROOTCERT or \
         ~/.postgresql/root.crt) or change sslmode to disable server certificate verification",
        .0.display()
    )]
    RootMissing(PathBuf),
    /// A verify mode without any root certificate.
    #[error(
        "sslmode={} needs the certificate of the authority that signed the server's: give \
         sslrootcert=FILE (or PGSSLROOTCERT), put it at ~/.postgresql/root.crt, or use \
         sslrootcert=system for a public CA",
        .0.name()
    )]
    NoRoot(SslMode),
    /// The root certificate file cannot be read as PEM certificates (`why` is OpenSSL's
    /// reason, as libpq reports it).
    #[error(
        "could not read root certificate file \"{}\": {why}; give a PEM file of the CA \
         certificates (-----BEGIN CERTIFICATE-----)",
        .path.display()
    )]
    RootUnreadable { path: PathBuf, why: String },
    /// The system's certificate store cannot be read (`sslrootcert=system`).
    #[error("sslrootcert=system: cannot read the system's certificates")]
    SystemRoots(#[source] openssl::error::ErrorStack),
    /// OpenSSL could not build the store of roots (out of memory, a broken library).
    #[error("cannot set up TLS (OpenSSL's certificate store)")]
    Store(#[source] openssl::error::ErrorStack),
    /// rustls refused the protocol versions asked for.
    #[error("cannot set up TLS (the protocol versions ssl_min/max_protocol_version allow)")]
    Versions(#[source] rustls::Error),
    /// A client certificate without its key.
    #[error(
        "client certificate {} has no key: give sslkey=FILE (or PGSSLKEY)",
        .0.display()
    )]
    CertWithoutKey(PathBuf),
    /// The client certificate file cannot be opened.
    #[error("could not open certificate file \"{}\"", .path.display())]
    CertOpen {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The client certificate file holds no PEM certificate.
    #[error(
        "could not read certificate file \"{}\": it holds no PEM certificate (expected \
         -----BEGIN CERTIFICATE-----); convert it with \
         'openssl x509 -inform DER -in FILE -out FILE.pem'",
        .0.display()
    )]
    CertNotPem(PathBuf),
    /// A client certificate is given, and its key file is not there.
    #[error(
        "certificate present, but not private key file \"{}\": give sslkey=FILE (or \
         PGSSLKEY), or leave out the certificate",
        .0.display()
    )]
    KeyMissing(PathBuf),
    /// The key file cannot be looked at (a directory without search permission).
    #[error("could not stat private key file \"{}\"", .path.display())]
    KeyStat {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("private key file \"{}\" is not a regular file", .0.display())]
    KeyNotFile(PathBuf),
    /// libpq 15's permission rule for a client key does not hold.
    #[error(
        "private key file \"{}\" has group or world access (mode {:04o}); the file must have \
         permissions u=rw (0600) or less if owned by the current user, or u=rw,g=r (0640) or \
         less if owned by root: chmod 0600 {}",
        .path.display(), .mode, .path.display()
    )]
    KeyOpenToOthers { path: PathBuf, mode: u32 },
    #[error("could not read private key file \"{}\"", .path.display())]
    KeyRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The key is neither PEM nor DER, or is encrypted and not opened (`why` is OpenSSL's
    /// reason, `hint` what to give).
    #[error("could not load private key file \"{}\": {why}; {hint}", .path.display())]
    KeyLoad {
        path: PathBuf,
        why: String,
        hint: &'static str,
    },
    /// The key is not the certificate's.
    #[error(
        "certificate does not match private key file \"{}\": give the key of certificate {}",
        .key.display(), .cert.display()
    )]
    KeyMismatch { cert: PathBuf, key: PathBuf },
    #[error("cannot use client certificate {}", .cert.display())]
    CertUnusable {
        cert: PathBuf,
        #[source]
        source: openssl::error::ErrorStack,
    },
    #[error("cannot use private key file \"{}\"", .key.display())]
    KeyUnusable {
        key: PathBuf,
        #[source]
        source: openssl::error::ErrorStack,
    },
    /// rustls cannot sign with the key's algorithm.
    #[error(
        "private key file \"{}\" is of a kind TLS here cannot sign with; use an RSA, ECDSA \
         P-256/P-384 or Ed25519 key",
        .key.display()
    )]
    KeyKind {
        key: PathBuf,
        #[source]
        source: rustls::Error,
    },
    /// verify-full, and only `hostaddr` named the server.
    #[error(
        "host name must be specified for a verified SSL connection: give host=NAME (the name \
         the certificate lists) beside hostaddr"
    )]
    NoHostName,
    /// verify-full, and no name of the certificate is the host (`examined`: the names it
    /// lists, in the order they were compared).
    #[error(
        "the server's certificate does not name host '{host}' (verify-full): {}; connect by a \
         name the certificate lists, or use sslmode=verify-ca to check the chain only",
        mismatch(.examined, .host)
    )]
    NameMismatch { host: String, examined: Vec<String> },
    /// A name of the certificate holds a NUL byte, which no host name can match.
    #[error("SSL certificate's name contains embedded null")]
    NulInName,
    /// An IP address entry of the certificate is neither 4 nor 16 bytes long.
    #[error("certificate contains IP address with invalid length {0}")]
    IpLength(usize),
}

/// libpq's words for which names of the certificate did not match.
fn mismatch(examined: &[String], host: &str) -> String {
    match examined {
        [] => "could not get server's host name from server certificate".to_string(),
        [one] => format!("server certificate for \"{one}\" does not match host name \"{host}\""),
        [first, rest @ ..] => format!(
            "server certificate for \"{first}\" (and {} other name{}) does not match host \
             name \"{host}\"",
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_mismatch_reads_as_libpq_says_it() {
        let e = TlsError::NameMismatch {
            host: "db".into(),
            examined: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            e.to_string(),
            "the server's certificate does not name host 'db' (verify-full): server \
             certificate for \"a\" (and 1 other name) does not match host name \"db\"; connect \
             by a name the certificate lists, or use sslmode=verify-ca to check the chain only"
        );
    }

    #[test]
    fn a_setup_failure_keeps_rustls_error_as_its_source() {
        let e = TlsError::Versions(rustls::Error::General("no versions".into()));
        let source = std::error::Error::source(&e).map(|s| s.to_string());
        assert_eq!(source.as_deref(), Some("unexpected error: no versions"));
        assert!(!e.to_string().contains("no versions"), "{e}");
    }
}
