//! What `system.csv` says about a run, as the report and `compare` need it: CPU, memory and
//! disk series per instance or device, CPU productivity (transactions per CPU-second), and the
//! checkpoint and buffer counters' growth over the measured window.

use std::collections::BTreeMap;

use super::charts::{Combine, Series};
use super::load::{delta, mean_within, RunData};
pub use crate::results::system::SERVER_COUNTERS;

/// The instance a target runs on, for managed targets (`instance:NAME/DB`).
pub fn instance_of(target: &str) -> Option<&str> {
    let rest = target.strip_prefix("instance:")?;
    Some(rest.split('/').next().unwrap_or(rest))
}

/// Series named after their source with the given prefix stripped, values scaled.
pub fn series_of(data: &RunData, prefix: &str, metric: &str, scale: f64) -> Vec<Series> {
    data.system_series(|s| s.starts_with(prefix), metric)
        .map(|s| Series {
            name: s.source.trim_start_matches(prefix).to_string(),
            points: s.points.iter().map(|(t, v)| (*t, v * scale)).collect(),
        })
        .collect()
}

/// One row of the productivity table.
#[derive(Debug, Clone, PartialEq)]
pub struct Productivity {
    /// Instance name, or "all instances".
    pub name: String,
    /// Committed + expected rollbacks over the measured window.
    pub transactions: u64,
    pub cpu_seconds: f64,
}

impl Productivity {
    /// Transactions per CPU-second; `None` when no CPU time was recorded.
    pub fn per_cpu_second(&self) -> Option<f64> {
        (self.cpu_seconds > 0.0).then(|| self.transactions as f64 / self.cpu_seconds)
    }
}

/// Transactions per CPU-second of each managed instance over the measured window, then all of
/// them together (the last row). Empty when the run has no instance CPU samples.
pub fn productivity(data: &RunData) -> Vec<Productivity> {
    let (start, end) = data.measured_window();
    let mut txns: BTreeMap<&str, u64> = BTreeMap::new();
    for row in &data.summary.by_target_and_type {
        if let Some(inst) = instance_of(&row.target) {
            *txns.entry(inst).or_default() += row.stats.committed + row.stats.expected_rollback;
        }
    }
    let mut out = Vec::new();
    for s in data.system_series(|s| s.starts_with("instance:"), "cpu_seconds") {
        let name = s.source.trim_start_matches("instance:");
        let Some(cpu) = delta(&s.points, start, end) else {
            continue;
        };
        out.push(Productivity {
            name: name.to_string(),
            transactions: txns.get(name).copied().unwrap_or(0),
            cpu_seconds: cpu,
        });
    }
    if !out.is_empty() {
        out.push(Productivity {
            name: "all instances".into(),
            transactions: out.iter().map(|p| p.transactions).sum(),
            cpu_seconds: out.iter().map(|p| p.cpu_seconds).sum(),
        });
    }
    out
}

/// Transactions (committed + expected rollbacks) per CPU-second of the tidebench process over
/// the measured window: the client side's cost (the `driver` rows of `system.csv`); `None`
/// for a run without them (no sampler, or older files).
pub fn client_productivity(data: &RunData) -> Option<f64> {
    let (start, end) = data.measured_window();
    let series = data
        .system_series(|s| s == "driver", "cpu_seconds")
        .next()?;
    let cpu = delta(&series.points, start, end)?;
    let t = &data.summary.totals;
    (cpu > 0.0).then(|| (t.committed + t.expected_rollback) as f64 / cpu)
}

/// Mean host CPU steal (percent) over the measured window.
pub fn steal_pct(data: &RunData) -> Option<f64> {
    let (start, end) = data.measured_window();
    data.system_series(|s| s == "host", "cpu_steal_pct")
        .next()
        .and_then(|s| mean_within(&s.points, start, end))
}

/// Growth of each server counter over the measured window: server label → counter values in
/// [`SERVER_COUNTERS`] order (`None` where not sampled).
pub fn server_deltas(data: &RunData) -> BTreeMap<String, Vec<Option<f64>>> {
    let (start, end) = data.measured_window();
    let mut out: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
    for (i, counter) in SERVER_COUNTERS.iter().enumerate() {
        for s in data.system_series(|s| s.starts_with("server:"), counter) {
            let row = out
                .entry(s.source.trim_start_matches("server:").to_string())
                .or_insert_with(|| vec![None; SERVER_COUNTERS.len()]);
            row[i] = delta(&s.points, start, end);
        }
    }
    out
}

/// Checkpoints (timed + requested) over the measured window, all servers together.
pub fn checkpoints(data: &RunData) -> Option<f64> {
    let d = server_deltas(data);
    let mut any = false;
    let mut sum = 0.0;
    for row in d.values() {
        for v in row.iter().take(2).flatten() {
            any = true;
            sum += v;
        }
    }
    any.then_some(sum)
}

