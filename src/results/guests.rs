//! `guests.csv` and `summary.json`'s `guests`: each VM instance (issue 40) over the measured
//! window, the guest's own view beside the host's view of its QEMU process, made at the run's
//! end from the rows of `system.csv` (`instance:<name>` sources with `guest_*` metrics).
//!
//! Columns ([`HEADER`]), one row per sampling round and guest, a cell empty where that round
//! had no value:
//!
//! | column | meaning |
//! |---|---|
//! | `t_s` | seconds since the run started (system.csv's clock) |
//! | `instance` | the managed instance |
//! | `cpu_busy_pct`, `cpu_steal_pct` | the guest's CPU time busy and stolen, percent of all its vCPUs (its /proc/stat) |
//! | `mem_total_bytes`, `mem_available_bytes` | the guest's MemTotal and MemAvailable (its /proc/meminfo) |
//! | `balloon_bytes` | the balloon's size: RAM taken back from the guest (QMP `query-balloon`) |
//! | `disk_read_bytes_per_s`, `disk_write_bytes_per_s` | all the guest's disks (its /proc/diskstats) |
//! | `net_rx_bytes_per_s`, `net_tx_bytes_per_s` | the guest's eth0 (its /proc/net/dev) |
//! | `qemu_cpu_cores` | the host's CPU spent by the QEMU process (1 = one core): the VM's cost |
//! | `qemu_rss_bytes` | the QEMU process's resident memory on the host |
//!
//! The schema version is the results dir's.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::system::SystemRow;
use super::ResultsError;

pub const GUESTS_FILE: &str = "guests.csv";

/// The columns after `t_s,instance`, with the `system.csv` metric each comes from and the
/// factor applied (QEMU's `cpu_pct` is 100 a core).
const COLUMNS: [(&str, &str, f64); 11] = [
    ("cpu_busy_pct", "guest_cpu_busy_pct", 1.0),
    ("cpu_steal_pct", "guest_cpu_steal_pct", 1.0),
    ("mem_total_bytes", "guest_mem_total_bytes", 1.0),
    ("mem_available_bytes", "guest_mem_available_bytes", 1.0),
    ("balloon_bytes", "guest_balloon_bytes", 1.0),
    ("disk_read_bytes_per_s", "guest_disk_read_bytes_per_s", 1.0),
    (
        "disk_write_bytes_per_s",
        "guest_disk_write_bytes_per_s",
        1.0,
    ),
    ("net_rx_bytes_per_s", "guest_net_rx_bytes_per_s", 1.0),
    ("net_tx_bytes_per_s", "guest_net_tx_bytes_per_s", 1.0),
    ("qemu_cpu_cores", "cpu_pct", 0.01),
    ("qemu_rss_bytes", "rss_bytes", 1.0),
];

pub const HEADER: &str = "t_s,instance,cpu_busy_pct,cpu_steal_pct,mem_total_bytes,\
mem_available_bytes,balloon_bytes,disk_read_bytes_per_s,disk_write_bytes_per_s,\
net_rx_bytes_per_s,net_tx_bytes_per_s,qemu_cpu_cores,qemu_rss_bytes";

/// One guest's means over the measured window (`summary.json` `guests`); a field is absent
/// when no round had it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestMeans {
    pub instance: String,
    /// Rounds of the measured window with a row for this guest.
    pub rounds: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub means: BTreeMap<String, f64>,
}

impl GuestMeans {
    /// The mean of a [`HEADER`] column.
    pub fn get(&self, column: &str) -> Option<f64> {
        self.means.get(column).copied()
    }
}

/// One round of one guest: the values of [`COLUMNS`].
type Round = [Option<f64>; 11];

/// The guests' rounds in `[from_s, to_s]`, by instance then time.
fn rounds(rows: &[SystemRow], from_s: f64, to_s: f64) -> BTreeMap<String, BTreeMap<u64, Round>> {
    let guests: Vec<&str> = rows
        .iter()
        .filter(|r| r.metric.starts_with("guest_"))
        .filter_map(|r| r.source.strip_prefix("instance:"))
        .collect();
    let mut out: BTreeMap<String, BTreeMap<u64, Round>> = BTreeMap::new();
    for r in rows {
        let Some(name) = r.source.strip_prefix("instance:") else {
            continue;
        };
        if !guests.contains(&name) || r.t_s < from_s || r.t_s > to_s {
            continue;
        }
        let Some(col) = COLUMNS.iter().position(|c| c.1 == r.metric) else {
            continue;
        };
        // t_s has 3 decimals: milliseconds as the key keep rounds in time order.
        let at = (r.t_s * 1e3).round() as u64;
        let round = out
            .entry(name.to_string())
            .or_default()
            .entry(at)
            .or_default();
        round[col] = Some(r.value * COLUMNS[col].2);
    }
    out
}

