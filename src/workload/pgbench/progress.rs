//! Load progress on stderr: an indicatif bar (rows, rows/s, ETA) when stderr is a terminal,
//! otherwise a plain line every few seconds so logs of unattended runs stay readable.
//!
//! Loader tasks only bump an atomic row counter; a ticker task turns it into output, so the
//! COPY loops never wait on the terminal.

use std::fmt::Write;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{HumanCount, ProgressBar, ProgressState, ProgressStyle};

const BAR_REFRESH: Duration = Duration::from_millis(100);
const LINE_PERIOD: Duration = Duration::from_secs(5);

pub struct Progress {
    rows: Arc<AtomicU64>,
    bar: Option<ProgressBar>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    /// Starts reporting rows loaded out of `total`. Must be called inside a tokio runtime.
    pub fn start(what: &str, total: u64) -> Progress {
        let rows = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&rows);
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template(
                "{msg} [{bar:30}] {human_pos}/{human_len} rows, {rate} rows/s, ETA {eta}",
            )
            .map(|s| {
                s.progress_chars("=> ")
                    .with_key("rate", |st: &ProgressState, w: &mut dyn Write| {
                        // Whole rows with thousands separators; indicatif's {per_sec} shows decimals.
                        let _ = write!(w, "{}", HumanCount(st.per_sec() as u64));
                    })
            })
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_message(format!("loading {what}"));
            let shown = bar.clone();
            let ticker = tokio::spawn(async move {
                loop {
                    shown.set_position(counter.load(Ordering::Relaxed));
                    tokio::time::sleep(BAR_REFRESH).await;
                }
            });
            Progress {
                rows,
                bar: Some(bar),
                ticker: Some(ticker),
            }
        } else {
            let what = what.to_string();
            let ticker = tokio::spawn(async move {
                let started = Instant::now();
                loop {
                    tokio::time::sleep(LINE_PERIOD).await;
                    eprintln!(
                        "{}",
                        plain_line(
                            &what,
                            counter.load(Ordering::Relaxed),
                            total,
                            started.elapsed()
                        )
                    );
                }
            });
            Progress {
                rows,
                bar: None,
                ticker: Some(ticker),
            }
        }
    }

    /// The counter loader tasks add their rows to.
    pub fn counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.rows)
    }

    /// Ends the row count and shows what happens next (vacuum, primary keys, ...).
    pub fn phase(&mut self, what: &str) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        match &self.bar {
            Some(bar) => {
                bar.set_style(ProgressStyle::default_spinner());
                bar.set_message(what.to_string());
                bar.enable_steady_tick(BAR_REFRESH);
            }
            None => eprintln!("{what}"),
        }
    }
}

impl Drop for Progress {
    /// Also runs when the prepare future is dropped on Ctrl-C: the ticker must not outlive it.
    fn drop(&mut self) {
        if let Some(t) = self.ticker.take() {
            t.abort();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn plain_line(what: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = done as f64 / secs;
    let pct = (done * 100).checked_div(total).unwrap_or(100);
    let eta = if rate > 0.0 {
        format!("{:.0} s", total.saturating_sub(done) as f64 / rate)
    } else {
        "unknown".to_string()
    };
    format!("loading {what}: {done}/{total} rows ({pct}%), {rate:.0} rows/s, ETA {eta}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_line_reports_rate_and_eta() {
        let line = plain_line("pgbench_accounts", 500, 1000, Duration::from_secs(5));
        assert_eq!(
            line,
            "loading pgbench_accounts: 500/1000 rows (50%), 100 rows/s, ETA 5 s"
        );
        assert!(plain_line("t", 0, 10, Duration::ZERO).ends_with("ETA unknown"));
    }
}
