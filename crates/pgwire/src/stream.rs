//! The socket a session owns: TCP (with TCP_NODELAY) or a Unix-domain socket.
//!
//! An enum rather than a boxed trait object, so a read or write on the hot path is a direct
//! call.

use std::io;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use crate::{ConnectParams, Error, Host};

pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub(crate) async fn open(params: &ConnectParams) -> Result<Stream, Error> {
        match &params.host {
            Host::Tcp(host) => {
                let stream = TcpStream::connect((host.as_str(), params.port))
                    .await
                    .map_err(|e| connect_error(e, &format!("{host}:{}", params.port)))?;
                // Each statement is one small write followed by a wait for the answer; Nagle's
                // algorithm would hold the write back for the previous segment's ACK.
                stream.set_nodelay(true)?;
                Ok(Stream::Tcp(stream))
            }
            Host::Unix(dir) => {
                let path = dir.join(format!(".s.PGSQL.{}", params.port));
                let stream = UnixStream::connect(&path)
                    .await
                    .map_err(|e| connect_error(e, &path.display().to_string()))?;
                Ok(Stream::Unix(stream))
            }
        }
    }

    /// Reads what is available into the spare capacity of `buf`; 0 means the server closed.
    pub(crate) async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read_buf(buf).await,
            Stream::Unix(s) => s.read_buf(buf).await,
        }
    }

    pub(crate) async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(bytes).await,
            Stream::Unix(s) => s.write_all(bytes).await,
        }
    }

    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown().await,
            Stream::Unix(s) => s.shutdown().await,
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
