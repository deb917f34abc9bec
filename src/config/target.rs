//! Target specs as written by the user (no I/O): a libpq DSN, or `instance:NAME[/DBNAME]`.
//! Resolving them to a socket address is the job of `crate::target`.

use serde::{Deserialize, Serialize};

/// The database name used on managed instances when none is given.
pub const DEFAULT_DBNAME: &str = "tidebench";
/// The managed instance used when no target is given.
pub const DEFAULT_INSTANCE: &str = "default";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A libpq URI (`postgresql://...`) or keyword/value string (`host=... dbname=...`).
    /// Holds the text as given, password included: never print it, use [`TargetSpec::redacted`].
    Dsn(String),
    /// A managed instance of this tidebench home.
    Instance { name: String, dbname: String },
}

impl TargetSpec {
    /// Parses `--target` text. Instance names are checked here; DSN syntax when resolved.
    pub fn parse(text: &str) -> Result<TargetSpec, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the target is empty; give a DSN like 'host=localhost dbname=bench' or instance:NAME".into());
        }
        if let Some(rest) = text.strip_prefix("instance:") {
            let (name, dbname) = match rest.split_once('/') {
                Some((n, d)) => (n, d),
                None => (rest, DEFAULT_DBNAME),
            };
            check_name("instance", name)?;
            check_name("database", dbname)?;
            return Ok(TargetSpec::Instance {
                name: name.to_string(),
                dbname: dbname.to_string(),
            });
        }
        Ok(TargetSpec::Dsn(text.to_string()))
    }

    pub fn default_instance() -> TargetSpec {
        TargetSpec::Instance {
            name: DEFAULT_INSTANCE.to_string(),
            dbname: DEFAULT_DBNAME.to_string(),
        }
    }

    /// The spec with any password replaced by `********`: the only form that may be shown or stored.
    pub fn redacted(&self) -> String {
        match self {
            TargetSpec::Dsn(dsn) => redact_dsn(dsn),
            TargetSpec::Instance { name, dbname } => format!("instance:{name}/{dbname}"),
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

/// Removes the password from a DSN in either libpq syntax.
pub fn redact_dsn(dsn: &str) -> String {
    if dsn.starts_with("postgres://") || dsn.starts_with("postgresql://") {
        let (scheme, rest) = dsn.split_once("://").unwrap_or(("postgresql", dsn));
        let (authority, tail) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let authority = match authority.rsplit_once('@') {
            Some((userinfo, hosts)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{user}:********@{hosts}"),
                None => authority.to_string(),
            },
            None => authority.to_string(),
        };
        let tail = redact_query_password(tail);
        return format!("{scheme}://{authority}{tail}");
    }
    // keyword=value form; values may be quoted with single quotes.
    let mut out = Vec::new();
    for (key, value) in split_keywords(dsn) {
        if key == "password" {
            out.push("password=********".to_string());
        } else {
            out.push(format!("{key}={value}"));
        }
    }
    out.join(" ")
}

fn redact_query_password(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_string();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some(("password", _)) => "password=********".to_string(),
            _ => kv.to_string(),
        })
        .collect();
    format!("{path}?{}", params.join("&"))
}

/// Splits `key=value key='quoted value'` into pairs, keeping values as written.
fn split_keywords(dsn: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut chars = dsn.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() {
            break;
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek() == Some(&'=') {
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            value.push('\'');
            chars.next();
            while let Some(c) = chars.next() {
                value.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        value.push(n);
                    }
                } else if c == '\'' {
                    break;
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        pairs.push((key, value));
    }
    pairs
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
            TargetSpec::Instance {
                name: "vm1".into(),
                dbname: "sales".into()
            }
        );
        assert_eq!(
            TargetSpec::parse("instance:vm1").unwrap(),
            TargetSpec::Instance {
                name: "vm1".into(),
                dbname: DEFAULT_DBNAME.into()
            }
        );
        assert!(TargetSpec::parse("instance:../x").is_err());
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
    }
}
