//! One session: its socket, its reused buffers, and statements on the three protocols.
//!
//! Every statement is one write (the whole Parse/Bind/Execute/Sync or Query) and one read loop
//! to ReadyForQuery, the same round trips pgbench makes. The write buffer, the read buffer, the
//! simple-protocol SQL buffer and the row storage live as long as the connection, so a statement
//! in steady state allocates nothing.

use std::io;

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::backend::{Message, ParameterStatusBody};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use crate::literal;
use crate::response::{Response, Step};
use crate::stream::Stream;
use crate::{
    ConnectParams, Error, ErrorKind, Host, Param, Protocol, QueryResult, SslMode, Statement,
    TxStatus,
};

/// Room kept free in the read buffer before each read, so one `read` takes a whole typical
/// response (a few small messages) and a result of many rows needs few reads.
const READ_SPARE: usize = 4 * 1024;
const READ_CAPACITY: usize = 16 * 1024;

/// Where the session stands between the write and the ReadyForQuery that ends a round trip.
/// It matters when a caller drops a statement's future half-way (a timeout, a `select!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    /// Dropped mid-write: the server got part of a message and the stream cannot be resynced.
    Writing,
    /// Dropped while reading: the rest of the answer is still coming; drained before the next
    /// statement.
    Reading,
    /// The socket failed or the server ended the session.
    Broken,
}

mod copy;
mod pipeline;

/// A session that owns its socket. Not `Sync`; one client task uses it.
pub struct Connection {
    pub(crate) stream: Stream,
    pub(crate) wbuf: BytesMut,
    rbuf: BytesMut,
    /// The SQL text of a simple-protocol statement with its parameters inlined.
    sql: String,
    response: Response,
    state: State,
    pub(crate) tx_status: TxStatus,
    /// Names this connection has prepared; a handful per workload, so a Vec beats hashing.
    prepared: Vec<&'static str>,
    /// A name sent with Parse in the round trip under way: it counts as prepared only once the
    /// server answers ParseComplete.
    pending_prepare: Option<&'static str>,
    /// A pipeline being queued in the write buffer (see `pipeline`).
    pipeline: Option<pipeline::Queued>,
    /// ReadyForQuery messages still owed after the one being read: a pipeline's other Syncs.
    more_ready: u32,
    pub(crate) server_params: Vec<(String, String)>,
    pub(crate) backend_pid: i32,
    pub(crate) secret_key: i32,
}

impl Connection {
    /// Opens the socket, runs startup and authentication (trust, cleartext, MD5, SCRAM-SHA-256),
    /// and waits for the first ReadyForQuery, within `params.connect_timeout` (zero: no limit).
    /// Runs on an [`evloop`] loop (a driver thread's), which owns the socket from then on.
    pub async fn connect(params: &ConnectParams) -> Result<Connection, Error> {
        let attempt = Connection::open(params);
        if params.connect_timeout.is_zero() {
            return attempt.await;
        }
        match evloop::timeout(params.connect_timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(Error {
                kind: ErrorKind::Timeout,
            }),
        }
    }

    /// One session as the sslmode says, with libpq's retries: `allow` tries TLS after the
    /// server refused a plaintext session, `prefer` plaintext after a failed handshake. A
    /// Unix-domain socket never carries TLS, as in libpq.
    async fn open(params: &ConnectParams) -> Result<Connection, Error> {
        let host = match &params.host {
            Host::Tcp(host) if params.tls.mode != SslMode::Disable => host.as_str(),
            _ => return Connection::open_plain(params).await,
        };
        match params.tls.mode {
            SslMode::Allow => match Connection::open_plain(params).await {
                Err(e) if matches!(e.kind, ErrorKind::Db { .. }) => {
                    Connection::open_tls(params, host).await
                }
                other => other,
            },
            SslMode::Prefer => match Connection::open_tls(params, host).await {
                Err(e) if matches!(e.kind, ErrorKind::Tls(_)) => {
                    Connection::open_plain(params).await
                }
                other => other,
            },
            _ => Connection::open_tls(params, host).await,
        }
    }

    async fn open_plain(params: &ConnectParams) -> Result<Connection, Error> {
        let mut connection = Connection::new(Stream::open(params).await?);
        connection.startup(params).await?;
        Ok(connection)
    }

