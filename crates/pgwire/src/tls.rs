//! TLS settings with libpq's meanings: the six `sslmode`s, the root certificate (a file or the
//! system's store), revocation lists, a client certificate and its key (encrypted ones with
//! `sslpassword`), the protocol versions, and how the handshake starts (`sslnegotiation`).
//!
//! Built once per target into a rustls [`ClientConfig`], which the hot-path sessions and the
//! tokio-postgres control sessions share. Why rustls (with ring) for the session: it is
//! driven by hand from bytes in and bytes out, which fits the driver's own event loop, and
//! `make bench --tls` measures it against pgbench's OpenSSL on the same server.
//!
//! What is verified follows libpq 15 (`fe-secure-openssl.c`), and is decided by the system's
//! OpenSSL as libpq's is (`tls_verify`, `tls_keys`): with a root certificate file that exists
//! (given, or `~/.postgresql/root.crt`) the chain is checked in every mode that uses TLS,
//! against the CRLs of `sslcrl`/`sslcrldir` (or `~/.postgresql/root.crl`); `verify-full`
//! checks the host name by libpq's rules too; without one, `require` and weaker modes accept
//! any certificate (a named root file that does not exist is then ignored, as libpq ignores
//! it), and the verify modes are refused before connecting. OpenSSL runs once per connection,
//! in the handshake; the records of a session are rustls's alone.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::pki_types::ServerName;
use rustls::sign::CertifiedKey;
use rustls::{CertificateError, ClientConfig};

pub use crate::tls_error::TlsError;
pub use crate::tls_keys::KeyPassword;
use crate::tls_verify::{trust_store, LibpqVerifier, Refusal, TrustFiles};

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    Disable,
    /// Plaintext first; TLS only if the server refuses that.
    Allow,
    /// TLS if the server offers it, else plaintext (libpq's default).
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn parse(text: &str) -> Result<SslMode, TlsError> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => return Err(TlsError::UnknownMode(other.to_string())),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Whether a plaintext session is acceptable in this mode.
    pub fn allows_plaintext(self) -> bool {
        matches!(self, SslMode::Disable | SslMode::Allow | SslMode::Prefer)
    }
}

/// libpq's `sslnegotiation`: PostgreSQL's SSLRequest first, or (PostgreSQL 17) TLS at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Negotiation {
    #[default]
    Postgres,
    Direct,
}

/// Where trusted roots come from (`sslrootcert`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCert {
    File(PathBuf),
    /// The operating system's store (`sslrootcert=system`, which implies verify-full).
    System,
}

/// The TLS versions a session may use: libpq's `ssl_min_protocol_version` and
/// `ssl_max_protocol_version`, within what rustls speaks (1.2 and 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsVersions {
    #[default]
    Both,
    Tls12,
    Tls13,
}

impl TlsVersions {
    fn rustls(self) -> &'static [&'static rustls::SupportedProtocolVersion] {
        static TLS12: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];
        static TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
        match self {
            TlsVersions::Both => rustls::DEFAULT_VERSIONS,
            TlsVersions::Tls12 => TLS12,
            TlsVersions::Tls13 => TLS13,
        }
    }
}

/// The certificate files of a connection string, after libpq's defaults were applied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    pub root_cert: Option<RootCert>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// `sslcrl` (or `~/.postgresql/root.crl`): a PEM file of revocation lists.
    pub crl: Option<PathBuf>,
    /// `sslcrldir`: a directory of lists named by hash (`openssl rehash`).
    pub crl_dir: Option<PathBuf>,
    /// `sslpassword`: opens an encrypted key.
    pub password: Option<KeyPassword>,
}

/// A session's TLS: the mode, how it starts, and the rustls configuration (absent only when
/// the mode is `disable`).
#[derive(Clone, Default)]
pub struct Tls {
    pub mode: SslMode,
    pub negotiation: Negotiation,
    pub config: Option<Arc<ClientConfig>>,
    /// verify-full's verifier, bound to each connection's host by [`Tls::config_for`].
    name_check: Option<Arc<LibpqVerifier>>,
    /// `sslcertmode=require` (libpq 16): the server must have asked for a certificate.
    cert_request_required: bool,
}

/// One connection's TLS configuration, and what must hold once its handshake is done.
pub struct SessionTls {
    pub config: Arc<ClientConfig>,
    /// Set when the server asked for a client certificate (`sslcertmode=require`).
    asked: Option<Arc<AtomicBool>>,
}

