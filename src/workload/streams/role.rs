//! A query-stream client's part in a run and the units it runs, in order: a query stream
//! (TPC-H clause 5.3; CH-benCHmark's streams are the same without refresh functions), the
//! power test's stream 0 with a refresh pair around it, or the throughput test's refresh
//! stream. Which part each client takes is the workload's rule (TPC-H's is `tpch`'s `Test`).

/// The queries a stream runs: both workloads on the runner have 22 (TPC-H's and CH's).
pub const QUERIES: usize = 22;

/// The type index of the refresh pair's two functions (TPC-H's RF1 and RF2), after the
/// queries'.
pub const RF1_TYPE: usize = QUERIES;
pub const RF2_TYPE: usize = QUERIES + 1;

/// What a client is in the test: a query stream (with or without a refresh pair around it)
/// or the refresh stream.
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
            Unit::Query(q) => usize::from(q.max(1)) - 1,
            Unit::Rf1(_) => RF1_TYPE,
            Unit::Rf2(_) => RF2_TYPE,
        }
    }

    /// A refresh function's name (a query's is `Q`).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Rf1(_) => "RF1",
            Unit::Rf2(_) => "RF2",
            Unit::Query(_) => "Q",
        }
    }
}

impl Role {
    /// The units in the order the stream runs them, its queries in `order` (the stream's
    /// own, from the workload).
    pub fn units(self, order: &[u8]) -> Vec<Unit> {
        match self {
            Role::Queries { refresh_pair, .. } => {
                let queries = order.iter().copied().map(Unit::Query);
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

    /// The query stream's number (a refresh stream's is 0: it runs no query).
    pub fn stream(self) -> u32 {
        match self {
            Role::Queries { stream, .. } => stream,
            Role::Refresh { .. } => 0,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_list_their_units_in_order() {
        let order: Vec<u8> = (1..=22).rev().collect();
        let power = Role::Queries {
            stream: 0,
            refresh_pair: Some(4),
        }
        .units(&order);
        assert_eq!(power.len(), 24);
        assert_eq!(power[0], Unit::Rf1(4));
        assert_eq!(power[1], Unit::Query(22));
        assert_eq!(power[23], Unit::Rf2(4));
        let plain = Role::Queries {
            stream: 2,
            refresh_pair: None,
        }
        .units(&order);
        assert_eq!(plain.len(), 22);
        let refresh = Role::Refresh {
            first_pair: 3,
            pairs: 2,
        }
        .units(&order);
        assert_eq!(
            refresh,
            [Unit::Rf1(3), Unit::Rf2(3), Unit::Rf1(4), Unit::Rf2(4)]
        );
        assert_eq!(Unit::Rf2(1).type_index(), 23);
        assert_eq!(Unit::Query(1).type_index(), 0);
        assert_eq!(Unit::Rf1(1).name(), "RF1");
    }
}
