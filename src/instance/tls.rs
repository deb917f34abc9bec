//! TLS for a managed instance (`instance start --ssl`, `ssl = true` in `[[instance]]`): a
//! certificate authority of its own and a server certificate it signed, for `localhost`,
//! 127.0.0.1 and ::1, made once in `<instance>/tls/` with the key at 0600 and owned by the
//! server's OS user, as PostgreSQL demands. `instance dsn` then prints a verify-full
//! connection string naming the CA, so psql, pgbench and tidebench all check the server.
//!
//! The CA's key is not kept: nothing else is ever signed with it. Keys are ECDSA P-256,
//! which PostgreSQL's OpenSSL and every libpq accept.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};

use super::error::{invalid, InstanceError};
use super::os_user::ServerUser;

/// The certificates' directory in the instance's.
const TLS_DIR: &str = "tls";
pub const CA_CERT: &str = "ca.crt";
pub const SERVER_CERT: &str = "server.crt";
pub const SERVER_KEY: &str = "server.key";
/// Ten years: a benchmark instance outlives no certificate renewal.
const VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// Where an instance directory keeps its certificates.
pub fn dir_of(instance_dir: &Path) -> PathBuf {
    instance_dir.join(TLS_DIR)
}

/// The CA certificate clients verify the server with (`sslrootcert`).
pub fn ca_cert_of(instance_dir: &Path) -> PathBuf {
    dir_of(instance_dir).join(CA_CERT)
}

/// Makes the certificates unless the instance has them, owned by the server's user.
pub(super) fn ensure(
    instance_dir: &Path,
    name: &str,
    user: &ServerUser,
) -> Result<(), InstanceError> {
    let dir = dir_of(instance_dir);
    if dir.join(SERVER_CERT).exists() && dir.join(SERVER_KEY).exists() {
        return Ok(());
    }
    // An hour back: a client whose clock is a little behind still accepts it.
    let now = SystemTime::now();
    let from = now - Duration::from_secs(3600);
    write_certificates(&dir, name, from, now + VALIDITY)
        .map_err(invalid("the instance's TLS files"))?;
    for path in [
        dir.clone(),
        dir.join(CA_CERT),
        dir.join(SERVER_CERT),
        dir.join(SERVER_KEY),
    ] {
        user.own(&path)?;
    }
    Ok(())
}

/// The conf lines that turn TLS on with the instance's certificate.
pub(super) fn conf_lines(instance_dir: &Path) -> Vec<(String, String)> {
    let dir = dir_of(instance_dir);
    vec![
        ("ssl".into(), "on".into()),
        (
            "ssl_cert_file".into(),
            dir.join(SERVER_CERT).display().to_string(),
        ),
        (
            "ssl_key_file".into(),
            dir.join(SERVER_KEY).display().to_string(),
        ),
    ]
}

/// Writes a new CA and a server certificate it signed, valid from `not_before` to
/// `not_after`, into `dir` (made 0700 if missing): `ca.crt`, `server.crt`, `server.key`
/// (0600). Tests use the window to make an expired certificate.
pub fn write_certificates(
    dir: &Path,
    name: &str,
    not_before: SystemTime,
    not_after: SystemTime,
) -> Result<(), String> {
    let fail =
        |what: &str, e: rcgen::Error| format!("cannot make the {what} for instance '{name}': {e}");
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(|e| fail("CA", e))?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca.distinguished_name.push(
        DnType::CommonName,
        format!("tidebench CA of instance {name}"),
    );
    ca.not_before = time_of(not_before);
    ca.not_after = time_of(not_after);
    let ca_key = KeyPair::generate().map_err(|e| fail("CA key", e))?;
    let ca_cert = ca.self_signed(&ca_key).map_err(|e| fail("CA", e))?;

    let names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    let mut server = CertificateParams::new(names).map_err(|e| fail("server certificate", e))?;
    server
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.not_before = time_of(not_before);
    server.not_after = time_of(not_after);
    let key = KeyPair::generate().map_err(|e| fail("server key", e))?;
    let cert = server
        .signed_by(&key, &ca_cert, &ca_key)
        .map_err(|e| fail("server certificate", e))?;

    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot set the permissions of {}: {e}", dir.display()))?;
    write_file(&dir.join(CA_CERT), &ca_cert.pem(), 0o644)?;
    write_file(&dir.join(SERVER_CERT), &cert.pem(), 0o644)?;
    write_file(&dir.join(SERVER_KEY), &key.serialize_pem(), 0o600)
}

/// Replaces `path` with `text` at `mode` (a key is never readable by others, even briefly).
fn write_file(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn time_of(t: SystemTime) -> time::OffsetDateTime {
    time::OffsetDateTime::from(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn certificates_verify_against_their_ca_for_the_local_names() {
        let dir = tempfile::tempdir().unwrap();
        let tls = dir.path().join("tls");
        let now = SystemTime::now();
        write_certificates(&tls, "t", now - Duration::from_secs(60), now + VALIDITY).unwrap();
        let key_mode = std::fs::metadata(tls.join(SERVER_KEY))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(key_mode & 0o777, 0o600);
        // The hot path's own verifier accepts it for 127.0.0.1 with this CA and no other.
        let files = pgwire::TlsFiles {
            root_cert: Some(pgwire::RootCert::File(tls.join(CA_CERT))),
            ..Default::default()
        };
        let built = pgwire::Tls::new(
            pgwire::SslMode::VerifyFull,
            pgwire::Negotiation::Postgres,
            &files,
        );
        assert!(built.is_ok(), "{:?}", built.err());
        let pem = std::fs::read_to_string(tls.join(SERVER_CERT)).unwrap();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let lines = conf_lines(dir.path());
        assert_eq!(lines[0], ("ssl".to_string(), "on".to_string()));
        assert!(lines[2].1.ends_with("tls/server.key"));
    }
}
