//! pgbench's transaction log (`-l`) as the plan holds it: [`TxnLogPlan`], its defaults, and the
//! checks of `-l` and its options as pgbench makes them. The log's writer is the driver's
//! (`metrics::txnlog`); the plan lives here so config imports no room above it (issue 48).

use serde::{Deserialize, Serialize};

use super::raw::RawRun;

/// pgbench's default `--log-prefix`.
pub const DEFAULT_PREFIX: &str = "pgbench_log";

/// What the run's transaction log is to hold (from `--log` and its options).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TxnLogPlan {
    pub prefix: String,
    /// Share of transactions logged, in (0, 1]; absent = all.
    pub sampling_rate: Option<f64>,
    /// Seconds per aggregated line; absent = a line per transaction.
    pub aggregate_interval: Option<u32>,
    /// Transaction type names in `script_no` order (pgbench's `-f`/`-b` order, which the
    /// drop-in knows); a type not named here logs its index in its workload.
    #[serde(default)]
    pub scripts: Vec<String>,
    /// pgbench's `--failures-detailed`: a failed line names its kind, aggregated lines count
    /// serialization failures and deadlocks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failures_detailed: bool,
}

impl TxnLogPlan {
    /// The `script_no` of each transaction type (by name, in its workload's order).
    pub fn script_numbers<'a>(&self, types: impl Iterator<Item = &'a str>) -> Vec<u32> {
        types
            .enumerate()
            .map(|(i, name)| {
                let at = self.scripts.iter().position(|s| s == name).unwrap_or(i);
                u32::try_from(at).unwrap_or(u32::MAX)
            })
            .collect()
    }
}

/// pgbench's `-l` and its options, checked as pgbench checks them (with the fix).
pub(super) fn txn_log(raw: &RawRun) -> Result<Option<TxnLogPlan>, String> {
    let on = raw.log.unwrap_or(false);
    if let Some(rate) = raw.sampling_rate {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(format!(
                "invalid sampling rate: \"{rate}\" (give --sampling-rate a share in (0, 1], e.g. 0.01)"
            ));
        }
        if !on {
            return Err(
                "log sampling (--sampling-rate) is allowed only when logging \
                        transactions (-l): add --log"
                    .into(),
            );
        }
    }
    if raw.aggregate_interval == Some(0) {
        return Err("--aggregate-interval must be at least 1 (seconds)".into());
    }
    if raw.sampling_rate.is_some() && raw.aggregate_interval.is_some() {
        return Err(
            "log sampling (--sampling-rate) and aggregation (--aggregate-interval) \
                    cannot be used at the same time: give one of them"
                .into(),
        );
    }
    if !on && (raw.aggregate_interval.is_some() || raw.log_prefix.is_some()) {
        return Err(
            "--aggregate-interval and --log-prefix are allowed only when logging \
                    transactions (-l): add --log"
                .into(),
        );
    }
    Ok(on.then(|| TxnLogPlan {
        prefix: raw
            .log_prefix
            .clone()
            .unwrap_or_else(|| DEFAULT_PREFIX.into()),
        sampling_rate: raw.sampling_rate,
        aggregate_interval: raw.aggregate_interval,
        scripts: raw.log_scripts.clone().unwrap_or_default(),
        failures_detailed: raw.failures_detailed.unwrap_or(false),
    }))
}
