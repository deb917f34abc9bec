//! The loop itself: the thread's [`Core`] (tasks, run queue, timers, I/O sources, the epoll
//! instance) and [`block_on`] that turns it. Spawning is in `join.rs`.
//!
//! One turn: poll the main future if it was woken, poll up to [`BATCH`] queued tasks, then
//! wait in `epoll_wait` (without blocking when tasks are still queued) and queue the tasks
//! whose sockets, timers or remote wakers fired.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use crate::io::{Source, EV_CLOSED, EV_READ, EV_WRITE};

/// A task's identity: slab index in the low 32 bits, the slot's generation in the high ones,
/// so a wake for a task that ended never reaches the task that reused its slot.
pub(crate) type TaskId = u64;
/// The future `block_on` was given.
pub(crate) const MAIN: TaskId = u64::MAX;
/// No task waits.
pub(crate) const NOBODY: TaskId = u64::MAX - 1;
/// The epoll token of the eventfd that wakes the loop from other threads.
const REMOTE_TOKEN: u64 = u64::MAX;
/// Tasks polled before the loop looks at its sockets again, so a task that keeps waking
/// itself cannot starve the others' I/O.
const BATCH: usize = 128;
/// Events taken from one `epoll_wait`.
const EVENTS: usize = 256;

static LOOP_IDS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static CORE: RefCell<Option<Rc<Core>>> = const { RefCell::new(None) };
    /// The id of the loop running on this thread (0: none), for wakers to tell whether they
    /// are called on their own loop's thread.
    static LOOP_ID: Cell<u64> = const { Cell::new(0) };
    /// Polls begun on this thread's loop (tasks and the main future): a task that reads the
    /// same count before and after some work was never suspended in between (see `fair.rs`).
    static POLLS: Cell<u64> = const { Cell::new(0) };
}

/// How many polls this thread's loop has begun so far.
pub(crate) fn polls() -> u64 {
    POLLS.with(Cell::get)
}

fn count_poll() {
    POLLS.with(|p| p.set(p.get().wrapping_add(1)));
}

/// The loop of this thread; `None` outside [`block_on`].
pub(crate) fn core() -> Option<Rc<Core>> {
    CORE.with(|c| c.borrow().clone())
}

/// The loop of this thread, for a future that can only run on one.
pub(crate) fn expect_core(what: &str) -> Rc<Core> {
    match core() {
        Some(c) => c,
        None => panic!("evloop: {what} used outside evloop::block_on"),
    }
}

/// Whether this thread is running a loop.
pub fn in_loop() -> bool {
    LOOP_ID.with(Cell::get) != 0
}

struct TaskCell {
    id: TaskId,
    /// Taken out while polled, so a task may spawn, wake or abort tasks (itself included).
    future: RefCell<Option<Pin<Box<dyn Future<Output = ()>>>>>,
    waker: Waker,
    queued: Cell<bool>,
    aborted: Cell<bool>,
}

struct Slot {
    gen: u32,
    task: Option<Rc<TaskCell>>,
}

/// What other threads may touch: the queue of remote wakes and the eventfd that announces it.
struct Remote {
    loop_id: u64,
    eventfd: OwnedFd,
    queue: Mutex<Vec<TaskId>>,
    /// Set while a write to the eventfd is pending, so a burst of wakes writes it once.
    signalled: AtomicBool,
}