    /// TLS, or plaintext on the same socket when the server declines and the mode allows it.
    async fn open_tls(params: &ConnectParams, host: &str) -> Result<Connection, Error> {
        let mut stream = Stream::open(params).await?;
        let host = crate::Tls::verified_name(host, params.hostaddr);
        stream.start_tls(&params.tls, host).await?;
        let mut connection = Connection::new(stream);
        connection.startup(params).await?;
        Ok(connection)
    }

    /// Whether the session's bytes are encrypted.
    pub fn is_encrypted(&self) -> bool {
        self.stream.tls.is_some()
    }

    fn new(stream: Stream) -> Connection {
        Connection {
            stream,
            wbuf: BytesMut::with_capacity(4 * 1024),
            rbuf: BytesMut::with_capacity(READ_CAPACITY),
            sql: String::with_capacity(1024),
            response: Response::default(),
            state: State::Idle,
            tx_status: TxStatus::Idle,
            prepared: Vec::new(),
            pending_prepare: None,
            pipeline: None,
            more_ready: 0,
            server_params: Vec::new(),
            backend_pid: 0,
            secret_key: 0,
        }
    }

    /// A ParameterStatus value the server reported (e.g. `server_version`).
    pub fn server_param(&self, name: &str) -> Option<&str> {
        self.server_params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Process id of the server backend serving this session (BackendKeyData).
    pub fn backend_pid(&self) -> i32 {
        self.backend_pid
    }

    /// Status from the last ReadyForQuery.
    /// Whether this connection has prepared the statement `name` (pgbench's `-d` trace says
    /// when a statement is prepared).
    pub fn is_prepared(&self, name: &str) -> bool {
        self.prepared.contains(&name)
    }

    pub fn tx_status(&self) -> TxStatus {
        self.tx_status
    }

    /// Runs one statement with the given protocol and reads until ReadyForQuery.
    /// `Protocol::Prepared` sends Parse the first time `stmt.name` is used on this connection.
    /// `Protocol::Simple` inlines the parameters as literals (text quoted and escaped).
    /// On a server error the whole response is still consumed, so the session stays usable.
    pub async fn execute(
        &mut self,
        protocol: Protocol,
        stmt: &Statement,
        params: &[Param<'_>],
    ) -> Result<QueryResult<'_>, Error> {
        self.send(protocol, stmt, params, false).await
    }

    /// [`Connection::execute`] that also asks for the result's description in the extended
    /// and prepared protocols (one more message each way, as libpq always sends), so
    /// [`QueryResult::set_columns`] names the columns (pgbench's `\gset`).
    pub async fn query(
        &mut self,
        protocol: Protocol,
        stmt: &Statement,
        params: &[Param<'_>],
    ) -> Result<QueryResult<'_>, Error> {
        self.send(protocol, stmt, params, true).await
    }

    async fn send(
        &mut self,
        protocol: Protocol,
        stmt: &Statement,
        params: &[Param<'_>],
        describe: bool,
    ) -> Result<QueryResult<'_>, Error> {
        self.settle().await?;
        // A pipeline still queued is dropped unsent (a script that failed half-way).
        self.pipeline = None;
        self.wbuf.clear();
        let parsing = match self.encode(protocol, stmt, params, describe) {
            Ok(parsing) => parsing,
            Err(e) => {
                self.wbuf.clear();
                return Err(e);
            }
        };
        self.pending_prepare = parsing;
        self.round_trip().await
    }

    /// Runs SQL text (one or more statements) with the simple query protocol.
    pub async fn simple_query(&mut self, sql: &str) -> Result<QueryResult<'_>, Error> {
        self.encode_query(sql).await?;
        self.round_trip().await
    }

    /// Readies the session and puts a Query of `sql` alone in the write buffer.
    pub(crate) async fn encode_query(&mut self, sql: &str) -> Result<(), Error> {
        self.settle().await?;
        self.pipeline = None;
        self.wbuf.clear();
        frontend::query(sql, &mut self.wbuf).map_err(|e| {
            self.wbuf.clear();
            Error::protocol(format!("cannot send the SQL text: {e}"))
        })
    }

