//! Host counters over time: CPU (user, system, iowait, steal) from `/proc/stat`, load from
//! `/proc/loadavg`, memory from `/proc/meminfo`, context switches. Steal is the time a guest's
//! virtual CPU was ready but the hypervisor ran something else: the one sign of an
//! overcommitted host a VM can see (the TPC-V and vPostgres studies read it).
//!
//! Parsers take text so they are tested on canned files; [`HostReader`] keeps the previous
//! reading and turns counters into rates. A file that cannot be read yields no rows.

use super::run::Values;

/// The aggregate `cpu` line of `/proc/stat`, in clock ticks, and the context switch count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub ctxt: u64,
}

impl CpuTimes {
    /// All ticks. guest and guest_nice are already inside user and nice, so they are not added.
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

pub fn parse_stat(text: &str) -> Option<CpuTimes> {
    let mut t = CpuTimes::default();
    let mut found = false;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("cpu") => {
                let v: Vec<u64> = words.map(|w| w.parse().unwrap_or(0)).collect();
                let at = |i: usize| v.get(i).copied().unwrap_or(0);
                t.user = at(0);
                t.nice = at(1);
                t.system = at(2);
                t.idle = at(3);
                t.iowait = at(4);
                t.irq = at(5);
                t.softirq = at(6);
                t.steal = at(7);
                found = v.len() >= 4;
            }
            Some("ctxt") => t.ctxt = words.next().and_then(|w| w.parse().ok()).unwrap_or(0),
            _ => {}
        }
    }
    found.then_some(t)
}

/// The 1-minute load average.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Memory in bytes, as `free` splits it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    pub used: u64,
    pub cached: u64,
    pub free: u64,
}

pub fn parse_meminfo(text: &str) -> Option<Memory> {
    let field = |key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.split(':').next() == Some(key))?;
        let mut words = line.split(':').nth(1)?.split_whitespace();
        let n: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") => n.checked_mul(1024),
            None => Some(n),
            Some(_) => None,
        }
    };
    let total = field("MemTotal")?;
    let free = field("MemFree")?;
    let cached = field("Buffers").unwrap_or(0)
        + field("Cached").unwrap_or(0)
        + field("SReclaimable").unwrap_or(0);
    Some(Memory {
        used: total.saturating_sub(free).saturating_sub(cached),
        cached,
        free,
    })
}

/// Reads the host's counters each round and keeps the last CPU reading for the rates.
#[derive(Default)]
pub struct HostReader {
    last: Option<CpuTimes>,
}

impl HostReader {
    /// Appends this round's `host` rows; `dt_s` is the time since the previous round.
    pub fn sample(&mut self, dt_s: f64, out: &mut Values) {
        let stat = std::fs::read_to_string("/proc/stat").ok();
        let now = stat.as_deref().and_then(parse_stat);
        // No window, no rates: shares of a few clock ticks would be noise.
        if let (Some(now), Some(prev), true) = (now, self.last, dt_s > 0.0) {
            cpu_rows(prev, now, dt_s, out);
        }
        if now.is_some() {
            self.last = now;
        }
        if let Some(load) = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .as_deref()
            .and_then(parse_loadavg)
        {
            out.push("host", "load1", load);
        }
        if let Some(m) = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .as_deref()
            .and_then(parse_meminfo)
        {
            out.push("host", "mem_used_bytes", m.used as f64);
            out.push("host", "mem_cached_bytes", m.cached as f64);
            out.push("host", "mem_free_bytes", m.free as f64);
        }
    }
}

fn cpu_rows(prev: CpuTimes, now: CpuTimes, dt_s: f64, out: &mut Values) {
    let total = now.total().saturating_sub(prev.total());
    if total > 0 {
        let pct = |a: u64, b: u64| 100.0 * a.saturating_sub(b) as f64 / total as f64;
        out.push(
            "host",
            "cpu_user_pct",
            pct(now.user + now.nice, prev.user + prev.nice),
        );
        out.push(
            "host",
            "cpu_system_pct",
            pct(
                now.system + now.irq + now.softirq,
                prev.system + prev.irq + prev.softirq,
            ),
        );
        out.push("host", "cpu_iowait_pct", pct(now.iowait, prev.iowait));
        out.push("host", "cpu_steal_pct", pct(now.steal, prev.steal));
    }
    if dt_s > 0.0 {
        out.push(
            "host",
            "ctx_switches_per_s",
            now.ctxt.saturating_sub(prev.ctxt) as f64 / dt_s,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 10 50 800 20 5 5 10 0 0\n\
cpu0 50 5 25 400 10 2 3 5 0 0\n\
intr 12345 1 2\nctxt 1000\nbtime 1700000000\nprocesses 99\n";

    #[test]
    fn parses_proc_stat() {
        let t = parse_stat(STAT).unwrap();
        assert_eq!(
            (t.user, t.nice, t.system, t.idle, t.iowait, t.steal, t.ctxt),
            (100, 10, 50, 800, 20, 10, 1000)
        );
        assert_eq!(t.total(), 1000);
        assert!(parse_stat("intr 1\n").is_none());
    }

    #[test]
    fn cpu_percentages_are_over_the_round() {
        let prev = parse_stat(STAT).unwrap();
        let mut now = prev;
        // 200 more ticks: 100 user, 40 system, 20 iowait, 20 steal, 20 idle.
        now.user += 100;
        now.system += 40;
        now.iowait += 20;
        now.steal += 20;
        now.idle += 20;
        now.ctxt += 500;
        let mut out = Values::default();
        cpu_rows(prev, now, 2.0, &mut out);
        let get = |m: &str| out.get("host", m).unwrap();
        assert_eq!(get("cpu_user_pct"), 50.0);
        assert_eq!(get("cpu_system_pct"), 20.0);
        assert_eq!(get("cpu_iowait_pct"), 10.0);
        assert_eq!(get("cpu_steal_pct"), 10.0);
        assert_eq!(get("ctx_switches_per_s"), 250.0);
    }

    #[test]
    fn parses_loadavg_and_meminfo() {
        assert_eq!(parse_loadavg("0.52 0.40 0.33 1/234 5678\n"), Some(0.52));
        let mem = "MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\n\
Buffers:          50 kB\nCached:          300 kB\nSwapCached:        0 kB\nSReclaimable:     50 kB\n";
        assert_eq!(
            parse_meminfo(mem),
            Some(Memory {
                used: 400 * 1024,
                cached: 400 * 1024,
                free: 200 * 1024
            })
        );
        assert_eq!(parse_meminfo("MemFree: 1 kB\n"), None);
    }
}
