//! The guest's view of itself, sent to the host once a second (issue 40, part 2).
//!
//! The guest's init writes one [`GuestStats`] record a line (JSON) to a virtio-serial port
//! named [`PORT_NAME`]; QEMU joins that port to a unix socket in the instance's `vm/` dir
//! (`stats.sock`), which the host's sampler reads during a run. Why a virtio-serial port and
//! not the network or qemu-guest-agent: it needs no address, no listener and no package in the
//! guest, and nobody but the host's user (the `vm/` dir is 0700) can read it.
//!
//! The record carries raw cumulative counters as the guest's kernel keeps them (CPU ticks,
//! disk sectors, network bytes) with the guest's uptime; the host turns two records into rates
//! ([`GuestRates::between`]), on the guest's own clock, so a record that waited in the socket
//! does not skew them.

use serde::{Deserialize, Serialize};

/// The virtio-serial port's name (`-device virtserialport,name=...`), as the guest finds it
/// in `/sys/class/virtio-ports/*/name`.
pub const PORT_NAME: &str = "org.tidebench.stats";
/// The version of the record's format, first in every record.
pub const RECORD_VERSION: u32 = 1;
/// The guest's network interface (QEMU's user network).
const NET_IF: &str = "eth0";

/// One second of the guest, as its kernel counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestStats {
    pub v: u32,
    /// Seconds since the guest booted (`/proc/uptime`): the clock of the rates.
    pub uptime_s: f64,
    /// `/proc/stat`'s `cpu` line: user, nice, system, idle, iowait, irq, softirq, steal
    /// (ticks, all vCPUs).
    pub cpu: [u64; 8],
    /// `/proc/meminfo` MemTotal and MemAvailable, in kB.
    pub mem_total_kb: u64,
    pub mem_available_kb: u64,
    /// The guest's disks (whole devices, not partitions): sectors of 512 bytes read, written.
    pub disks: Vec<DiskCounters>,
    /// eth0's bytes received and sent.
    pub net_rx_bytes: u64,
    pub net_tx_bytes: u64,
}

/// One disk of `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub name: String,
    pub read_sectors: u64,
    pub write_sectors: u64,
}

/// Index of steal and idle/iowait in [`GuestStats::cpu`].
const IDLE: usize = 3;
const IOWAIT: usize = 4;
const STEAL: usize = 7;

impl GuestStats {
    /// Reads the guest's /proc (in the guest); `None` when a file is missing or unreadable.
    pub fn read() -> Option<GuestStats> {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        Self::parse(
            &read("/proc/uptime")?,
            &read("/proc/stat")?,
            &read("/proc/meminfo")?,
            &read("/proc/diskstats")?,
            &read("/proc/net/dev")?,
        )
    }

    /// The record from the texts of the guest's /proc files.
    pub fn parse(
        uptime: &str,
        stat: &str,
        meminfo: &str,
        diskstats: &str,
        net_dev: &str,
    ) -> Option<GuestStats> {
        let (net_rx_bytes, net_tx_bytes) = parse_net_dev(net_dev, NET_IF).unwrap_or((0, 0));
        Some(GuestStats {
            v: RECORD_VERSION,
            uptime_s: uptime.split_whitespace().next()?.parse().ok()?,
            cpu: parse_cpu(stat)?,
            mem_total_kb: meminfo_kb(meminfo, "MemTotal")?,
            mem_available_kb: meminfo_kb(meminfo, "MemAvailable")?,
            disks: parse_diskstats(diskstats),
            net_rx_bytes,
            net_tx_bytes,
        })
    }

    /// The record as one line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A record from one line the guest wrote; `None` for a line cut short or of another
    /// version (a guest booted from an older image).
    pub fn from_line(line: &str) -> Option<GuestStats> {
        let s: GuestStats = serde_json::from_str(line.trim()).ok()?;
        (s.v == RECORD_VERSION).then_some(s)
    }
}

/// The first `cpu` line of `/proc/stat`: its first eight counters (older kernels have fewer:
/// the missing ones are zero).
fn parse_cpu(stat: &str) -> Option<[u64; 8]> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let mut out = [0u64; 8];
    for (slot, v) in out.iter_mut().zip(line.split_whitespace().skip(1)) {
        *slot = v.parse().ok()?;
    }
    Some(out)
}

