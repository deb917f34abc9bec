//! Sockets on the loop: a [`Registration`] owns a non-blocking descriptor registered with the
//! loop's epoll instance, edge-triggered. Readiness is a flag per direction; a future that
//! finds the flag clear records the task being polled as the direction's waiter, and the
//! loop queues that task when epoll reports the edge. The owner clears a flag when a read or
//! write ends short or with EAGAIN (the edge has been consumed). A hang-up or an error is
//! sticky: it arrives as one edge, often with the last data (a FATAL message, then EOF), so a
//! reader that consumed the data must still find the socket readable to read the EOF.
//!
//! A registration listens for reading only once connected: with write interest too, every
//! drain of a request by the server would wake the thread a second time per statement.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::rc::Rc;
use std::task::Poll;

use crate::executor::{core, Core, TaskId, NOBODY};

/// epoll flags that make a socket readable for us: data, the peer's hang-up, or an error
/// (the next read reports which).
pub(crate) const EV_READ: u32 =
    (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
/// epoll flags that make a socket writable for us (or report why it cannot be).
pub(crate) const EV_WRITE: u32 = (libc::EPOLLOUT | libc::EPOLLHUP | libc::EPOLLERR) as u32;
/// epoll flags that say the socket will stay readable for good: the peer hung up, or it failed.
pub(crate) const EV_CLOSED: u32 = (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;

const READ_INTEREST: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
const BOTH_INTEREST: u32 = READ_INTEREST | libc::EPOLLOUT as u32;

/// One registered descriptor's state in the loop.
pub(crate) struct Source {
    gen: u32,
    readable: bool,
    writable: bool,
    /// Hung up or failed: readable from now on, whatever a read consumed.
    closed: bool,
    reader: TaskId,
    writer: TaskId,
}

/// Sets what epoll reported (`ready`: bit 0 readable, bit 1 writable, bit 2 hung up or failed)
/// on the source of `token`
/// and returns the waiters to queue; stale tokens (a source since freed) are ignored.
pub(crate) fn mark_ready(core: &Core, token: u64, ready: u8) -> [Option<TaskId>; 2] {
    let mut sources = core.sources.borrow_mut();
    let Some(s) = sources.get_mut((token & 0xFFFF_FFFF) as usize) else {
        return [None, None];
    };
    if u64::from(s.gen) != token >> 32 {
        return [None, None];
    }
    let mut woken = [None, None];
    if ready & 4 != 0 {
        s.closed = true;
    }
    if ready & 1 != 0 {
        s.readable = true;
        woken[0] = Some(std::mem::replace(&mut s.reader, NOBODY));
    }
    if ready & 2 != 0 {
        s.writable = true;
        woken[1] = Some(std::mem::replace(&mut s.writer, NOBODY));
    }
    woken
}

/// A non-blocking descriptor registered with this thread's loop; closed (and deregistered)
/// when dropped. Not `Send`: it belongs to the loop that registered it.
pub struct Registration {
    fd: OwnedFd,
    index: usize,
    token: u64,
    core: Rc<Core>,
}

impl Registration {
    /// Registers `fd` (which must be non-blocking) for read readiness, and for write readiness
    /// too when `writable` (a socket still connecting). Fails outside a loop.
    pub fn new(fd: OwnedFd, writable: bool) -> io::Result<Registration> {
        let core = core().ok_or_else(|| {
            io::Error::other("evloop: a socket was registered outside evloop::block_on")
        })?;
        let index = {
            let mut sources = core.sources.borrow_mut();
            match core.free_sources.borrow_mut().pop() {
                Some(i) => i,
                None => {
                    sources.push(Source {
                        gen: 0,
                        readable: false,
                        writable: false,
                        closed: false,
                        reader: NOBODY,
                        writer: NOBODY,
                    });
                    sources.len() - 1
                }
            }
        };
        let token = {
            let mut sources = core.sources.borrow_mut();
            let s = &mut sources[index];
            s.gen = s.gen.wrapping_add(1);
            s.readable = false;
            s.writable = false;
            s.closed = false;
            s.reader = NOBODY;
            s.writer = NOBODY;
            u64::from(s.gen) << 32 | index as u64
        };
        let interest = if writable {
            BOTH_INTEREST
        } else {
            READ_INTEREST
        };
        if let Err(e) = ctl(&core, libc::EPOLL_CTL_ADD, fd.as_raw_fd(), interest, token) {
            core.free_sources.borrow_mut().push(index);
            return Err(e);
        }
        Ok(Registration {
            fd,
            index,
            token,
            core,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Ready when the descriptor is readable (or hung up, or failed); otherwise the task being
    /// polled waits for the next edge.
    #[inline]
    pub fn poll_readable(&self) -> Poll<()> {
        let mut sources = self.core.sources.borrow_mut();
        let s = &mut sources[self.index];
        if s.readable || s.closed {
            Poll::Ready(())
        } else {
            s.reader = self.core.current();
            Poll::Pending
        }
    }

    /// Resolves once the descriptor is readable.
    pub async fn readable(&self) {
        std::future::poll_fn(|_| self.poll_readable()).await;
    }

    /// A read came back short or with EAGAIN: the edge is used up.
    #[inline]
    pub fn clear_readable(&self) {
        self.core.sources.borrow_mut()[self.index].readable = false;
    }

    /// Resolves once the descriptor is writable (registered with `writable`).
    pub async fn writable(&self) {
        std::future::poll_fn(|_| {
            let mut sources = self.core.sources.borrow_mut();
            let s = &mut sources[self.index];
            if s.writable {
                Poll::Ready(())
            } else {
                s.writer = self.core.current();
                Poll::Pending
            }
        })
        .await;
    }

    /// Listens for reading only from now on (a socket that has connected).
    pub fn read_only(&self) -> io::Result<()> {
        self.core.sources.borrow_mut()[self.index].writable = false;
        ctl(
            &self.core,
            libc::EPOLL_CTL_MOD,
            self.fd.as_raw_fd(),
            READ_INTEREST,
            self.token,
        )
    }
}

impl AsFd for Registration {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Failure means the descriptor is gone from the set already; closing it follows.
        let _ = ctl(&self.core, libc::EPOLL_CTL_DEL, self.fd.as_raw_fd(), 0, 0);
        {
            let mut sources = self.core.sources.borrow_mut();
            let s = &mut sources[self.index];
            // A new generation: events still queued for the old descriptor are ignored.
            s.gen = s.gen.wrapping_add(1);
            s.reader = NOBODY;
            s.writer = NOBODY;
        }
        self.core.free_sources.borrow_mut().push(self.index);
    }
}

fn ctl(core: &Core, op: i32, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event { events, u64: token };
    // SAFETY: `ev` is a live epoll_event; `fd` is a descriptor the caller owns.
    if unsafe { libc::epoll_ctl(core.epoll_fd(), op, fd, &mut ev) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;
    use std::time::Duration;

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
    fn a_reader_waits_for_the_writer() {
        let got = crate::block_on(async {
            let (r, w) = pipe();
            let reg = Registration::new(r, false).unwrap();
            let writer = crate::spawn(async move {
                crate::sleep(Duration::from_millis(10)).await;
                // SAFETY: writes one byte from a live buffer to the pipe's write end.
                unsafe { libc::write(w.as_raw_fd(), b"x".as_ptr().cast(), 1) };
                w
            });
            reg.readable().await;
            let mut b = [0u8; 4];
            // SAFETY: reads at most 4 bytes into a live buffer.
            let n = unsafe { libc::read(reg.fd(), b.as_mut_ptr().cast(), 4) };
            reg.clear_readable();
            drop(writer.await);
            (n, b[0])
        })
        .unwrap();
        assert_eq!(got, (1, b'x'));
    }

    #[test]
    fn a_hang_up_stays_readable_after_the_last_data_is_read() {
        let got = crate::block_on(async {
            let (r, w) = pipe();
            let reg = Registration::new(r, false).unwrap();
            // Data and the hang-up arrive together, as a FATAL message and EOF do.
            // SAFETY: writes one byte from a live buffer to the pipe's write end.
            unsafe { libc::write(w.as_raw_fd(), b"x".as_ptr().cast(), 1) };
            drop(w);
            crate::sleep(Duration::from_millis(5)).await;
            let mut b = [0u8; 4];
            reg.readable().await;
            // SAFETY: reads at most 4 bytes into a live buffer.
            let first = unsafe { libc::read(reg.fd(), b.as_mut_ptr().cast(), 4) };
            reg.clear_readable();
            // A reader that cleared the flag must still see the EOF, without another edge.
            crate::timeout(Duration::from_secs(2), reg.readable())
                .await
                .expect("readable after the hang-up");
            // SAFETY: as above.
            let eof = unsafe { libc::read(reg.fd(), b.as_mut_ptr().cast(), 4) };
            (first, eof)
        })
        .unwrap();
        assert_eq!(got, (1, 0));
    }
}
