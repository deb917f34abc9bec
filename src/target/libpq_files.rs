//! libpq's connection files, read as libpq reads them (issue 28, item 3): the connection
//! service file (`pg_service.conf`: `[name]` sections of `key=value` lines; `PGSERVICEFILE`
//! or `~/.pg_service.conf`, then the system file in `PGSYSCONFDIR`, by default Debian's
//! `/etc/postgresql-common`) and the password file (`~/.pgpass` or `PGPASSFILE`:
//! `host:port:database:user:password` lines, `*` matching anything, `\` escaping `:` and
//! `\`; the first matching line wins; a file readable by group or others is ignored with a
//! warning, as libpq does). Also the keyword surgery both need: `service=` and `passfile=` are
//! taken out of a connection string before the rest is parsed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A service's keywords.
pub type Service = BTreeMap<String, String>;

/// Where libpq looks for the system-wide service file without `PGSYSCONFDIR` on Debian.
const DEBIAN_SYSCONFDIR: &str = "/etc/postgresql-common";

/// The user's service file, then the system's: the first that defines `name` gives it whole
/// (libpq does not merge the two).
pub fn find_service(name: &str) -> Result<Service, String> {
    let mut looked = Vec::new();
    for path in service_files() {
        looked.push(path.display().to_string());
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Some(service) = parse_service(&text, name)
            .map_err(|(line, why)| format!("{}:{line}: {why}", path.display()))?
        {
            return Ok(service);
        }
    }
    Err(format!(
        "definition of service \"{name}\" not found (looked in {}); add a [{name}] section to \
         ~/.pg_service.conf or the file PGSERVICEFILE names, or fix the name",
        looked.join(", ")
    ))
}

fn service_files() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let user = match env("PGSERVICEFILE") {
        Some(p) => Some(PathBuf::from(p)),
        None => env("HOME").map(|h| PathBuf::from(h).join(".pg_service.conf")),
    };
    let sysconf =
        env("PGSYSCONFDIR").map_or_else(|| PathBuf::from(DEBIAN_SYSCONFDIR), PathBuf::from);
    user.into_iter()
        .chain(std::iter::once(sysconf.join("pg_service.conf")))
        .collect()
}

/// The keywords of section `[name]` of a service file; `Err((line, why))` for a line that is
/// neither a section, a comment nor `key=value` within the section looked for.
pub fn parse_service(text: &str, name: &str) -> Result<Option<Service>, (usize, String)> {
    let mut found: Option<Service> = None;
    let mut inside = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            if found.is_some() && inside {
                break;
            }
            inside = section.trim_end_matches(']').trim() == name;
            if inside {
                found = Some(Service::new());
            }
            continue;
        }
        if !inside {
            continue;
        }
        let (key, value) = line.split_once('=').ok_or((
            i + 1,
            format!("syntax error in service file: '{line}' is not key=value"),
        ))?;
        let key = key.trim();
        if key == "service" {
            return Err((
                i + 1,
                "nested service specifications are not supported".into(),
            ));
        }
        if let Some(s) = found.as_mut() {
            s.insert(key.to_string(), value.trim().to_string());
        }
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

/// Looks up `host:port:dbname:user` in the password file at `path`.
pub fn lookup_password(
    path: &Path,
    host: &pgwire::Host,
    port: u16,
    dbname: &str,
    user: &str,
) -> Passfile {
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
    // A unix socket (any directory) matches the host `localhost`, as in libpq.
    let host = match host {
        pgwire::Host::Tcp(h) => h.as_str(),
        pgwire::Host::Unix(_) => "localhost",
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

/// A password file line's fields: `:` separates, `\` escapes the next character. The
/// password is the rest of the line (it may hold `:` escaped or not).
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("one field").push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

/// Takes `key=value` out of a connection string (a keyword string or a URI's query), returning
/// the value and the string without it, for keywords the parser does not know (`service`,
/// `passfile`).
pub fn take_keyword(dsn: &str, key: &str) -> (Option<String>, String) {
    if dsn.starts_with("postgres://") || dsn.starts_with("postgresql://") {
        return take_query_param(dsn, key);
    }
    for (start, end, k, v) in keyword_pairs(dsn) {
        if k == key {
            let rest = format!("{} {}", dsn[..start].trim_end(), dsn[end..].trim_start());
            return (Some(v), rest.trim().to_string());
        }
    }
    (None, dsn.to_string())
}

fn take_query_param(uri: &str, key: &str) -> (Option<String>, String) {
    let Some((base, query)) = uri.split_once('?') else {
        return (None, uri.to_string());
    };
    let mut value = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if k == key && value.is_none() {
                value = Some(percent_decode(v));
                false
            } else {
                true
            }
        })
        .collect();
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (value, rest)
}

