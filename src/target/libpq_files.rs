//! libpq's connection files, read as libpq reads them (issue 28, item 3): the connection
//! service file (`pg_service.conf`: `[name]` sections of `key=value` lines; `PGSERVICEFILE`
//! or `~/.pg_service.conf`, then the system file in `PGSYSCONFDIR`, by default Debian's
//! `/etc/postgresql-common`) and the password file (`~/.pgpass` or `PGPASSFILE`:
//! `host:port:database:user:password` lines, `*` matching anything, `\` escaping `:` and
//! `\`; the first matching line wins; the password ends at the next unescaped `:`; the host
//! `localhost` matches the default socket directory, another socket directory matches its
//! path; a file readable by group or others is ignored with a warning, as libpq does). A
//! service file's syntax error, and `PGSERVICEFILE` naming no file, are errors with libpq's
//! words (issue 39).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A service's keywords.
pub type Service = BTreeMap<String, String>;

/// Where libpq looks for the system-wide service file without `PGSYSCONFDIR` on Debian.
const DEBIAN_SYSCONFDIR: &str = "/etc/postgresql-common";

/// The user's service file, then the system's: the first that defines `name` gives it whole
/// (libpq does not merge the two). `PGSERVICEFILE` naming a missing file is an error, as in
/// libpq; a missing `~/.pg_service.conf` or system file is not.
pub fn find_service(name: &str) -> Result<Service, String> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let user = match env("PGSERVICEFILE") {
        Some(p) => {
            let path = PathBuf::from(p);
            if !path.exists() {
                return Err(format!(
                    "service file \"{}\" not found; fix PGSERVICEFILE, or unset it to use ~/.pg_service.conf",
                    path.display()
                ));
            }
            Some(path)
        }
        None => env("HOME")
            .map(|h| PathBuf::from(h).join(".pg_service.conf"))
            .filter(|p| p.exists()),
    };
    let sysconf =
        env("PGSYSCONFDIR").map_or_else(|| PathBuf::from(DEBIAN_SYSCONFDIR), PathBuf::from);
    let system = Some(sysconf.join("pg_service.conf")).filter(|p| p.exists());
    for path in user.into_iter().chain(system) {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("service file \"{}\" cannot be read: {e}", path.display()))?;
        if let Some(service) = parse_service(&text, name).map_err(|(line, why)| {
            format!("{why} in service file \"{}\", line {line}", path.display())
        })? {
            return Ok(service);
        }
    }
    Err(format!(
        "definition of service \"{name}\" not found; add a [{name}] section to \
         ~/.pg_service.conf or the file PGSERVICEFILE names, or fix the name"
    ))
}

/// The keywords of section `[name]` of a service file, as libpq reads it: lines trimmed,
/// blank and `#` lines skipped, lines outside the section unread; inside it, a line that is
/// not `keyword=value` with a libpq keyword is a syntax error (`Err((line, why))`), and the
/// first value of a keyword stands.
pub fn parse_service(text: &str, name: &str) -> Result<Option<Service>, (usize, String)> {
    let mut found: Option<Service> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            if found.is_some() {
                break;
            }
            if section
                .strip_prefix(name)
                .is_some_and(|r| r.starts_with(']'))
            {
                found = Some(Service::new());
            }
            continue;
        }
        let Some(service) = found.as_mut() else {
            continue;
        };
        let syntax = || {
            (
                i + 1,
                "syntax error (write keyword=value with a libpq keyword, no blank before '=')"
                    .to_string(),
            )
        };
        let (key, value) = line.split_once('=').ok_or_else(syntax)?;
        if key == "service" {
            return Err((i + 1, "nested service specifications not supported".into()));
        }
        if !super::conninfo::KEYWORDS.iter().any(|(k, _)| *k == key) {
            return Err(syntax());
        }
        service
            .entry(key.to_string())
            .or_insert_with(|| value.to_string());
    }
    Ok(found)
}

/// The password file to read: `passfile` from the connection string or service, else
/// `PGPASSFILE`, else `~/.pgpass`.
pub fn passfile_path(given: Option<&str>) -> Option<PathBuf> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    given
        .map(PathBuf::from)
        .or_else(|| env("PGPASSFILE").map(PathBuf::from))
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
}

/// What the password file says for a connection, as libpq looks it up.
pub enum Passfile {
    /// No file, or no line matches.
    None,
    /// The first matching line's password.
    Found(String),
    /// The file is readable by others than its owner: ignored, with this warning.
    Ignored(String),
}

