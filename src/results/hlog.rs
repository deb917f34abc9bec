//! `latency.hlog`: an HdrHistogram interval log (format 1.3, as written by the Java
//! `HistogramLogWriter` and read by `HistogramLogProcessor`, HdrHistogram's plotters and the
//! Rust crate's `IntervalLogIterator`).
//!
//! - Values (and the `Interval_Max` column) are microseconds of latency (end − scheduled start)
//!   of the transactions that did not fail. With the Java tools, pass `-outputValueUnitRatio 1000`
//!   to read milliseconds.
//! - `BaseTime` and `StartTime` are the wall-clock start of the run (ramp-up included), so each entry's
//!   timestamp is its interval's offset in seconds, the same as `intervals.csv`'s `interval_start_s`.
//! - One entry per row of `intervals.csv`, in the same order, tagged
//!   `i<iteration>/<phase>/<group>/<set>/<txn_type>`. Characters a tag may not hold (`,`, space,
//!   line breaks) are written as `_`.
//! - A comment line names tidebench's schema version.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use super::{ResultsError, HLOG_FILE, SCHEMA_VERSION};
use crate::metrics::{new_histogram, KeySpace, Recorder};

/// Java's `HistogramLogWriter` legend line; readers skip it, humans are helped by it.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// Appends interval histograms to an interval log.
pub struct HlogWriter<W: Write> {
    out: W,
    serializer: V2DeflateSerializer,
    /// Stands in for keys whose transactions all failed, so the log matches `intervals.csv` row for row.
    empty: Histogram<u64>,
}

impl<W: Write> HlogWriter<W> {
    /// Writes the log's header; `measured_start` becomes its StartTime and BaseTime.
    pub fn begin(mut out: W, measured_start: SystemTime) -> std::io::Result<HlogWriter<W>> {
        let mut serializer = V2DeflateSerializer::new();
        IntervalLogWriterBuilder::new()
            .add_comment("[Histogram log format version 1.3]")
            .add_comment(&format!(
                "tidebench latency log, schema version {SCHEMA_VERSION}: values in microseconds \
                 (end - scheduled start), tags are iteration/phase/group/set/txn_type, one per intervals.csv row"
            ))
            .with_start_time(measured_start)
            .with_base_time(measured_start)
            .begin_log_with(&mut out, &mut serializer)?;
        out.write_all(LEGEND.as_bytes())?;
        Ok(HlogWriter {
            out,
            serializer,
            empty: new_histogram(),
        })
    }

