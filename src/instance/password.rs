//! The superuser's password of a managed instance (issue 28, item 4): made at creation from the
//! kernel's random bytes, set on the server as a SCRAM verifier (so the password itself is
//! never on a command line, where `ps` would show it), and kept in the instance's passfile,
//! mode 0600, in libpq's format, for TCP logins by its owner (`instance dsn` names the file).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::error::InstanceError;
use super::types::Instance;

/// The passfile's name in the instance's directory.
pub const PASSFILE: &str = "passfile";

/// Makes a password, sets it for the superuser and writes the passfile.
pub(super) fn create(instance: &Instance) -> Result<(), InstanceError> {
    let password = random_password()?;
    let verifier = postgres_protocol::password::scram_sha_256(password.as_bytes());
    instance.psql(
        "postgres",
        &format!(
            "ALTER ROLE \"{}\" PASSWORD '{verifier}'",
            instance.superuser.replace('"', "\"\"")
        ),
    )?;
    write(
        instance.dir(),
        instance.port,
        &instance.superuser,
        &password,
    )
}

/// Writes the passfile (0600) of the instance in `dir`.
pub(super) fn write(
    dir: &Path,
    port: u16,
    user: &str,
    password: &str,
) -> Result<(), InstanceError> {
    let path = passfile_of(dir);
    let line = format!(
        "127.0.0.1:{}:*:{}:{}\nlocalhost:{}:*:{}:{}\n",
        port,
        escape(user),
        password,
        port,
        escape(user),
        password
    );
    let _ = std::fs::remove_file(&path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(InstanceError::io("create", &path))?;
    std::io::Write::write_all(&mut file, line.as_bytes()).map_err(InstanceError::io("write", &path))
}

/// Where an instance directory keeps its passfile.
pub fn passfile_of(dir: &Path) -> PathBuf {
    dir.join(PASSFILE)
}

/// The superuser's password from the passfile, when there is one (instances made before
/// issue 28 have none and trust TCP logins).
pub fn read(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(passfile_of(dir)).ok()?;
    let line = text.lines().next()?;
    // host:port:*:user:password; the user is escaped, the password is ours (no ':' or '\').
    line.rsplit(':').next().map(str::to_string)
}

/// 24 characters of base64url from 18 random bytes (144 bits): no ':' or '\\' to escape.
pub(super) fn random_password() -> Result<String, InstanceError> {
    use base64::Engine;
    let mut bytes = [0u8; 18];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(InstanceError::io("read", Path::new("/dev/urandom")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// A passfile field: `:` and `\` escaped.
fn escape(field: &str) -> String {
    field.replace('\\', "\\\\").replace(':', "\\:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_long_random_and_need_no_escaping() {
        let a = random_password().unwrap();
        let b = random_password().unwrap();
        assert_eq!(a.len(), 24);
        assert_ne!(a, b);
        assert!(!a.contains([':', '\\']));
        assert_eq!(escape("a:b\\c"), "a\\:b\\\\c");
    }
}
