//! Disk IO per block device from `/proc/diskstats` (bytes and IOs per second, mean wait per IO),
//! and which device a path lives on, so the report can put an instance's data writes beside
//! its WAL writes as the Nutanix study does.
//!
//! Sampled devices: every whole disk in `/sys/block` except loop, RAM and zram devices (they
//! carry no database IO here), plus the devices holding the managed instances' data dirs and
//! WAL (which may be partitions or device-mapper volumes).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::run::Values;

/// `/proc/diskstats` sectors are 512 bytes whatever the device's sector size.
const SECTOR: u64 = 512;

/// One device's cumulative counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
}

/// Device name → counters. Lines too short to hold the write counters are skipped.
pub fn parse_diskstats(text: &str) -> BTreeMap<String, DiskCounters> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 11 {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        out.insert(
            f[2].to_string(),
            DiskCounters {
                reads: n(3),
                read_sectors: n(5),
                read_ms: n(6),
                writes: n(7),
                write_sectors: n(9),
                write_ms: n(10),
            },
        );
    }
    out
}

/// Whole disks worth sampling by default.
fn default_devices() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| {
            !["loop", "ram", "zram", "fd", "sr"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .collect();
    names.sort();
    names
}

/// The block device a path's file system lives on (e.g. `vda`, `nvme0n1p2`, `dm-0`), when it
/// is one: tmpfs, overlay and network file systems have none.
pub fn device_of(path: &Path) -> Option<String> {
    let path = std::fs::canonicalize(path).ok()?;
    let dev = std::fs::metadata(&path).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major != 0 {
        let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        return Some(link.file_name()?.to_string_lossy().into_owned());
    }
    // Anonymous device numbers (btrfs subvolumes, overlay): the mount's source may still name
    // a block device.
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let source = mount_source(&mountinfo, &path)?;
    let dev = std::fs::canonicalize(source).ok()?;
    Some(dev.file_name()?.to_string_lossy().into_owned())
}

/// The source (`/dev/...`) of the mount holding `path`: the longest mount point above it.
pub fn mount_source(mountinfo: &str, path: &Path) -> Option<PathBuf> {
    let mut best: Option<(usize, PathBuf)> = None;
    for line in mountinfo.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(sep) = f.iter().position(|w| *w == "-") else {
            continue;
        };
        let (Some(point), Some(source)) = (f.get(4), f.get(sep + 2)) else {
            continue;
        };
        let point = Path::new(point);
        let len = point.as_os_str().len();
        if path.starts_with(point) && best.as_ref().is_none_or(|(l, _)| len >= *l) {
            best = Some((len, PathBuf::from(source)));
        }
    }
    best.map(|(_, s)| s).filter(|s| s.starts_with("/dev/"))
}

/// Reads the devices each round and keeps the last counters for the rates.
pub struct DiskReader {
    devices: Vec<String>,
    last: BTreeMap<String, DiskCounters>,
}

impl DiskReader {
    /// The default devices plus `extra` (data and WAL devices).
    pub fn new(extra: &[String]) -> DiskReader {
        let mut devices = default_devices();
        for d in extra {
            if !devices.contains(d) {
                devices.push(d.clone());
            }
        }
        DiskReader {
            devices,
            last: BTreeMap::new(),
        }
    }

    /// Appends this round's `device:<dev>` rows; `dt_s` is the time since the last round.
    pub fn sample(&mut self, dt_s: f64, out: &mut Values) {
        let Ok(text) = std::fs::read_to_string("/proc/diskstats") else {
            return;
        };
        let mut now = parse_diskstats(&text);
        now.retain(|name, _| self.devices.contains(name));
        if dt_s > 0.0 {
            for (name, c) in &now {
                if let Some(prev) = self.last.get(name) {
                    device_rows(&format!("device:{name}"), prev, c, dt_s, out);
                }
            }
        }
        self.last = now;
    }
}

fn device_rows(source: &str, prev: &DiskCounters, now: &DiskCounters, dt_s: f64, out: &mut Values) {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let reads = d(now.reads, prev.reads);
    let writes = d(now.writes, prev.writes);
    let rate = |n: u64| n as f64 / dt_s;
    out.push(
        source,
        "read_bytes_per_s",
        rate(d(now.read_sectors, prev.read_sectors) * SECTOR),
    );
    out.push(
        source,
        "write_bytes_per_s",
        rate(d(now.write_sectors, prev.write_sectors) * SECTOR),
    );
    out.push(source, "reads_per_s", rate(reads));
    out.push(source, "writes_per_s", rate(writes));
    let ios = reads + writes;
    if ios > 0 {
        let ms = d(now.read_ms, prev.read_ms) + d(now.write_ms, prev.write_ms);
        out.push(source, "avg_wait_ms", ms as f64 / ios as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
 254       0 vda 51360 8607 3352170 16227 539597 195835 177958408 1549576 0 88532 1603676 0 0 0 0 0 0\n\
 254       1 vda1 100 0 800 10 200 0 1600 20 0 30 30\n\
 8 0 short 1 2 3\n";

    #[test]
    fn parses_diskstats() {
        let m = parse_diskstats(STATS);
        assert_eq!(m.len(), 3);
        assert_eq!(
            m["vda"],
            DiskCounters {
                reads: 51360,
                read_sectors: 3352170,
                read_ms: 16227,
                writes: 539597,
                write_sectors: 177958408,
                write_ms: 1549576
            }
        );
        assert_eq!(m["vda1"].write_sectors, 1600);
    }

    #[test]
    fn rates_and_wait_over_the_round() {
        let prev = DiskCounters::default();
        let now = DiskCounters {
            reads: 10,
            read_sectors: 80,
            read_ms: 20,
            writes: 30,
            write_sectors: 400,
            write_ms: 100,
        };
        let mut out = Values::default();
        device_rows("device:vda", &prev, &now, 2.0, &mut out);
        let get = |m: &str| out.get("device:vda", m).unwrap();
        assert_eq!(get("read_bytes_per_s"), 80.0 * 512.0 / 2.0);
        assert_eq!(get("write_bytes_per_s"), 400.0 * 512.0 / 2.0);
        assert_eq!((get("reads_per_s"), get("writes_per_s")), (5.0, 15.0));
        assert_eq!(get("avg_wait_ms"), 3.0);
        let mut idle = Values::default();
        device_rows("device:vda", &now, &now, 1.0, &mut idle);
        assert!(idle.get("device:vda", "avg_wait_ms").is_none());
    }

    #[test]
    fn finds_the_mount_source_by_longest_mount_point() {
        let info = "22 27 0:21 / /proc rw - proc proc rw\n\
30 1 254:0 / / rw - ext4 /dev/vda rw\n\
31 30 0:40 / /srv/pg rw - btrfs /dev/sdb2 rw\n\
32 30 0:41 / /srv/pgtmp rw - tmpfs tmpfs rw\n";
        assert_eq!(
            mount_source(info, Path::new("/srv/pg/data")),
            Some(PathBuf::from("/dev/sdb2"))
        );
        assert_eq!(
            mount_source(info, Path::new("/home/x")),
            Some(PathBuf::from("/dev/vda"))
        );
        assert_eq!(mount_source(info, Path::new("/srv/pgtmp/x")), None);
    }

    #[test]
    fn finds_the_device_of_this_directory() {
        // Whatever holds the temp dir: a name when it is a block device, None otherwise.
        let tmp = std::env::temp_dir();
        if let Some(dev) = device_of(&tmp) {
            assert!(!dev.is_empty() && !dev.contains('/'), "{dev}");
        }
    }
}
