//! The query-stream runner that analytic workloads share (TPC-H's `tpch`, CH-benCHmark's
//! `ch`): a client of such a group takes a part in the run ([`role`]: a query stream, the
//! power test's stream 0 with a refresh pair around it, or a refresh stream), runs that
//! part's units in order and ends (the workload's `units_for`).
//!
//! - [`Units`]: what a workload gives the runner: each stream's query order, a query's
//!   statements and text, a refresh function's statement, and the [`Record`] its streams
//!   write to.
//! - [`Stream`]: the client's [`Terminal`], generic over the workload.
//! - [`record`]: texts, answers and times, which become the results dir's files and the
//!   report's bars.
//!
//! Each unit is one transaction type and one transaction: its statements go as one
//! simple-protocol message, which PostgreSQL runs in one implicit transaction (a view created,
//! read and dropped in it), so the server counts one commit per unit. Its time is taken
//! around that message alone. A query's answer is the last result set (a `DROP VIEW` after
//! the answer returns none).

pub mod record;
pub mod role;

use std::sync::Arc;
use std::time::Instant;

pub use record::{Done, Record, Refreshed};
pub use role::{Role, Unit, QUERIES, RF1_TYPE, RF2_TYPE};

use super::{Rng, Terminal, TxnEnd, TxnFuture};

/// Why a unit could not be made (a query number the workload has not, a refresh pair whose
/// keys are spent): executing it fails with this message.
pub type Refusal = Box<dyn std::error::Error + Send + Sync>;

/// One query of one stream, ready to execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The query's number, from 1; its transaction type is `number - 1`.
    pub number: u8,
    pub stream: u32,
    /// The statements, run in order in one message.
    pub statements: Vec<String>,
    /// The whole text as written to the results dir (psql-ready, under a comment).
    pub text: String,
}

/// What a workload of query streams gives the runner.
pub trait Units: Send + Sync + 'static {
    /// The query numbers stream `stream` runs, in its order.
    fn order(&self, stream: u32) -> Vec<u8>;
    /// Query `number` of stream `stream`.
    fn query(&self, number: u8, stream: u32) -> Result<Query, Refusal>;
    /// The statement of refresh function `unit` (`Unit::Rf1` or `Unit::Rf2`).
    fn refresh(&self, unit: Unit) -> Result<String, Refusal>;
    /// Where the group's streams record their texts, answers and times.
    fn record(&self) -> &Record;

    /// The units a client of part `role` runs, in order.
    fn units(&self, role: Role) -> Vec<Unit> {
        role.units(&self.order(role.stream()))
    }
}

/// A unit drawn and ready to run.
enum Drawn {
    Query(Query),
    Refresh {
        unit: Unit,
        sql: String,
    },
    /// A unit that could not be made: executing it fails with this.
    Refused(String),
}

/// One client's stream: its part, its units, its place in them, and the unit drawn last.
pub struct Stream<W> {
    workload: Arc<W>,
    role: Role,
    units: Vec<Unit>,
    next: usize,
    drawn: Option<Drawn>,
}

impl<W: Units> Stream<W> {
    pub fn new(workload: Arc<W>, role: Role) -> Stream<W> {
        workload.record().joined(role);
        Stream {
            units: workload.units(role),
            workload,
            role,
            next: 0,
            drawn: None,
        }
    }

    fn unit_for(&self, txn: usize) -> Unit {
        // The unit `next_type` handed out last, if it is of this type (always, in a run).
        let last = (self.next.max(1) - 1) % self.units.len().max(1);
        if let Some(unit) = self.units.get(last) {
            if unit.type_index() == txn {
                return *unit;
            }
        }
        match txn {
            RF1_TYPE => Unit::Rf1(1),
            RF2_TYPE => Unit::Rf2(1),
            q => Unit::Query(u8::try_from(q + 1).unwrap_or(1)),
        }
    }
}

impl<W: Units> Terminal for Stream<W> {
    /// The stream's next unit (after the last the list repeats, for a run given more
    /// transactions than a stream has).
    fn next_type(&mut self, _rng: &mut Rng) -> usize {
        // A refresh stream of no pairs has no unit and is never asked (its count is 0).
        let Some(unit) = self.units.get(self.next % self.units.len().max(1)) else {
            return RF1_TYPE;
        };
        self.next += 1;
        unit.type_index()
    }

    fn draw(&mut self, txn: usize, _rng: &mut Rng) {
        let w = &self.workload;
        let unit = self.unit_for(txn);
        self.drawn = Some(match unit {
            Unit::Query(q) => match w.query(q, self.role.stream()) {
                Ok(query) => {
                    w.record()
                        .text(query.stream, query.number, query.text.clone());
                    Drawn::Query(query)
                }
                Err(e) => Drawn::Refused(e.to_string()),
            },
            Unit::Rf1(_) | Unit::Rf2(_) => match w.refresh(unit) {
                Ok(sql) => Drawn::Refresh { unit, sql },
                Err(e) => Drawn::Refused(e.to_string()),
            },
        });
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        _protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        Box::pin(async move {
            let refused = |m: String| pgwire::Error {
                kind: pgwire::ErrorKind::Protocol(m),
            };
            match &self.drawn {
                None => Err(refused("no unit drawn".into())),
                Some(Drawn::Refused(m)) => Err(refused(m.clone())),
                Some(Drawn::Query(q)) => self.query(conn, q).await,
                Some(Drawn::Refresh { unit, sql }) => {
                    let started = Instant::now();
                    conn.simple_query(sql).await?;
                    let seconds = started.elapsed().as_secs_f64();
                    self.workload.record().refreshed(Refreshed {
                        stream: self.role.label(),
                        unit: *unit,
                        started,
                        seconds,
                    });
                    Ok(TxnEnd::Committed)
                }
            }
        })
    }
}

impl<W: Units> Stream<W> {
    async fn query(
        &self,
        conn: &mut pgwire::Connection,
        q: &Query,
    ) -> Result<TxnEnd, pgwire::Error> {
        // The values are in the text already: it runs as written to the results dir.
        let sql = q.statements.join(";\n");
        let started = Instant::now();
        let result = conn.simple_query(&sql).await?;
        let seconds = started.elapsed().as_secs_f64();
        let set = result.result_sets().saturating_sub(1);
        let columns: Vec<String> = result.set_columns(set).map(String::from).collect();
        let rows = result
            .set_rows(set)
            .map(|r| {
                (0..columns.len())
                    .map(|c| result.get_str(r, c).unwrap_or("").to_string())
                    .collect()
            })
            .collect();
        self.workload.record().done(Done {
            stream: q.stream,
            query: q.number,
            started,
            seconds,
            columns,
            rows,
        });
        Ok(TxnEnd::Committed)
    }
}