/// `guests.csv`'s text and each guest's means over the measured window `[from_s, to_s]`;
/// `None` when the run had no VM instance.
pub fn build(rows: &[SystemRow], from_s: f64, to_s: f64) -> Option<(String, Vec<GuestMeans>)> {
    let by_guest = rounds(rows, from_s, to_s);
    if by_guest.is_empty() {
        return None;
    }
    let mut csv = format!("{HEADER}\n");
    let mut means = Vec::new();
    for (name, rounds) in &by_guest {
        let mut sums = [(0.0, 0u32); 11];
        for (at, round) in rounds {
            csv.push_str(&format!(
                "{:.3},{}",
                *at as f64 / 1e3,
                super::csv::csv_field(name)
            ));
            for (v, sum) in round.iter().zip(sums.iter_mut()) {
                csv.push(',');
                if let Some(v) = v {
                    csv.push_str(&format!("{}", round6(*v)));
                    *sum = (sum.0 + v, sum.1 + 1);
                }
            }
            csv.push('\n');
        }
        let mut m = GuestMeans {
            instance: name.clone(),
            rounds: rounds.len() as u64,
            means: BTreeMap::new(),
        };
        for (c, (sum, n)) in COLUMNS.iter().zip(sums) {
            if n > 0 {
                m.means.insert(c.0.to_string(), round6(sum / f64::from(n)));
            }
        }
        means.push(m);
    }
    Some((csv, means))
}

/// The measured window, seconds since the run's start: from the first measured phase's start
/// to the last one's end; the whole run when no phase was measured (a run stopped early).
pub fn measured_window(summary: &super::Summary) -> (f64, f64) {
    let measured = summary.phases.iter().filter(|p| p.measured);
    let start = measured.clone().map(|p| p.start_s).fold(f64::MAX, f64::min);
    let end = measured
        .map(|p| p.start_s + p.duration_s)
        .fold(0.0, f64::max);
    if start > end {
        (0.0, summary.elapsed_s)
    } else {
        (start, end)
    }
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

/// Writes `guests.csv` into `dir` (whole, through a temp file).
pub fn write(dir: &Path, csv: &str) -> Result<(), ResultsError> {
    Ok(super::atomic::write(
        &dir.join(GUESTS_FILE),
        csv.as_bytes(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t_s: f64, source: &str, metric: &str, value: f64) -> SystemRow {
        SystemRow {
            t_s,
            source: source.into(),
            metric: metric.into(),
            value,
        }
    }

    #[test]
    fn guests_over_the_measured_window_with_their_qemu_beside() {
        let rows = vec![
            // Before the window: left out.
            row(0.5, "instance:vm1", "guest_cpu_busy_pct", 99.0),
            row(1.0, "instance:vm1", "guest_cpu_busy_pct", 40.0),
            row(1.0, "instance:vm1", "cpu_pct", 150.0),
            row(1.0, "instance:vm1", "guest_mem_total_bytes", 1000.0),
            row(2.0, "instance:vm1", "guest_cpu_busy_pct", 60.0),
            row(2.0, "instance:vm1", "cpu_pct", 50.0),
            row(2.0, "instance:vm1", "guest_balloon_bytes", 256.0),
            // A local instance has no guest metrics: not a guest.
            row(1.0, "instance:local", "cpu_pct", 80.0),
            row(1.0, "host", "cpu_user_pct", 10.0),
        ];
        let (csv, means) = build(&rows, 1.0, 3.0).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(lines[1], "1.000,vm1,40,,1000,,,,,,,1.5,");
        assert_eq!(lines[2], "2.000,vm1,60,,,,256,,,,,0.5,");
        assert_eq!(lines.len(), 3);
        assert_eq!(means.len(), 1);
        let m = &means[0];
        assert_eq!((m.instance.as_str(), m.rounds), ("vm1", 2));
        assert_eq!(m.get("cpu_busy_pct"), Some(50.0));
        assert_eq!(m.get("qemu_cpu_cores"), Some(1.0));
        assert_eq!(m.get("balloon_bytes"), Some(256.0));
        assert_eq!(m.get("cpu_steal_pct"), None);
        assert_eq!(HEADER.split(',').count(), COLUMNS.len() + 2);
        assert!(build(&rows[7..], 0.0, 9.0).is_none(), "no guest, no file");
    }
}
