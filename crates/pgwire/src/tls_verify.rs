//! The server's certificate checked as libpq checks it (issue 39): the chain by the system's
//! OpenSSL against the root certificates, with the revocation lists libpq would load, and the
//! host name by libpq's own rules (`pq_verify_peer_name_matches_certificate` in libpq 15).
//!
//! Why OpenSSL for the chain and not webpki: libpq's answer *is* OpenSSL's `X509_verify_cert`,
//! and webpki refuses what OpenSSL accepts (X.509 version 1 certificates, which PostgreSQL's
//! own test certificates are), while `sslcrldir` is OpenSSL's hashed-directory lookup. rustls
//! still runs the handshake and every record; only this per-connection check calls OpenSSL.
//! The handshake's signatures are checked by rustls's algorithms against the certificate's
//! public key, taken out with OpenSSL so that a version 1 certificate works there too.

use std::ffi::CString;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use openssl::nid::Nid;
use openssl::ssl::SslFiletype;
use openssl::stack::Stack;
use openssl::x509::store::{HashDir, X509Lookup, X509Store, X509StoreBuilder};
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::{X509PurposeId, X509StoreContext, X509VerifyResult, X509};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls13_signature_with_raw_key, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, SubjectPublicKeyInfoDer, UnixTime};
use rustls::{
    CertificateError, DigitallySignedStruct, OtherError, PeerMisbehaved, SignatureScheme,
};

use crate::tls_error::TlsError;
use crate::tls_keys::first_reason;

/// Where the trusted roots and the revocation lists come from.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrustFiles {
    /// A file of root certificates; `None` with `system` false: no chain check at all.
    pub root: Option<PathBuf>,
    /// The system's store (`sslrootcert=system`).
    pub system: bool,
    pub crl: Option<PathBuf>,
    pub crl_dir: Option<PathBuf>,
}

/// OpenSSL's store of roots (and CRLs), built once per target.
pub(crate) fn trust_store(files: &TrustFiles) -> Result<X509Store, TlsError> {
    let mut store = X509StoreBuilder::new().map_err(TlsError::Store)?;
    if files.system {
        store.set_default_paths().map_err(TlsError::SystemRoots)?;
    }
    if let Some(root) = &files.root {
        let lookup = store
            .add_lookup(X509Lookup::file())
            .map_err(TlsError::Store)?;
        let read = match c_path(root) {
            Some(_) => lookup
                .load_cert_file(root, SslFiletype::PEM)
                .map_err(|e| first_reason(&e)),
            None => Err("the path is not valid UTF-8 or holds a NUL".to_string()),
        };
        read.map_err(|why| TlsError::RootUnreadable {
            path: root.clone(),
            why,
        })?;
        // As libpq: the CRLs are looked for only beside a root file, and when none loads
        // the check is silently left out ("we do not require CRL").
        if load_crls(&mut store, files) {
            store
                .set_flags(X509VerifyFlags::CRL_CHECK | X509VerifyFlags::CRL_CHECK_ALL)
                .map_err(TlsError::Store)?;
        }
    }
    // A client checks a server's certificate for the server's purpose, as OpenSSL's SSL does.
    store
        .set_purpose(X509PurposeId::SSL_SERVER)
        .map_err(TlsError::Store)?;
    Ok(store.build())
}

/// libpq's `X509_STORE_load_locations(store, sslcrl, sslcrldir)`: true when it succeeded.
fn load_crls(store: &mut X509StoreBuilder, files: &TrustFiles) -> bool {
    if files.crl.is_none() && files.crl_dir.is_none() {
        return false;
    }
    if let Some(crl) = &files.crl {
        let loaded = c_path(crl).is_some()
            && store
                .add_lookup(X509Lookup::file())
                .and_then(|l| l.load_crl_file(crl, SslFiletype::PEM))
                .is_ok();
        if !loaded {
            return false;
        }
    }
    if let Some(dir) = &files.crl_dir {
        let Some(name) = dir.to_str().filter(|_| c_path(dir).is_some()) else {
            return false;
        };
        let added = store
            .add_lookup(X509Lookup::<HashDir>::hash_dir())
            .and_then(|l| l.add_dir(name, SslFiletype::PEM));
        if added.is_err() {
            return false;
        }
    }
    true
}

