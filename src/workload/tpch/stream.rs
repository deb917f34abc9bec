//! A TPC-H client's terminal: it runs the units of its part ([`super::role`]) in order. A
//! query stream runs its 22 queries in Appendix A's order for its number; the power test's
//! stream 0, with the refresh functions, runs RF1 first and RF2 last (clause 5.3.3); the
//! throughput test's refresh stream runs one RF1, RF2 pair per query stream (clause 5.3.4),
//! pair after pair.
//!
//! Each unit is one transaction (one simple-protocol message), so the server counts one
//! commit per unit; its time is taken around that message alone and kept in the workload's
//! [`Record`].

use std::sync::Arc;
use std::time::Instant;

use super::queries::{render, ParamSource, QueryText};
use super::record::{Done, Record, Refreshed};
use super::refresh::{rf1_sql, rf2_sql, UpdateSets};
use super::role::{Role, Unit, RF1_TYPE, RF2_TYPE};
use super::rows::ScaleFactor;
use crate::workload::{Rng, Terminal, TxnEnd, TxnFuture};

/// What every stream of a run shares: the data's scale factor, where the queries'
/// parameters come from, the seed and update sets of the refresh functions, and the record.
#[derive(Debug)]
pub struct Shared {
    pub sf: ScaleFactor,
    pub source: ParamSource,
    pub seed: u64,
    pub sets: UpdateSets,
    pub record: Record,
}

/// A unit drawn and ready to run.
enum Drawn {
    Query(QueryText),
    Refresh {
        unit: Unit,
        sql: String,
    },
    /// A unit that could not be made (its keys are spent): executing it fails with this.
    Refused(String),
}

/// One client's stream.
pub struct Stream {
    pub workload: Arc<Shared>,
    pub role: Role,
    pub units: Vec<Unit>,
    pub next: usize,
    drawn: Option<Drawn>,
}

impl Stream {
    pub fn new(workload: Arc<Shared>, role: Role) -> Stream {
        workload.record.joined(role);
        Stream {
            units: role.units(),
            workload,
            role,
            next: 0,
            drawn: None,
        }
    }

    fn unit_for(&self, txn: usize) -> Unit {
        // The unit `next_type` handed out last, if it is of this type (always, in a run).
        if let Some(last) = self
            .units
            .get((self.next.max(1) - 1) % self.units.len().max(1))
        {
            if last.type_index() == txn {
                return *last;
            }
        }
        match txn {
            RF1_TYPE => Unit::Rf1(1),
            RF2_TYPE => Unit::Rf2(1),
            q => Unit::Query(u8::try_from(q + 1).unwrap_or(1)),
        }
    }

    fn stream_number(&self) -> u32 {
        match self.role {
            Role::Queries { stream, .. } => stream,
            Role::Refresh { .. } => 0,
        }
    }
}

impl Terminal for Stream {
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
            Unit::Query(q) => match render(q, self.stream_number(), w.source, w.sf) {
                Ok(text) => {
                    w.record.text(&text);
                    Drawn::Query(text)
                }
                Err(e) => Drawn::Refused(e.to_string()),
            },
            Unit::Rf1(pair) => match w.sets.new_sales(pair, w.seed) {
                Ok(orders) => Drawn::Refresh {
                    unit,
                    sql: rf1_sql(&orders, pair),
                },
                Err(e) => Drawn::Refused(e.to_string()),
            },
            Unit::Rf2(pair) => match w.sets.delete_keys(pair) {
                Ok(keys) => Drawn::Refresh {
                    unit,
                    sql: rf2_sql(&keys, pair),
                },
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
                    // RF2 checks its own count on the server (see `rf2_sql`).
                    conn.simple_query(sql).await?;
                    let seconds = started.elapsed().as_secs_f64();
                    self.workload.record.refreshed(Refreshed {
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

impl Stream {
    async fn query(
        &self,
        conn: &mut pgwire::Connection,
        q: &QueryText,
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
        self.workload.record.done(Done {
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
