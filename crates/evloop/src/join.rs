//! Tasks: [`spawn`] puts a future on this thread's loop and returns its [`JoinHandle`], which
//! yields the output, or the panic the task raised (caught per poll, so one client's bug ends
//! that client, not the thread), or `Cancelled` once it was aborted.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::executor::{core, expect_core, TaskId};

/// Why a task gave no output.
pub enum JoinError {
    /// It panicked; the payload is the panic's.
    Panic(Box<dyn Any + Send>),
    /// It was aborted, or its loop ended first.
    Cancelled,
}

impl JoinError {
    pub fn is_panic(&self) -> bool {
        matches!(self, JoinError::Panic(_))
    }

    /// The panic's payload (for a cancelled task, a message saying so).
    pub fn into_panic(self) -> Box<dyn Any + Send> {
        match self {
            JoinError::Panic(p) => p,
            JoinError::Cancelled => Box::new("the task was cancelled"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::Panic(_) => f.write_str("JoinError::Panic(..)"),
            JoinError::Cancelled => f.write_str("JoinError::Cancelled"),
        }
    }
}

struct JoinState<T> {
    result: RefCell<Option<Result<T, JoinError>>>,
    done: Cell<bool>,
    waiter: RefCell<Option<Waker>>,
}

impl<T> JoinState<T> {
    fn complete(&self, result: Result<T, JoinError>) {
        if self.done.replace(true) {
            return;
        }
        *self.result.borrow_mut() = Some(result);
        if let Some(w) = self.waiter.borrow_mut().take() {
            w.wake();
        }
    }
}

/// A spawned future and where its output goes. A panic in its poll is caught and becomes the
/// handle's `JoinError::Panic`; dropped unfinished (aborted), it leaves `Cancelled`.
struct Joined<F: Future> {
    future: Pin<Box<F>>,
    state: Rc<JoinState<F::Output>>,
}

impl<F: Future> Future for Joined<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        match catch_unwind(AssertUnwindSafe(|| this.future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => {
                this.state.complete(Ok(out));
                Poll::Ready(())
            }
            Err(panic) => {
                this.state.complete(Err(JoinError::Panic(panic)));
                Poll::Ready(())
            }
        }
    }
}

impl<F: Future> Drop for Joined<F> {
    fn drop(&mut self) {
        self.state.complete(Err(JoinError::Cancelled));
    }
}

/// Runs `future` as a task of this thread's loop. Panics outside [`block_on`], like any
/// runtime's spawn without a runtime.
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let core = expect_core("spawn");
    let state = Rc::new(JoinState {
        result: RefCell::new(None),
        done: Cell::new(false),
        waiter: RefCell::new(None),
    });
    let id = core.insert(Box::pin(Joined {
        future: Box::pin(future),
        state: Rc::clone(&state),
    }));
    JoinHandle { id, state }
}

/// Awaits a spawned task's output. Dropping it detaches the task.
pub struct JoinHandle<T> {
    id: TaskId,
    state: Rc<JoinState<T>>,
}

impl<T> JoinHandle<T> {
    /// Drops the task at once (if it is polling itself, when its poll returns); its handle
    /// then yields `JoinError::Cancelled`.
    pub fn abort(&self) {
        if let Some(core) = core() {
            core.abort(self.id);
        }
    }

    pub fn is_finished(&self) -> bool {
        self.state.done.get()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(result) = self.state.result.borrow_mut().take() {
            return Poll::Ready(result);
        }
        if self.state.done.get() {
            // Taken by an earlier poll: a handle yields its result once.
            return Poll::Ready(Err(JoinError::Cancelled));
        }
        let mut waiter = self.state.waiter.borrow_mut();
        match &*waiter {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => *waiter = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}
