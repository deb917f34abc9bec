//! Results dirs: runtime.toml, summary.json, intervals.csv, latency.hlog, written to a staging dir and renamed when complete.
