//! The per-transaction mix log (`--mix-log`): one file per driver thread, `mix-<thread>.bin`,
//! so several drivers' logs can be merged exactly afterwards, as the TPC-V reporter does.
//!
//! Format (little-endian), schema version 1:
//! - header, 32 bytes: magic `TBMIXLOG`, schema version u32, record size u32 (= 24),
//!   run start as Unix time in nanoseconds u64, driver thread u32, reserved u32;
//! - records, 24 bytes each: end of the transaction in µs since the run start u64, latency µs
//!   u32 (end − scheduled start), client u32, segment u16, target u16, transaction type u8,
//!   outcome u8 (0 committed, 1 expected rollback, 2 + class for failures: serialization,
//!   deadlock, connection, timeout, other), retries u8, reserved u8.
//!
//! Segment, target and transaction type index the lists in `runtime.toml` / `summary.json`.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use super::{ErrorClass, Outcome};

pub const MAGIC: &[u8; 8] = b"TBMIXLOG";
pub const SCHEMA_VERSION: u32 = 1;
pub const HEADER_LEN: usize = 32;
pub const RECORD_LEN: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MixRecord {
    pub end_us: u64,
    pub latency_us: u32,
    pub client: u32,
    pub segment: u16,
    pub target: u16,
    pub txn: u8,
    pub outcome: u8,
    pub retries: u8,
}

impl MixRecord {
    pub fn outcome_code(o: Outcome) -> u8 {
        match o {
            Outcome::Committed => 0,
            Outcome::ExpectedRollback => 1,
            Outcome::Failed(c) => 2 + c.index() as u8,
        }
    }

    /// The outcome's name as the summary spells it.
    pub fn outcome_name(code: u8) -> &'static str {
        match code {
            0 => "committed",
            1 => "expected_rollback",
            c => ErrorClass::ALL
                .get(usize::from(c - 2))
                .map_or("unknown", |e| e.name()),
        }
    }

    fn encode(&self, out: &mut [u8; RECORD_LEN]) {
        out[0..8].copy_from_slice(&self.end_us.to_le_bytes());
        out[8..12].copy_from_slice(&self.latency_us.to_le_bytes());
        out[12..16].copy_from_slice(&self.client.to_le_bytes());
        out[16..18].copy_from_slice(&self.segment.to_le_bytes());
        out[18..20].copy_from_slice(&self.target.to_le_bytes());
        out[20] = self.txn;
        out[21] = self.outcome;
        out[22] = self.retries;
        out[23] = 0;
    }

    fn decode(b: &[u8]) -> MixRecord {
        let u64_at = |i: usize| {
            u64::from_le_bytes([
                b[i],
                b[i + 1],
                b[i + 2],
                b[i + 3],
                b[i + 4],
                b[i + 5],
                b[i + 6],
                b[i + 7],
            ])
        };
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        MixRecord {
            end_us: u64_at(0),
            latency_us: u32_at(8),
            client: u32_at(12),
            segment: u16_at(16),
            target: u16_at(18),
            txn: b[20],
            outcome: b[21],
            retries: b[22],
        }
    }
}

/// A driver thread's log. Buffered; write errors are kept and reported once at the end,
/// never allowed to slow or stop a client.
pub struct MixLog {
    out: BufWriter<File>,
    error: Option<io::Error>,
}

impl MixLog {
    pub fn create(path: &Path, start_unix_ns: u64, thread: u32) -> io::Result<MixLog> {
        let mut out = BufWriter::with_capacity(256 * 1024, File::create(path)?);
        let mut header = [0u8; HEADER_LEN];
        header[0..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&SCHEMA_VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&(RECORD_LEN as u32).to_le_bytes());
        header[16..24].copy_from_slice(&start_unix_ns.to_le_bytes());
        header[24..28].copy_from_slice(&thread.to_le_bytes());
        out.write_all(&header)?;
        Ok(MixLog { out, error: None })
    }

    #[inline]
    pub fn write(&mut self, r: &MixRecord) {
        if self.error.is_some() {
            return;
        }
        let mut buf = [0u8; RECORD_LEN];
        r.encode(&mut buf);
        if let Err(e) = self.out.write_all(&buf) {
            self.error = Some(e);
        }
    }

    /// Flushes what is buffered; returns the first error seen so far, if any.
    pub fn flush(&mut self) -> Option<String> {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
        self.error.as_ref().map(|e| e.to_string())
    }
}

/// A decoded log file: its header's start time and records in file order.
pub struct MixLogFile {
    pub start_unix_ns: u64,
    pub thread: u32,
    pub records: Vec<MixRecord>,
}

/// Reads one `mix-*.bin` file, checking magic, version and record size.
pub fn read(path: &Path) -> Result<MixLogFile, String> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() < HEADER_LEN || &bytes[0..8] != MAGIC {
        return Err(format!("{} is not a tidebench mix log", path.display()));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    let size = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    if version != SCHEMA_VERSION || size != RECORD_LEN {
        return Err(format!(
            "{} has mix log schema {version} (record {size} bytes); this tidebench reads schema {SCHEMA_VERSION}",
            path.display()
        ));
    }
    let start_unix_ns = u64::from_le_bytes(bytes[16..24].try_into().unwrap_or([0; 8]));
    let thread = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
    // A run killed mid-write may leave a partial last record: ignore it.
    let records = bytes[HEADER_LEN..]
        .chunks_exact(RECORD_LEN)
        .map(MixRecord::decode)
        .collect();
    Ok(MixLogFile {
        start_unix_ns,
        thread,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mix-0.bin");
        let mut log = MixLog::create(&path, 1_700_000_000_000_000_000, 3).unwrap();
        let a = MixRecord {
            end_us: 123_456,
            latency_us: 789,
            client: 5,
            segment: 2,
            target: 7,
            txn: 1,
            outcome: MixRecord::outcome_code(Outcome::Failed(ErrorClass::Deadlock)),
            retries: 2,
        };
        let b = MixRecord {
            end_us: 200_000,
            outcome: 0,
            ..a
        };
        log.write(&a);
        log.write(&b);
        assert!(log.flush().is_none());
        let f = read(&path).unwrap();
        assert_eq!((f.start_unix_ns, f.thread), (1_700_000_000_000_000_000, 3));
        assert_eq!(f.records, vec![a, b]);
        assert_eq!(MixRecord::outcome_name(a.outcome), "deadlock");
    }
}
