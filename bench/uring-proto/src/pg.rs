//! The minimum of the PostgreSQL v3 protocol that pgbench's `-S -M prepared` transaction needs:
//! StartupMessage (trust auth only), one named Parse, and per transaction Bind + Execute + Sync
//! in one buffer; a streaming scanner finds where each response ends (ReadyForQuery).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

/// The statement pgbench `-S` runs, prepared once per connection under the name `s`.
pub const QUERY: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = $1";

/// Where a response stands after some received bytes were fed in.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// More bytes are needed before ReadyForQuery.
    More,
    /// ReadyForQuery ('Z') arrived: the exchange is complete.
    Ready,
}

/// Splits a stream of backend messages. Whole messages are parsed in place; only a message cut
/// by the end of a read is copied, into `carry`, so the common case (the whole response in one
/// read) copies nothing.
#[derive(Default)]
pub struct Scanner {
    carry: Vec<u8>,
}

impl Scanner {
    /// Feeds bytes just read. Errors on ErrorResponse, on an authentication request other than
    /// AuthenticationOk, and on bytes after ReadyForQuery (the client never pipelines).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Progress, String> {
        if self.carry.is_empty() {
            let (progress, used) = scan(bytes)?;
            self.carry.extend_from_slice(&bytes[used..]);
            return check_tail(progress, &self.carry);
        }
        self.carry.extend_from_slice(bytes);
        let (progress, used) = scan(&self.carry)?;
        self.carry.drain(..used);
        check_tail(progress, &self.carry)
    }
}

fn check_tail(progress: Progress, rest: &[u8]) -> Result<Progress, String> {
    if progress == Progress::Ready && !rest.is_empty() {
        return Err(format!(
            "{} unexpected bytes after ReadyForQuery",
            rest.len()
        ));
    }
    Ok(progress)
}

/// Parses whole messages from `b`; returns the progress and how many bytes it consumed.
fn scan(b: &[u8]) -> Result<(Progress, usize), String> {
    let mut pos = 0;
    while b.len() - pos >= 5 {
        let kind = b[pos];
        let len = u32::from_be_bytes([b[pos + 1], b[pos + 2], b[pos + 3], b[pos + 4]]) as usize;
        if len < 4 {
            return Err(format!(
                "bad message length {len} for message '{}'",
                kind as char
            ));
        }
        let end = pos + 1 + len;
        if end > b.len() {
            break;
        }
        let body = &b[pos + 5..end];
        pos = end;
        match kind {
            b'E' => return Err(format!("server error: {}", error_text(body))),
            b'R' => {
                let code = body
                    .get(..4)
                    .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
                if code != Some(0) {
                    return Err(format!(
                        "server asks for authentication (request {code:?}); the prototype \
                         supports trust authentication only"
                    ));
                }
            }
            b'Z' => return Ok((Progress::Ready, pos)),
            _ => {}
        }
    }
    Ok((Progress::More, pos))
}

/// The severity, SQLSTATE and message fields of an ErrorResponse body.
fn error_text(body: &[u8]) -> String {
    let mut parts = Vec::new();
    for field in body.split(|&c| c == 0) {
        if let Some((&code, text)) = field.split_first() {
            if matches!(code, b'S' | b'C' | b'M') {
                parts.push(String::from_utf8_lossy(text).into_owned());
            }
        }
    }
    parts.join(" ")
}

/// Appends a message with a type byte and a body to `out`.
fn message(out: &mut Vec<u8>, kind: u8, body: &[u8]) {
    out.push(kind);
    out.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    out.extend_from_slice(body);
}

/// Appends Bind (statement `s`, one text parameter) + Execute + Sync: one transaction.
pub fn transaction(out: &mut Vec<u8>, aid: u64) {
    let digits = aid.to_string();
    let mut bind = Vec::with_capacity(32);
    bind.extend_from_slice(b"\0s\0"); // unnamed portal, statement s
    bind.extend_from_slice(&0u16.to_be_bytes()); // parameter formats: all text
    bind.extend_from_slice(&1u16.to_be_bytes());
    bind.extend_from_slice(&(digits.len() as u32).to_be_bytes());
    bind.extend_from_slice(digits.as_bytes());
    bind.extend_from_slice(&0u16.to_be_bytes()); // result formats: all text
    message(out, b'B', &bind);
    message(out, b'E', b"\0\0\0\0\0"); // unnamed portal, no row limit
    message(out, b'S', b"");
}

/// Connects over the Unix socket `DIR/.s.PGSQL.PORT`, logs in (trust) and prepares `s`, with
/// blocking I/O: setup is not part of what the prototype measures.
pub fn connect(dir: &str, port: u16, user: &str, db: &str) -> Result<UnixStream, String> {
    let path = format!("{dir}/.s.PGSQL.{port}");
    let mut sock = UnixStream::connect(&path).map_err(|e| format!("connect to {path}: {e}"))?;
    let mut body = Vec::new();
    body.extend_from_slice(&196608u32.to_be_bytes()); // protocol 3.0
    for (k, v) in [("user", user), ("database", db)] {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut startup = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    startup.extend_from_slice(&body);
    exchange(&mut sock, &startup).map_err(|e| format!("startup: {e}"))?;

    let mut prep = Vec::new();
    let mut parse = b"s\0".to_vec();
    parse.extend_from_slice(QUERY.as_bytes());
    parse.push(0);
    parse.extend_from_slice(&0u16.to_be_bytes()); // the server infers $1's type, as with libpq
    message(&mut prep, b'P', &parse);
    message(&mut prep, b'S', b"");
    exchange(&mut sock, &prep).map_err(|e| format!("prepare: {e}"))?;
    Ok(sock)
}

/// Writes `msg` and reads until ReadyForQuery, blocking.
fn exchange(sock: &mut UnixStream, msg: &[u8]) -> Result<(), String> {
    sock.write_all(msg).map_err(|e| e.to_string())?;
    let mut scanner = Scanner::default();
    let mut buf = [0u8; 8192];
    loop {
        let n = sock.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("server closed the connection".into());
        }
        if scanner.feed(&buf[..n])? == Progress::Ready {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        message(&mut out, kind, body);
        out
    }

    #[test]
    fn response_split_anywhere_is_ready_once() {
        let mut resp = msg(b'2', b"");
        resp.extend(msg(b'D', b"\0\x01\0\0\0\x010"));
        resp.extend(msg(b'C', b"SELECT 1\0"));
        resp.extend(msg(b'Z', b"I"));
        for cut in 0..resp.len() {
            let mut s = Scanner::default();
            assert_eq!(s.feed(&resp[..cut]).unwrap(), Progress::More, "cut {cut}");
            assert_eq!(s.feed(&resp[cut..]).unwrap(), Progress::Ready, "cut {cut}");
        }
    }

    #[test]
    fn error_response_is_an_error() {
        let resp = msg(b'E', b"SERROR\0C42P01\0Mno such table\0\0");
        let err = Scanner::default().feed(&resp).unwrap_err();
        assert!(
            err.contains("42P01") && err.contains("no such table"),
            "{err}"
        );
    }

    #[test]
    fn auth_other_than_ok_is_refused() {
        let resp = msg(b'R', &5u32.to_be_bytes());
        assert!(Scanner::default()
            .feed(&resp)
            .unwrap_err()
            .contains("trust"));
    }

    #[test]
    fn transaction_is_bind_execute_sync() {
        let mut out = Vec::new();
        transaction(&mut out, 42);
        assert_eq!(out[0], b'B');
        assert_eq!(&out[out.len() - 5..], b"S\0\0\0\x04");
        assert!(out.windows(2).any(|w| w == b"42"));
    }
}
