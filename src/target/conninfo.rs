//! Connection strings parsed as libpq 15 parses them (issue 39), before anything is resolved:
//! keyword/value strings (`host=h port=5433`, single quotes, `\` escapes) and URIs
//! (`postgresql://user:pw@[::1]:5433,h2/db?sslmode=require`, percent-decoding, several hosts,
//! empty hosts, every keyword in the query). A keyword given twice keeps its last value, as in
//! libpq; a keyword libpq does not know is refused with libpq's words. Errors never quote a
//! password: a URI is echoed redacted, a password's own component never.
//!
//! The result is only what the string says ([`Given`]); the service file, the environment and
//! the defaults are applied by the resolver (`super::parse_dsn_full`).

use std::collections::BTreeMap;

/// A keyword libpq 15 (or 16, 17: marked) takes, and the environment variable it falls back
/// to. The resolver decides, keyword by keyword, whether tidebench applies it.
pub const KEYWORDS: &[(&str, Option<&str>)] = &[
    ("service", Some("PGSERVICE")),
    ("user", Some("PGUSER")),
    ("password", Some("PGPASSWORD")),
    ("passfile", Some("PGPASSFILE")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("dbname", Some("PGDATABASE")),
    ("host", Some("PGHOST")),
    ("hostaddr", Some("PGHOSTADDR")),
    ("port", Some("PGPORT")),
    ("client_encoding", Some("PGCLIENTENCODING")),
    ("options", Some("PGOPTIONS")),
    ("application_name", Some("PGAPPNAME")),
    ("fallback_application_name", None),
    ("keepalives", None),
    ("keepalives_idle", None),
    ("keepalives_interval", None),
    ("keepalives_count", None),
    ("tcp_user_timeout", None),
    ("sslmode", Some("PGSSLMODE")),
    ("sslcompression", Some("PGSSLCOMPRESSION")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("sslpassword", None),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslcrl", Some("PGSSLCRL")),
    ("sslcrldir", Some("PGSSLCRLDIR")),
    ("sslsni", Some("PGSSLSNI")),
    ("requirepeer", Some("PGREQUIREPEER")),
    ("ssl_min_protocol_version", Some("PGSSLMINPROTOCOLVERSION")),
    ("ssl_max_protocol_version", Some("PGSSLMAXPROTOCOLVERSION")),
    ("gssencmode", Some("PGGSSENCMODE")),
    ("krbsrvname", Some("PGKRBSRVNAME")),
    ("gsslib", Some("PGGSSLIB")),
    ("replication", None),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    // PostgreSQL 16.
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
    ("require_auth", Some("PGREQUIREAUTH")),
    ("sslcertmode", Some("PGSSLCERTMODE")),
    ("gssdelegation", Some("PGGSSDELEGATION")),
    // PostgreSQL 17.
    ("sslnegotiation", Some("PGSSLNEGOTIATION")),
];

/// What a connection string gives, keyword by keyword (the last of a repeated keyword).
pub type Given = BTreeMap<String, String>;

/// The environment variable libpq reads for `keyword`, if any.
pub fn env_var(keyword: &str) -> Option<&'static str> {
    KEYWORDS
        .iter()
        .find(|(k, _)| *k == keyword)
        .and_then(|(_, v)| *v)
}

/// Whether `s` is a URI by libpq's test (its two schemes).
pub fn is_uri(s: &str) -> bool {
    uri_rest(s).is_some()
}

fn uri_rest(s: &str) -> Option<&str> {
    s.strip_prefix("postgresql://")
        .or_else(|| s.strip_prefix("postgres://"))
}

/// Parses a URI or a keyword/value string.
pub fn parse(dsn: &str) -> Result<Given, String> {
    let mut given = Given::new();
    match uri_rest(dsn) {
        Some(rest) => parse_uri(dsn, rest, &mut given)?,
        None => parse_keywords(dsn, &mut given)?,
    }
    Ok(given)
}

/// Stores one keyword, as libpq's `conninfo_storeval`: unknown keywords are refused, and the
/// old `requiressl` becomes `sslmode`.
fn store(
    given: &mut Given,
    key: &str,
    value: String,
    unknown: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    if key == "requiressl" {
        let mode = if value.starts_with('1') {
            "require"
        } else {
            "prefer"
        };
        given.insert("sslmode".into(), mode.into());
        return Ok(());
    }
    if !KEYWORDS.iter().any(|(k, _)| *k == key) {
        return Err(unknown(key));
    }
    given.insert(key.to_string(), value);
    Ok(())
}

fn parse_keywords(s: &str, given: &mut Given) -> Result<(), String> {
    let mut chars = s.chars().peekable();
    let unknown = |k: &str| {
        format!("invalid connection option \"{k}\"; see libpq's list of parameter key words for the right spelling")
    };
    loop {
        while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(());
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_ascii_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!(
                "missing \"=\" after \"{key}\" in connection info string; write key=value pairs, quoting values with spaces: key='a b'"
            ));
        }
        while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
        let value = keyword_value(&mut chars)?;
        store(given, &key, value, &unknown)?;
    }
}

