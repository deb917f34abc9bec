//! The epoll model, as tidebench's driver does it today: nonblocking sockets, one epoll
//! instance registered for read readiness (level-triggered), send() straight from the loop, one
//! recv() per readiness event until ReadyForQuery. Per transaction at 1 client: 1 send +
//! 1 epoll_wait + 1 recv.

use crate::pg::{self, Progress, Scanner};
use crate::{Calls, Config, Outcome, Rng, Window};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Instant;

fn send_all(fd: i32, buf: &[u8], calls: &mut Calls) -> Result<(), String> {
    // SAFETY: buf is a live slice; fd is an open socket.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
    calls.send += 1;
    if n < 0 {
        return Err(format!("send: {}", std::io::Error::last_os_error()));
    }
    if n as usize != buf.len() {
        // A ~50-byte request into an idle Unix socket never comes out short; say so if it does.
        return Err(format!("short send: {n} of {} bytes", buf.len()));
    }
    Ok(())
}

pub fn run(c: &Config, socks: &[UnixStream], rng: &mut Rng) -> Result<Outcome, String> {
    // SAFETY: plain syscalls on descriptors this function owns or borrows.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(format!(
            "epoll_create1: {}",
            std::io::Error::last_os_error()
        ));
    }
    for (i, s) in socks.iter().enumerate() {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) } < 0 {
            return Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()));
        }
    }
    let mut scanners: Vec<Scanner> = socks.iter().map(|_| Scanner::default()).collect();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; socks.len()];
    let mut buf = vec![0u8; 8192];
    let mut out = Vec::with_capacity(64);
    let mut calls = Calls::default();
    let mut txns = 0u64;
    let mut busy = socks.len();
    let window = Window::open(c.seconds);
    let mut result = None;

    for s in socks {
        out.clear();
        pg::transaction(&mut out, rng.aid(c.scale));
        send_all(s.as_raw_fd(), &out, &mut calls)?;
    }
    while busy > 0 {
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 1000) };
        calls.epoll_wait += 1;
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("epoll_wait: {e}"));
        }
        if n == 0 {
            calls.empty_waits += 1;
        }
        let stopping = result.is_some() || Instant::now() >= window.deadline;
        if stopping && result.is_none() {
            result = Some(window.close(txns, calls));
        }
        for ev in &events[..n as usize] {
            let i = ev.u64 as usize;
            let fd = socks[i].as_raw_fd();
            let got = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
            calls.recv += 1;
            if got < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::WouldBlock {
                    continue;
                }
                return Err(format!("recv: {e}"));
            }
            if got == 0 {
                return Err("server closed a connection".into());
            }
            if scanners[i].feed(&buf[..got as usize])? == Progress::More {
                continue;
            }
            if stopping {
                busy -= 1;
                let mut gone = libc::epoll_event { events: 0, u64: 0 };
                unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_DEL, fd, &mut gone) };
                continue;
            }
            txns += 1;
            out.clear();
            pg::transaction(&mut out, rng.aid(c.scale));
            send_all(fd, &out, &mut calls)?;
        }
    }
    unsafe { libc::close(ep) };
    Ok(result.expect("the loop ends only after the window closed"))
}
