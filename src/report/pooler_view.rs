//! What a connection pooler did during a run (issue 57), from its `pooler:<label>` rows in
//! `system.csv` (see `sampler::pooler`): per pooler, over the measured window, the
//! transactions it passed, the time its clients waited for a server session, and the peaks of
//! waiting clients and server sessions; and the series the report charts.

use super::charts::{Combine, Series};
use super::load::{delta, RunData};
use super::system_view::series_of;

/// One pooler's figures over the measured window.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolerFigures {
    /// The target behind it.
    pub target: String,
    /// Transactions the pooler passed (`SHOW STATS` total_xact_count's growth).
    pub transactions: Option<f64>,
    /// Seconds its clients spent waiting for a server session, summed over clients.
    pub wait_s: Option<f64>,
    /// Most client sessions waiting at once, as sampled.
    pub peak_waiting: Option<f64>,
    /// Most server sessions open at once (active, idle and used), as sampled.
    pub peak_servers: Option<f64>,
    /// Longest wait of a client, as sampled.
    pub longest_wait_s: Option<f64>,
}

impl PoolerFigures {
    /// Mean wait for a server session per transaction, in milliseconds.
    pub fn wait_per_transaction_ms(&self) -> Option<f64> {
        let (wait, n) = (self.wait_s?, self.transactions?);
        (n > 0.0).then(|| wait * 1e3 / n)
    }
}

const PREFIX: &str = "pooler:";
/// The sampler's last round is taken at the run's stop, a few ms after the measured window's
/// end: it still counts as the window's end.
const END_SLACK_S: f64 = 0.25;

/// The figures of every pooler sampled in the run, by target; empty without one.
pub fn figures(data: &RunData) -> Vec<PoolerFigures> {
    let (start, end) = data.measured_window();
    let end = end + END_SLACK_S;
    let grown = |metric: &str, target: &str| {
        series_of(data, PREFIX, metric, 1.0)
            .into_iter()
            .find(|s| s.name == target)
            .and_then(|s| delta(&s.points, start, end))
    };
    let peak = |metrics: &[&str], target: &str| {
        let mut sums: Vec<(f64, f64)> = Vec::new();
        for metric in metrics {
            let Some(s) = series_of(data, PREFIX, metric, 1.0)
                .into_iter()
                .find(|s| s.name == target)
            else {
                continue;
            };
            for (i, (t, v)) in s.points.iter().enumerate() {
                match sums.get_mut(i) {
                    Some(at) => at.1 += v,
                    None => sums.push((*t, *v)),
                }
            }
        }
        sums.iter()
            .filter(|(t, _)| *t >= start && *t <= end)
            .map(|(_, v)| *v)
            .reduce(f64::max)
    };
    series_of(data, PREFIX, "cl_active", 1.0)
        .into_iter()
        .map(|s| {
            let target = s.name;
            PoolerFigures {
                transactions: grown("xact_count", &target),
                wait_s: grown("wait_time_s", &target),
                peak_waiting: peak(&["cl_waiting"], &target),
                peak_servers: peak(&["sv_active", "sv_idle", "sv_used"], &target),
                longest_wait_s: peak(&["maxwait_s"], &target),
                target,
            }
        })
        .collect()
}

/// The pooler's charts: clients waiting for a server session, and server sessions busy.
pub fn charts(data: &RunData) -> Vec<(String, &'static str, Vec<Series>, Combine)> {
    vec![
        (
            "Clients waiting for a server session, by pooler".into(),
            "client sessions",
            series_of(data, PREFIX, "cl_waiting", 1.0),
            Combine::Sum,
        ),
        (
            "Server sessions serving a client, by pooler".into(),
            "server sessions",
            series_of(data, PREFIX, "sv_active", 1.0),
            Combine::Sum,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_per_transaction_needs_transactions() {
        let mut f = PoolerFigures {
            target: "t".into(),
            transactions: Some(200.0),
            wait_s: Some(0.5),
            peak_waiting: None,
            peak_servers: None,
            longest_wait_s: None,
        };
        assert_eq!(f.wait_per_transaction_ms(), Some(2.5));
        f.transactions = Some(0.0);
        assert_eq!(f.wait_per_transaction_ms(), None);
    }
}