impl Remote {
    fn push(&self, id: TaskId) {
        if let Ok(mut q) = self.queue.lock() {
            q.push(id);
        }
        if !self.signalled.swap(true, Ordering::AcqRel) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to an eventfd we own. A full counter
            // (EAGAIN) still leaves the eventfd readable, which is all the loop needs.
            unsafe {
                libc::write(
                    self.eventfd.as_raw_fd(),
                    (&one as *const u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
        }
    }
}

/// A task's waker: queues the task on its loop, directly when called on the loop's thread.
struct TaskWaker {
    id: TaskId,
    remote: Arc<Remote>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if LOOP_ID.with(Cell::get) == self.remote.loop_id {
            if let Some(core) = core() {
                core.schedule(self.id);
                return;
            }
        }
        self.remote.push(self.id);
    }
}

/// One thread's loop.
pub(crate) struct Core {
    epoll: OwnedFd,
    remote: Arc<Remote>,
    slots: RefCell<Vec<Slot>>,
    free: RefCell<Vec<u32>>,
    queue: RefCell<VecDeque<TaskId>>,
    main_woken: Cell<bool>,
    /// The task being polled: what a socket or timer registers as its waiter.
    current: Cell<TaskId>,
    pub(crate) sources: RefCell<Vec<Source>>,
    pub(crate) free_sources: RefCell<Vec<usize>>,
    timers: RefCell<BinaryHeap<Reverse<(Instant, u64, TaskId)>>>,
    timer_seq: Cell<u64>,
    events: RefCell<Vec<libc::epoll_event>>,
}

impl Core {
    fn new() -> io::Result<Core> {
        // SAFETY: plain syscalls; each result is checked before it is wrapped.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `epoll` is a new descriptor that nothing else owns.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        // SAFETY: as above.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `efd` is a new descriptor that nothing else owns.
        let eventfd = unsafe { OwnedFd::from_raw_fd(efd) };
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: REMOTE_TOKEN,
        };
        // SAFETY: registers a descriptor we own with our epoll instance.
        if unsafe { libc::epoll_ctl(epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, efd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Core {
            epoll,
            remote: Arc::new(Remote {
                loop_id: LOOP_IDS.fetch_add(1, Ordering::Relaxed),
                eventfd,
                queue: Mutex::new(Vec::new()),
                signalled: AtomicBool::new(false),
            }),
            slots: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            queue: RefCell::new(VecDeque::new()),
            main_woken: Cell::new(true),
            current: Cell::new(MAIN),
            sources: RefCell::new(Vec::new()),
            free_sources: RefCell::new(Vec::new()),
            timers: RefCell::new(BinaryHeap::new()),
            timer_seq: Cell::new(0),
            events: RefCell::new(Vec::with_capacity(EVENTS)),
        })
    }

    pub(crate) fn epoll_fd(&self) -> i32 {
        self.epoll.as_raw_fd()
    }

    pub(crate) fn current(&self) -> TaskId {
        self.current.get()
    }

    /// Queues task `id` (or flags the main future) unless it is queued already or gone.
    pub(crate) fn schedule(&self, id: TaskId) {
        if id == MAIN {
            self.main_woken.set(true);
            return;
        }
        if id == NOBODY {
            return;
        }
        let slots = self.slots.borrow();
        let Some(Slot {
            gen,
            task: Some(task),
        }) = slots.get((id & 0xFFFF_FFFF) as usize)
        else {
            return;
        };
        if u64::from(*gen) == id >> 32 && !task.queued.replace(true) {
            self.queue.borrow_mut().push_back(id);
        }
    }

    pub(crate) fn add_timer(&self, at: Instant, id: TaskId) {
        let seq = self.timer_seq.get();
        self.timer_seq.set(seq + 1);
        self.timers.borrow_mut().push(Reverse((at, seq, id)));
    }

    pub(crate) fn insert(&self, future: Pin<Box<dyn Future<Output = ()>>>) -> TaskId {
        let mut slots = self.slots.borrow_mut();
        let index = match self.free.borrow_mut().pop() {
            Some(i) => i,
            None => {
                slots.push(Slot { gen: 0, task: None });
                (slots.len() - 1) as u32
            }
        };
        let slot = &mut slots[index as usize];
        slot.gen = slot.gen.wrapping_add(1);
        let id = u64::from(slot.gen) << 32 | u64::from(index);
        let waker = Waker::from(Arc::new(TaskWaker {
            id,
            remote: Arc::clone(&self.remote),
        }));
        slot.task = Some(Rc::new(TaskCell {
            id,
            future: RefCell::new(Some(future)),
            waker,
            queued: Cell::new(true),
            aborted: Cell::new(false),
        }));
        self.queue.borrow_mut().push_back(id);
        id
    }

    fn task(&self, id: TaskId) -> Option<Rc<TaskCell>> {
        let slots = self.slots.borrow();
        let slot = slots.get((id & 0xFFFF_FFFF) as usize)?;
        if u64::from(slot.gen) != id >> 32 {
            return None;
        }
        slot.task.clone()
    }

