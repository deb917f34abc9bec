//! Defaults of a run, chosen to match pgbench where pgbench has one.

pub const CLIENTS: u32 = 1;
pub const DURATION: &str = "30s";
pub const MAX_TRIES: u32 = 1;
pub const PROGRESS: &str = "5s";
pub const INTERVAL: &str = "30s";
pub const POLL: &str = "10s";
pub const SAMPLE: &str = "1s";
/// Wait samples a second: reading `pg_stat_activity` 10 times a second costs the
/// servers too little to measure (README, "Wait profiles").
pub const SAMPLE_WAITS: u32 = 10;
/// A run over several targets abandons a transaction after this long: far above any
/// OLTP transaction's response time (TPC-E's limits are 1-3 s at p90), short enough that
/// a hung server does not hold the clients the other targets need for long.
pub const MULTI_TARGET_TXN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// The shortest `--txn-timeout`: below it a busy 2-core machine's scheduling hiccups
/// would turn into timeouts.
pub const MIN_TXN_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);
