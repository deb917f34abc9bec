//! Target specs as written by the user (no I/O): a libpq DSN, or `instance:NAME[/DBNAME]`.
//! This is the plan's model of a target, so it lives in config: a plan names its targets
//! without importing the room that resolves them (config is the floor). Resolving a spec to a
//! server address is the job of `crate::target` (`src/target/`).

use serde::{Deserialize, Serialize};

/// The database name used on managed instances when none is given.
pub const DEFAULT_DBNAME: &str = "tidebench";
/// The managed instance used when no target is given.
pub const DEFAULT_INSTANCE: &str = "default";
/// The `application_name` of benchmark sessions whose connection string names none (the
/// runner adds the group and set); the server check knows the run's sessions by it.
pub const APPLICATION_NAME: &str = "tidebench";

#[derive(Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A libpq URI (`postgresql://...`) or keyword/value string (`host=... dbname=...`).
    /// Holds the text as given, password included: never print it, use [`TargetSpec::redacted`].
    Dsn(String),
    /// A managed instance of this tidebench home; with `also` (`instance:a,b`), whichever of
    /// `name` and `also` is the primary, found again on every reconnect (issue 54).
    Instance {
        name: String,
        dbname: String,
        also: Vec<String>,
    },
}

impl TargetSpec {
    /// Parses `--target` text. Instance names are checked here; DSN syntax when resolved.
    pub fn parse(text: &str) -> Result<TargetSpec, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the target is empty; give a DSN like 'host=localhost dbname=bench' or instance:NAME".into());
        }
        if let Some(rest) = text.strip_prefix("instance:") {
            let (names, dbname) = match rest.split_once('/') {
                Some((n, d)) => (n, d),
                None => (rest, DEFAULT_DBNAME),
            };
            let mut names = names.split(',');
            let name = names.next().unwrap_or_default();
            check_name("instance", name)?;
            check_name("database", dbname)?;
            let also: Vec<String> = names.map(str::to_string).collect();
            for other in &also {
                check_name("instance", other)?;
                if other == name || also.iter().filter(|o| *o == other).count() > 1 {
                    return Err(format!(
                        "instance '{other}' is named twice in '{text}'; name each once"
                    ));
                }
            }
            return Ok(TargetSpec::Instance {
                name: name.to_string(),
                dbname: dbname.to_string(),
                also,
            });
        }
        Ok(TargetSpec::Dsn(text.to_string()))
    }

    pub fn default_instance() -> TargetSpec {
        TargetSpec::instance(DEFAULT_INSTANCE, DEFAULT_DBNAME)
    }

    /// `instance:NAME/DBNAME`.
    pub fn instance(name: &str, dbname: &str) -> TargetSpec {
        TargetSpec::Instance {
            name: name.to_string(),
            dbname: dbname.to_string(),
            also: Vec::new(),
        }
    }

    /// The managed instances the spec names: one, or each of `instance:a,b`.
    pub fn instances(&self) -> Vec<&str> {
        match self {
            TargetSpec::Dsn(_) => Vec::new(),
            TargetSpec::Instance { name, also, .. } => std::iter::once(name.as_str())
                .chain(also.iter().map(String::as_str))
                .collect(),
        }
    }

    /// The spec with any password replaced by `********`: the only form that may be shown or stored.
    pub fn redacted(&self) -> String {
        match self {
            TargetSpec::Dsn(dsn) => redact_dsn(dsn),
            TargetSpec::Instance { name, dbname, also } => {
                let names: Vec<&str> = std::iter::once(name.as_str())
                    .chain(also.iter().map(String::as_str))
                    .collect();
                format!("instance:{}/{dbname}", names.join(","))
            }
        }
    }
}

/// Names of instances and databases: letters, digits, `_` and `-`, so they are safe in paths and SQL.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{name}' is not a valid {what} name; use 1-63 letters, digits, '_' or '-'"
        ))
    }
}

/// Removes the password from a DSN in either libpq syntax: every span [`password_spans`] finds
/// becomes `********` (a fixed width, so not even the length shows).
pub fn redact_dsn(dsn: &str) -> String {
    let mut out = String::with_capacity(dsn.len());
    let mut last = 0;
    for span in password_spans(dsn) {
        out.push_str(&dsn[last..span.start]);
        out.push_str("********");
        last = span.end;
    }
    out.push_str(&dsn[last..]);
    out
}