/// One value: up to the next blank, or a single-quoted string; `\` takes the next character
/// as it is.
fn keyword_value(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<String, String> {
    let mut value = String::new();
    let quoted = chars.next_if_eq(&'\'').is_some();
    loop {
        match chars.next() {
            None if quoted => {
                return Err(
                    "unterminated quoted string in connection info string; close the value's single quote".into(),
                )
            }
            None => return Ok(value),
            Some('\\') => value.extend(chars.next()),
            Some('\'') if quoted => return Ok(value),
            Some(c) if !quoted && c.is_ascii_whitespace() => return Ok(value),
            Some(c) => value.push(c),
        }
    }
}

/// A URI: `scheme://[user[:password]@][host][:port][,...][/dbname][?key=value&...]`.
fn parse_uri(whole: &str, rest: &str, given: &mut Given) -> Result<(), String> {
    let shown = crate::config::TargetSpec::Dsn(whole.to_string()).redacted();
    let offset = whole.len() - rest.len();
    let mut p = rest;
    // User information runs up to an '@' met before any '/'.
    if let Some(at) = p.find(['@', '/']).filter(|&i| p.as_bytes()[i] == b'@') {
        let (user, password) = match p[..at].split_once(':') {
            Some((u, pw)) => (u, Some(pw)),
            None => (&p[..at], None),
        };
        if !user.is_empty() {
            given.insert("user".into(), decode(user)?);
        }
        if let Some(pw) = password.filter(|pw| !pw.is_empty()) {
            let pw = decode(pw).map_err(|_| {
                "invalid percent-encoding in the URI's password; write a '%' as %25".to_string()
            })?;
            given.insert("password".into(), pw);
        }
        p = &p[at + 1..];
    }
    let (hosts, ports, p) = uri_hosts(p, whole.len() - offset, &shown, offset)?;
    let hosts_given = hosts.iter().any(|h| !h.is_empty()) || hosts.len() > 1;
    if hosts_given {
        given.insert("host".into(), decode(&hosts.join(","))?);
    }
    if ports.iter().any(|p| !p.is_empty()) {
        given.insert("port".into(), decode(&ports.join(","))?);
    }
    let (path, query) = match p.strip_prefix('/') {
        Some(after) => match after.split_once('?') {
            Some((d, q)) => (d, Some(q)),
            None => (after, None),
        },
        None => ("", p.strip_prefix('?')),
    };
    if !path.is_empty() {
        given.insert("dbname".into(), decode(path)?);
    }
    match query {
        Some(q) => uri_query(q, given),
        None => Ok(()),
    }
}

/// The host list of a URI: `[v6]` or names, each with an optional `:port`, separated by
/// commas. Returns the hosts, the ports (one per host, empty when not given) and the rest.
fn uri_hosts<'a>(
    mut p: &'a str,
    total: usize,
    shown: &str,
    offset: usize,
) -> Result<(Vec<String>, Vec<String>, &'a str), String> {
    let (mut hosts, mut ports) = (Vec::new(), Vec::new());
    let end_of = |s: &str, stops: &[char]| s.find(stops).unwrap_or(s.len());
    loop {
        let host;
        if let Some(inner) = p.strip_prefix('[') {
            let close = inner.find(']').ok_or_else(|| {
                format!("end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"{shown}\"; close the bracket")
            })?;
            if close == 0 {
                return Err(format!(
                    "IPv6 host address may not be empty in URI: \"{shown}\"; write one between the brackets, e.g. [::1]"
                ));
            }
            host = &inner[..close];
            p = &inner[close + 1..];
            if let Some(c) = p.chars().next().filter(|c| !":/?,".contains(*c)) {
                // Position counted from 1 over the whole string, as libpq does.
                let at = offset + (total - p.len()) + 1;
                return Err(format!(
                    "unexpected character \"{c}\" at position {at} in URI (expected \":\" or \"/\"): \"{shown}\"; end the host at its ']'"
                ));
            }
        } else {
            let end = end_of(p, &[':', '/', '?', ',']);
            host = &p[..end];
            p = &p[end..];
        }
        hosts.push(host.to_string());
        let mut port = "";
        if let Some(after) = p.strip_prefix(':') {
            let end = end_of(after, &['/', '?', ',']);
            port = &after[..end];
            p = &after[end..];
        }
        ports.push(port.to_string());
        match p.strip_prefix(',') {
            Some(after) => p = after,
            None => return Ok((hosts, ports, p)),
        }
    }
}

