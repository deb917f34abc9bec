//! The socket a session owns: TCP (with TCP_NODELAY) or a Unix-domain socket, in plaintext or
//! wrapped in TLS (see [`crate::tls`] for what is verified, `tls_stream.rs` for the bytes).
//!
//! The socket is registered with the driver thread's loop for read readiness only. A session
//! writes a request and then waits for the answer; with write interest too, the thread would
//! also wake when the server drains the request from the socket buffer (an edge on
//! writability), a second wake-up per statement that pgbench, which polls for reading only,
//! does not pay. Requests are small next to the socket buffer, so a write nearly always goes
//! through at once; when it cannot, the writer naps briefly and tries again.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use evloop::Registration;
use socket2::{Domain, SockAddr, SockRef, Socket, Type};

use crate::{ConnectParams, Error, Host, KeepAlive};

/// How long a writer waits when the socket buffer is full (the server is not reading).
const WRITE_RETRY: Duration = Duration::from_micros(200);

/// A session's socket on the driver thread's loop ([`evloop`]). Opening one needs a loop.
pub(crate) struct Stream {
    pub(crate) fd: Registration,
    /// The TLS session once the handshake started; every byte then goes through it.
    pub(crate) tls: Option<Box<rustls::ClientConnection>>,
    /// The records TLS made, kept between writes so a statement allocates nothing.
    pub(crate) records: Vec<u8>,
}

impl Stream {
    pub(crate) async fn open(params: &ConnectParams) -> Result<Stream, Error> {
        match &params.host {
            Host::Tcp(host) => {
                let address = format!("{host}:{}", params.port);
                // Resolved on the loop's thread: a name in /etc/hosts or an address answers at
                // once; libpq resolves the same way, blocking, before it connects.
                let addrs: Vec<SocketAddr> = match params.hostaddr {
                    Some(ip) => vec![SocketAddr::new(ip, params.port)],
                    None => (host.as_str(), params.port)
                        .to_socket_addrs()
                        .map_err(|e| connect_error(e, &address))?
                        .collect(),
                };
                let mut last = io::Error::new(io::ErrorKind::NotFound, "no address found");
                // Each address in turn, as libpq tries every address a name has.
                for addr in addrs {
                    match connect(
                        Domain::for_address(addr),
                        &SockAddr::from(addr),
                        &params.keepalive,
                    )
                    .await
                    {
                        Ok(fd) => return Ok(Stream::new(fd)),
                        Err(e) => last = e,
                    }
                }
                Err(connect_error(last, &address))
            }
            Host::Unix(dir) => {
                let path = dir.join(format!(".s.PGSQL.{}", params.port));
                let addr = SockAddr::unix(&path)?;
                match connect(Domain::UNIX, &addr, &params.keepalive).await {
                    Ok(fd) => Ok(Stream::new(fd)),
                    Err(e) => Err(connect_error(e, &path.display().to_string())),
                }
            }
        }
    }

    /// Reads what is available into the spare capacity of `buf`; 0 means the server closed.
    pub(crate) async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if self.tls.is_some() {
            return self.read_plaintext(buf).await;
        }
        if buf.capacity() == buf.len() {
            buf.reserve(8 * 1024);
        }
        loop {
            self.fd.readable().await;
            let spare = buf.chunk_mut();
            let (ptr, len) = (spare.as_mut_ptr(), spare.len());
            // SAFETY: `ptr` points at `len` writable bytes of `buf`'s spare capacity, and recv
            // writes at most `len` bytes there.
            let n = unsafe { libc::recv(self.fd.fd(), ptr.cast(), len, 0) };
            if n >= 0 {
                let n = n as usize;
                // SAFETY: recv initialised the first `n` bytes of the spare capacity.
                unsafe { buf.advance_mut(n) };
                // A short read drained the socket (epoll is edge-triggered): forget the
                // readiness now rather than learn it from an EAGAIN on the next read.
                if n > 0 && n < len {
                    self.fd.clear_readable();
                }
                return Ok(n);
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => self.fd.clear_readable(),
                io::ErrorKind::Interrupted => {}
                _ => return Err(err),
            }
        }
    }

    pub(crate) async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.tls.is_some() {
            return self.write_plaintext(bytes).await;
        }
        self.send_all(bytes).await
    }

    /// Sends bytes as they are (plaintext, or records TLS made).
    pub(crate) async fn send_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        send_all(&self.fd, bytes).await
    }
}