    /// Sends Terminate and closes the socket.
    pub async fn close(mut self) {
        if self.state == State::Writing || self.state == State::Broken {
            // A half-written message or a dead socket: a Terminate would not be understood.
            let _ = self.stream.shutdown().await;
            return;
        }
        self.wbuf.clear();
        frontend::terminate(&mut self.wbuf);
        // The session ends either way; a failed goodbye changes nothing for the caller.
        let _ = self.stream.write_all(&self.wbuf).await;
        let _ = self.stream.shutdown().await;
    }

    /// Makes the session ready for a new round trip, or says why it cannot be.
    async fn settle(&mut self) -> Result<(), Error> {
        match self.state {
            State::Idle => Ok(()),
            State::Reading => {
                self.read_response().await?;
                while self.more_ready > 0 {
                    self.more_ready -= 1;
                    self.read_response().await?;
                }
                Ok(())
            }
            State::Writing | State::Broken => Err(Error::from(io::Error::new(
                io::ErrorKind::NotConnected,
                "the session was lost by an earlier statement (socket error, server shutdown, \
                 or a statement cancelled half-way through sending); open a new connection",
            ))),
        }
    }

    /// Encodes one statement into the write buffer. Returns the name being prepared, if any.
    fn encode(
        &mut self,
        protocol: Protocol,
        stmt: &Statement,
        params: &[Param<'_>],
        describe: bool,
    ) -> Result<Option<&'static str>, Error> {
        let encode_error =
            |e: io::Error| Error::protocol(format!("cannot encode statement {:?}: {e}", stmt.name));
        match protocol {
            Protocol::Simple => {
                let sql = if params.is_empty() {
                    stmt.sql
                } else {
                    literal::substitute(stmt.sql, params, &mut self.sql);
                    self.sql.as_str()
                };
                frontend::query(sql, &mut self.wbuf).map_err(encode_error)?;
                Ok(None)
            }
            Protocol::Extended => {
                frontend::parse("", stmt.sql, std::iter::empty(), &mut self.wbuf)
                    .map_err(encode_error)?;
                bind_execute_sync("", params, describe, &mut self.wbuf).map_err(encode_error)?;
                Ok(None)
            }
            Protocol::Prepared => {
                let fresh = !self.prepared.contains(&stmt.name);
                if fresh {
                    frontend::parse(stmt.name, stmt.sql, std::iter::empty(), &mut self.wbuf)
                        .map_err(encode_error)?;
                }
                bind_execute_sync(stmt.name, params, describe, &mut self.wbuf)
                    .map_err(encode_error)?;
                Ok(fresh.then_some(stmt.name))
            }
        }
    }