fn meminfo_kb(meminfo: &str, field: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// Whole disks of `/proc/diskstats` (NVMe namespaces and virtio disks; not partitions, loop
/// or RAM devices): fields 3, 6 and 10 are the name, sectors read and sectors written.
fn parse_diskstats(text: &str) -> Vec<DiskCounters> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = *f.get(2)?;
            let whole = (name.starts_with("nvme") && !name.contains('p'))
                || (name.starts_with("vd") && !name.ends_with(|c: char| c.is_ascii_digit()));
            whole.then_some(())?;
            Some(DiskCounters {
                name: name.to_string(),
                read_sectors: f.get(5)?.parse().ok()?,
                write_sectors: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// Bytes received and sent by `iface` in `/proc/net/dev` (`eth0: rx_bytes ... tx_bytes`: the
/// first and ninth numbers after the colon).
fn parse_net_dev(text: &str, iface: &str) -> Option<(u64, u64)> {
    let line = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(iface)?.strip_prefix(':'))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    Some((*f.first()?, *f.get(8)?))
}

/// What the guest did between two records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuestRates {
    /// Percent of all vCPUs' time not idle, iowait or stolen.
    pub cpu_busy_pct: f64,
    /// Percent of all vCPUs' time the hypervisor ran something else (steal).
    pub cpu_steal_pct: f64,
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    pub net_rx_bytes_per_s: f64,
    pub net_tx_bytes_per_s: f64,
}

impl GuestRates {
    /// Rates from `a` to the later `b`; `None` unless `b` is later (a new boot starts over).
    pub fn between(a: &GuestStats, b: &GuestStats) -> Option<GuestRates> {
        let dt = b.uptime_s - a.uptime_s;
        if dt <= 0.0 {
            return None;
        }
        let ticks: Vec<f64> = a
            .cpu
            .iter()
            .zip(&b.cpu)
            .map(|(x, y)| y.saturating_sub(*x) as f64)
            .collect();
        let all: f64 = ticks.iter().sum();
        let share = |t: f64| if all > 0.0 { 100.0 * t / all } else { 0.0 };
        let sectors = |f: fn(&DiskCounters) -> u64| {
            let sum = |s: &GuestStats| s.disks.iter().map(f).sum::<u64>();
            sum(b).saturating_sub(sum(a)) as f64 * 512.0 / dt
        };
        let per_s = |x: u64, y: u64| y.saturating_sub(x) as f64 / dt;
        Some(GuestRates {
            cpu_busy_pct: share(all - ticks[IDLE] - ticks[IOWAIT] - ticks[STEAL]),
            cpu_steal_pct: share(ticks[STEAL]),
            disk_read_bytes_per_s: sectors(|d| d.read_sectors),
            disk_write_bytes_per_s: sectors(|d| d.write_sectors),
            net_rx_bytes_per_s: per_s(a.net_rx_bytes, b.net_rx_bytes),
            net_tx_bytes_per_s: per_s(a.net_tx_bytes, b.net_tx_bytes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 5 50 800 20 3 2 20 0 0\ncpu0 50 2 25 400 10 1 1 10 0 0\n\
                        intr 1 2 3\nctxt 99\n";
    const MEMINFO: &str = "MemTotal:         469512 kB\nMemFree:          300000 kB\n\
                           MemAvailable:     350000 kB\nBuffers: 1 kB\n";
    // A 6.1 kernel's diskstats (20 fields), shortened to the devices a guest has.
    const DISKSTATS: &str = "\
 259       0 nvme0n1 120 0 8000 30 10 0 160 5 0 40 35 0 0 0 0 0 0
 259       1 nvme0n2 50 0 1000 10 300 20 24000 90 0 100 100 0 0 0 0 0 0
 259       2 nvme0n2p1 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
";
    const NET_DEV: &str = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0:  123456     100    0    0    0     0          0         0    654321     90    0    0    0     0       0          0
";

    fn record() -> GuestStats {
        GuestStats::parse("1234.56 2000.00\n", STAT, MEMINFO, DISKSTATS, NET_DEV).unwrap()
    }

    #[test]
    fn a_record_reads_the_guests_proc_files() {
        let s = record();
        assert_eq!(s.uptime_s, 1234.56);
        assert_eq!(s.cpu, [100, 5, 50, 800, 20, 3, 2, 20]);
        assert_eq!((s.mem_total_kb, s.mem_available_kb), (469_512, 350_000));
        let names: Vec<&str> = s.disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["nvme0n1", "nvme0n2"], "whole disks only");
        assert_eq!(
            (s.disks[1].read_sectors, s.disks[1].write_sectors),
            (1000, 24000)
        );
        assert_eq!((s.net_rx_bytes, s.net_tx_bytes), (123_456, 654_321));
        // An older kernel's line without steal: the missing counters are zero.
        assert_eq!(
            parse_cpu("cpu 1 2 3 4\n").unwrap(),
            [1, 2, 3, 4, 0, 0, 0, 0]
        );
        assert!(GuestStats::parse("1.0", "intr 1\n", MEMINFO, "", "").is_none());
    }

    #[test]
    fn a_record_round_trips_as_one_line_and_other_versions_are_ignored() {
        let s = record();
        let line = s.to_line();
        assert!(!line.contains('\n'));
        assert_eq!(GuestStats::from_line(&format!("{line}\n")), Some(s.clone()));
        assert_eq!(GuestStats::from_line(&line[..line.len() / 2]), None);
        let other = line.replacen("\"v\":1", "\"v\":2", 1);
        assert_eq!(GuestStats::from_line(&other), None);
    }

    #[test]
    fn rates_are_over_the_guests_own_clock() {
        let a = record();
        let mut b = a.clone();
        b.uptime_s += 2.0;
        // 200 ticks: 100 user, 20 system, 40 idle, 40 steal.
        b.cpu[0] += 100;
        b.cpu[2] += 20;
        b.cpu[IDLE] += 40;
        b.cpu[STEAL] += 40;
        b.disks[1].write_sectors += 4096;
        b.net_tx_bytes += 1000;
        let r = GuestRates::between(&a, &b).unwrap();
        assert_eq!(r.cpu_busy_pct, 60.0);
        assert_eq!(r.cpu_steal_pct, 20.0);
        assert_eq!(r.disk_write_bytes_per_s, 4096.0 * 512.0 / 2.0);
        assert_eq!(r.disk_read_bytes_per_s, 0.0);
        assert_eq!((r.net_rx_bytes_per_s, r.net_tx_bytes_per_s), (0.0, 500.0));
        assert!(
            GuestRates::between(&b, &a).is_none(),
            "a reboot starts over"
        );
    }
}