/// `key=value&...`, both halves percent-decoded; `ssl=true` is JDBC's `sslmode=require`.
fn uri_query(query: &str, given: &mut Given) -> Result<(), String> {
    let unknown = |k: &str| {
        format!("invalid URI query parameter: \"{k}\"; see libpq's list of parameter key words for the right spelling")
    };
    // libpq stops at the end of the string: an empty query, or one ending in a single '&',
    // has nothing more to parse.
    let query = query.strip_suffix('&').unwrap_or(query);
    if query.is_empty() {
        return Ok(());
    }
    for pair in query.split('&') {
        let mut parts = pair.splitn(3, '=');
        let key = parts.next().unwrap_or_default();
        let (Some(value), None) = (parts.next(), parts.next()) else {
            let why = if pair.contains('=') {
                "extra"
            } else {
                "missing"
            };
            return Err(format!(
                "{why} key/value separator \"=\" in URI query parameter: \"{key}\"; write key=value pairs joined by '&', percent-encoding an '=' in a value as %3D"
            ));
        };
        let key = decode(key)?;
        let value = decode(value).map_err(|e| {
            if key == "password" {
                "invalid percent-encoding in the URI's password; write a '%' as %25".to_string()
            } else {
                e
            }
        })?;
        if key == "ssl" && value == "true" {
            given.insert("sslmode".into(), "require".into());
            continue;
        }
        store(given, &key, value, &unknown)?;
    }
    Ok(())
}