    /// Sends the write buffer in one write and reads the answer.
    async fn round_trip(&mut self) -> Result<QueryResult<'_>, Error> {
        self.state = State::Writing;
        if let Err(e) = self.stream.write_all(&self.wbuf).await {
            self.state = State::Broken;
            if matches!(
                e.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ) {
                // The server hung up while we were idle; what it said before (a FATAL such as
                // 57P01 "terminating connection due to administrator command") is still
                // waiting in the socket and explains the loss better than EPIPE. The peer is
                // gone, so this read ends at once.
                let said = self.read_response().await;
                self.state = State::Broken;
                if let Err(said) = said {
                    if said.sqlstate().is_some() {
                        return Err(said);
                    }
                }
            }
            return Err(Error::from(e));
        }
        self.read_result().await
    }

    /// Reads the answer to what was sent: its rows, or the server's error.
    pub(crate) async fn read_result(&mut self) -> Result<QueryResult<'_>, Error> {
        self.state = State::Reading;
        self.read_response().await?;
        match self.response.error.take() {
            Some(e) => Err(e),
            None => Ok(QueryResult {
                response: &self.response,
            }),
        }
    }

    /// Reads one response up to ReadyForQuery into `self.response`. Server errors stay in
    /// `self.response.error`; an `Err` here means the session is gone.
    async fn read_response(&mut self) -> Result<(), Error> {
        self.response.clear();
        loop {
            let params = &mut self.server_params;
            // A ParameterStatus is rare (a SET of a reported setting), so keeping
            // `server_param` current costs nothing on the hot path.
            let step = match self
                .response
                .take_from(&mut self.rbuf, |body| record_server_param(params, body))
            {
                Ok(Some(step)) => Ok(step),
                Ok(None) => match self.fill().await {
                    Ok(()) => continue,
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            match step {
                Ok(Step::More) => {}
                Ok(Step::Ready(status)) => {
                    self.tx_status = status;
                    // A pipeline's answers go on to its last ReadyForQuery.
                    self.state = if self.more_ready == 0 {
                        State::Idle
                    } else {
                        State::Reading
                    };
                    if let Some(name) = self.pending_prepare.take() {
                        // Parse and the execution fail separately: a statement parsed fine but
                        // hitting e.g. division by zero exists on the server all the same.
                        if self.response.parses > 0 {
                            self.prepared.push(name);
                        }
                    }
                    return Ok(());
                }
                Err(e) => return Err(self.lost(e)),
            }
        }
    }

    /// Marks the session gone and picks the error that explains it best: a FATAL
    /// ErrorResponse just before the end of the stream says why the server hung up.
    fn lost(&mut self, e: Error) -> Error {
        self.state = State::Broken;
        match self.response.error.take() {
            Some(fatal) if fatal.is_connection_lost() => fatal,
            _ => e,
        }
    }

    /// The next backend message, reading from the socket as needed.
    pub(crate) async fn next_message(&mut self) -> Result<Message, Error> {
        loop {
            match Message::parse(&mut self.rbuf) {
                Ok(Some(message)) => return Ok(message),
                Ok(None) => {}
                Err(e) => return Err(Error::protocol(format!("malformed message: {e}"))),
            }
            self.fill().await?;
        }
    }

    /// Reads what the socket has into the read buffer; an error when the server closed it.
    async fn fill(&mut self) -> Result<(), Error> {
        if self.rbuf.capacity() - self.rbuf.len() < READ_SPARE {
            // Messages taken earlier are gone by now, so this reclaims the buffer's own
            // memory instead of allocating.
            self.rbuf.reserve(READ_CAPACITY);
        }
        let n = self.stream.read_buf(&mut self.rbuf).await?;
        if n == 0 {
            return Err(Error::from(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        Ok(())
    }

    /// Sends the write buffer and empties it (startup and authentication).
    pub(crate) async fn flush(&mut self) -> Result<(), Error> {
        self.stream.write_all(&self.wbuf).await?;
        self.wbuf.clear();
        Ok(())
    }
}

/// Keeps a ParameterStatus the server sent in `params` (a setting it reports, e.g.
/// `server_version`), replacing an earlier value.
pub(crate) fn record_server_param(
    params: &mut Vec<(String, String)>,
    body: &ParameterStatusBody,
) -> Result<(), Error> {
    let malformed = |e: io::Error| Error::protocol(format!("malformed ParameterStatus: {e}"));
    let name = body.name().map_err(malformed)?;
    let value = body.value().map_err(malformed)?;
    match params.iter_mut().find(|(n, _)| n == name) {
        Some((_, v)) => {
            v.clear();
            v.push_str(value);
        }
        None => params.push((name.to_owned(), value.to_owned())),
    }
    Ok(())
}

/// Bind (parameters and results in text format, as pgbench sends them), Execute, Sync,
/// written by hand: `postgres_protocol`'s generic `bind` (iterators, closures, a fallible
/// length patch per parameter) took about 380 instructions per select-only transaction, a
/// tenth of the driver's own (callgrind, issue 25). The test below checks the bytes against
/// that encoder.
fn bind_execute_sync(
    statement: &str,
    params: &[Param<'_>],
    describe: bool,
    buf: &mut BytesMut,
) -> io::Result<()> {
    bind_execute(statement, params, describe, buf)?;
    buf.put_slice(&[b'S', 0, 0, 0, 4]);
    Ok(())
}

/// [`bind_execute_sync`] without the Sync: a pipeline's statement.
fn bind_execute(
    statement: &str,
    params: &[Param<'_>],
    describe: bool,
    buf: &mut BytesMut,
) -> io::Result<()> {
    if statement.as_bytes().contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a statement name holds a NUL byte",
        ));
    }
    let count = i16::try_from(params.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "more than 32767 parameters"))?;
    buf.put_u8(b'B');
    let bind_at = buf.len();
    buf.put_i32(0);
    buf.put_u8(0); // the unnamed portal
    buf.put_slice(statement.as_bytes());
    buf.put_u8(0);
    buf.put_i16(0); // every parameter in text format
    buf.put_i16(count);
    for param in params {
        let len_at = buf.len();
        buf.put_i32(0);
        let len = match write_text_param(param, buf) {
            IsNull::Yes => -1,
            IsNull::No => i32::try_from(buf.len() - len_at - 4).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "a parameter over 2 GiB")
            })?,
        };
        buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
    buf.put_i16(0); // every result column in text format
    let bind_len = i32::try_from(buf.len() - bind_at)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a Bind message over 2 GiB"))?;
    buf[bind_at..bind_at + 4].copy_from_slice(&bind_len.to_be_bytes());
    if describe {
        // Describe the unnamed portal: the server answers with its RowDescription.
        buf.put_slice(&[b'D', 0, 0, 0, 6, b'P', 0]);
    }
    // Execute the unnamed portal with no row limit.
    buf.put_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
    Ok(())
}