/// A path OpenSSL can take (the binding panics on others): UTF-8 without NUL.
fn c_path(path: &Path) -> Option<CString> {
    path.to_str().and_then(|s| CString::new(s).ok())
}

/// What the mode checks: the chain (with a store), and in verify-full the name of `host`.
#[derive(Clone)]
pub(crate) struct LibpqVerifier {
    pub store: Option<Arc<X509Store>>,
    /// verify-full: the host name is checked.
    pub check_name: bool,
    /// The host as the connection string gave it (bound per connection by
    /// `Tls::config_for`); unbound, the name rustls was given stands in.
    pub host: Option<String>,
    pub provider: Arc<CryptoProvider>,
}

impl std::fmt::Debug for LibpqVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LibpqVerifier(chain: {}, name: {}, host: {:?})",
            self.store.is_some(),
            self.check_name,
            self.host
        )
    }
}

fn refusal(text: String) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(Refusal(text)))))
}

/// A refusal in libpq's words, carried through rustls's error.
#[derive(Debug)]
pub(crate) struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

impl LibpqVerifier {
    fn check_chain(
        &self,
        store: &X509Store,
        leaf: &X509,
        intermediates: &[CertificateDer<'_>],
    ) -> Result<(), rustls::Error> {
        let mut chain = Stack::new().map_err(|e| refusal(e.to_string()))?;
        for der in intermediates {
            let cert = X509::from_der(der).map_err(|e| {
                refusal(format!(
                    "the server sent a certificate that cannot be read: {e}"
                ))
            })?;
            chain.push(cert).map_err(|e| refusal(e.to_string()))?;
        }
        let mut ctx = X509StoreContext::new().map_err(|e| refusal(e.to_string()))?;
        let verdict = ctx
            .init(store, leaf, &chain, |c| {
                Ok(match c.verify_cert()? {
                    true => None,
                    false => Some(c.error()),
                })
            })
            .map_err(|e| refusal(format!("certificate verify failed: {e}")))?;
        match verdict {
            None => Ok(()),
            Some(error) => Err(chain_error(error)),
        }
    }
}

/// OpenSSL's verdict as rustls's kind where there is one (the words of the refusal are then
/// the usual ones), else in OpenSSL's own words, as libpq reports them.
fn chain_error(e: X509VerifyResult) -> rustls::Error {
    use openssl_sys as ffi;
    let kind = match e.as_raw() {
        ffi::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
        | ffi::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        | ffi::X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
        | ffi::X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT => CertificateError::UnknownIssuer,
        ffi::X509_V_ERR_CERT_HAS_EXPIRED => CertificateError::Expired,
        ffi::X509_V_ERR_CERT_NOT_YET_VALID => CertificateError::NotValidYet,
        ffi::X509_V_ERR_CERT_REVOKED => CertificateError::Revoked,
        _ => {
            return refusal(format!(
                "certificate verify failed: {} (sslrootcert, sslcrl and sslcrldir decide \
                 what verifies; sslmode=require encrypts without verifying)",
                e.error_string()
            ))
        }
    };
    rustls::Error::InvalidCertificate(kind)
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(store) = &self.store else {
            return Ok(ServerCertVerified::assertion());
        };
        let leaf = X509::from_der(end_entity)
            .map_err(|e| refusal(format!("the server's certificate cannot be read: {e}")))?;
        self.check_chain(store, &leaf, intermediates)?;
        if self.check_name {
            let host = match &self.host {
                Some(host) => host.clone(),
                None => server_name.to_str().into_owned(),
            };
            names_match(&leaf, &host).map_err(|e| refusal(e.to_string()))?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let spki = spki_of(cert)?;
        let (alg_id, key) = split_spki(&spki).ok_or_else(bad_key)?;
        let algs = &self.provider.signature_verification_algorithms;
        let Some((_, candidates)) = algs.mapping.iter().find(|(s, _)| *s == dss.scheme) else {
            return Err(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme.into());
        };
        // TLS 1.2's scheme does not fix the curve: the key's algorithm picks the candidate.
        let alg = candidates
            .iter()
            .find(|a| a.public_key_alg_id().as_ref() == alg_id)
            .ok_or(rustls::Error::InvalidCertificate(
                CertificateError::BadSignature,
            ))?;
        alg.verify_signature(key, message, dss.signature())
            .map(|_| HandshakeSignatureValid::assertion())
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadSignature))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let spki = spki_of(cert)?;
        verify_tls13_signature_with_raw_key(
            message,
            &SubjectPublicKeyInfoDer::from(spki.as_slice()),
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

fn bad_key() -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::BadEncoding)
}

