//! A TPC-H client's part in a run (clause 5.3): which test the run is ([`Test`], from its
//! options) and what each client is in it: a query stream, the power test's stream 0 with
//! its refresh functions around it, or the throughput test's refresh stream. The parts and
//! their units are the shared runner's ([`crate::workload::streams::role`]).

pub use crate::workload::streams::role::Role;
use crate::workload::ClientSlot;

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
