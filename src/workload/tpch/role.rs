//! A TPC-H client's part in a run (clause 5.3): which test the run is ([`Test`], from its
//! options), what each client is in it ([`Role`]: a query stream, the power test's stream 0
//! with its refresh functions around it, or the throughput test's refresh stream), and the
//! units that part runs, in order ([`Unit`]).

use super::power::QUERIES;
use super::queries::stream_order;
use crate::workload::ClientSlot;

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
    pub fn type_index(self) -> usize {
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

/// What a run's clients are, from its options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    pub refresh: bool,
    pub throughput: bool,
    /// The pair the run's first refresh functions apply (the database's pairs so far + 1).
    pub first_pair: u32,
    pub power_at_size: Option<f64>,
}

impl Test {
    /// Queries alone, as part 1 ran them.
    pub const QUERIES: Test = Test {
        refresh: false,
        throughput: false,
        first_pair: 1,
        power_at_size: None,
    };

    /// Client `slot`'s part.
    pub fn role(&self, slot: ClientSlot) -> Role {
        if !self.throughput {
            return Role::Queries {
                stream: slot.index,
                refresh_pair: (self.refresh && slot.index == 0).then_some(self.first_pair),
            };
        }
        if self.refresh && slot.index + 1 == slot.count {
            return Role::Refresh {
                first_pair: self.first_pair,
                pairs: slot.count - 1,
            };
        }
        Role::Queries {
            stream: slot.index + 1,
            refresh_pair: None,
        }
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
