//! What a connection string is refused for before anything connects: a keyword in the wrong
//! letter case (`PASSWORD=`, named without its value), and a string the parser rejects,
//! reported without echoing a password it may hold.

use super::describe_pg_error;

/// libpq's keywords that take a secret or decide security, and the common ones: a key written
/// in another letter case is one of these misspelt (libpq keywords are lowercase).
const KNOWN_KEYWORDS: &[&str] = &[
    "service",
    "host",
    "hostaddr",
    "port",
    "user",
    "password",
    "passfile",
    "dbname",
    "options",
    "application_name",
    "connect_timeout",
    "sslmode",
    "sslnegotiation",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslpassword",
    "requiressl",
    "channel_binding",
    "target_session_attrs",
];

/// Refuses `PASSWORD=...` and other keywords in the wrong letter case with an error that names
/// the keyword only, never its value.
pub(super) fn check_keyword_case(dsn: &str) -> Result<(), String> {
    let bytes = dsn.as_bytes();
    for (eq, _) in dsn.match_indices('=') {
        let mut end = eq;
        while end > 0 && bytes[end - 1] == b' ' {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && (bytes[start - 1].is_ascii_alphabetic() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        let key = &dsn[start..end];
        let lower = key.to_ascii_lowercase();
        if key != lower && KNOWN_KEYWORDS.contains(&lower.as_str()) {
            return Err(format!(
                "keyword '{key}' is not a connection keyword; keywords are lowercase: write {lower}=..."
            ));
        }
    }
    Ok(())
}

/// The error for a string the parser refused. The parser's own text may quote a character
/// or a key taken from a mistyped password, so it is kept only when the string holds none.
pub(super) fn malformed(dsn: &str, e: &tokio_postgres::Error) -> String {
    let hint = "check quoting and key names (host, port, user, password, dbname)";
    let text = describe_pg_error(e);
    let safe = crate::config::target::password_spans(dsn).is_empty();
    if safe {
        format!("malformed connection string ({text}); {hint}")
    } else {
        format!("malformed connection string (details withheld: it holds a password); {hint}")
    }
}