/// The sampler's own cost, in words: rounds, mean round time and CPU it used.
pub fn sampling_cost(data: &RunData) -> Option<String> {
    let round = data.system_series(|s| s == "sampler", "round_ms").next()?;
    let n = round.points.len();
    if n == 0 {
        return None;
    }
    let mean = round.points.iter().map(|p| p.1).sum::<f64>() / n as f64;
    let cpu: f64 = data
        .system_series(|s| s == "sampler", "cpu_ms")
        .next()
        .map_or(0.0, |s| s.points.iter().map(|p| p.1).sum());
    Some(format!(
        "{n} sampling rounds, {mean:.1} ms per round on average, {:.2} s of CPU in all",
        cpu / 1000.0
    ))
}

/// Chart groups of the CPU, memory and disk sections: (title, y label, series, combine).
pub fn cpu_charts(data: &RunData) -> Vec<(String, &'static str, Vec<Series>, Combine)> {
    let mut host = Vec::new();
    for (metric, name) in [
        ("cpu_user_pct", "user"),
        ("cpu_system_pct", "system"),
        ("cpu_iowait_pct", "iowait"),
        ("cpu_steal_pct", "steal"),
    ] {
        for s in data.system_series(|s| s == "host", metric) {
            host.push(Series {
                name: name.into(),
                points: s.points.clone(),
            });
        }
    }
    vec![
        (
            "Host CPU by kind".into(),
            "CPU (% of all cores)",
            host,
            Combine::Mean,
        ),
        (
            "CPU per instance".into(),
            "CPU (% of one core)",
            cpu_per_instance(data),
            Combine::Mean,
        ),
    ]
}

/// Each instance's CPU, and each noise event's group's beside them (`noise 2`: event 2's), so
/// a neighbour's size shows against the tenants it squeezed.
fn cpu_per_instance(data: &RunData) -> Vec<Series> {
    let mut series = series_of(data, "instance:", "cpu_pct", 1.0);
    for mut s in series_of(data, "noise:", "cpu_pct", 1.0) {
        s.name = format!("noise {}", s.name);
        series.push(s);
    }
    series
}

const MB: f64 = 1.0 / (1024.0 * 1024.0);

pub fn memory_charts(data: &RunData) -> Vec<(String, &'static str, Vec<Series>, Combine)> {
    let mut usage = series_of(data, "instance:", "mem_usage_bytes", MB);
    if usage.is_empty() {
        usage = series_of(data, "instance:", "rss_bytes", MB);
    }
    let mut host = Vec::new();
    for (metric, name) in [
        ("mem_used_bytes", "used"),
        ("mem_cached_bytes", "page cache"),
    ] {
        for s in data.system_series(|s| s == "host", metric) {
            host.push(Series {
                name: name.into(),
                points: s.points.iter().map(|(t, v)| (*t, v * MB)).collect(),
            });
        }
    }
    vec![
        (
            "Memory per instance".into(),
            "memory (MiB)",
            usage,
            Combine::Sum,
        ),
        (
            "Page cache per instance".into(),
            "page cache (MiB)",
            series_of(data, "instance:", "mem_cache_bytes", MB),
            Combine::Sum,
        ),
        ("Host memory".into(), "memory (MiB)", host, Combine::Sum),
    ]
}

/// What each device holds for the managed instances (from `runtime.toml`): device →
/// "data" / "WAL" / "data+WAL", so IO by device reads as data vs WAL.
pub fn device_roles(data: &RunData) -> BTreeMap<String, String> {
    let mut roles: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    for d in data.runtime.iter().flat_map(|r| &r.devices) {
        if let Some(dev) = &d.data_device {
            roles.entry(dev.clone()).or_default().0 = true;
        }
        if let Some(dev) = &d.wal_device {
            roles.entry(dev.clone()).or_default().1 = true;
        }
    }
    roles
        .into_iter()
        .map(|(dev, role)| {
            let name = match role {
                (true, true) => "data+WAL",
                (true, false) => "data",
                _ => "WAL",
            };
            (dev, name.to_string())
        })
        .collect()
}

pub fn disk_charts(data: &RunData) -> Vec<(String, &'static str, Vec<Series>, Combine)> {
    let roles = device_roles(data);
    let named = |mut series: Vec<Series>| {
        for s in &mut series {
            if let Some(role) = roles.get(&s.name) {
                s.name = format!("{} ({role})", s.name);
            }
        }
        series
    };
    vec![
        (
            "Disk reads by device".into(),
            "read (MiB/s)",
            named(series_of(data, "device:", "read_bytes_per_s", MB)),
            Combine::Sum,
        ),
        (
            "Disk writes by device (data vs WAL)".into(),
            "written (MiB/s)",
            named(series_of(data, "device:", "write_bytes_per_s", MB)),
            Combine::Sum,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_names_of_managed_targets() {
        assert_eq!(instance_of("instance:vm1/db"), Some("vm1"));
        assert_eq!(instance_of("instance:vm1"), Some("vm1"));
        assert_eq!(instance_of("host=/tmp dbname=x"), None);
    }
}
