//! TLS settings with libpq's meanings: the six `sslmode`s, the root certificate (a file or the
//! system's store), a client certificate, and how the handshake starts (`sslnegotiation`).
//!
//! Built once per target into a rustls [`ClientConfig`], which the hot-path sessions and the
//! tokio-postgres control sessions share. Why rustls (with ring): it is driven by hand from
//! bytes in and bytes out, which fits the driver's own event loop, and `make bench --tls`
//! measures it against pgbench's OpenSSL on the same server.
//!
//! What is verified follows libpq (`fe-secure-openssl.c`): with a root certificate (given, or
//! `~/.postgresql/root.crt` present) the chain is checked in every mode that uses TLS;
//! `verify-full` checks the host name too; without one, `require` and weaker modes accept any
//! certificate, and the verify modes are refused before connecting.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

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
    pub fn parse(text: &str) -> Result<SslMode, String> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode '{other}' is not one of disable, allow, prefer, require, verify-ca, verify-full"
                ))
            }
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
}

/// A session's TLS: the mode, how it starts, and the rustls configuration (absent only when
/// the mode is `disable`).
#[derive(Clone, Default)]
pub struct Tls {
    pub mode: SslMode,
    pub negotiation: Negotiation,
    pub config: Option<Arc<ClientConfig>>,
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
        }
    }

    /// Reads the files and builds the configuration; every refusal names the file and the fix.
    pub fn new(mode: SslMode, negotiation: Negotiation, files: &TlsFiles) -> Result<Tls, String> {
        Tls::new_limited(mode, negotiation, files, TlsVersions::Both)
    }

    /// As [`Tls::new`], with only the protocol `versions` allowed.
    pub fn new_limited(
        mode: SslMode,
        negotiation: Negotiation,
        files: &TlsFiles,
        versions: TlsVersions,
    ) -> Result<Tls, String> {
        if mode == SslMode::Disable {
            return Ok(Tls::disabled());
        }
        if negotiation == Negotiation::Direct && mode.allows_plaintext() {
            return Err(format!(
                "sslnegotiation=direct needs sslmode require, verify-ca or verify-full, not {}",
                mode.name()
            ));
        }
        if files.root_cert == Some(RootCert::System) && mode != SslMode::VerifyFull {
            return Err(format!(
                "sslrootcert=system checks the host name, so it needs sslmode=verify-full, not {}",
                mode.name()
            ));
        }
        let verify_chain = files.root_cert.is_some();
        if !verify_chain && matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) {
            return Err(format!(
                "sslmode={} needs the certificate of the authority that signed the server's: \
                 give sslrootcert=FILE (or PGSSLROOTCERT), put it at ~/.postgresql/root.crt, \
                 or use sslrootcert=system for a public CA",
                mode.name()
            ));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = match &files.root_cert {
            None => None,
            Some(root) => Some(
                WebPkiServerVerifier::builder_with_provider(
                    Arc::new(root_store(root)?),
                    provider.clone(),
                )
                .build()
                .map_err(|e| format!("cannot use the root certificates: {e}"))?,
            ),
        };
        let verifier = Arc::new(Verifier {
            roots,
            check_name: mode == SslMode::VerifyFull,
            provider: provider.clone(),
        });
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions.rustls())
            .map_err(|e| format!("cannot set up TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match (&files.cert, &files.key) {
            (Some(cert), Some(key)) => {
                let chain = read_certs(cert, "sslcert")?;
                let key = read_key(key)?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    format!("the client certificate and key do not go together: {e}")
                })?
            }
            (Some(cert), None) => {
                return Err(format!(
                    "client certificate {} has no key: give sslkey=FILE (or PGSSLKEY)",
                    cert.display()
                ))
            }
            _ => builder.with_no_client_auth(),
        };
        // libpq 17 names the protocol in every handshake; a direct handshake needs it.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(Tls {
            mode,
            negotiation,
            config: Some(Arc::new(config)),
        })
    }

    /// The name the server's certificate is checked against (and sent as SNI for a host name).
    pub fn server_name(host: &str) -> ServerName<'static> {
        ServerName::try_from(host.to_string())
            // An odd host name can only fail verify-full's check; the others ignore it.
            .unwrap_or_else(|_| ServerName::try_from("invalid.host.name").expect("valid"))
    }
}