/// The certificate's SubjectPublicKeyInfo (DER), by OpenSSL, which reads any version.
fn spki_of(cert: &CertificateDer<'_>) -> Result<Vec<u8>, rustls::Error> {
    X509::from_der(cert)
        .and_then(|c| c.public_key())
        .and_then(|k| k.public_key_to_der())
        .map_err(|_| bad_key())
}

/// SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, key BIT STRING }:
/// the algorithm's contents and the key's bits, as rustls's algorithms take them.
fn split_spki(spki: &[u8]) -> Option<(&[u8], &[u8])> {
    let (inner, _) = der_item(spki, 0x30)?;
    let (alg_id, rest) = der_item(inner, 0x30)?;
    let (bits, _) = der_item(rest, 0x03)?;
    match bits.split_first() {
        Some((0, key)) => Some((alg_id, key)),
        _ => None,
    }
}

/// One DER item of `tag` at the start of `input`: its contents and what follows.
fn der_item(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, rest) = input.split_first()?;
    if t != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |a, &b| (a << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// libpq's host-name check (verify-full): the subject alternative names, then the common
/// name when no alternative name is of the host's kind (an IP address or a DNS name). A DNS
/// entry is compared as text whatever the host is, so an IP address written in one matches.
pub(crate) fn names_match(cert: &X509, host: &str) -> Result<(), TlsError> {
    if host.is_empty() {
        return Err(TlsError::NoHostName);
    }
    let host_is_ip = parse_ip(host).is_some();
    let mut examined: Vec<String> = Vec::new();
    let mut check_cn = true;
    if let Some(sans) = cert.subject_alt_names() {
        for san in &sans {
            let (found, matched) = if let Some(dns) = san.dnsname() {
                check_cn &= host_is_ip;
                (dns.to_string(), dns_name_matches(dns.as_bytes(), host)?)
            } else if let Some(ip) = san.ipaddress() {
                check_cn &= !host_is_ip;
                ip_matches(ip, host)?
            } else {
                continue;
            };
            examined.push(found);
            if matched {
                return Ok(());
            }
        }
    }
    if check_cn {
        let cn = cert.subject_name().entries_by_nid(Nid::COMMONNAME).next();
        if let Some(cn) = cn {
            let bytes = cn.data().as_slice();
            examined.push(String::from_utf8_lossy(bytes).into_owned());
            if dns_name_matches(bytes, host)? {
                return Ok(());
            }
        }
    }
    Err(TlsError::NameMismatch {
        host: host.to_string(),
        examined,
    })
}

/// A certificate's name against the host: equal ignoring ASCII case, or a `*.` wildcard
/// standing for exactly the host's first label.
fn dns_name_matches(name: &[u8], host: &str) -> Result<bool, TlsError> {
    if name.contains(&0) {
        return Err(TlsError::NulInName);
    }
    let host = host.as_bytes();
    if name.eq_ignore_ascii_case(host) {
        return Ok(true);
    }
    let Some(suffix) = name.strip_prefix(b"*") else {
        return Ok(false);
    };
    // `*.x` matches `a.x`: the host ends in `.x`, and its first dot begins that ending.
    if name.len() < 3 || !suffix.starts_with(b".") || name.len() > host.len() {
        return Ok(false);
    }
    let start = host.len() - suffix.len();
    let first_dot = host.iter().position(|&b| b == b'.');
    Ok(host[start..].eq_ignore_ascii_case(suffix) && first_dot.is_some_and(|d| d >= start))
}

/// An IP entry against the host, parsed as libpq parses it (`inet_aton` for version 4, so
/// `127.000.000.001` and `127.1` are 127.0.0.1): (the entry as text, whether it matched).
fn ip_matches(ip: &[u8], host: &str) -> Result<(String, bool), TlsError> {
    let text = match ip.len() {
        4 => std::net::Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]).to_string(),
        16 => {
            let mut bytes = [0u8; 16];
            bytes.copy_from_slice(ip);
            Ipv6Addr::from(bytes).to_string()
        }
        n => return Err(TlsError::IpLength(n)),
    };
    let matched = match (ip.len(), parse_ip(host)) {
        (4, Some(HostIp::V4(addr))) => addr == ip,
        (16, Some(HostIp::V6(addr))) => addr == ip,
        _ => false,
    };
    Ok((text, matched))
}