/// A parameter's text-format value, as the server's input functions read it.
fn write_text_param(param: &Param<'_>, buf: &mut BytesMut) -> IsNull {
    match *param {
        Param::Int(v) => buf.put_slice(itoa::Buffer::new().format(v).as_bytes()),
        Param::Float(v) if v.is_nan() => buf.put_slice(b"NaN"),
        Param::Float(v) if v.is_infinite() => {
            buf.put_slice(if v > 0.0 { b"Infinity" } else { b"-Infinity" })
        }
        Param::Float(v) => {
            // BytesMut's fmt::Write only fails if growing fails, which aborts anyway.
            let _ = std::fmt::Write::write_fmt(buf, format_args!("{v}"));
        }
        Param::Text(s) => buf.put_slice(s.as_bytes()),
        Param::Null => return IsNull::Yes,
    }
    IsNull::No
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_in_text_format() {
        let cases: [(Param<'_>, &[u8]); 6] = [
            (Param::Int(-12), b"-12"),
            (Param::Float(2.5), b"2.5"),
            (Param::Float(f64::NAN), b"NaN"),
            (Param::Float(f64::NEG_INFINITY), b"-Infinity"),
            (Param::Text("a'b\\"), b"a'b\\"),
            (Param::Null, b""),
        ];
        for (param, text) in cases {
            let mut buf = BytesMut::new();
            let null = write_text_param(&param, &mut buf);
            assert_eq!(&buf[..], text);
            assert_eq!(matches!(null, IsNull::Yes), matches!(param, Param::Null));
        }
    }

    #[test]
    fn bind_execute_sync_is_one_contiguous_message_train() {
        let mut buf = BytesMut::new();
        bind_execute_sync("s1", &[Param::Int(5), Param::Null], false, &mut buf).unwrap();
        let tags: Vec<u8> = {
            let mut tags = Vec::new();
            let mut at = 0;
            while at < buf.len() {
                tags.push(buf[at]);
                let len = u32::from_be_bytes([buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]]);
                at += 1 + len as usize;
            }
            assert_eq!(at, buf.len());
            tags
        };
        assert_eq!(tags, b"BES");
    }

    #[test]
    fn bind_execute_sync_writes_what_postgres_protocol_writes() {
        let params = [
            Param::Int(-42),
            Param::Null,
            Param::Text("it's"),
            Param::Float(0.5),
            Param::Text(""),
        ];
        for (name, params) in [("", &params[..]), ("s_42", &params[..]), ("x", &[][..])] {
            let mut ours = BytesMut::new();
            bind_execute_sync(name, params, false, &mut ours).unwrap();
            let mut theirs = BytesMut::new();
            frontend::bind(
                "",
                name,
                std::iter::empty(),
                params.iter(),
                |param, buf| Ok(write_text_param(param, buf)),
                std::iter::empty(),
                &mut theirs,
            )
            .map_err(|_| ())
            .unwrap();
            frontend::execute("", 0, &mut theirs).unwrap();
            frontend::sync(&mut theirs);
            assert_eq!(&ours[..], &theirs[..], "statement {name:?}");
        }
        assert!(bind_execute_sync("a\0b", &[], false, &mut BytesMut::new()).is_err());
    }
}