/// libpq's percent-decoding: `%` must be followed by two hex digits, and `%00` is refused.
fn decode(s: &str) -> Result<String, String> {
    let bad = || {
        format!("invalid percent-encoded token: \"{s}\"; a '%' must start two hex digits (write '%' itself as %25)")
    };
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
        let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2)) else {
            return Err(bad());
        };
        let byte = (h * 16 + l) as u8;
        if byte == 0 {
            return Err(format!(
                "forbidden value %00 in percent-encoded value: \"{s}\"; remove the %00"
            ));
        }
        out.push(byte);
        i += 3;
    }
    String::from_utf8(out).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(dsn: &str) -> Given {
        parse(dsn).unwrap()
    }

    #[test]
    fn keyword_strings_quote_escape_and_keep_the_last() {
        let g = get(" host = h  port=5 dbname='my db' user=a\\ b host=h2");
        assert_eq!(g["host"], "h2");
        assert_eq!(g["dbname"], "my db");
        assert_eq!(g["user"], "a b");
        assert_eq!(get("requiressl=1")["sslmode"], "require");
        assert_eq!(get("options='-c a=\\'x\\''")["options"], "-c a='x'");
        assert!(parse("host=h port")
            .unwrap_err()
            .contains("missing \"=\" after \"port\""));
        assert!(parse("host='h").unwrap_err().contains("unterminated"));
        assert!(parse("host=h foo=1")
            .unwrap_err()
            .contains("invalid connection option \"foo\""));
    }

    #[test]
    fn uris_as_libpq_reads_them() {
        let g = get("postgresql://u:p%40w@[::1]:5433,h2/d%20b?port=1,2&sslmode=require&port=3,4");
        assert_eq!((g["user"].as_str(), g["password"].as_str()), ("u", "p@w"));
        assert_eq!((g["host"].as_str(), g["port"].as_str()), ("::1,h2", "3,4"));
        assert_eq!(g["dbname"], "d b");
        let g = get("postgres://:5433/");
        assert_eq!((g.get("host"), g["port"].as_str()), (None, "5433"));
        let g = get("postgresql://%2Ftmp%2Fs/db?ssl=true");
        assert_eq!(
            (g["host"].as_str(), g["sslmode"].as_str()),
            ("/tmp/s", "require")
        );
        assert_eq!(get("postgresql://h,/db")["host"], "h,");
        assert_eq!(get("postgresql://?host=/x&port=1")["host"], "/x");
        assert!(get("postgresql://").is_empty());
    }

    /// Inputs of libpq's own URI tests (`src/interfaces/libpq/test/regress.in`).
    #[test]
    fn libpqs_uri_test_inputs() {
        let g = get("postgres://@host");
        assert_eq!((g.get("user"), g["host"].as_str()), (None, "host"));
        let g = get("postgres://host:/");
        assert_eq!((g["host"].as_str(), g.get("port")), ("host", None));
        assert_eq!(get("postgresql://host?")["host"], "host");
        assert_eq!(get("postgresql://host/db?user=u&")["user"], "u");
        let g = get("postgresql://host/db?u%73er=someotheruser&port=12345");
        assert_eq!(
            (g["user"].as_str(), g["port"].as_str()),
            ("someotheruser", "12345")
        );
        let g = get("postgres://otheruser@:12345?host=/no/such/socket/path");
        assert_eq!(
            (g["user"].as_str(), g["port"].as_str(), g["host"].as_str()),
            ("otheruser", "12345", "/no/such/socket/path")
        );
        let g = get("postgresql://example.com?hostaddr=63.1.2.4");
        assert_eq!(
            (g["host"].as_str(), g["hostaddr"].as_str()),
            ("example.com", "63.1.2.4")
        );
        assert_eq!(
            get("postgresql://[200z:db8::1234]/")["host"],
            "200z:db8::1234"
        );
        assert_eq!(
            get("postgres://%2Fvar%2Flib%2Fpostgresql/dbname")["host"],
            "/var/lib/postgresql"
        );
        let e = |s: &str| parse(s).unwrap_err();
        assert!(e("postgresql://host?uzer=").starts_with("invalid URI query parameter: \"uzer\""));
        assert!(e("postgresql://host?value1&value2").contains("query parameter: \"value1\""));
        assert!(e("postgresql://host?zzz").starts_with("missing key/value separator"));
        assert!(e("postgres://host?dbname=%XXfoo")
            .starts_with("invalid percent-encoded token: \"%XXfoo\""));
        assert!(e("postgresql://%1").starts_with("invalid percent-encoded token: \"%1\""));
        assert!(e("postgresql://host/db?user=u&&").starts_with("missing key/value separator"));
    }

    #[test]
    fn uri_errors_are_libpqs() {
        let e = |s: &str| parse(s).unwrap_err();
        assert!(e("postgresql://a%zzb/").starts_with("invalid percent-encoded token: \"a%zzb\""));
        assert!(e("postgresql://a%00b/").starts_with("forbidden value %00"));
        assert!(e("postgresql://[::1").starts_with("end of string reached"));
        assert!(e("postgresql://[]/").starts_with("IPv6 host address may not be empty"));
        assert!(e("postgresql://[::1]x/")
            .starts_with("unexpected character \"x\" at position 19 in URI"));
        assert!(e("postgresql://h/d?port").starts_with("missing key/value separator"));
        assert!(e("postgresql://h/d?a=b=c")
            .contains("extra key/value separator \"=\" in URI query parameter: \"a\""));
        assert!(e("postgresql://h/d?ssl=false").starts_with("invalid URI query parameter: \"ssl\""));
        let pw = e("postgresql://u:se%zzcret@h/d");
        assert!(!pw.contains("se") || !pw.contains("cret"), "{pw}");
        let pw = e("postgresql://u:secret@[::1/d");
        assert!(!pw.contains("secret"), "{pw}");
    }
}