impl SessionTls {
    /// libpq 16's check for `sslcertmode=require`, after the handshake.
    pub fn check_after_handshake(&self) -> Result<(), TlsError> {
        match &self.asked {
            Some(asked) if !asked.load(Ordering::Relaxed) => Err(TlsError::CertNotRequested),
            _ => Ok(()),
        }
    }
}

/// Notes that the server asked for a client certificate, then answers as the inner resolver.
#[derive(Debug)]
struct NoteRequest {
    inner: Arc<dyn ResolvesClientCert>,
    asked: Arc<AtomicBool>,
}

impl ResolvesClientCert for NoteRequest {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.asked.store(true, Ordering::Relaxed);
        self.inner.resolve(root_hint_subjects, sigschemes)
    }

    fn has_certs(&self) -> bool {
        self.inner.has_certs()
    }
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tls({}, {:?})", self.mode.name(), self.negotiation)
    }
}

impl Tls {
    /// No TLS at all (`sslmode=disable`).
    pub fn disabled() -> Tls {
        Tls {
            mode: SslMode::Disable,
            negotiation: Negotiation::Postgres,
            config: None,
            name_check: None,
            cert_request_required: false,
        }
    }

    /// `sslcertmode=require`: a connection fails when the server did not ask for a client
    /// certificate (libpq 16's "server accepted connection without a valid SSL certificate").
    pub fn requiring_cert_request(mut self) -> Tls {
        self.cert_request_required = self.config.is_some();
        self
    }

    /// Reads the files and builds the configuration; every refusal names the file and the fix.
    pub fn new(mode: SslMode, negotiation: Negotiation, files: &TlsFiles) -> Result<Tls, TlsError> {
        Tls::new_limited(mode, negotiation, files, TlsVersions::Both)
    }

    /// As [`Tls::new`], with only the protocol `versions` allowed.
    pub fn new_limited(
        mode: SslMode,
        negotiation: Negotiation,
        files: &TlsFiles,
        versions: TlsVersions,
    ) -> Result<Tls, TlsError> {
        if mode == SslMode::Disable {
            return Ok(Tls::disabled());
        }
        if negotiation == Negotiation::Direct && mode.allows_plaintext() {
            return Err(TlsError::DirectNeedsTls(mode));
        }
        if files.root_cert == Some(RootCert::System) && mode != SslMode::VerifyFull {
            return Err(TlsError::SystemRootNeedsVerifyFull(mode));
        }
        let root = existing_root(mode, files.root_cert.as_ref())?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let store = match &root {
            None => None,
            Some(root) => Some(Arc::new(trust_store(&TrustFiles {
                root: match root {
                    RootCert::File(path) => Some(path.clone()),
                    RootCert::System => None,
                },
                system: *root == RootCert::System,
                crl: files.crl.clone(),
                crl_dir: files.crl_dir.clone(),
            })?)),
        };
        let verifier = LibpqVerifier {
            store,
            check_name: mode == SslMode::VerifyFull,
            host: None,
            provider: provider.clone(),
        };
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions.rustls())
            .map_err(TlsError::Versions)?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier.clone()));
        let mut config = match (&files.cert, &files.key) {
            (Some(cert), Some(key)) => builder.with_client_cert_resolver(
                crate::tls_keys::client_auth(cert, key, files.password.as_ref(), &provider)?,
            ),
            (Some(cert), None) => return Err(TlsError::CertWithoutKey(cert.clone())),
            _ => builder.with_no_client_auth(),
        };
        // libpq 17 names the protocol in every handshake; a direct handshake needs it.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(Tls {
            mode,
            negotiation,
            config: Some(Arc::new(config)),
            name_check: (mode == SslMode::VerifyFull).then(|| Arc::new(verifier)),
            cert_request_required: false,
        })
    }

    /// The configuration a connection to `host` uses: the target's, with verify-full's name
    /// check bound to `host` as the connection string wrote it (libpq compares that text,
    /// which a rustls server name cannot always carry, e.g. `127.000.000.001`), and with
    /// `sslcertmode=require`'s watch for the server's certificate request. Called once per
    /// connection, never per message; without either, the target's configuration as it is.
    pub fn config_for(&self, host: &str) -> Option<SessionTls> {
        let base = self.config.as_ref()?;
        if self.name_check.is_none() && !self.cert_request_required {
            return Some(SessionTls {
                config: base.clone(),
                asked: None,
            });
        }
        let mut config = ClientConfig::clone(base);
        if let Some(check) = &self.name_check {
            config
                .dangerous()
                .set_certificate_verifier(Arc::new(LibpqVerifier {
                    host: Some(host.to_string()),
                    ..LibpqVerifier::clone(check)
                }));
        }
        let asked = self.cert_request_required.then(|| {
            let asked = Arc::new(AtomicBool::new(false));
            config.client_auth_cert_resolver = Arc::new(NoteRequest {
                inner: config.client_auth_cert_resolver.clone(),
                asked: asked.clone(),
            });
            asked
        });
        Some(SessionTls {
            config: Arc::new(config),
            asked,
        })
    }

    /// The name verify-full checks for a connection to `host`: the host as given, or none
    /// (libpq's "host name must be specified") when only `hostaddr` named the server, which
    /// the target's resolution marks by giving the address as the host too.
    pub fn verified_name(host: &str, hostaddr: Option<std::net::IpAddr>) -> &str {
        match hostaddr {
            Some(addr) if addr.to_string() == host => "",
            _ => host,
        }
    }

    /// The name the server's certificate is checked against (and sent as SNI for a host name).
    pub fn server_name(host: &str) -> ServerName<'static> {
        ServerName::try_from(host.to_string())
            // An odd host name can only fail verify-full's check; the others ignore it.
            .unwrap_or_else(|_| ServerName::try_from("invalid.host.name").expect("valid"))
    }
}