fn root_store(root: &RootCert) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match root {
        RootCert::File(path) => {
            for cert in read_certs(path, "sslrootcert")? {
                store.add(cert).map_err(|e| {
                    format!(
                        "root certificate file {} holds an unusable certificate: {e}",
                        path.display()
                    )
                })?;
            }
        }
        RootCert::System => {
            let found = rustls_native_certs::load_native_certs();
            let (_, _) = store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err(
                    "sslrootcert=system found no certificates in the system's store; install \
                     ca-certificates, or give sslrootcert=FILE"
                        .into(),
                );
            }
        }
    }
    Ok(store)
}

fn read_certs(path: &Path, keyword: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let text = fs::read(path)
        .map_err(|e| format!("cannot read {keyword} file {}: {e}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "{keyword} file {} is not PEM certificates: {e}",
                path.display()
            )
        })?;
    if certs.is_empty() {
        return Err(format!(
            "{keyword} file {} holds no certificate (expected -----BEGIN CERTIFICATE-----)",
            path.display()
        ));
    }
    Ok(certs)
}

/// Reads the client's private key after libpq's check of its permissions: no group or world
/// access when the user owns it, at most group read when root does.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let meta = fs::metadata(path)
        .map_err(|e| format!("cannot read sslkey file {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("sslkey {} is not a regular file", path.display()));
    }
    key_permissions_fit(meta.uid(), meta.mode(), path)?;
    let text =
        fs::read(path).map_err(|e| format!("cannot read sslkey file {}: {e}", path.display()))?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
        format!(
            "sslkey file {} holds no usable private key ({e}); an encrypted key needs \
             sslpassword, which tidebench does not take: decrypt it with \
             'openssl pkey -in KEY -out KEY.plain' and keep that at 0600",
            path.display()
        )
    })
}

pub(crate) fn key_permissions_fit(owner: u32, mode: u32, path: &Path) -> Result<(), String> {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let open = if owner == me {
        mode & 0o077 != 0
    } else if owner == 0 {
        mode & 0o037 != 0
    } else {
        false
    };
    if open {
        return Err(format!(
            "private key file {} has group or world access (mode {:o}); it must be u=rw (0600) \
             or less if you own it, or u=rw,g=r (0640) or less if root owns it: chmod 0600 {}",
            path.display(),
            mode & 0o777,
            path.display()
        ));
    }
    Ok(())
}

/// Checks what the mode asks for: nothing, the chain, or the chain and the host name. The
/// handshake's signatures are verified in every case, so the peer holds the certificate's key.
#[derive(Debug)]
struct Verifier {
    roots: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else {
            return Ok(ServerCertVerified::assertion());
        };
        match roots.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            // webpki checks the name only once the chain is good: verify-ca stops there.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
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
            .contains("verify-full"));
    }

    #[test]
    fn open_keys_are_refused_as_libpq_refuses_them() {
        let me = unsafe { libc::geteuid() };
        let p = Path::new("/k");
        assert!(key_permissions_fit(me, 0o600, p).is_ok());
        assert!(key_permissions_fit(me, 0o400, p).is_ok());
        assert!(key_permissions_fit(me, 0o640, p)
            .unwrap_err()
            .contains("chmod 0600"));
        assert!(key_permissions_fit(me, 0o604, p).is_err());
        if me != 0 {
            assert!(key_permissions_fit(0, 0o640, p).is_ok());
            assert!(key_permissions_fit(0, 0o660, p).is_err());
        }
    }

    #[test]
    fn verify_modes_need_a_root_and_system_needs_verify_full() {
        let none = TlsFiles::default();
        let e = Tls::new(SslMode::VerifyFull, Negotiation::Postgres, &none).unwrap_err();
        assert!(e.contains("sslrootcert"), "{e}");
        assert!(Tls::new(SslMode::Require, Negotiation::Postgres, &none).is_ok());
        let system = TlsFiles {
            root_cert: Some(RootCert::System),
            ..TlsFiles::default()
        };
        let e = Tls::new(SslMode::VerifyCa, Negotiation::Postgres, &system).unwrap_err();
        assert!(e.contains("verify-full"), "{e}");
        let e = Tls::new(SslMode::Prefer, Negotiation::Direct, &none).unwrap_err();
        assert!(e.contains("direct"), "{e}");
        assert!(Tls::new(SslMode::Disable, Negotiation::Postgres, &none)
            .unwrap()
            .config
            .is_none());
    }
}
