//! `COPY ... FROM STDIN` on a session: the Query, the server's CopyInResponse, the data as
//! CopyData messages a chunk per write, CopyDone, and the answer up to ReadyForQuery. A
//! workload that loads as its transaction (retail's `load`) does it on its own client's
//! session, so the load is timed, cut and cancelled as every other transaction.
//!
//! A server error while the data flows (a malformed row) is only read at the end: the server
//! discards CopyData until CopyDone, then answers with the error, and the session goes on.

use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::{Connection, State};
use crate::{Error, QueryResult};

impl Connection {
    /// Runs `sql`, a `COPY ... FROM STDIN`, sending the text `next` appends to the buffer it is
    /// given (emptied before each call) until it returns false; the buffer's content at that
    /// call is sent too. The result's `affected()` is the rows copied.
    pub async fn copy_in(
        &mut self,
        sql: &str,
        mut next: impl FnMut(&mut String) -> bool,
    ) -> Result<QueryResult<'_>, Error> {
        self.encode_query(sql).await?;
        // From here to CopyDone the server is in COPY mode: a drop half-way leaves a session
        // no statement can follow, which `Writing` says.
        self.state = State::Writing;
        self.write_buffer().await?;
        if let Some(e) = self.await_copy_in().await? {
            return Err(e);
        }
        let mut text = String::new();
        loop {
            text.clear();
            let more = next(&mut text);
            if !text.is_empty() {
                self.wbuf.clear();
                frontend::CopyData::new(text.as_bytes())
                    .map_err(|e| Error::client(format!("a COPY chunk too large to send: {e}")))?
                    .write(&mut self.wbuf);
                self.write_buffer().await?;
            }
            if !more {
                break;
            }
        }
        self.wbuf.clear();
        frontend::copy_done(&mut self.wbuf);
        self.write_buffer().await?;
        self.read_result().await
    }

    /// Writes the write buffer; a failure loses the session.
    async fn write_buffer(&mut self) -> Result<(), Error> {
        if let Err(e) = self.stream.write_all(&self.wbuf).await {
            self.state = State::Broken;
            return Err(Error::from(e));
        }
        Ok(())
    }

    /// Reads up to the server's CopyInResponse. `Some(error)` when the statement failed
    /// instead (a missing table, not a COPY FROM STDIN), read to its ReadyForQuery.
    async fn await_copy_in(&mut self) -> Result<Option<Error>, Error> {
        let mut failed = None;
        loop {
            let message = match self.next_message().await {
                Ok(m) => m,
                Err(e) => return Err(self.lost(e)),
            };
            match message {
                Message::CopyInResponse(_) if failed.is_none() => return Ok(None),
                Message::ErrorResponse(body) if failed.is_none() => {
                    failed = Some(Error::from_fields(&body));
                }
                Message::ReadyForQuery(body) => {
                    self.tx_status = crate::response::tx_status(body.status())?;
                    self.state = State::Idle;
                    return Ok(Some(failed.unwrap_or_else(|| {
                        Error::client("the statement is not a COPY FROM STDIN")
                    })));
                }
                _ => {}
            }
        }
    }
}
