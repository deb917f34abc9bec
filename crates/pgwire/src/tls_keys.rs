//! The client's certificate and key as libpq reads them (`fe-secure-openssl.c`, 15): the
//! certificate chain from a PEM file, the key in PEM or else DER, encrypted keys opened with
//! `sslpassword`, libpq's rule for the key file's permissions, and the check that the two go
//! together.
//!
//! Both are read through the system's OpenSSL, as libpq reads them, so that what libpq loads
//! loads here (X.509 version 1 certificates, traditional and PKCS#8 keys, encrypted PEM); the
//! key is then handed to rustls as PKCS#8 and the certificates as they are. rustls's own
//! check that a key fits its certificate parses the certificate with webpki, which refuses
//! version 1, so the check is made with OpenSSL and the resolver built here.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

use openssl::pkey::{PKey, Private};
use openssl::x509::X509;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::{CertifiedKey, SingleCertAndKey};

use crate::tls_error::TlsError;

/// `sslpassword`, kept out of every `Debug` print.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KeyPassword(pub String);

impl std::fmt::Debug for KeyPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyPassword(..)")
    }
}

/// The client certificate chain of `path` (PEM; the first is the client's own).
pub(crate) fn read_cert_chain(path: &Path) -> Result<Vec<X509>, TlsError> {
    let text = fs::read(path).map_err(|source| TlsError::CertOpen {
        path: path.to_path_buf(),
        source,
    })?;
    let chain = X509::stack_from_pem(&text).unwrap_or_default();
    if chain.is_empty() {
        return Err(TlsError::CertNotPem(path.to_path_buf()));
    }
    Ok(chain)
}

/// Reads the client's key after libpq's permission check: PEM first, then DER; an
/// encrypted key is opened with `password`, and without one it is refused (libpq would ask
/// on the terminal, which a benchmark has not got).
pub(crate) fn read_key(
    path: &Path,
    password: Option<&KeyPassword>,
) -> Result<PKey<Private>, TlsError> {
    let meta = fs::metadata(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => TlsError::KeyMissing(path.to_path_buf()),
        _ => TlsError::KeyStat {
            path: path.to_path_buf(),
            source,
        },
    })?;
    if !meta.is_file() {
        return Err(TlsError::KeyNotFile(path.to_path_buf()));
    }
    key_permissions_fit(meta.uid(), meta.mode(), path)?;
    let text = fs::read(path).map_err(|source| TlsError::KeyRead {
        path: path.to_path_buf(),
        source,
    })?;
    let pass = password.map_or(&[][..], |p| p.0.as_bytes());
    let from_pem = PKey::private_key_from_pem_callback(&text, |buf| {
        // Never a prompt: no password is an empty answer, which fails an encrypted key.
        let n = pass.len().min(buf.len());
        buf[..n].copy_from_slice(&pass[..n]);
        Ok(n)
    });
    match from_pem {
        Ok(key) => Ok(key),
        Err(pem_error) => PKey::private_key_from_der(&text).map_err(|_| {
            let why = first_reason(&pem_error);
            let hint = match password {
                _ if !looks_encrypted(&text) => {
                    "give a PEM or DER private key (openssl pkey -in KEY -out KEY.pem)"
                }
                None => "the key is encrypted: give its password in sslpassword",
                Some(_) => "the key is encrypted and sslpassword does not open it",
            };
            TlsError::KeyLoad {
                path: path.to_path_buf(),
                why,
                hint,
            }
        }),
    }
}

fn looks_encrypted(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    text.contains("ENCRYPTED")
}

/// OpenSSL's reason for the first error of a stack, as libpq reports it.
pub(crate) fn first_reason(e: &openssl::error::ErrorStack) -> String {
    e.errors()
        .first()
        .and_then(|e| e.reason().map(str::to_string))
        .unwrap_or_else(|| "no SSL error reported".into())
}

/// libpq 15's rule for a client key: owned by root, up to u=rw,g=r (0640); owned by anyone
/// else, up to u=rw (0600). (libpq does not compare the owner with the current user: a key
/// it can read despite such modes is the user's own, or root's.)
pub(crate) fn key_permissions_fit(owner: u32, mode: u32, path: &Path) -> Result<(), TlsError> {
    let open = if owner == 0 {
        mode & 0o037 != 0
    } else {
        mode & 0o077 != 0
    };
    if open {
        return Err(TlsError::KeyOpenToOthers {
            path: path.to_path_buf(),
            mode: mode & 0o777,
        });
    }
    Ok(())
}

/// The client's certificate and key as rustls's resolver, once OpenSSL agrees they match.
pub(crate) fn client_auth(
    cert: &Path,
    key: &Path,
    password: Option<&KeyPassword>,
    provider: &CryptoProvider,
) -> Result<Arc<SingleCertAndKey>, TlsError> {
    let chain = read_cert_chain(cert)?;
    let pkey = read_key(key, password)?;
    let matches = chain[0]
        .public_key()
        .map(|public| public.public_eq(&pkey))
        .unwrap_or(false);
    if !matches {
        return Err(TlsError::KeyMismatch {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
        });
    }
    let der = |source| TlsError::CertUnusable {
        cert: cert.to_path_buf(),
        source,
    };
    let certs = chain
        .iter()
        .map(|c| c.to_der().map(CertificateDer::from).map_err(der))
        .collect::<Result<Vec<_>, _>>()?;
    let pkcs8 = pkey
        .private_key_to_pkcs8()
        .map_err(|source| TlsError::KeyUnusable {
            key: key.to_path_buf(),
            source,
        })?;
    let signer = provider
        .key_provider
        .load_private_key(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8)))
        .map_err(|source| TlsError::KeyKind {
            key: key.to_path_buf(),
            source,
        })?;
    Ok(Arc::new(SingleCertAndKey::from(CertifiedKey::new(
        certs, signer,
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_modes_follow_libpq_15() {
        let p = Path::new("/k");
        let user = 1000;
        assert!(key_permissions_fit(user, 0o600, p).is_ok());
        assert!(key_permissions_fit(user, 0o400, p).is_ok());
        let e = key_permissions_fit(user, 0o640, p).unwrap_err().to_string();
        assert!(e.contains("chmod 0600") && e.contains("0640"), "{e}");
        assert!(key_permissions_fit(user, 0o604, p).is_err());
        // Root's key may be group-readable, never group-writable or world-anything.
        assert!(key_permissions_fit(0, 0o640, p).is_ok());
        assert!(key_permissions_fit(0, 0o600, p).is_ok());
        assert!(key_permissions_fit(0, 0o660, p).is_err());
        assert!(key_permissions_fit(0, 0o650, p).is_err());
        assert!(key_permissions_fit(0, 0o644, p).is_err());
    }

    #[test]
    fn passwords_do_not_print() {
        let p = KeyPassword("s3cret".into());
        assert!(!format!("{p:?}").contains("s3cret"));
    }
}
