//! Errors of a session: the server's (with SQLSTATE) and the socket's.

use std::fmt;

#[derive(Debug)]
pub enum ErrorKind {
    /// An ErrorResponse from the server: five-character SQLSTATE, severity, message.
    Db {
        sqlstate: [u8; 5],
        severity: String,
        message: String,
    },
    /// The socket failed or closed: the session is gone.
    Io(std::io::Error),
    /// Connect or authentication did not complete in time.
    Timeout,
    /// The server asked for an authentication method we do not speak, or a password is missing.
    Auth(String),
    /// The server sent something the protocol does not allow here.
    Protocol(String),
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

    /// True when the session can no longer be used and must be reconnected.
    pub fn is_connection_lost(&self) -> bool {
        match &self.kind {
            ErrorKind::Io(_) | ErrorKind::Timeout | ErrorKind::Protocol(_) => true,
            ErrorKind::Auth(_) => true,
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
            } => write!(
                f,
                "{severity}: {message} (SQLSTATE {})",
                String::from_utf8_lossy(sqlstate)
            ),
            ErrorKind::Io(e) => write!(f, "connection error: {e}"),
            ErrorKind::Timeout => write!(f, "timed out connecting to the server"),
            ErrorKind::Auth(m) => write!(f, "authentication failed: {m}"),
            ErrorKind::Protocol(m) => write!(f, "protocol error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error {
            kind: ErrorKind::Io(e),
        }
    }
}
