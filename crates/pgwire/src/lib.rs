//! `pgwire`: the PostgreSQL frontend/backend protocol, as tidebench's clients speak it on the hot path.
//!
//! Why not tokio-postgres here: its client/connection split puts a channel hop between the task
//! that issues a statement and the task that owns the socket; on a 2-core machine that cost
//! 10-15 % of throughput against pgbench when this crate replaced it. A [`Connection`] owns its
//! socket and buffers; each statement is one write (Bind+Execute+Sync, with Parse the first time
//! a named statement is used) and one read loop until ReadyForQuery, exactly the round trips
//! pgbench makes. tokio-postgres stays in use for everything off the hot path.
//!
//! Sessions run on a driver thread's [`evloop`] loop, not on tokio: connecting, reading,
//! writing, cancelling and the connect timeout all need one (`evloop::block_on`).
//!
//! Message encoding and parsing, and SCRAM/MD5, come from the `postgres-protocol` crate.

mod cancel;
mod connection;
mod error;
mod literal;
mod params;
mod response;
mod startup;
mod stream;
mod tls;
mod tls_error;
mod tls_keys;
mod tls_stream;
mod tls_verify;

pub use cancel::{cancel, CancelKey};
pub use connection::Connection;
pub use error::{pointed_lines, DbMore, Error, ErrorKind};
pub use params::{ConnectParams, Host, KeepAlive, Param, Protocol, Statement};
pub use response::{QueryResult, TxStatus};
pub use tls::{
    describe_tls_error, no_tls_at_server, KeyPassword, Negotiation, RootCert, SessionTls, SslMode,
    Tls, TlsError, TlsFiles, TlsVersions,
};
