//! What TPC-H gives the shared query-stream runner ([`crate::workload::streams`]): the
//! stream orders of Appendix A, each query with its stream's parameters, and RF1 and RF2
//! from the update sets (RF2 checks its own count on the server, see `rf2_sql`).

use super::queries::{render, stream_order, ParamSource};
use super::record::Record;
use super::refresh::{rf1_sql, rf2_sql, UpdateSets};
use super::rows::ScaleFactor;
use crate::workload::streams::{Query, Refusal, Unit, Units};

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

impl Units for Shared {
    fn order(&self, stream: u32) -> Vec<u8> {
        stream_order(stream).to_vec()
    }

    fn query(&self, number: u8, stream: u32) -> Result<Query, Refusal> {
        let q = render(number, stream, self.source, self.sf)?;
        Ok(Query {
            number,
            stream,
            text: q.sql(),
            statements: q.statements,
        })
    }

    fn refresh(&self, unit: Unit) -> Result<String, Refusal> {
        match unit {
            Unit::Rf1(pair) => Ok(rf1_sql(&self.sets.new_sales(pair, self.seed)?, pair)),
            Unit::Rf2(pair) => Ok(rf2_sql(&self.sets.delete_keys(pair)?, pair)),
            Unit::Query(q) => Err(format!("Q{q} is not a refresh function").into()),
        }
    }

    fn record(&self) -> &Record {
        &self.record
    }
}
