//! Real VMs around a consolidation run (`--hypervisor qemu`): KSM turned on or off as asked,
//! each guest's virtio-balloon driven through QMP to its share of MEM_avail before the host
//! group is limited (so the pages go back to the host first, and the guests' own kernels
//! choose what to give up), the balloons read every second while the run goes, and all of it
//! undone after the run: the guests get their RAM back and KSM its former state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::instance::vm::GuestInfo;
use crate::instance::{self, Home, Instance};
use crate::results::experiment::consolidate::GuestBalloon;

use super::super::base::GuestShare;

/// What the host group's limit allows each QEMU beyond the guests' share of MEM_avail: QEMU's
/// own memory (device models, and under TCG its translated code, capped at 128 MiB) is the
/// hypervisor's, not the guest's, and a limit without it OOM-kills a QEMU holding exactly its
/// share (seen here under TCG: 532 MB anonymous for a guest ballooned to 256 MiB, before the
/// cap).
pub const QEMU_ALLOWANCE: u64 = 384 << 20;

/// The host's KSM switch: 1 merges, 0 stops, 2 stops and unmerges every shared page.
const KSM_RUN: &str = "/sys/kernel/mm/ksm/run";
/// Pages KSM has merged into others: the memory it saves, in pages.
const KSM_SHARING: &str = "/sys/kernel/mm/ksm/pages_sharing";
/// How often the balloons are read during a run.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// A point's guests as set for its run; dropping it gives them their RAM back and KSM its
/// former state.
pub struct Guests {
    shares: Vec<GuestShare>,
    home: Home,
    /// What was read, per guest in `shares`' order.
    pub record: Vec<GuestBalloon>,
    ksm_before: Option<String>,
    pub ksm_peak: Option<u64>,
}

impl Guests {
    /// KSM as asked, then every guest ballooned to its target (its full RAM when it has none).
    pub fn set(shares: &[GuestShare], ksm: Option<bool>, home: &Home) -> Result<Guests, String> {
        let ksm_before = match ksm {
            Some(on) => {
                let before = std::fs::read_to_string(KSM_RUN).ok();
                // Off unmerges (2): pages merged by an earlier point must not stay shared.
                std::fs::write(KSM_RUN, if on { "1" } else { "2" }).map_err(|e| {
                    format!(
                        "cannot turn KSM {} ({KSM_RUN}: {e}); run as root, or leave out --ksm",
                        if on { "on" } else { "off" }
                    )
                })?;
                before
            }
            None => None,
        };
        let mut guests = Guests {
            shares: shares.to_vec(),
            home: home.clone(),
            record: Vec::new(),
            ksm_before,
            ksm_peak: None,
        };
        guests.balloon()?;
        Ok(guests)
    }

    /// Balloons every guest to its target and records what the guest then says of its memory
    /// (again after the guests were restarted under the limit).
    pub fn balloon(&mut self) -> Result<(), String> {
        self.record.clear();
        for share in &self.shares {
            let inst = instance::find(&self.home, &share.instance).map_err(|e| e.to_string())?;
            let target = share.target.unwrap_or(share.memory);
            instance::vm::balloon(&inst, target).map_err(|e| e.to_string())?;
            let (total, available) = meminfo(&inst);
            self.record.push(GuestBalloon {
                vm: share.vm.clone(),
                instance: share.instance.clone(),
                memory_bytes: share.memory,
                target_bytes: share.target,
                mem_total_bytes: total,
                mem_available_bytes: available,
                accel: inst
                    .guest()
                    .and_then(|g| g.state.as_ref())
                    .map(|s| s.accel.name().to_string()),
                ..GuestBalloon::default()
            });
        }
        Ok(())
    }

    /// Starts reading the balloons (and KSM's sharing) every second on a thread of its own,
    /// so a slow QMP answer never holds the run.
    pub fn sampler(&self) -> Sampler {
        let probes: Vec<Option<GuestInfo>> = self
            .shares
            .iter()
            .map(|s| {
                instance::find(&self.home, &s.instance)
                    .ok()
                    .and_then(|i| i.guest().cloned())
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || sample_until(&probes, &flag));
        Sampler { stop, thread }
    }

    /// Folds a sampler's reads into the record.
    pub fn absorb(&mut self, read: Samples) {
        for (rec, seen) in self.record.iter_mut().zip(read.guests) {
            rec.actual_bytes = seen.last;
            rec.min_actual_bytes = seen.min;
            rec.samples = seen.count;
        }
        self.ksm_peak = read.ksm_peak;
    }
}

impl Drop for Guests {
    fn drop(&mut self) {
        for share in self.shares.iter().filter(|s| s.target.is_some()) {
            if let Ok(inst) = instance::find(&self.home, &share.instance) {
                let _ = instance::vm::balloon(&inst, share.memory);
            }
        }
        if let Some(before) = &self.ksm_before {
            let _ = std::fs::write(KSM_RUN, before.trim());
        }
    }
}

/// The guest's MemTotal and MemAvailable in bytes, as its own kernel reports them.
fn meminfo(inst: &Instance) -> (Option<u64>, Option<u64>) {
    let Ok(text) = inst.psql("postgres", "SELECT pg_read_file('/proc/meminfo')") else {
        return (None, None);
    };
    (
        meminfo_field(&text, "MemTotal:"),
        meminfo_field(&text, "MemAvailable:"),
    )
}

/// A `/proc/meminfo` field (kB) in bytes.
fn meminfo_field(text: &str, field: &str) -> Option<u64> {
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The balloon reads of one guest.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    last: Option<u64>,
    min: Option<u64>,
    count: u32,
}

/// What a [`Sampler`] read.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    guests: Vec<Seen>,
    ksm_peak: Option<u64>,
}

/// The thread reading the balloons during a run.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Samples>,
}

impl Sampler {
    /// Stops reading and returns what was read.
    pub fn finish(self) -> Samples {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

fn sample_until(probes: &[Option<GuestInfo>], stop: &AtomicBool) -> Samples {
    let mut read = Samples {
        guests: vec![Seen::default(); probes.len()],
        ksm_peak: None,
    };
    loop {
        for (seen, probe) in read.guests.iter_mut().zip(probes) {
            let Some(actual) = probe
                .as_ref()
                .and_then(|p| p.memory_stats())
                .map(|m| m.actual)
            else {
                continue;
            };
            seen.last = Some(actual);
            seen.min = Some(seen.min.map_or(actual, |m| m.min(actual)));
            seen.count += 1;
        }
        if let Some(sharing) = std::fs::read_to_string(KSM_SHARING)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
        {
            read.ksm_peak = Some(read.ksm_peak.map_or(sharing, |p| p.max(sharing)));
        }
        // Sleep in small steps so the run's end is not kept waiting a whole second.
        for _ in 0..10 {
            if stop.load(Ordering::Relaxed) {
                return read;
            }
            std::thread::sleep(SAMPLE_EVERY / 10);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_read_in_bytes() {
        let text = "MemTotal:         498000 kB\nMemFree:  1 kB\nMemAvailable:     300000 kB\n";
        assert_eq!(meminfo_field(text, "MemTotal:"), Some(498000 * 1024));
        assert_eq!(meminfo_field(text, "MemAvailable:"), Some(300000 * 1024));
        assert_eq!(meminfo_field(text, "Buffers:"), None);
        let b = GuestBalloon {
            memory_bytes: 512 << 20,
            actual_bytes: Some(384 << 20),
            ..GuestBalloon::default()
        };
        assert_eq!(b.balloon_bytes(), Some(128 << 20));
    }
}
