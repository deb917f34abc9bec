//! Bytes a test case moved (retail's `load`: the COPY text each execution sent), kept by the
//! workload over the whole run, ramps included, as per-command figures are. A stream's rate is
//! its bytes over the time its executions took; the run's rate, the bytes over its duration,
//! adds the streams that ran at once (the Greenplum study's "Data Loading" reads both).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Volume {
    /// The transaction type that moved them.
    pub txn_type: String,
    /// Executions that completed (failed ones moved nothing that stayed).
    pub executions: u64,
    pub rows: u64,
    pub bytes: u64,
    /// Seconds those executions took, added up over the clients.
    pub busy_s: f64,
}

impl Volume {
    /// MB/s of one stream: the bytes over the time spent moving them.
    pub fn stream_mb_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.busy_s.max(1e-9)
    }

    /// MB/s over a run of `duration_s`: every stream together.
    pub fn run_mb_s(&self, duration_s: f64) -> f64 {
        self.bytes as f64 / 1e6 / duration_s.max(1e-9)
    }

    /// Adds another process's figures for the same type (a shard's).
    pub fn add(&mut self, other: &Volume) {
        self.executions += other.executions;
        self.rows += other.rows;
        self.bytes += other.bytes;
        self.busy_s += other.busy_s;
    }

    /// One line for the terminal and the report.
    pub fn describe(&self, duration_s: f64) -> String {
        format!(
            "{}: {} executions, {} rows, {:.1} MB; {:.1} MB/s per stream, {:.1} MB/s over the run",
            self.txn_type,
            self.executions,
            self.rows,
            self.bytes as f64 / 1e6,
            self.stream_mb_s(),
            self.run_mb_s(duration_s)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_bytes_over_busy_time_and_over_the_run() {
        let mut v = Volume {
            txn_type: "load".into(),
            executions: 2,
            rows: 10,
            bytes: 4_000_000,
            busy_s: 2.0,
        };
        v.add(&v.clone());
        assert_eq!((v.executions, v.rows, v.bytes), (4, 20, 8_000_000));
        assert_eq!(v.stream_mb_s(), 2.0);
        assert_eq!(v.run_mb_s(2.0), 4.0);
        assert!(v
            .describe(2.0)
            .contains("2.0 MB/s per stream, 4.0 MB/s over the run"));
    }
}
