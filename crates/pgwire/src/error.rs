//! Errors of a session: the server's (with SQLSTATE) and the socket's.

use std::fmt;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::ErrorResponseBody;

#[derive(Debug)]
pub enum ErrorKind {
    /// An ErrorResponse from the server: five-character SQLSTATE, severity, message.
    Db {
        sqlstate: [u8; 5],
        severity: String,
        message: String,
        /// DETAIL, HINT and CONTEXT when the server sent any: boxed, so an error without
        /// them (most serialization failures) allocates nothing more.
        more: Option<Box<DbMore>>,
    },
    /// The socket failed or closed: the session is gone.
    Io(std::io::Error),
    /// Connect or authentication did not complete in time.
    Timeout,
    /// The server asked for an authentication method we do not speak, or a password is missing.
    Auth(String),
    /// The server sent something the protocol does not allow here.
    Protocol(String),
    /// TLS could not be set up as the sslmode demands (no TLS at the server, a certificate
    /// that does not verify); the text says which and what to do.
    Tls(String),
    /// The client's own code failed between statements (a pgbench script's division by
    /// zero or unknown variable): neither the server nor the session is at fault.
    Client(String),
}

/// The optional fields of a server error that say more than its message.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DbMore {
    pub detail: Option<String>,
    pub hint: Option<String>,
    pub context: Option<String>,
    /// Where in the statement's text the error was found (the `P` field: a character
    /// count from 1), which libpq shows as `LINE n:` and a caret (see [`pointed_lines`]).
    pub position: Option<u32>,
}

#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
}

impl Error {
    /// SQLSTATE of a server error, e.g. `b"40001"`.
    pub fn sqlstate(&self) -> Option<&[u8; 5]> {
        match &self.kind {
            ErrorKind::Db { sqlstate, .. } => Some(sqlstate),
            _ => None,
        }
    }

    /// A server error's DETAIL, HINT and CONTEXT, when it had any.
    pub fn more(&self) -> Option<&DbMore> {
        match &self.kind {
            ErrorKind::Db { more, .. } => more.as_deref(),
            _ => None,
        }
    }

    /// True when the session can no longer be used and must be reconnected.
    pub fn is_connection_lost(&self) -> bool {
        match &self.kind {
            ErrorKind::Io(_) | ErrorKind::Timeout | ErrorKind::Protocol(_) => true,
            ErrorKind::Auth(_) | ErrorKind::Tls(_) => true,
            ErrorKind::Client(_) => false,
            // FATAL/PANIC end the session (e.g. admin shutdown, 57P01).
            ErrorKind::Db { severity, .. } => severity == "FATAL" || severity == "PANIC",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Db {
                sqlstate,
                severity,
                message,
                ..
            } => write!(
                f,
                "{severity}: {message} (SQLSTATE {})",
                String::from_utf8_lossy(sqlstate)
            ),
            ErrorKind::Io(e) => write!(f, "connection error: {e}"),
            ErrorKind::Timeout => write!(f, "timed out connecting to the server"),
            ErrorKind::Auth(m) => write!(f, "authentication failed: {m}"),
            ErrorKind::Protocol(m) => write!(f, "protocol error: {m}"),
            ErrorKind::Tls(m) => write!(f, "TLS: {m}"),
            ErrorKind::Client(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// A failure of the client's own code (see [`ErrorKind::Client`]).
    pub fn client(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Client(message.into()),
        }
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Protocol(message.into()),
        }
    }

    pub(crate) fn tls(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Tls(message.into()),
        }
    }

