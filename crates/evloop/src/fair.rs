//! Fairness between tasks that may never wait. A loop runs a task until the task returns
//! `Pending`; a task whose work never waits on a socket or a timer (a pgbench script of
//! meta-commands only: `\set` lines) would keep its thread to itself, and its thread's other
//! clients would run nothing (issue 38). pgbench's thread loop visits each of its clients in
//! turn; [`FairShare`] gives the same: a task calls [`FairShare::take_turn`] once per unit of
//! work, and it yields (re-queues itself behind the tasks already queued) only when it was not
//! suspended since its previous call. A task that waited on its socket has let the others run
//! already, so the check costs it one thread-local read and a compare.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::executor::polls;

/// Returns `Pending` once, after waking its task, which the loop then queues behind the tasks
/// already queued: the others run before it is polled again.
pub struct YieldNow {
    yielded: bool,
}

/// Lets the loop's other queued tasks run before this one goes on.
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// One task's fair share of its loop: remembers the loop's poll count at its last turn.
pub struct FairShare {
    polls: u64,
}

impl Default for FairShare {
    fn default() -> Self {
        Self::new()
    }
}

impl FairShare {
    pub fn new() -> FairShare {
        FairShare { polls: polls() }
    }

    /// Yields to the loop's other tasks unless this task was suspended since its previous
    /// turn (or since `new`). Call it once per unit of work (a client's transaction).
    pub async fn take_turn(&mut self) {
        if polls() == self.polls {
            yield_now().await;
        }
        self.polls = polls();
    }
}
