//! Inside a VM instance's guest (issue 40): the records its init sends once a second through
//! the stats port (`instance::vm::stats`), read from QEMU's unix socket in the instance's `vm/`
//! dir without ever blocking the round.
//!
//! Each round takes the newest whole record that arrived and, against the newest of the
//! round before, the guest's CPU busy and steal shares, disk and network bytes per second;
//! MemTotal and MemAvailable are the newest record's. A round in which no new record came
//! (the guest is late, or nobody wrote yet) reports the memory gauges only.

use std::io::{ErrorKind, Read};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use crate::instance::vm::stats::{GuestRates, GuestStats};

use super::run::Values;

/// More unread bytes than this without a line break is not the guest's stream: start over.
const MAX_PENDING: usize = 1 << 16;

/// One guest's stats socket.
pub struct GuestChannel {
    socket: PathBuf,
    stream: Option<UnixStream>,
    pending: Vec<u8>,
    /// The newest record of the last round that had one: the start of the next rates.
    last: Option<GuestStats>,
}

impl GuestChannel {
    /// Connects at once: the guest drops its records while no reader is there, so a channel
    /// made before the run's first round has a record (or two) by then, and rates from it.
    pub fn new(socket: PathBuf) -> GuestChannel {
        let mut channel = GuestChannel {
            socket,
            stream: None,
            pending: Vec::new(),
            last: None,
        };
        channel.drain();
        channel
    }

    /// Appends this round's guest rows for `source`. Returns whether the guest reported its
    /// memory (so the balloon driver's figures need not stand in).
    pub fn sample(&mut self, source: &str, out: &mut Values) -> bool {
        let Some(now) = self.newest() else {
            return false;
        };
        let rates = self
            .last
            .as_ref()
            .and_then(|a| GuestRates::between(a, &now));
        if let Some(r) = rates {
            let rows = [
                ("guest_cpu_busy_pct", r.cpu_busy_pct),
                ("guest_cpu_steal_pct", r.cpu_steal_pct),
                ("guest_disk_read_bytes_per_s", r.disk_read_bytes_per_s),
                ("guest_disk_write_bytes_per_s", r.disk_write_bytes_per_s),
                ("guest_net_rx_bytes_per_s", r.net_rx_bytes_per_s),
                ("guest_net_tx_bytes_per_s", r.net_tx_bytes_per_s),
            ];
            for (metric, v) in rows {
                out.push(source, metric, v);
            }
        }
        out.push(
            source,
            "guest_mem_total_bytes",
            (now.mem_total_kb * 1024) as f64,
        );
        out.push(
            source,
            "guest_mem_available_bytes",
            (now.mem_available_kb * 1024) as f64,
        );
        self.last = Some(now.clone());
        true
    }

    /// The newest whole record read now, or the last one when nothing new came (its gauges
    /// still hold; its rates are not repeated, since [`GuestRates::between`] needs a later one).
    fn newest(&mut self) -> Option<GuestStats> {
        self.drain();
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        let cut = text.rfind('\n');
        let mut whole = cut.map_or_else(Vec::new, |end| {
            text[..end]
                .lines()
                .rev()
                .filter_map(GuestStats::from_line)
                .take(2)
                .collect()
        });
        let newest = (!whole.is_empty()).then(|| whole.remove(0));
        // The first round with two records in hand has rates already (a busy host can hold
        // the guest's records back and hand over several at once).
        if self.last.is_none() {
            self.last = whole.pop();
        }
        if let Some(end) = cut {
            self.pending.drain(..=end);
        }
        newest.or_else(|| self.last.clone())
    }

    /// Reads what the socket holds; connects first (again after QEMU closed it).
    fn drain(&mut self) {
        if self.stream.is_none() {
            self.stream = UnixStream::connect(&self.socket)
                .ok()
                .filter(|s| s.set_nonblocking(true).is_ok());
        }
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => {
                    self.stream = None;
                    return;
                }
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.stream = None;
                    return;
                }
            }
            if self.pending.len() > MAX_PENDING {
                self.pending.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixListener;

    fn record(uptime_s: f64, busy: u64, idle: u64) -> GuestStats {
        GuestStats {
            v: crate::instance::vm::stats::RECORD_VERSION,
            uptime_s,
            cpu: [busy, 0, 0, idle, 0, 0, 0, 0],
            mem_total_kb: 1000,
            mem_available_kb: 600,
            disks: Vec::new(),
            net_rx_bytes: 0,
            net_tx_bytes: 0,
        }
    }

    #[test]
    fn reads_the_newest_whole_record_and_rates_between_rounds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stats.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let mut channel = GuestChannel::new(path);
        let mut v = Values::default();
        assert!(!channel.sample("instance:g", &mut v), "nothing written yet");
        let (mut guest, _) = listener.accept().unwrap();
        let a = record(10.0, 0, 0);
        let b = record(11.0, 100, 100);
        // Two records and half of a third: the whole newest counts, the half waits.
        let third = record(12.0, 150, 200).to_line();
        write!(guest, "{}\n{}\n{}", a.to_line(), b.to_line(), &third[..10]).unwrap();
        let mut v = Values::default();
        assert!(channel.sample("instance:g", &mut v));
        assert_eq!(v.get("instance:g", "guest_mem_total_bytes"), Some(1024e3));
        // Two whole records in the first round: rates at once, from a to b (100 of 200 ticks).
        assert_eq!(v.get("instance:g", "guest_cpu_busy_pct"), Some(50.0));
        writeln!(guest, "{}", &third[10..]).unwrap();
        let mut v = Values::default();
        assert!(channel.sample("instance:g", &mut v));
        // From b to the third: 50 busy ticks of 150.
        let busy = v.get("instance:g", "guest_cpu_busy_pct").unwrap();
        assert!((busy - 100.0 / 3.0).abs() < 1e-9, "{busy}");
        // A round with nothing new: the gauges, no repeated rates.
        let mut v = Values::default();
        assert!(channel.sample("instance:g", &mut v));
        assert_eq!(v.get("instance:g", "guest_cpu_busy_pct"), None);
        assert_eq!(
            v.get("instance:g", "guest_mem_available_bytes"),
            Some(600.0 * 1024.0)
        );
    }
}