    pub(crate) fn auth(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Auth(message.into()),
        }
    }

    /// Builds a `Db` error from an ErrorResponse's fields. The non-localized severity (`V`,
    /// PostgreSQL 9.6+) is preferred so `is_connection_lost` can compare it with "FATAL" even
    /// when the server's `lc_messages` is not English.
    pub(crate) fn from_fields(body: &ErrorResponseBody) -> Error {
        let mut sqlstate = *b"XX000";
        let mut severity = String::new();
        let mut localized_severity = String::new();
        let mut message = String::new();
        let mut more: Option<Box<DbMore>> = None;
        let mut fields = body.fields();
        loop {
            match fields.next() {
                Ok(Some(field)) => {
                    let value = field.value_bytes();
                    match field.type_() {
                        b'C' if value.len() == 5 => sqlstate.copy_from_slice(value),
                        b'V' => severity = String::from_utf8_lossy(value).into_owned(),
                        b'S' => localized_severity = String::from_utf8_lossy(value).into_owned(),
                        b'M' => message = String::from_utf8_lossy(value).into_owned(),
                        b'P' => {
                            let at = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                            more.get_or_insert_with(Box::default).position = at;
                        }
                        b'D' | b'H' | b'W' => {
                            let text = Some(String::from_utf8_lossy(value).into_owned());
                            let m = more.get_or_insert_with(Box::default);
                            match field.type_() {
                                b'D' => m.detail = text,
                                b'H' => m.hint = text,
                                _ => m.context = text,
                            }
                        }
                        _ => {}
                    }
                }
                Ok(None) => break,
                Err(e) => return Error::protocol(format!("malformed ErrorResponse: {e}")),
            }
        }
        if severity.is_empty() {
            severity = localized_severity;
        }
        Error {
            kind: ErrorKind::Db {
                sqlstate,
                severity,
                message,
                more,
            },
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error {
            kind: ErrorKind::Io(e),
        }
    }
}

/// How wide libpq shows the line an error points into, and how much it keeps right of the
/// caret when it cuts a long line (its DISPLAY_SIZE and MIN_RIGHT_CUT).
const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// libpq's two lines under a server error that points into `query` at `position` (a
/// character count from 1): `LINE n: TEXT` and a caret under the place, the line cut with
/// `...` around the caret when it is longer than 60 characters, tabs shown as spaces. Each
/// character counts one column (libpq counts a wide one two). `None` when the position lies
/// past the text, as libpq then shows nothing.
pub fn pointed_lines(query: &str, position: u32) -> Option<String> {
    let loc = usize::try_from(position).ok()?.checked_sub(1)?;
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    if loc > chars.len() {
        return None;
    }
    // The line holding `loc`: a `\r`, or a `\n` not after a `\r`, starts another.
    let (mut line_no, mut beg, mut end) = (1, 0, chars.len());
    for (i, c) in chars.iter().enumerate() {
        if *c != '\r' && *c != '\n' {
            continue;
        }
        if i >= loc {
            end = i;
            break;
        }
        if *c == '\r' || i == 0 || chars[i - 1] != '\r' {
            line_no += 1;
        }
        beg = i + 1;
    }
    let (mut beg_cut, mut end_cut) = (false, false);
    if end - beg > DISPLAY_SIZE {
        if beg + DISPLAY_SIZE >= loc + MIN_RIGHT_CUT {
            end = beg + DISPLAY_SIZE;
            end_cut = true;
        } else {
            if loc + MIN_RIGHT_CUT < end {
                end = loc + MIN_RIGHT_CUT;
                end_cut = true;
            }
            if end - beg > DISPLAY_SIZE {
                beg = end - DISPLAY_SIZE;
                beg_cut = true;
            }
        }
    }
    let mut head = format!("LINE {line_no}: ");
    if beg_cut {
        head.push_str("...");
    }
    let pad = head.chars().count() + loc - beg;
    let text: String = chars[beg..end].iter().collect();
    let tail = if end_cut { "..." } else { "" };
    Some(format!("{head}{text}{tail}\n{:pad$}^", ""))
}

#[cfg(test)]
mod pointed_tests {
    use super::pointed_lines;

    #[test]
    fn the_caret_stands_under_the_place_on_its_line() {
        assert_eq!(
            pointed_lines("SELECT 1 + ;", 12).as_deref(),
            Some("LINE 1: SELECT 1 + ;\n                   ^")
        );
        assert_eq!(
            pointed_lines("SELECT 1\nFROM\tnope;", 15).as_deref(),
            Some("LINE 2: FROM nope;\n             ^")
        );
        assert_eq!(pointed_lines("SELECT", 9), None);
    }

    #[test]
    fn a_long_line_is_cut_around_the_caret() {
        let long = format!(
            "SELECT {} FROM nope WHERE {}",
            "x".repeat(100),
            "y".repeat(30)
        );
        let shown = pointed_lines(&long, 109).unwrap_or_default();
        let (line, caret) = shown.split_once('\n').unwrap_or_default();
        assert!(
            line.starts_with("LINE 1: ...") && line.ends_with("..."),
            "{line}"
        );
        assert_eq!(line.chars().count(), "LINE 1: ".len() + 3 + 60 + 3);
        assert_eq!(&line[caret.len() - 1..caret.len() + 3], "FROM");
    }
}
