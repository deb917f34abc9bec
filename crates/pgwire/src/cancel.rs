//! Cancelling the statement a session is running, from outside it: PostgreSQL's CancelRequest,
//! sent over a new socket with the key the server gave the session at startup. A client that
//! gives up on a transaction (a timeout, the end of the run) sends it so the server stops the
//! work at once instead of holding locks and a backend until the statement ends by itself.

use std::time::Duration;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::stream::Stream;
use crate::{ConnectParams, Connection, Error, ErrorKind};

/// What it takes to cancel a session's statement; taken before the session is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CancelKey {
    pub backend_pid: i32,
    secret_key: i32,
}

impl Connection {
    /// The key a CancelRequest for this session needs.
    pub fn cancel_key(&self) -> CancelKey {
        CancelKey {
            backend_pid: self.backend_pid,
            secret_key: self.secret_key,
        }
    }
}

/// Sends a CancelRequest for `key` to the server `params` names, giving up after `within` (a
/// server that does not accept the socket, e.g. a stopped postmaster, must not hold the
/// caller). The server answers nothing; success means the request was delivered.
pub async fn cancel(params: &ConnectParams, key: CancelKey, within: Duration) -> Result<(), Error> {
    let send = async {
        let mut stream = Stream::open(params).await?;
        let mut buf = BytesMut::with_capacity(16);
        frontend::cancel_request(key.backend_pid, key.secret_key, &mut buf);
        stream.write_all(&buf).await?;
        let _ = stream.shutdown().await;
        Ok(())
    };
    match evloop::timeout(within, send).await {
        Ok(sent) => sent,
        Err(_) => Err(Error {
            kind: ErrorKind::Timeout,
        }),
    }
}