fn percent_decode(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `key = value` pairs of a keyword string with their spans: values may be single-quoted,
/// and `\` escapes the next character, as libpq parses them.
fn keyword_pairs(s: &str) -> Vec<(usize, usize, String, String)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i] != b'=' && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = s[start..i].to_string();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() || b[i] != b'=' {
            break;
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = Vec::new();
        let quoted = i < b.len() && b[i] == b'\'';
        if quoted {
            i += 1;
        }
        while i < b.len() {
            match b[i] {
                b'\\' if i + 1 < b.len() => {
                    value.push(b[i + 1]);
                    i += 2;
                }
                b'\'' if quoted => {
                    i += 1;
                    break;
                }
                c if !quoted && c.is_ascii_whitespace() => break,
                c => {
                    value.push(c);
                    i += 1;
                }
            }
        }
        out.push((start, i, key, String::from_utf8_lossy(&value).into_owned()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_is_its_section_only() {
        let text = "# services\n[a]\nhost=h1\nport = 5433\n\n[b]\nhost=h2\ndbname=bench\n";
        let b = parse_service(text, "b").unwrap().unwrap();
        assert_eq!(b.get("host").map(String::as_str), Some("h2"));
        assert_eq!(b.get("dbname").map(String::as_str), Some("bench"));
        assert!(!b.contains_key("port"));
        let a = parse_service(text, "a").unwrap().unwrap();
        assert_eq!(a.get("port").map(String::as_str), Some("5433"));
        assert!(parse_service(text, "c").unwrap().is_none());
        assert_eq!(parse_service("[a]\nnonsense\n", "a").unwrap_err().0, 2);
    }

    #[test]
    fn passfile_lines_match_as_libpq_matches_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        std::fs::write(
            &path,
            "# comment\ndb1:5432:*:bob:first\n*:*:bench:bob:wild\\:card\nlocalhost:*:*:*:sock\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let found = |h: &str, p: u16, d: &str, u: &str| {
            let host = if h.starts_with('/') {
                pgwire::Host::Unix(h.into())
            } else {
                pgwire::Host::Tcp(h.into())
            };
            match lookup_password(&path, &host, p, d, u) {
                Passfile::Found(pw) => Some(pw),
                _ => None,
            }
        };
        assert_eq!(found("db1", 5432, "x", "bob").as_deref(), Some("first"));
        assert_eq!(
            found("db2", 5432, "bench", "bob").as_deref(),
            Some("wild:card")
        );
        assert_eq!(found("/run/pg", 5433, "x", "amy").as_deref(), Some("sock"));
        assert_eq!(found("db2", 5432, "x", "bob"), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        match lookup_password(&path, &pgwire::Host::Tcp("db1".into()), 5432, "x", "bob") {
            Passfile::Ignored(why) => assert!(why.contains("chmod 0600"), "{why}"),
            _ => panic!("a world-readable file is ignored"),
        }
    }

    #[test]
    fn unknown_keywords_are_taken_out_of_both_syntaxes() {
        let (svc, rest) = take_keyword("service=bench dbname='my db'", "service");
        assert_eq!(
            (svc.as_deref(), rest.as_str()),
            (Some("bench"), "dbname='my db'")
        );
        let (pf, rest) = take_keyword("host=/tmp passfile='/x y/p' port=5", "passfile");
        assert_eq!(
            (pf.as_deref(), rest.as_str()),
            (Some("/x y/p"), "host=/tmp port=5")
        );
        let (svc, rest) =
            take_keyword("postgresql://h/db?service=a%20b&sslmode=disable", "service");
        assert_eq!(
            (svc.as_deref(), rest.as_str()),
            (Some("a b"), "postgresql://h/db?sslmode=disable")
        );
        let (none, same) = take_keyword("host=/tmp", "service");
        assert_eq!((none, same.as_str()), (None, "host=/tmp"));
    }
}