enum HostIp {
    V4([u8; 4]),
    V6([u8; 16]),
}

/// libpq's `is_ip_address`: what `inet_aton` reads as IPv4, or `inet_pton` as IPv6.
fn parse_ip(host: &str) -> Option<HostIp> {
    let c = CString::new(host).ok()?;
    let mut v4 = libc::in_addr { s_addr: 0 };
    // SAFETY: `c` is a NUL-terminated string and `v4` a valid in_addr to write.
    if unsafe { inet_aton(c.as_ptr(), &mut v4) } != 0 {
        return Some(HostIp::V4(v4.s_addr.to_ne_bytes()));
    }
    host.parse::<Ipv6Addr>()
        .ok()
        .map(|a| HostIp::V6(a.octets()))
}

extern "C" {
    // glibc's; the libc crate does not bind it.
    fn inet_aton(cp: *const libc::c_char, inp: *mut libc::in_addr) -> libc::c_int;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_one_label_as_libpq_does() {
        let m = |n: &str, h: &str| dns_name_matches(n.as_bytes(), h).unwrap();
        assert!(m("db.example.com", "DB.Example.com"));
        assert!(m("*.example.com", "db.example.com"));
        assert!(!m("*.example.com", "a.db.example.com"));
        assert!(!m("*.example.com", "example.com"));
        assert!(!m("*example.com", "dbexample.com"));
        assert!(m("127.0.0.1", "127.0.0.1"));
        assert!(dns_name_matches(b"a\0b", "a").is_err());
    }

    #[test]
    fn ip_entries_take_the_host_as_inet_aton_reads_it() {
        let ip = [127, 0, 0, 1];
        assert!(ip_matches(&ip, "127.000.000.001").unwrap().1);
        assert!(ip_matches(&ip, "127.1").unwrap().1);
        assert!(!ip_matches(&ip, "127.0.0.2").unwrap().1);
        assert!(!ip_matches(&ip, "localhost").unwrap().1);
        let v6 = Ipv6Addr::LOCALHOST.octets();
        assert!(ip_matches(&v6, "::1").unwrap().1);
        assert!(ip_matches(&[1, 2, 3], "::1").is_err());
    }

    #[test]
    fn spki_splits_into_algorithm_and_key() {
        // SEQUENCE { SEQUENCE { OID 1.3.101.112 (Ed25519) }, BIT STRING (0 unused, 2 bytes) }
        let spki = [
            0x30, 0x0c, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x03, 0x00, 0xaa, 0xbb,
        ];
        let (alg, key) = split_spki(&spki).unwrap();
        assert_eq!(alg, &[0x06, 0x03, 0x2b, 0x65, 0x70]);
        assert_eq!(key, &[0xaa, 0xbb]);
        assert!(split_spki(&spki[..5]).is_none());
    }
}
