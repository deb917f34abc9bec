//! A figure a workload computes from its own record of a run, beside the counts every run has
//! (TPC-H's Power@Size from the power test's query times): its label, value, whether the
//! specification would accept it, and a line saying how it was computed or why it is not valid;
//! and the time of each unit a stream ran (TPC-H's query and refresh times per stream), which
//! the report draws as bars and `compare` sets side by side.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// As the specification names it (`Power@Size`).
    pub label: String,
    /// `None` when the run could not give it (e.g. a query of the power test failed).
    pub value: Option<f64>,
    /// Whether the specification's rules for it held.
    pub valid: bool,
    /// How it was computed, or why it is missing or not valid.
    pub note: String,
}

impl Figure {
    /// The figure as the terminal summary shows it: `Power@Size: 1234.5 (note)`.
    pub fn line(&self) -> String {
        let value = match self.value {
            Some(v) => format!("{v:.1}"),
            None => "none".to_string(),
        };
        let verdict = if self.valid { "" } else { ", not valid" };
        format!("{}: {value} ({}{verdict})", self.label, self.note)
    }
}

/// One unit of work a stream ran to its end, timed by its workload: the report's bars per
/// unit and per stream, and `compare`'s unit-by-unit table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitTime {
    /// The stream (client) that ran it, with the workload's own name for it (`stream 1`,
    /// `refresh`).
    pub stream: String,
    /// The unit as its workload names it (`Q14`, `RF1`), in the order the workload lists them.
    pub unit: String,
    pub seconds: f64,
}

impl UnitTime {
    pub fn new(stream: &str, unit: &str, seconds: f64) -> UnitTime {
        UnitTime {
            stream: stream.into(),
            unit: unit.into(),
            seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_the_value_and_whether_it_is_valid() {
        let f = Figure {
            label: "Power@Size".into(),
            value: Some(12.34),
            valid: false,
            note: "Q5 timed out".into(),
        };
        assert_eq!(f.line(), "Power@Size: 12.3 (Q5 timed out, not valid)");
    }
}