pub(crate) async fn send_all(fd: &Registration, mut bytes: &[u8]) -> io::Result<()> {
    let fd = fd.fd();
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`. MSG_NOSIGNAL turns a closed
        // peer into EPIPE instead of a SIGPIPE that would kill the process.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n >= 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock => evloop::sleep(WRITE_RETRY).await,
            io::ErrorKind::Interrupted => {}
            _ => return Err(err),
        }
    }
    Ok(())
}

impl Stream {
    fn new(fd: Registration) -> Stream {
        Stream {
            fd,
            tls: None,
            records: Vec::new(),
        }
    }

    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        if let Some(tls) = self.tls.as_mut() {
            tls.send_close_notify();
            self.flush_tls().await?;
        }
        // SAFETY: shutdown on a socket we own; no memory is passed.
        let rc = unsafe { libc::shutdown(self.fd.fd(), libc::SHUT_WR) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// A non-blocking connect to `addr` (TCP with TCP_NODELAY and libpq's keepalives), waiting
/// on the loop until it is done; the socket then listens for reading only.
async fn connect(
    domain: Domain,
    addr: &SockAddr,
    keepalive: &KeepAlive,
) -> io::Result<Registration> {
    let socket = Socket::new(domain, Type::STREAM.nonblocking().cloexec(), None)?;
    if domain != Domain::UNIX {
        // Each statement is one small write followed by a wait for the answer; Nagle's
        // algorithm would hold the write back for the previous segment's ACK.
        socket.set_tcp_nodelay(true)?;
        apply_keepalive(&socket, keepalive)?;
    }
    let pending = match socket.connect(addr) {
        Ok(()) => false,
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => true,
        // A Unix socket answers EAGAIN when the server's listen queue is full (a stopped or
        // swamped postmaster): nothing is under way, so it fails now, as libpq's connect does,
        // and the session's backoff paces the next attempt.
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            return Err(io::Error::new(
                e.kind(),
                "the server's listen queue is full (is the postmaster stopped or overloaded?)",
            ))
        }
        Err(e) => return Err(e),
    };
    let reg = Registration::new(OwnedFd::from(socket), pending)?;
    if pending {
        reg.writable().await;
        reg.read_only()?;
        if let Some(e) = SockRef::from(&reg).take_error()? {
            return Err(e);
        }
    }
    Ok(reg)
}

/// libpq's keepalive keywords as socket options (SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL,
/// TCP_KEEPCNT, TCP_USER_TIMEOUT), set before the connect as libpq sets them.
fn apply_keepalive(socket: &Socket, keepalive: &KeepAlive) -> io::Result<()> {
    socket.set_keepalive(keepalive.on)?;
    if keepalive.on {
        let mut params = socket2::TcpKeepalive::new();
        if let Some(idle) = keepalive.idle {
            params = params.with_time(idle);
        }
        if let Some(interval) = keepalive.interval {
            params = params.with_interval(interval);
        }
        if let Some(count) = keepalive.count {
            params = params.with_retries(count);
        }
        socket.set_tcp_keepalive(&params)?;
    }
    if let Some(timeout) = keepalive.user_timeout {
        socket.set_tcp_user_timeout(Some(timeout))?;
    }
    Ok(())
}

/// Names the address in the error, since "connection refused" alone does not say which server.
fn connect_error(e: io::Error, address: &str) -> Error {
    Error::from(io::Error::new(
        e.kind(),
        format!("cannot connect to {address}: {e} (is the server running and accepting connections there?)"),
    ))
}
