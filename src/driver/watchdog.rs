//! Cutting transactions that must not run on: one at the run's end (the measured window never
//! grows past the duration), every one at a stop (Ctrl-C ends the run at once), and one that
//! has run longer than the transaction timeout (a hung server, a lock held elsewhere).
//!
//! The hot path arms no timer per transaction: a client marks when its try began in its
//! [`Watch`] (a `Cell` store) and runs the try inside [`Watch::guard`]; one watchdog task per
//! driver thread sleeps until the run's end (and, with a timeout, looks at the clients every
//! [`STEP`]), and cuts a client by setting its watch and waking its task. A try that is cut
//! gives up its session half-way; the client decides what that costs (see `client.rs`).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use super::running::{Running, PUBLISH};
use super::stop::Stop;

/// How often the watchdog looks for tries past the transaction timeout: a timeout fires up to
/// this late, which is nothing next to a timeout of seconds.
pub const STEP: Duration = Duration::from_millis(100);

/// Why a try was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// It ran longer than the transaction timeout: a `timeout` failure.
    Timeout,
    /// The run reached its duration while it was in flight: not counted.
    End,
    /// The run was stopped (Ctrl-C) while it was in flight: not counted.
    Stop,
}

/// One client's in-flight try, as the watchdog sees it.
#[derive(Default)]
pub struct Watch {
    since: Cell<Option<Instant>>,
    /// The global type of the try under way, for the progress line.
    what: Cell<u32>,
    cut: Cell<Option<Cut>>,
    waker: Cell<Option<Waker>>,
    /// Shared by a thread's watches: set once the run has ended, so a try that begins after
    /// the watchdog's last look is cut at once.
    ended: Rc<Cell<bool>>,
}

impl Watch {
    /// The watches of one driver thread's `clients`, all seeing one end flag.
    pub fn for_thread(clients: usize) -> Vec<Rc<Watch>> {
        let ended = Rc::new(Cell::new(false));
        (0..clients)
            .map(|_| {
                Rc::new(Watch {
                    ended: Rc::clone(&ended),
                    ..Watch::default()
                })
            })
            .collect()
    }

    /// A try begins at `now`.
    #[inline]
    pub fn begin(&self, now: Instant) {
        self.since.set(Some(now));
        self.cut.set(if self.ended.get() {
            Some(Cut::End)
        } else {
            None
        });
    }

    /// The tries that follow are of global type `txn`.
    #[inline]
    pub fn doing(&self, txn: usize) {
        self.what.set(txn as u32);
    }

    /// The global type of the try under way (or the last one).
    pub fn what(&self) -> usize {
        self.what.get() as usize
    }

    /// The try under way: when it began and its global type.
    fn in_flight(&self) -> Option<(Instant, u32)> {
        self.since.get().map(|s| (s, self.what.get()))
    }

    /// The try has ended (or was cut): the watchdog leaves this client alone.
    #[inline]
    pub fn end(&self) {
        self.since.set(None);
    }

    /// When the try under way began.
    pub fn since(&self) -> Option<Instant> {
        self.since.get()
    }

    /// Runs `work` until it ends or the watchdog cuts it; `Err` says why it was cut. The
    /// caller keeps `work`, so a try cut at the end may still be let finish.
    pub async fn guard<F: Future>(&self, mut work: Pin<&mut F>) -> Result<F::Output, Cut> {
        std::future::poll_fn(|cx| {
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(Ok(out));
            }
            if let Some(cut) = self.cut.get() {
                return Poll::Ready(Err(cut));
            }
            // Keep the task's waker for the watchdog; most polls come from the same task, so
            // the clone is skipped.
            let kept = self.waker.take();
            self.waker.set(match kept {
                Some(w) if w.will_wake(cx.waker()) => Some(w),
                _ => Some(cx.waker().clone()),
            });
            Poll::Pending
        })
        .await
    }

    fn cut(&self, why: Cut) {
        if self.since.get().is_some() && self.cut.get().is_none() {
            self.cut.set(Some(why));
            if let Some(w) = self.waker.take() {
                w.wake();
            }
        }
    }
}

