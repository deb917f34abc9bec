//! `evloop`: the runtime a tidebench driver thread runs its clients on.
//!
//! Why not tokio here: a driver thread's work is a few dozen client futures that each wait for
//! one socket at a time. tokio's current-thread runtime with a `LocalSet` routed every socket
//! wake-up through its I/O driver's waker, the `LocalSet`'s shared queue and a poll of the
//! thread's main future, and that machinery was most of what the driver spent above pgbench
//! (issue 25; the README's Performance section has the profiles). Here one loop does what a
//! pgbench thread does: wait in `epoll_wait`, then run exactly the clients whose socket became
//! readable. A socket's readiness names the task that waits on it directly (no waker is cloned
//! or called on the hot path), timers are a binary heap consulted once per turn, and tasks are
//! a slab of boxed futures polled in place.
//!
//! What it offers is what the driver needs and no more: [`block_on`] (one loop per thread),
//! [`spawn`] with a [`JoinHandle`] that reports panics and can abort, [`sleep_until`],
//! [`sleep`] and [`timeout`], [`yield_now`] and [`FairShare`] (so a task that never waits
//! still lets the others run), and [`Registration`], a non-blocking socket registered for read
//! readiness (and write readiness while it connects). Futures from elsewhere that use only
//! wakers (tokio's `sync` channels, `watch`, `oneshot`) work too: a wake from another thread
//! goes through a locked queue and an eventfd.
//!
//! Everything here is single-threaded: tasks, timers and registrations belong to the loop of
//! the thread that made them.

mod executor;
mod fair;
mod io;
mod join;
mod time;

#[cfg(test)]
mod tests;

pub use executor::{block_on, in_loop};
pub use fair::{yield_now, FairShare, YieldNow};
pub use io::Registration;
pub use join::{spawn, JoinError, JoinHandle};
pub use time::{sleep, sleep_until, timeout, Elapsed, Sleep};