    fn remove(&self, id: TaskId) {
        let index = (id & 0xFFFF_FFFF) as u32;
        let taken = {
            let mut slots = self.slots.borrow_mut();
            match slots.get_mut(index as usize) {
                Some(slot) if u64::from(slot.gen) == id >> 32 => slot.task.take(),
                _ => None,
            }
        };
        if let Some(task) = taken {
            self.free.borrow_mut().push(index);
            // Dropped outside the borrow: a future's drop may touch the loop.
            drop(task.future.borrow_mut().take());
        }
    }

    fn run_task(&self, id: TaskId) {
        let Some(task) = self.task(id) else {
            return;
        };
        task.queued.set(false);
        let Some(mut future) = task.future.borrow_mut().take() else {
            return;
        };
        self.current.set(id);
        count_poll();
        let done = future
            .as_mut()
            .poll(&mut Context::from_waker(&task.waker))
            .is_ready();
        self.current.set(MAIN);
        if done || task.aborted.get() {
            drop(future);
            self.remove(task.id);
        } else {
            *task.future.borrow_mut() = Some(future);
        }
    }

    pub(crate) fn abort(&self, id: TaskId) {
        let Some(task) = self.task(id) else {
            return;
        };
        if task.future.borrow().is_some() {
            self.remove(id);
        } else {
            // Being polled right now (it aborts itself): dropped when its poll returns.
            task.aborted.set(true);
        }
    }

    /// Waits for I/O (up to the next timer when `block`, not at all otherwise) and queues what
    /// became ready.
    fn turn(&self, block: bool) {
        let timeout_ms = if block {
            match self.timers.borrow().peek() {
                Some(Reverse((at, _, _))) => {
                    let left = at.saturating_duration_since(Instant::now());
                    // Round up: waking a little early would only mean another turn.
                    let ms = left.as_nanos().div_ceil(1_000_000);
                    i32::try_from(ms).unwrap_or(i32::MAX)
                }
                None => -1,
            }
        } else {
            0
        };
        let mut events = self.events.borrow_mut();
        events.clear();
        // SAFETY: the buffer has room for EVENTS entries; the kernel fills the first `n`.
        let n = unsafe {
            libc::epoll_wait(
                self.epoll.as_raw_fd(),
                events.as_mut_ptr(),
                EVENTS as i32,
                timeout_ms,
            )
        };
        if n > 0 {
            // SAFETY: epoll_wait initialised `n` entries.
            unsafe { events.set_len(n as usize) };
        }
        for ev in events.iter() {
            let (token, flags) = (ev.u64, ev.events);
            if token == REMOTE_TOKEN {
                self.take_remote();
                continue;
            }
            let ready = u8::from(flags & EV_READ != 0)
                | u8::from(flags & EV_WRITE != 0) << 1
                | u8::from(flags & EV_CLOSED != 0) << 2;
            let waiters = crate::io::mark_ready(self, token, ready);
            for w in waiters.into_iter().flatten() {
                self.schedule(w);
            }
        }
        drop(events);
        self.fire_timers();
    }

    fn fire_timers(&self) {
        if self.timers.borrow().is_empty() {
            return;
        }
        let now = Instant::now();
        loop {
            let due = {
                let mut timers = self.timers.borrow_mut();
                match timers.peek() {
                    Some(Reverse((at, _, _))) if *at <= now => timers.pop().map(|t| t.0 .2),
                    _ => None,
                }
            };
            match due {
                Some(id) => self.schedule(id),
                None => break,
            }
        }
    }