/// Watches one thread's clients until the run's `end` or the `stop`, then cuts every try in
/// flight; meanwhile cuts each try older than `timeout`, and publishes the tries in flight on
/// `board` (the board and this thread's index) every [`PUBLISH`].
pub async fn watchdog(
    watches: Vec<Rc<Watch>>,
    end: Instant,
    timeout: Option<Duration>,
    stop: Stop,
    board: Option<(Arc<Running>, usize)>,
) {
    loop {
        let now = Instant::now();
        let mut next = end;
        if timeout.is_some() {
            next = next.min(now + STEP);
        }
        if board.is_some() {
            next = next.min(now + PUBLISH);
        }
        let stopped = tokio::select! {
            _ = evloop::sleep_until(next) => stop.is_set(),
            _ = stop.wait() => true,
        };
        let now = Instant::now();
        if stopped || now >= end {
            if let Some(w) = watches.first() {
                w.ended.set(true);
            }
            for w in &watches {
                w.cut(if stopped { Cut::Stop } else { Cut::End });
            }
            return;
        }
        if let Some((board, thread)) = &board {
            board.publish(*thread, watches.iter().filter_map(|w| w.in_flight()));
        }
        if let Some(t) = timeout {
            for w in &watches {
                if w.since()
                    .is_some_and(|s| now.saturating_duration_since(s) >= t)
                {
                    w.cut(Cut::Timeout);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use super::*;

    fn local<F: Future>(f: F) -> F::Output {
        evloop::block_on(f).unwrap()
    }

    #[test]
    fn a_try_that_ends_by_itself_is_not_cut() {
        local(async {
            let watches = Watch::for_thread(1);
            let end = Instant::now() + Duration::from_secs(5);
            let dog = evloop::spawn(watchdog(
                watches.clone(),
                end,
                Some(Duration::from_secs(1)),
                Stop::new(),
                None,
            ));
            let w = &watches[0];
            w.begin(Instant::now());
            let out = w.guard(pin!(async { 7 })).await;
            w.end();
            assert_eq!(out, Ok(7));
            dog.abort();
        });
    }

    // Only lower bounds on time: a busy machine may wake the watchdog late, never early. Each
    // cut is asserted by its kind, with the other kind's deadline out of reach.
    #[test]
    fn a_hung_try_is_cut_by_the_timeout() {
        local(async {
            let watches = Watch::for_thread(1);
            let t0 = Instant::now();
            let dog = evloop::spawn(watchdog(
                watches.clone(),
                t0 + Duration::from_secs(600),
                Some(Duration::from_millis(200)),
                Stop::new(),
                None,
            ));
            let hung = std::future::pending::<()>();
            watches[0].begin(Instant::now());
            assert_eq!(watches[0].guard(pin!(hung)).await, Err(Cut::Timeout));
            let took = t0.elapsed();
            assert!(took >= Duration::from_millis(200), "{took:?}");
            watches[0].end();
            dog.abort();
        });
    }

    #[test]
    fn a_try_in_flight_at_the_end_is_cut_by_the_end_and_later_ones_at_once() {
        local(async {
            let watches = Watch::for_thread(1);
            let end = Instant::now() + Duration::from_millis(300);
            evloop::spawn(watchdog(watches.clone(), end, None, Stop::new(), None));
            // Short sleeps until the end cuts one in flight.
            let w = &watches[0];
            let cut = loop {
                w.begin(Instant::now());
                let r = w
                    .guard(pin!(evloop::sleep(Duration::from_millis(50))))
                    .await;
                w.end();
                if let Err(c) = r {
                    break c;
                }
            };
            assert_eq!(cut, Cut::End);
            assert!(Instant::now() >= end);
            // After the end, a new try is cut before it waits at all.
            w.begin(Instant::now());
            assert_eq!(
                w.guard(pin!(std::future::pending::<()>())).await,
                Err(Cut::End)
            );
        });
    }

    #[test]
    fn a_stop_cuts_every_try_in_flight_at_once() {
        local(async {
            let watches = Watch::for_thread(1);
            let stop = Stop::new();
            evloop::spawn(watchdog(
                watches.clone(),
                Instant::now() + Duration::from_secs(60),
                None,
                stop.clone(),
                None,
            ));
            let t0 = Instant::now();
            let trigger = stop.clone();
            evloop::spawn(async move {
                evloop::sleep(Duration::from_millis(50)).await;
                trigger.trigger();
            });
            watches[0].begin(Instant::now());
            let r = watches[0].guard(pin!(std::future::pending::<()>())).await;
            assert_eq!(r, Err(Cut::Stop));
            assert!(t0.elapsed() < Duration::from_secs(2));
        });
    }
}
