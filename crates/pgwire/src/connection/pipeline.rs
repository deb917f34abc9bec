//! Pipeline mode, as libpq's and pgbench's `\startpipeline`: statements are queued in the write
//! buffer without waiting for one another, a Sync may be queued between them
//! (`\syncpipeline`), and ending the pipeline queues the last Sync, writes everything at once
//! and reads every answer. A server error skips the statements after it up to the next Sync,
//! as the protocol says; the first error comes back.
//!
//! Only the extended and prepared protocols pipeline. A prepared statement new to the session
//! is parsed inside the pipeline, as pgbench 15 does: a Parse of its own, in a round trip with
//! its own Sync, would be one more transaction at the server, which the server check would
//! see. Which Parses took is read from each part's ParseCompletes: the server answers them in
//! order and skips the rest of a part after an error.

use postgres_protocol::message::frontend;

use super::{bind_execute, Connection, State};
use crate::{Error, Param, Protocol, Statement};

/// A pipeline being queued.
#[derive(Debug, Default)]
pub(super) struct Queued {
    /// Syncs queued so far: the part of the pipeline a statement is in.
    syncs: u32,
    /// Statements parsed in this pipeline, with their part, in the order sent.
    parsing: Vec<(u32, &'static str)>,
}

impl Connection {
    /// Starts queuing a pipeline.
    pub async fn start_pipeline(&mut self) -> Result<(), Error> {
        if self.pipeline.is_some() {
            return Err(Error::client("already in pipeline mode"));
        }
        self.settle().await?;
        self.wbuf.clear();
        self.pipeline = Some(Queued::default());
        Ok(())
    }

    /// Whether a pipeline is being queued.
    pub fn in_pipeline(&self) -> bool {
        self.pipeline.is_some()
    }

    /// Queues one statement of the pipeline: Parse (extended, or prepared the first time),
    /// Bind and Execute, no Sync.
    pub fn queue(
        &mut self,
        protocol: Protocol,
        stmt: &Statement,
        params: &[Param<'_>],
    ) -> Result<(), Error> {
        let Some(queued) = self.pipeline.as_mut() else {
            return Err(Error::client("not in pipeline mode"));
        };
        let mark = self.wbuf.len();
        let encoded = match protocol {
            Protocol::Simple => {
                return Err(Error::client(
                    "cannot use pipeline mode with the simple query protocol",
                ))
            }
            Protocol::Extended => frontend::parse("", stmt.sql, std::iter::empty(), &mut self.wbuf)
                .and_then(|()| bind_execute("", params, false, &mut self.wbuf)),
            Protocol::Prepared => {
                let fresh = !self.prepared.contains(&stmt.name)
                    && !queued.parsing.iter().any(|(_, n)| *n == stmt.name);
                let parsed = if fresh {
                    queued.parsing.push((queued.syncs, stmt.name));
                    frontend::parse(stmt.name, stmt.sql, std::iter::empty(), &mut self.wbuf)
                } else {
                    Ok(())
                };
                parsed.and_then(|()| bind_execute(stmt.name, params, false, &mut self.wbuf))
            }
        };
        encoded.map_err(|e| {
            // What this statement wrote is dropped; what the pipeline queued before stays.
            self.wbuf.truncate(mark);
            if let Some(q) = self.pipeline.as_mut() {
                q.parsing.retain(|(_, n)| *n != stmt.name);
            }
            Error::protocol(format!("cannot encode statement {:?}: {e}", stmt.name))
        })
    }

    /// Queues a Sync: an error before it skips nothing after it (`\syncpipeline`).
    pub fn queue_sync(&mut self) -> Result<(), Error> {
        let Some(queued) = self.pipeline.as_mut() else {
            return Err(Error::client("not in pipeline mode"));
        };
        queued.syncs += 1;
        frontend::sync(&mut self.wbuf);
        Ok(())
    }

    /// Ends the pipeline: its last Sync, one write, then every answer up to the last
    /// ReadyForQuery. The first server error comes back once all are read.
    pub async fn end_pipeline(&mut self) -> Result<(), Error> {
        let Some(queued) = self.pipeline.take() else {
            return Err(Error::client("not in pipeline mode"));
        };
        frontend::sync(&mut self.wbuf);
        self.more_ready = queued.syncs;
        self.state = State::Writing;
        if let Err(e) = self.stream.write_all(&self.wbuf).await {
            self.state = State::Broken;
            self.more_ready = 0;
            return Err(Error::from(e));
        }
        self.state = State::Reading;
        let mut first = None;
        let mut part = 0;
        loop {
            self.read_response().await?;
            let took = self.response.parses as usize;
            let parsed = queued.parsing.iter().filter(|(p, _)| *p == part);
            self.prepared.extend(parsed.take(took).map(|(_, n)| *n));
            if let Some(e) = self.response.error.take() {
                first.get_or_insert(e);
            }
            if self.more_ready == 0 {
                break;
            }
            self.more_ready -= 1;
            part += 1;
        }
        first.map_or(Ok(()), Err)
    }
}
