//! A TPC-H client's terminal: the list of units its stream runs (clause 5.3), and how one
//! runs. A query stream runs its 22 queries in Appendix A's order for its number; the power
//! test's stream 0, with the refresh functions, runs RF1 first and RF2 last (clause 5.3.3);
//! the throughput test's refresh stream runs one RF1, RF2 pair per query stream (clause
//! 5.3.4), pair after pair.
//!
//! Each unit is one transaction (one simple-protocol message), so the server counts one
//! commit per unit; its time is taken around that message alone and kept in the workload's
//! [`Record`].

use std::sync::Arc;
use std::time::Instant;

use super::plugin::Tpch;
use super::power::QUERIES;
use super::queries::{render, stream_order, QueryText};
use super::record::{Done, Refreshed};
use super::refresh::{rf1_sql, rf2_sql};
use crate::workload::{Rng, Terminal, TxnEnd, TxnFuture};

/// The type index of RF1 and RF2, after the 22 queries'.
pub const RF1_TYPE: usize = QUERIES;
pub const RF2_TYPE: usize = QUERIES + 1;

/// What a client is in the test: a query stream (with or without the power test's refresh
/// functions around it) or the refresh stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Queries {
        stream: u32,
        refresh_pair: Option<u32>,
    },
    Refresh {
        first_pair: u32,
        pairs: u32,
    },
}

/// One unit of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Query(u8),
    Rf1(u32),
    Rf2(u32),
}

impl Unit {
    fn type_index(self) -> usize {
        match self {
            Unit::Query(q) => usize::from(q) - 1,
            Unit::Rf1(_) => RF1_TYPE,
            Unit::Rf2(_) => RF2_TYPE,
        }
    }
}

impl Role {
    /// The units in the order the stream runs them.
    pub fn units(self) -> Vec<Unit> {
        match self {
            Role::Queries {
                stream,
                refresh_pair,
            } => {
                let queries = stream_order(stream).into_iter().map(Unit::Query);
                match refresh_pair {
                    Some(p) => std::iter::once(Unit::Rf1(p))
                        .chain(queries)
                        .chain(std::iter::once(Unit::Rf2(p)))
                        .collect(),
                    None => queries.collect(),
                }
            }
            Role::Refresh { first_pair, pairs } => (first_pair..first_pair + pairs)
                .flat_map(|p| [Unit::Rf1(p), Unit::Rf2(p)])
                .collect(),
        }
    }

    /// The stream's name in the record and the report.
    pub fn label(self) -> String {
        match self {
            Role::Queries { stream, .. } => format!("stream {stream}"),
            Role::Refresh { .. } => "refresh".to_string(),
        }
    }
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
    pub workload: Arc<Tpch>,
    pub role: Role,
    pub units: Vec<Unit>,
    pub next: usize,
    drawn: Option<Drawn>,
}

impl Stream {
    pub fn new(workload: Arc<Tpch>, role: Role) -> Stream {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_list_their_units_in_the_specs_order() {
        let power = Role::Queries {
            stream: 0,
            refresh_pair: Some(4),
        }
        .units();
        assert_eq!(power.len(), 24);
        assert_eq!(power[0], Unit::Rf1(4));
        assert_eq!(power[1], Unit::Query(stream_order(0)[0]));
        assert_eq!(power[23], Unit::Rf2(4));
        let plain = Role::Queries {
            stream: 2,
            refresh_pair: None,
        }
        .units();
        assert_eq!(plain.len(), 22);
        let refresh = Role::Refresh {
            first_pair: 3,
            pairs: 2,
        }
        .units();
        assert_eq!(
            refresh,
            [Unit::Rf1(3), Unit::Rf2(3), Unit::Rf1(4), Unit::Rf2(4)]
        );
        assert_eq!(Unit::Rf2(1).type_index(), 23);
        assert_eq!(Unit::Query(1).type_index(), 0);
    }
}
