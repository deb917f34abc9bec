//! The socket a session owns: TCP (with TCP_NODELAY) or a Unix-domain socket.
//!
//! The socket is registered with the runtime for read readiness only. A session writes a
//! request and then waits for the answer; with write interest too, the runtime's thread would
//! also wake when the server drains the request from the socket buffer (an edge on
//! writability), a second wake-up per statement that pgbench, which polls for reading only,
//! does not pay. Requests are small next to the socket buffer, so a write nearly always goes
//! through at once; when it cannot, the writer naps briefly and tries again.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

use crate::{ConnectParams, Error, Host};

/// How long a writer waits when the socket buffer is full (the server is not reading).
const WRITE_RETRY: Duration = Duration::from_micros(200);

pub(crate) struct Stream {
    fd: AsyncFd<OwnedFd>,
}

impl Stream {
    pub(crate) async fn open(params: &ConnectParams) -> Result<Stream, Error> {
        let fd: OwnedFd = match &params.host {
            Host::Tcp(host) => {
                let stream = TcpStream::connect((host.as_str(), params.port))
                    .await
                    .map_err(|e| connect_error(e, &format!("{host}:{}", params.port)))?;
                // Each statement is one small write followed by a wait for the answer; Nagle's
                // algorithm would hold the write back for the previous segment's ACK.
                stream.set_nodelay(true)?;
                stream.into_std()?.into()
            }
            Host::Unix(dir) => {
                let path = dir.join(format!(".s.PGSQL.{}", params.port));
                let stream = UnixStream::connect(&path)
                    .await
                    .map_err(|e| connect_error(e, &path.display().to_string()))?;
                stream.into_std()?.into()
            }
        };
        // `into_std` keeps the socket non-blocking, which the reads and writes below rely on.
        // SAFETY: `fd` is an open socket owned by the AsyncFd from here on; nothing else
        // closes or replaces it while it is registered.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok(Stream { fd })
    }

    /// Reads what is available into the spare capacity of `buf`; 0 means the server closed.
    pub(crate) async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if buf.capacity() == buf.len() {
            buf.reserve(8 * 1024);
        }
        loop {
            let mut ready = self.fd.readable().await?;
            let spare = buf.chunk_mut();
            let (ptr, len) = (spare.as_mut_ptr(), spare.len());
            // SAFETY: `ptr` points at `len` writable bytes of `buf`'s spare capacity, and recv
            // writes at most `len` bytes there.
            let n = unsafe { libc::recv(ready.get_inner().as_raw_fd(), ptr.cast(), len, 0) };
            if n >= 0 {
                let n = n as usize;
                // SAFETY: recv initialised the first `n` bytes of the spare capacity.
                unsafe { buf.advance_mut(n) };
                // A short read drained the socket (epoll is edge-triggered): forget the
                // readiness now rather than learn it from an EAGAIN on the next read.
                if n > 0 && n < len {
                    ready.clear_ready();
                }
                return Ok(n);
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => ready.clear_ready(),
                io::ErrorKind::Interrupted => {}
                _ => return Err(err),
            }
        }
    }

    pub(crate) async fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        let fd = self.fd.get_ref().as_raw_fd();
        while !bytes.is_empty() {
            // SAFETY: the pointer and length describe `bytes`. MSG_NOSIGNAL turns a closed
            // peer into EPIPE instead of a SIGPIPE that would kill the process.
            let n =
                unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
            if n >= 0 {
                bytes = &bytes[n as usize..];
                continue;
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => tokio::time::sleep(WRITE_RETRY).await,
                io::ErrorKind::Interrupted => {}
                _ => return Err(err),
            }
        }
        Ok(())
    }

    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        // SAFETY: shutdown on a socket we own; no memory is passed.
        let rc = unsafe { libc::shutdown(self.fd.get_ref().as_raw_fd(), libc::SHUT_WR) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Names the address in the error, since "connection refused" alone does not say which server.
fn connect_error(e: io::Error, address: &str) -> Error {
    Error::from(io::Error::new(
        e.kind(),
        format!("cannot connect to {address}: {e} (is the server running and accepting connections there?)"),
    ))
}
