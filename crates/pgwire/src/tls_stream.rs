//! TLS on a session's socket: the SSLRequest and its one-byte answer, the handshake, and
//! reading and writing through rustls's sans-I/O connection on the driver's event loop.
//!
//! A read takes whatever records the socket holds, decrypts them, and hands out the plaintext
//! rustls buffered (no second copy through a scratch buffer); a write encrypts into rustls's
//! buffer and sends the records at once, as the plaintext path sends the message train.

use std::io::{self, BufRead, Read, Write};

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::stream::Stream;
use crate::tls::{describe_tls_error, Negotiation, Tls};
use crate::Error;

impl Stream {
    /// Starts TLS as `tls` says. `Ok(false)`: the server declined and the mode accepts a
    /// plaintext session, which goes on on this socket.
    pub(crate) async fn start_tls(&mut self, tls: &Tls, host: &str) -> Result<bool, Error> {
        let session_tls = tls
            .config_for(host)
            .ok_or_else(|| Error::tls("TLS was not set up"))?;
        if tls.negotiation == Negotiation::Postgres {
            let mut request = BytesMut::with_capacity(8);
            frontend::ssl_request(&mut request);
            self.send_all(&request).await?;
            // One byte exactly: anything the server (or a man in the middle) sent after it
            // must go to the TLS handshake, never be read as protocol messages.
            match self.read_byte().await? {
                b'S' => {}
                b'N' if tls.mode.allows_plaintext() => return Ok(false),
                b'N' => return Err(Error::tls(crate::tls::no_tls_at_server(tls.mode))),
                b'E' => {
                    return Err(Error::tls(
                        "the server refused the SSL request (a server older than 7.2?)",
                    ))
                }
                other => {
                    return Err(Error::protocol(format!(
                        "the server answered the SSL request with {other:#04x}, not S or N"
                    )))
                }
            }
        }
        let mut session =
            rustls::ClientConnection::new(session_tls.config.clone(), Tls::server_name(host))
                .map_err(|e| Error::tls(format!("cannot start TLS: {e}")))?;
        // Whole message trains are written at once; rustls must take them all.
        session.set_buffer_limit(None);
        self.tls = Some(Box::new(session));
        self.handshake(host).await?;
        session_tls
            .check_after_handshake()
            .map_err(|e| Error::tls(e.to_string()))?;
        Ok(true)
    }

    async fn handshake(&mut self, host: &str) -> Result<(), Error> {
        loop {
            self.flush_tls().await?;
            if !self.session().is_handshaking() {
                return Ok(());
            }
            if self.receive_records().await? == 0 {
                return Err(Error::tls(
                    "the server closed the connection during the TLS handshake (see its log: \
                     a client certificate it refused, or no TLS protocol in common)",
                ));
            }
            if let Err(e) = self.session_mut().process_new_packets() {
                // Tell the server why (the alert), then report it in the user's terms.
                let _ = self.flush_tls().await;
                return Err(Error::tls(describe_tls_error(&e, host)));
            }
        }
    }

    /// Reads decrypted bytes into `buf`; 0 means the server closed the session.
    pub(crate) async fn read_plaintext(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        loop {
            let mut reader = self.session_mut().reader();
            match reader.fill_buf() {
                Ok(chunk) => {
                    let n = chunk.len();
                    buf.extend_from_slice(chunk);
                    reader.consume(n);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The socket closed without TLS's close_notify: the same as a hang-up.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            let received = self.receive_records().await?;
            let processed = self.session_mut().process_new_packets();
            // Key updates and alerts rustls answers go out now.
            self.flush_tls().await?;
            if let Err(e) = processed {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("TLS: {e}"),
                ));
            }
            if received == 0 {
                // rustls now knows of the end; the next turn reports it as EOF.
                continue;
            }
        }
    }

    pub(crate) async fn write_plaintext(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.session_mut().writer().write_all(bytes)?;
        self.flush_tls().await
    }

    /// Sends every record rustls has ready.
    pub(crate) async fn flush_tls(&mut self) -> io::Result<()> {
        let Stream { fd, tls, records } = self;
        let session = tls.as_mut().expect("TLS session");
        records.clear();
        while session.wants_write() {
            session.write_tls(records)?;
        }
        if !records.is_empty() {
            crate::stream::send_all(fd, records).await?;
        }
        Ok(())
    }

    /// Reads what records the socket holds into rustls (not yet processed); 0 at end of stream.
    async fn receive_records(&mut self) -> io::Result<usize> {
        loop {
            self.fd.readable().await;
            let Stream { fd, tls, .. } = self;
            let session = tls.as_mut().expect("TLS session");
            match session.read_tls(&mut SocketReader(fd)) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    async fn read_byte(&mut self) -> io::Result<u8> {
        let mut byte = [0u8; 1];
        loop {
            self.fd.readable().await;
            match SocketReader(&self.fd).read(&mut byte) {
                Ok(1) => return Ok(byte[0]),
                Ok(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection instead of answering the SSL request",
                    ))
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn session(&self) -> &rustls::ClientConnection {
        self.tls.as_ref().expect("TLS session")
    }

    fn session_mut(&mut self) -> &mut rustls::ClientConnection {
        self.tls.as_mut().expect("TLS session")
    }
}

/// `recv` on the loop's socket as `io::Read`, forgetting the readiness once the socket is
/// drained (epoll is edge-triggered).
struct SocketReader<'a>(&'a evloop::Registration);

impl Read for SocketReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: the pointer and length describe `buf`, which recv writes at most all of.
        let n = unsafe { libc::recv(self.0.fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::WouldBlock {
                self.0.clear_readable();
            }
            return Err(err);
        }
        let n = n as usize;
        if n > 0 && n < buf.len() {
            self.0.clear_readable();
        }
        Ok(n)
    }
}