impl Passfile {
    /// The password found, if any; the warning of an ignored file goes to `notes`.
    pub fn password(self, notes: &mut Vec<String>) -> Option<String> {
        match self {
            Passfile::Found(pw) => Some(pw),
            Passfile::Ignored(why) => {
                notes.push(why);
                None
            }
            Passfile::None => None,
        }
    }
}

/// Looks up `host:port:dbname:user` in the password file at `path`; `host` is the endpoint's
/// name for the file (see `endpoints::Endpoint::pass_host`).
pub fn lookup_password(path: &Path, host: &str, port: u16, dbname: &str, user: &str) -> Passfile {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Passfile::None;
    };
    if !meta.is_file() {
        return Passfile::None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Passfile::Ignored(format!(
            "password file \"{}\" has group or world access; permissions should be u=rw (0600) \
             or less, so it is ignored: chmod 0600 {}",
            path.display(),
            path.display()
        ));
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return Passfile::None;
    };
    let port = port.to_string();
    let wanted = [host, port.as_str(), dbname, user];
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_fields(line);
        if fields.len() < 5 {
            continue;
        }
        let matches = fields[..4]
            .iter()
            .zip(wanted)
            .all(|(f, w)| f == "*" || f == w);
        if matches {
            return Passfile::Found(fields[4].clone());
        }
    }
    Passfile::None
}

/// A password file line's fields: `:` separates, `\\` escapes the next character. As in
/// libpq, the password ends at the next unescaped `:` and what follows is ignored.
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        let field = match c {
            ':' if fields.len() == 5 => break,
            ':' => {
                fields.push(String::new());
                continue;
            }
            '\\' => match chars.next() {
                Some(next) => next,
                None => c,
            },
            c => c,
        };
        if let Some(last) = fields.last_mut() {
            last.push(field);
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_its_section_only() {
        let text = "# services\n[a]\nhost=h1\nport=5433\nport=1\n\n[b]\nhost=h2\ndbname=bench\n";
        let b = parse_service(text, "b").unwrap().unwrap();
        assert_eq!(b.get("host").map(String::as_str), Some("h2"));
        assert_eq!(b.get("dbname").map(String::as_str), Some("bench"));
        assert!(!b.contains_key("port"));
        let a = parse_service(text, "a").unwrap().unwrap();
        assert_eq!(a.get("port").map(String::as_str), Some("5433"));
        assert!(parse_service(text, "c").unwrap().is_none());
        assert_eq!(parse_service("[a]\nnonsense\n", "a").unwrap_err().0, 2);
        assert_eq!(parse_service("[a]\nport =1\n", "a").unwrap_err().0, 2);
        assert_eq!(parse_service("[a]\nbogus=1\n", "a").unwrap_err().0, 2);
        assert!(parse_service("[a]\nservice=b\n", "a")
            .unwrap_err()
            .1
            .contains("nested"));
        assert!(parse_service("[ a ]\nhost=h\n", "a").unwrap().is_none());
        // Lines outside the section asked for are not read.
        assert!(parse_service("[b]\nnonsense\n[a]\nhost=h\n", "a").is_ok());
    }

    #[test]
    fn passfile_lines_match_as_libpq_matches_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        std::fs::write(
            &path,
            "# comment\ndb1:5432:*:bob:first:ignored\n*:*:bench:bob:wild\\:card\n/run/pg:*:*:*:dir\nlocalhost:*:*:*:sock\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let found = |h: &str, p: u16, d: &str, u: &str| {
            let host = crate::target::endpoints::endpoints(Some(h), None, None).unwrap();
            match lookup_password(&path, &host[0].pass_host, p, d, u) {
                Passfile::Found(pw) => Some(pw),
                _ => None,
            }
        };
        assert_eq!(found("db1", 5432, "x", "bob").as_deref(), Some("first"));
        assert_eq!(
            found("db2", 5432, "bench", "bob").as_deref(),
            Some("wild:card")
        );
        assert_eq!(found("/run/pg", 5433, "x", "amy").as_deref(), Some("dir"));
        assert_eq!(
            found("/var/run/postgresql", 5433, "x", "amy").as_deref(),
            Some("sock")
        );
        assert_eq!(found("/tmp", 5433, "x", "amy"), None);
        assert_eq!(found("db2", 5432, "x", "bob"), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        match lookup_password(&path, "db1", 5432, "x", "bob") {
            Passfile::Ignored(why) => assert!(why.contains("chmod 0600"), "{why}"),
            _ => panic!("a world-readable file is ignored"),
        }
    }
}