    fn take_remote(&self) {
        let mut buf = 0u64;
        // SAFETY: reads 8 bytes into a live u64 from an eventfd we own (resets its counter).
        unsafe {
            libc::read(
                self.remote.eventfd.as_raw_fd(),
                (&mut buf as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        self.remote.signalled.store(false, Ordering::Release);
        let woken = match self.remote.queue.lock() {
            Ok(mut q) => std::mem::take(&mut *q),
            Err(_) => Vec::new(),
        };
        for id in woken {
            self.schedule(id);
        }
    }

    fn is_idle(&self) -> bool {
        !self.main_woken.get() && self.queue.borrow().is_empty()
    }

    /// Drops every task left, while the loop is still installed (their drops may deregister
    /// sockets).
    fn drain(&self) {
        let ids: Vec<TaskId> = self
            .slots
            .borrow()
            .iter()
            .filter_map(|s| s.task.as_ref().map(|t| t.id))
            .collect();
        for id in ids {
            self.remove(id);
        }
    }
}

/// Installs a loop on this thread for as long as it lives.
struct Installed(Rc<Core>);

impl Drop for Installed {
    fn drop(&mut self) {
        self.0.drain();
        CORE.with(|c| c.borrow_mut().take());
        LOOP_ID.with(|l| l.set(0));
    }
}

/// Runs `future` to completion on this thread's new loop, with every task it spawns; tasks
/// still running when it completes are dropped. Fails only when the loop cannot be made (no
/// file descriptors left), or when this thread runs a loop already.
pub fn block_on<F: Future>(future: F) -> io::Result<F::Output> {
    if in_loop() {
        return Err(io::Error::other("evloop: this thread runs a loop already"));
    }
    let core = Rc::new(Core::new()?);
    LOOP_ID.with(|l| l.set(core.remote.loop_id));
    CORE.with(|c| *c.borrow_mut() = Some(Rc::clone(&core)));
    let _installed = Installed(Rc::clone(&core));
    let waker = Waker::from(Arc::new(TaskWaker {
        id: MAIN,
        remote: Arc::clone(&core.remote),
    }));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if core.main_woken.replace(false) {
            core.current.set(MAIN);
            count_poll();
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return Ok(out);
            }
        }
        for _ in 0..BATCH {
            let next = core.queue.borrow_mut().pop_front();
            match next {
                Some(id) => core.run_task(id),
                None => break,
            }
        }
        core.turn(core.is_idle());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{spawn, JoinError};
    use std::time::Duration;

    #[test]
    fn tasks_run_and_their_outputs_and_panics_come_back() {
        let (a, b, c) = block_on(async {
            let a = spawn(async { 1 });
            let b = spawn(async {
                if std::hint::black_box(true) {
                    panic!("boom");
                }
                2
            });
            let c = spawn(async {
                crate::sleep(Duration::from_millis(5)).await;
                3
            });
            (a.await, b.await, c.await)
        })
        .unwrap();
        assert_eq!(a.unwrap(), 1);
        let p = b.unwrap_err().into_panic();
        assert_eq!(p.downcast_ref::<&str>(), Some(&"boom"));
        assert_eq!(c.unwrap(), 3);
    }

    #[test]
    fn an_aborted_task_is_dropped_and_its_handle_says_so() {
        let r = block_on(async {
            let h = spawn(std::future::pending::<()>());
            crate::sleep(Duration::from_millis(1)).await;
            h.abort();
            h.await
        })
        .unwrap();
        assert!(matches!(r, Err(JoinError::Cancelled)));
    }

    #[test]
    fn a_wake_from_another_thread_reaches_the_loop() {
        let got = block_on(async {
            let (tx, rx) = std::sync::mpsc::channel::<Waker>();
            let flag = Arc::new(AtomicBool::new(false));
            let f2 = Arc::clone(&flag);
            let t = std::thread::spawn(move || {
                let w = rx.recv().unwrap();
                std::thread::sleep(Duration::from_millis(20));
                f2.store(true, Ordering::SeqCst);
                w.wake();
            });
            let mut sent = Some(tx);
            std::future::poll_fn(|cx| {
                if flag.load(Ordering::SeqCst) {
                    return Poll::Ready(());
                }
                if let Some(tx) = sent.take() {
                    tx.send(cx.waker().clone()).unwrap();
                }
                Poll::Pending
            })
            .await;
            t.join().unwrap();
            true
        })
        .unwrap();
        assert!(got);
    }

    #[test]
    fn a_second_loop_on_one_thread_is_refused() {
        let inner = block_on(async { block_on(async {}).is_err() }).unwrap();
        assert!(inner);
        assert!(!in_loop());
    }
}