    /// Appends one entry per key that had transactions (the same keys as `intervals::rows`).
    pub fn write_interval(
        &mut self,
        start_offset: Duration,
        length: Duration,
        keys: &KeySpace,
        rec: &Recorder,
    ) -> std::io::Result<()> {
        // A builder with no headers writes nothing: it only lends us an entry writer.
        let mut log =
            IntervalLogWriterBuilder::new().begin_log_with(&mut self.out, &mut self.serializer)?;
        for row in super::intervals::rows_of(start_offset, length, keys, rec) {
            let hist = row.slot.latency.as_ref().unwrap_or(&self.empty);
            log.write_histogram(hist, row.start, row.length, Tag::new(&row_tag(keys, &row)))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        Ok(())
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The tag of a row: `i<iteration>/<phase>/<group>/<set>/<txn_type>`.
pub fn row_tag(keys: &KeySpace, row: &super::intervals::Row) -> String {
    let seg = &keys.segments[row.segment];
    let target = &keys.targets[row.target];
    tag(&format!(
        "i{}/{}/{}/{}/{}",
        seg.iteration, seg.label, keys.groups[target.group], target.set, keys.txn_types[row.txn]
    ))
}

/// A tag with the characters tags may not hold replaced by `_`.
pub fn tag(text: &str) -> String {
    text.chars()
        .map(|c| {
            if matches!(c, ',' | ' ' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// One decoded entry of a latency log.
#[derive(Debug, Clone)]
pub struct HlogEntry {
    pub tag: Option<String>,
    /// Offset from the log's BaseTime (the start of the run).
    pub start: Duration,
    pub length: Duration,
    /// Microseconds.
    pub histogram: Histogram<u64>,
}

/// Decodes every interval entry of a log.
pub fn parse(log: &[u8]) -> Result<Vec<HlogEntry>, String> {
    Entries::new(log).collect()
}

/// Decodes the entries one at a time, in order, handing each to `f`: a reader that merges as it
/// goes holds one histogram at a time, not the whole log (a long run has ~100,000 entries).
pub fn visit(log: &[u8], mut f: impl FnMut(HlogEntry)) -> Result<(), String> {
    for entry in Entries::new(log) {
        f(entry?);
    }
    Ok(())
}

/// The interval entries of a log read line by line from `input`, decoded one at a time, so a
/// reader holds one line and one histogram, never the whole log. Comment lines (`#...`) and
/// the legend are skipped; an entry is `[Tag=<tag>,]<start>,<length>,<max>,<base64>`.
pub struct Entries<R: BufRead> {
    input: R,
    line: String,
    line_no: usize,
    deserializer: Deserializer,
    done: bool,
}

impl<R: BufRead> Entries<R> {
    pub fn new(input: R) -> Entries<R> {
        Entries {
            input,
            line: String::new(),
            line_no: 0,
            deserializer: Deserializer::new(),
            done: false,
        }
    }

    fn decode(&mut self) -> Result<HlogEntry, String> {
        use base64::Engine as _;
        let at = self.line_no;
        let text = self.line.trim_end();
        let (tag, rest) = match text.strip_prefix("Tag=") {
            Some(t) => match t.split_once(',') {
                Some((tag, rest)) => (Some(tag.to_string()), rest),
                None => return Err(format!("line {at}: a tag without an entry")),
            },
            None => (None, text),
        };
        let f: Vec<&str> = rest.split(',').collect();
        let [start, length, _max, encoded] = f.as_slice() else {
            return Err(format!(
                "line {at}: expected 4 fields after the tag, found {}",
                f.len()
            ));
        };
        let secs = |s: &str, what: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| format!("line {at}: {what} '{s}' is not a number of seconds"))
        };
        let (start, length) = (secs(start, "start")?, secs(length, "length")?);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| format!("line {at}: histogram is not base64 ({e})"))?;
        let histogram = self
            .deserializer
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("line {at}: histogram does not decode ({e:?})"))?;
        Ok(HlogEntry {
            tag,
            start,
            length,
            histogram,
        })
    }
}

impl<R: BufRead> Iterator for Entries<R> {
    type Item = Result<HlogEntry, String>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.line.clear();
            self.line_no += 1;
            match self.input.read_line(&mut self.line) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    let t = self.line.trim_start();
                    if t.trim_end().is_empty() || t.starts_with('#') || t.starts_with('"') {
                        continue;
                    }
                    let entry = self.decode();
                    // After a damaged line nothing that follows can be trusted to line up.
                    self.done = entry.is_err();
                    return Some(entry);
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(format!("line {}: {e}", self.line_no)));
                }
            }
        }
        None
    }
}

/// Reads and decodes `latency.hlog` from a results dir.
pub fn read(dir: &Path) -> Result<Vec<HlogEntry>, ResultsError> {
    let path = dir.join(HLOG_FILE);
    let bytes = std::fs::read(&path).map_err(ResultsError::io("read", &path))?;
    parse(&bytes).map_err(|message| ResultsError::Decode {
        file: HLOG_FILE,
        path,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ErrorClass, Outcome};

    #[test]
    fn tags_are_valid() {
        let t = tag("i1/p 1/A/host=/tmp dbname=a,b/tpcb");
        assert_eq!(t, "i1/p_1/A/host=/tmp_dbname=a_b/tpcb");
        assert!(Tag::new(&t).is_some());
    }

    #[test]
    fn round_trips_one_entry_per_row() {
        let keys = crate::results::intervals::tests::two_phase_keys();
        let mut rec = Recorder::new(keys.len());
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 1_000, None, 0);
        rec.record(keys.key(0, 0, 0), Outcome::Committed, 3_000, None, 0);
        rec.record(
            keys.key(1, 0, 1),
            Outcome::Failed(ErrorClass::Other),
            0,
            None,
            0,
        );
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut w = HlogWriter::begin(Vec::new(), start).unwrap();
        w.write_interval(Duration::from_secs(5), Duration::from_secs(10), &keys, &rec)
            .unwrap();
        let log = w.into_inner();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("#[BaseTime: 1700000000.000"), "{text}");
        assert!(text.contains("schema version 1"), "{text}");
        assert_eq!(
            text.matches("#[").count(),
            3,
            "headers once, at the top: {text}"
        );
        let entries = parse(&log).unwrap();
        assert_eq!(entries.len(), 2, "keys with no transactions get no entry");
        assert_eq!(entries[0].tag.as_deref(), Some("i1/p1/A/1/a"));
        assert_eq!(entries[0].histogram.len(), 2);
        assert_eq!(entries[0].start, Duration::from_secs(5));
        assert_eq!(entries[1].tag.as_deref(), Some("i1/p2/A/1/b"));
        assert_eq!(entries[1].start, Duration::from_secs(10));
        assert_eq!(
            entries[1].histogram.len(),
            0,
            "all failed: an empty histogram keeps rows aligned"
        );
        let damaged = [&log[..log.len() - 10], b"\n"].concat();
        let err = parse(&damaged).unwrap_err();
        assert!(err.contains("line"), "{err}");
    }
}
