//! One session: startup, authentication, and statements on the three protocols.

use crate::{ConnectParams, Error, Param, Protocol, Statement};

/// Transaction status from the last ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    Idle,
    InTransaction,
    Failed,
}

/// What a statement returned. Row values are kept (text format) until the next statement, so
/// workloads that branch on results (TPC-C) can read them without allocating per row.
pub struct QueryResult<'a> {
    _conn: &'a Connection,
}

impl QueryResult<'_> {
    /// Number of DataRow messages received.
    pub fn rows(&self) -> usize {
        todo!()
    }
    /// Column `col` of row `row` as text; None for NULL or out of range.
    pub fn get_str(&self, _row: usize, _col: usize) -> Option<&str> {
        todo!()
    }
    /// Column parsed as an integer; None for NULL, out of range or not an integer.
    pub fn get_i64(&self, _row: usize, _col: usize) -> Option<i64> {
        todo!()
    }
    /// Rows affected from the CommandComplete tag (UPDATE 1 → 1), 0 when the tag has none.
    pub fn affected(&self) -> u64 {
        todo!()
    }
}

/// A session that owns its socket. Not `Sync`; one client task uses it.
pub struct Connection {}

impl Connection {
    /// Opens the socket, runs startup and authentication (trust, cleartext, MD5, SCRAM-SHA-256),
    /// and waits for the first ReadyForQuery, within `params.connect_timeout`.
    pub async fn connect(_params: &ConnectParams) -> Result<Connection, Error> {
        todo!()
    }

    /// A ParameterStatus value the server reported at startup (e.g. `server_version`).
    pub fn server_param(&self, _name: &str) -> Option<&str> {
        todo!()
    }

    /// Status from the last ReadyForQuery.
    pub fn tx_status(&self) -> TxStatus {
        todo!()
    }

    /// Runs one statement with the given protocol and reads until ReadyForQuery.
    /// `Protocol::Prepared` sends Parse the first time `stmt.name` is used on this connection.
    /// `Protocol::Simple` inlines the parameters as literals (text quoted and escaped).
    /// On a server error the whole response is still consumed, so the session stays usable.
    pub async fn execute(
        &mut self,
        _protocol: Protocol,
        _stmt: &Statement,
        _params: &[Param<'_>],
    ) -> Result<QueryResult<'_>, Error> {
        todo!()
    }

    /// Runs SQL text (one or more statements) with the simple query protocol.
    pub async fn simple_query(&mut self, _sql: &str) -> Result<QueryResult<'_>, Error> {
        todo!()
    }

    /// Sends Terminate and closes the socket.
    pub async fn close(self) {}
}