/// The byte ranges of every password in `text`: the password of a URI's `user:password@`, and
/// the value after any `password=` (any letter case, anywhere, quoted or not, in a keyword
/// string or a URI query). Deliberately greedy and independent of a full parse, so a malformed
/// or half-quoted string still has its secret found: masking too much is harmless, too little
/// is a leak. Used to redact labels and errors, and to scrub the process's argv.
pub fn password_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let bytes = text.as_bytes();
    // URI userinfo: scheme://user:password@host...
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let auth_start = from + i + 3;
        let auth_end = text[auth_start..]
            .find(['/', '?', '#', ' '])
            .map_or(text.len(), |j| auth_start + j);
        let authority = &text[auth_start..auth_end];
        if let Some(at) = authority.rfind('@') {
            if let Some(colon) = authority[..at].find(':') {
                spans.push(auth_start + colon + 1..auth_start + at);
            }
        }
        from = auth_end.max(auth_start);
    }
    // password=value, in keyword strings and URI queries.
    let key = b"password";
    let mut i = 0;
    while i + key.len() <= bytes.len() {
        if !bytes[i..i + key.len()].eq_ignore_ascii_case(key) {
            i += 1;
            continue;
        }
        let mut j = i + key.len();
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if j >= bytes.len() || bytes[j] != b'=' {
            i += 1;
            continue;
        }
        j += 1;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        let in_uri = text[..i].contains("://");
        let start = j;
        if j < bytes.len() && bytes[j] == b'\'' {
            j += 1;
            while j < bytes.len() && bytes[j] != b'\'' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            j = (j + 1).min(bytes.len());
        } else {
            loop {
                while j < bytes.len()
                    && !bytes[j].is_ascii_whitespace()
                    && !(in_uri && (bytes[j] == b'&' || bytes[j] == b'#'))
                {
                    j += 1;
                }
                // `password=two words` unquoted: the next word is no keyword (it has no `=`),
                // so it is more likely the rest of the password than anything else.
                let mut k = j;
                while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                    k += 1;
                }
                let word_end = text[k..]
                    .find(|c: char| c.is_ascii_whitespace())
                    .map_or(text.len(), |w| k + w);
                if in_uri || k == j || k >= bytes.len() || text[k..word_end].contains('=') {
                    break;
                }
                j = k;
            }
        }
        if j > start {
            spans.push(start..j);
        }
        i = j.max(i + 1);
    }
    spans.sort_by_key(|s| s.start);
    // Merge overlaps, so callers can splice in order.
    let mut merged: Vec<std::ops::Range<usize>> = Vec::with_capacity(spans.len());
    for s in spans {
        match merged.last_mut() {
            Some(m) if s.start <= m.end => m.end = m.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}

impl std::fmt::Debug for TargetSpec {
    // Redacted like every other form: a plan printed with `{:?}` (a panic message, a test's
    // failure) must not carry the password either.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetSpec::Dsn(_) => f.debug_tuple("Dsn").field(&self.redacted()).finish(),
            TargetSpec::Instance { name, dbname, also } => f
                .debug_struct("Instance")
                .field("name", name)
                .field("dbname", dbname)
                .field("also", also)
                .finish(),
        }
    }
}

impl Serialize for TargetSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Only the redacted form ever leaves memory (runtime.toml, summaries).
        s.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for TargetSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TargetSpec, D::Error> {
        let text = String::deserialize(d)?;
        TargetSpec::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_instance_targets() {
        assert_eq!(
            TargetSpec::parse("instance:vm1/sales").unwrap(),
            TargetSpec::instance("vm1", "sales")
        );
        assert_eq!(
            TargetSpec::parse("instance:vm1").unwrap(),
            TargetSpec::instance("vm1", DEFAULT_DBNAME)
        );
        assert!(TargetSpec::parse("instance:../x").is_err());
        let pair = TargetSpec::parse("instance:a,b/db").unwrap();
        assert_eq!(pair.instances(), vec!["a", "b"]);
        assert_eq!(pair.redacted(), "instance:a,b/db");
        assert_eq!(TargetSpec::parse(&pair.redacted()).unwrap(), pair);
        assert!(TargetSpec::parse("instance:a,a")
            .unwrap_err()
            .contains("named twice"));
    }

    #[test]
    fn redacts_passwords_in_both_syntaxes() {
        let uri = "postgresql://bob:s3cret@db.example:5432/app?sslmode=disable&password=also";
        let r = redact_dsn(uri);
        assert!(!r.contains("s3cret") && !r.contains("also"), "{r}");
        assert!(r.contains("bob:********@db.example:5432/app"), "{r}");
        let kv = "host=/tmp port=5432 password='pa ss' user=bob";
        let r = redact_dsn(kv);
        assert_eq!(r, "host=/tmp port=5432 password=******** user=bob");
        let uri = "postgres://bob@h/db";
        assert_eq!(redact_dsn(uri), uri);
        let spec = TargetSpec::Dsn("postgresql://bob:s3cret@h/db".into());
        assert!(!format!("{spec:?}").contains("s3cret"));
    }

    #[test]
    fn finds_passwords_in_any_spelling_and_malformed_strings() {
        for (dsn, secret) in [
            ("host=h PASSWORD=hunter2 user=u", "hunter2"),
            ("host=h Password = 'hun ter2'", "hun ter2"),
            ("host='unterminated password=hunter2", "hunter2"),
            ("--target=postgresql://u:hunter2@h/db", "hunter2"),
            ("postgresql://u@h/db?PassWord=hunter2&x=1", "hunter2"),
            ("postgresql://u:hunter2@h1,u2:hunter2@h2/db", "hunter2"),
            ("password='it\\'s hunter2'", "hunter2"),
        ] {
            let r = redact_dsn(dsn);
            assert!(!r.contains(secret), "{dsn} -> {r}");
        }
        assert_eq!(
            redact_dsn("postgresql://u@h/db?password=x&sslmode=disable"),
            "postgresql://u@h/db?password=********&sslmode=disable"
        );
        assert!(password_spans("host=h user=passwordless").is_empty());
        assert!(password_spans("password=").is_empty());
    }
}
