//! Timers: [`sleep_until`], [`sleep`] and [`timeout`]. A sleeping future puts (instant, task)
//! on the loop's heap the first time it is polled; the loop queues the task when the instant
//! passes. A sleep dropped early leaves its entry, which later wakes its task once for nothing
//! (a task polled without cause just finds its futures pending), so nothing is searched or
//! removed on the way.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::executor::expect_core;

/// Resolves at `at`.
pub struct Sleep {
    at: Instant,
    armed: bool,
}

pub fn sleep_until(at: Instant) -> Sleep {
    Sleep { at, armed: false }
}

pub fn sleep(d: Duration) -> Sleep {
    sleep_until(Instant::now() + d)
}

impl Sleep {
    pub fn deadline(&self) -> Instant {
        self.at
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            return Poll::Ready(());
        }
        if !self.armed {
            let core = expect_core("sleep");
            core.add_timer(self.at, core.current());
            self.armed = true;
        }
        Poll::Pending
    }
}

/// `timeout` ran out first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline elapsed")
    }
}

impl std::error::Error for Elapsed {}

/// Runs `future` for at most `d`.
pub async fn timeout<F: Future>(d: Duration, future: F) -> Result<F::Output, Elapsed> {
    let mut future = std::pin::pin!(future);
    let mut sleep = sleep(d);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = future.as_mut().poll(cx) {
            return Poll::Ready(Ok(out));
        }
        match Pin::new(&mut sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_end_on_time_and_timeouts_cut() {
        let (slept, cut, kept) = crate::block_on(async {
            let t0 = Instant::now();
            sleep(Duration::from_millis(30)).await;
            let slept = t0.elapsed();
            let cut = timeout(Duration::from_millis(10), std::future::pending::<()>()).await;
            let kept = timeout(Duration::from_secs(5), async { 7 }).await;
            (slept, cut, kept)
        })
        .unwrap();
        assert!(slept >= Duration::from_millis(30), "{slept:?}");
        assert!(slept < Duration::from_millis(500), "{slept:?}");
        assert_eq!(cut, Err(Elapsed));
        assert_eq!(kept, Ok(7));
    }
}
