//! A bounded, deterministic fuzzer over everything that reads user or on-disk input (issue 15,
//! item 6): run files with plan validation, DSNs and target specs, sizes and durations, and the
//! readers of a results dir (summary.json, runtime.toml, intervals.csv, latency.hlog,
//! system.csv, the report's loader and page) and of an experiment dir (experiment.json and
//! its page, whatever its `kind`: sweep, density, knee, consolidate).
//!
//! Each target mutates the seeds under `tests/fuzz-corpus/` with a seeded xorshift generator
//! (byte flips, inserts, deletions, repeats, truncation, and tokens known to hurt: `1e30`,
//! 2^64-1, NUL, `..`, another schema version), and runs every case on its own thread with a
//! deadline. It fails on a panic, on a case that takes longer than [`CASE_DEADLINE`] (a hang),
//! and, through the counting allocator below, on any single allocation above [`ALLOC_LIMIT`]
//! (unbounded allocation: the allocator refuses it and the process aborts naming the size).
//! A failing input is saved under /tmp and its path printed.
//!
//! Bounded for CI: each target stops after [`BUDGET`] or its case count, whichever comes
//! first; `TIDEBENCH_FUZZ_CASES=N` runs more (e.g. 100000 for a long local session).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod targets;

/// Largest single allocation a reader may make from a small input.
const ALLOC_LIMIT: usize = 1 << 30;
/// Longest one case may run before it counts as a hang (debug build, busy CI machine).
const CASE_DEADLINE: Duration = Duration::from_secs(10);
/// Wall time per target (a test); the 5 targets stay within 30 s even run one after another.
pub const BUDGET: Duration = Duration::from_secs(6);
/// Cases per target unless TIDEBENCH_FUZZ_CASES says otherwise.
const DEFAULT_CASES: usize = 2000;

struct Capped;

// SAFETY: forwards to the system allocator; only refuses (returns null for) oversized requests,
// which the GlobalAlloc contract allows.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOC_LIMIT {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > ALLOC_LIMIT {
            return std::ptr::null_mut();
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Capped = Capped;

/// xorshift64*: deterministic, no dependency, good enough to pick mutations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Tokens that broke parsers before or sit at a boundary.
const TOKENS: &[&str] = &[
    "1e30",
    "18446744073709551615",
    "4294967296",
    "4e9",
    "-1",
    "NaN",
    "inf",
    "0",
    "\0",
    "..",
    "../",
    "\u{7}",
    "\"",
    "'",
    "=",
    "[[group]]\n",
    "[[phase]]\n",
    "\"schema_version\": 999",
    "\"schema_version\": 0",
    "\"kind\": \"knee\"",
    "\"kind\": \"consolidate\"",
    "\"kind\": \"density\"",
    "schema_version = 999",
    "password=",
    "PASSWORD=",
    "sslmode=require",
    "\n",
    ",",
    "HISTFORMAT",
    "#[StartTime: 1e30]\n",
    "1e300",
    "99999999999999999999",
];

/// One to four mutations of `seed`.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(b.len() + 1);
        match rng.below(7) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 => b.insert(at, rng.next_u64() as u8),
            2 if at < b.len() => {
                let end = (at + 1 + rng.below(64)).min(b.len());
                b.drain(at..end);
            }
            3 if at < b.len() => {
                let end = (at + 1 + rng.below(256)).min(b.len());
                let piece = b[at..end].to_vec();
                for _ in 0..1 + rng.below(8) {
                    b.splice(at..at, piece.iter().copied());
                }
            }
            4 => b.truncate(at),
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                // Replace a number-like run with the token half the time, else insert it.
                let end = if rng.below(2) == 0 {
                    let mut e = at;
                    while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'.') {
                        e += 1;
                    }
                    e
                } else {
                    at
                };
                b.splice(at..end, t.iter().copied());
            }
        }
    }
    b
}

/// Runs `case` on its own thread: fails the test on a panic or past the deadline.
pub fn guarded(target: &str, n: usize, input: &[u8], case: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case));
        let _ = tx.send(result.is_ok());
    });
    let verdict = rx.recv_timeout(CASE_DEADLINE);
    let failure = match verdict {
        Ok(true) => None,
        Ok(false) => Some("panicked"),
        Err(mpsc::RecvTimeoutError::Timeout) => Some("hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => Some("died"),
    };
    if let Some(what) = failure {
        let saved = std::env::temp_dir().join(format!("tidebench-fuzz-{target}-{n}.bin"));
        let _ = std::fs::write(&saved, input);
        panic!(
            "fuzz target {target}, case {n}: {what}; input saved to {} ({:?})",
            saved.display(),
            String::from_utf8_lossy(&input[..input.len().min(400)])
        );
    }
    let _ = handle.join();
}

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus")
}

pub fn seeds(sub: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir().join(sub);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let p = e.expect("corpus entry").path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read corpus file"))
        })
        .collect();
    out.sort();
    out
}

/// Runs `cases` mutations (and the seeds themselves first) through `run`, within the budget.
pub fn drive(target: &str, seeds: &[Vec<u8>], budget: Duration, run: impl Fn(usize, Vec<u8>)) {
    let cases = std::env::var("TIDEBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let budget = if cases > DEFAULT_CASES {
        Duration::MAX
    } else {
        budget
    };
    let start = Instant::now();
    for (i, s) in seeds.iter().enumerate() {
        run(i, s.clone());
    }
    let mut rng = Rng::new(0x7469_6465 ^ target.len() as u64 ^ target.as_bytes()[0] as u64);
    let mut done = 0;
    for n in 0..cases {
        if start.elapsed() > budget {
            break;
        }
        let seed = &seeds[rng.below(seeds.len())];
        run(seeds.len() + n, mutate(seed, &mut rng));
        done += 1;
    }
    eprintln!(
        "fuzz {target}: {done} mutated cases in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
