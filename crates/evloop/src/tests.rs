//! The loop's own tests (issue 42: an executor the whole driver stands on needs tests of its
//! own): fairness between tasks that never block, timers in order, wakes from other threads,
//! tasks dropped while they wait, spawning from a task, `block_on`'s result, panics.

use std::cell::{Cell, RefCell};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use crate::{block_on, sleep, sleep_until, spawn, yield_now, FairShare, JoinError, Registration};

/// Sets its flag when dropped: tells whether a task's future (and what it held) was dropped.
struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors that we then own.
    assert_eq!(
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) },
        0
    );
    // SAFETY: both are new descriptors owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

#[test]
fn yield_now_takes_turns_in_spawn_order() {
    let order = block_on(async {
        let order = Rc::new(RefCell::new(Vec::new()));
        let tasks: Vec<_> = (0..3)
            .map(|t| {
                let order = Rc::clone(&order);
                spawn(async move {
                    for _ in 0..3 {
                        order.borrow_mut().push(t);
                        yield_now().await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        Rc::try_unwrap(order).unwrap().into_inner()
    })
    .unwrap();
    assert_eq!(order, [0, 1, 2, 0, 1, 2, 0, 1, 2]);
}

/// Issue 38: tasks whose work never waits (a script of `\set` lines) each get an even share
/// of a common budget; without `take_turn` the first task would take all of it.
#[test]
fn tasks_that_never_block_share_the_loop_evenly() {
    const BUDGET: u32 = 3000;
    let counts = block_on(async {
        let left = Rc::new(Cell::new(BUDGET));
        let tasks: Vec<_> = (0..3)
            .map(|_| {
                let left = Rc::clone(&left);
                spawn(async move {
                    let mut fair = FairShare::new();
                    let mut mine = 0u32;
                    loop {
                        fair.take_turn().await;
                        if left.get() == 0 {
                            return mine;
                        }
                        left.set(left.get() - 1);
                        mine += 1;
                    }
                })
            })
            .collect();
        let mut counts = Vec::new();
        for t in tasks {
            counts.push(t.await.unwrap());
        }
        counts
    })
    .unwrap();
    assert_eq!(counts, [1000, 1000, 1000]);
}

/// A task that waits on a timer every turn is never made to yield as well: its turns cost no
/// extra poll.
#[test]
fn a_task_that_waits_is_not_made_to_yield() {
    let polls_per_turn = block_on(async {
        let mut fair = FairShare::new();
        let before = crate::executor::polls();
        for _ in 0..5 {
            fair.take_turn().await;
            sleep(Duration::from_millis(1)).await;
        }
        fair.take_turn().await;
        crate::executor::polls() - before
    })
    .unwrap();
    // Five sleeps (one poll each to resume) plus the first turn's yield, nothing more.
    assert_eq!(polls_per_turn, 6);
}

#[test]
fn timers_fire_in_deadline_order_and_ties_in_arming_order() {
    let fired = block_on(async {
        let fired = Rc::new(RefCell::new(Vec::new()));
        let base = Instant::now() + Duration::from_millis(200);
        // Armed out of order (all well before the first is due); two share a deadline.
        let plan = [(30, "c"), (10, "a"), (20, "b1"), (20, "b2"), (0, "first")];
        let tasks: Vec<_> = plan
            .iter()
            .map(|&(ms, name)| {
                let fired = Rc::clone(&fired);
                spawn(async move {
                    sleep_until(base + Duration::from_millis(ms)).await;
                    fired.borrow_mut().push(name);
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        Rc::try_unwrap(fired).unwrap().into_inner()
    })
    .unwrap();
    assert_eq!(fired, ["first", "a", "b1", "b2", "c"]);
}

#[test]
fn wakes_from_many_threads_each_reach_their_task() {
    const THREADS: usize = 8;
    let woken = block_on(async {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Waker)>();
        let ready: Arc<Vec<AtomicUsize>> =
            Arc::new((0..THREADS).map(|_| AtomicUsize::new(0)).collect());
        let tasks: Vec<_> = (0..THREADS)
            .map(|i| {
                let tx = tx.clone();
                let ready = Arc::clone(&ready);
                spawn(async move {
                    let mut sent = false;
                    std::future::poll_fn(|cx| {
                        if ready[i].load(Ordering::SeqCst) == 1 {
                            return Poll::Ready(());
                        }
                        if !std::mem::replace(&mut sent, true) {
                            tx.send((i, cx.waker().clone())).unwrap();
                        }
                        Poll::Pending
                    })
                    .await;
                    i
                })
            })
            .collect();
        drop(tx);
        // Let every task register its waker before the threads start waking.
        sleep(Duration::from_millis(5)).await;
        let threads: Vec<_> = rx
            .try_iter()
            .map(|(i, w)| {
                let ready = Arc::clone(&ready);
                std::thread::spawn(move || {
                    ready[i].store(1, Ordering::SeqCst);
                    w.wake();
                })
            })
            .collect();
        let mut woken = Vec::new();
        for t in tasks {
            woken.push(t.await.unwrap());
        }
        for t in threads {
            t.join().unwrap();
        }
        woken
    })
    .unwrap();
    assert_eq!(woken, (0..THREADS).collect::<Vec<_>>());
}

#[test]
fn a_task_aborted_while_waiting_on_a_socket_is_dropped_and_the_loop_goes_on() {
    let (dropped, cancelled, reused) = block_on(async {
        let dropped = Rc::new(Cell::new(false));
        let (r, w) = pipe();
        let flag = DropFlag(Rc::clone(&dropped));
        let waiting = spawn(async move {
            let _flag = flag;
            let reg = Registration::new(r, false).unwrap();
            reg.readable().await;
        });
        sleep(Duration::from_millis(2)).await;
        waiting.abort();
        let dropped_now = dropped.get();
        // The edge arrives for a source that is gone: it must wake nobody and break nothing.
        // SAFETY: writes one byte from a live buffer to the pipe's write end (its read end is
        // closed, so EPIPE is fine too).
        unsafe { libc::write(w.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        // A new registration reuses the freed slot and works.
        let (r2, w2) = pipe();
        let reg = Registration::new(r2, false).unwrap();
        // SAFETY: as above, on the second pipe.
        unsafe { libc::write(w2.as_raw_fd(), b"y".as_ptr().cast(), 1) };
        let reused = crate::timeout(Duration::from_secs(2), reg.readable())
            .await
            .is_ok();
        (dropped_now, waiting.await, reused)
    })
    .unwrap();
    assert!(dropped, "the aborted task's future was not dropped at once");
    assert!(matches!(cancelled, Err(JoinError::Cancelled)));
    assert!(reused);
}

#[test]
fn tasks_still_waiting_when_block_on_returns_are_dropped() {
    let dropped = Rc::new(Cell::new(false));
    let flag = DropFlag(Rc::clone(&dropped));
    let out = block_on(async move {
        spawn(async move {
            let _flag = flag;
            sleep(Duration::from_secs(3600)).await;
        });
        yield_now().await;
        "main's result"
    })
    .unwrap();
    assert_eq!(out, "main's result");
    assert!(
        dropped.get(),
        "a task left waiting was not dropped with its loop"
    );
}

#[test]
fn a_task_spawns_tasks_and_awaits_them() {
    let sum = block_on(async {
        spawn(async {
            let inner: Vec<_> = (1..=4u32)
                .map(|i| {
                    spawn(async move {
                        let deeper = spawn(async move { i * 10 });
                        yield_now().await;
                        deeper.await.unwrap() + i
                    })
                })
                .collect();
            let mut sum = 0;
            for h in inner {
                sum += h.await.unwrap();
            }
            sum
        })
        .await
        .unwrap()
    })
    .unwrap();
    assert_eq!(sum, 110);
}

#[test]
fn a_panicking_task_is_reported_and_the_others_finish() {
    let (panicked, others) = block_on(async {
        let bad = spawn(async {
            yield_now().await;
            if std::hint::black_box(true) {
                panic!("client 7 tripped: {}", std::hint::black_box(42));
            }
        });
        let good: Vec<_> = (0..3)
            .map(|i| {
                spawn(async move {
                    for _ in 0..3 {
                        yield_now().await;
                    }
                    i
                })
            })
            .collect();
        let mut others = Vec::new();
        for g in good {
            others.push(g.await.unwrap());
        }
        (bad.await, others)
    })
    .unwrap();
    let payload = panicked.unwrap_err().into_panic();
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("client 7 tripped: 42")
    );
    assert_eq!(others, [0, 1, 2]);
}

#[test]
fn block_on_gives_the_main_future_output_and_leaves_the_thread_free() {
    let v = block_on(async {
        sleep(Duration::from_millis(1)).await;
        vec![1, 2, 3]
    })
    .unwrap();
    assert_eq!(v, [1, 2, 3]);
    assert!(!crate::in_loop());
    // A second loop on the same thread, one after the other, is fine.
    assert_eq!(block_on(async { 5 }).unwrap(), 5);
}