/// The root file if it exists, as libpq decides: a file that is not there is ignored in the
/// modes that do not verify, and refused in those that do.
fn existing_root(mode: SslMode, root: Option<&RootCert>) -> Result<Option<RootCert>, TlsError> {
    let verify = matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull);
    match root {
        Some(RootCert::File(path)) if std::fs::metadata(path).is_err() => {
            if verify {
                return Err(TlsError::RootMissing(path.clone()));
            }
            Ok(None)
        }
        Some(root) => Ok(Some(root.clone())),
        None if verify => Err(TlsError::NoRoot(mode)),
        None => Ok(None),
    }
}

/// The refusal when the server answers the SSL request with N and the mode needs TLS.
pub fn no_tls_at_server(mode: SslMode) -> String {
    format!(
        "the server does not accept TLS connections (its ssl setting is off) and sslmode={} \
         asks for TLS: turn ssl on at the server, or use sslmode=prefer",
        mode.name()
    )
}

/// Words for a failed handshake that say what to do, from rustls's error.
pub fn describe_tls_error(e: &rustls::Error, host: &str) -> String {
    use rustls::Error as E;
    match e {
        E::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "the server's certificate is not signed by a trusted root (sslrootcert): give the \
             CA that signed it, or sslmode=require to encrypt without verifying"
                .to_string()
        }
        E::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!(
            "the server's certificate does not name host '{host}' (verify-full): connect by a \
             name the certificate lists, or use sslmode=verify-ca to check the chain only"
        ),
        E::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "the server's certificate has expired: renew it on the server".to_string(),
        E::InvalidCertificate(
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
        ) => {
            "the server's certificate is not valid yet: check the clocks of both hosts".to_string()
        }
        E::InvalidCertificate(CertificateError::Revoked) => {
            "certificate verify failed: certificate revoked (a list of sslcrl/sslcrldir names \
             the server's certificate): the server needs a new certificate"
                .to_string()
        }
        E::InvalidCertificate(CertificateError::Other(other)) => match other.0.downcast_ref() {
            Some(Refusal(words)) => words.clone(),
            None => format!("TLS handshake failed: {other}"),
        },
        other => format!("TLS handshake failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_and_bad_ones_are_named() {
        for name in [
            "disable",
            "allow",
            "prefer",
            "require",
            "verify-ca",
            "verify-full",
        ] {
            assert_eq!(SslMode::parse(name).unwrap().name(), name);
        }
        assert!(SslMode::parse("required")
            .unwrap_err()
            .to_string()
            .contains("verify-full"));
    }

    #[test]
    fn verify_modes_need_a_root_and_system_needs_verify_full() {
        let none = TlsFiles::default();
        let e = Tls::new(SslMode::VerifyFull, Negotiation::Postgres, &none)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslrootcert"), "{e}");
        assert!(Tls::new(SslMode::Require, Negotiation::Postgres, &none).is_ok());
        let system = TlsFiles {
            root_cert: Some(RootCert::System),
            ..TlsFiles::default()
        };
        let e = Tls::new(SslMode::VerifyCa, Negotiation::Postgres, &system)
            .unwrap_err()
            .to_string();
        assert!(e.contains("verify-full"), "{e}");
        let e = Tls::new(SslMode::Prefer, Negotiation::Direct, &none)
            .unwrap_err()
            .to_string();
        assert!(e.contains("direct"), "{e}");
        assert!(Tls::new(SslMode::Disable, Negotiation::Postgres, &none)
            .unwrap()
            .config
            .is_none());
    }
}
