//! Per-command latency of a script (pgbench's `--report-per-command`): for each command of
//! each script, how often it ran, how often it failed, and its mean and longest time. Kept
//! by the workload over the whole run (ramps included, as pgbench's), written into
//! `summary.json` and shown by the terminal and `report.html`.

use serde::{Deserialize, Serialize};

/// One command of one script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandStats {
    /// The script (its transaction type).
    pub txn_type: String,
    /// The command's place in its script, from 1.
    pub command: u32,
    /// The command as written (its first line, cut to 80 characters).
    pub text: String,
    pub count: u64,
    pub failed: u64,
    pub mean_ms: f64,
    pub max_ms: f64,
}

/// Running sums of one command's executions (one per client, merged at its end).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandSums {
    pub count: u64,
    pub failed: u64,
    pub total_ns: u64,
    pub max_ns: u64,
}

impl CommandSums {
    pub fn add(&mut self, ns: u64, failed: bool) {
        self.count += 1;
        self.failed += u64::from(failed);
        self.total_ns = self.total_ns.saturating_add(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn merge(&mut self, other: &CommandSums) {
        self.count += other.count;
        self.failed += other.failed;
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// The figures of command `command` (from 1) of `txn_type`, written as `text`.
    pub fn stats(&self, txn_type: &str, command: u32, text: &str) -> CommandStats {
        let ms = |ns: u64| (ns as f64 / 1e6 * 1000.0).round() / 1000.0;
        CommandStats {
            txn_type: txn_type.to_string(),
            command,
            text: text.lines().next().unwrap_or("").chars().take(80).collect(),
            count: self.count,
            failed: self.failed,
            mean_ms: self.total_ns.checked_div(self.count).map_or(0.0, ms),
            max_ms: ms(self.max_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_merge_and_read_as_milliseconds() {
        let mut a = CommandSums::default();
        a.add(2_000_000, false);
        a.add(4_000_000, true);
        let mut b = CommandSums::default();
        b.add(9_000_000, false);
        a.merge(&b);
        let s = a.stats("mine", 2, "SELECT 1\n  FROM t");
        assert_eq!((s.count, s.failed, s.mean_ms, s.max_ms), (3, 1, 5.0, 9.0));
        assert_eq!(s.text, "SELECT 1");
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<CommandStats>(&json).unwrap(), s);
    }
}
