//! The io_uring model: one ring for all clients on one thread. A transaction is a Send SQE
//! linked (IOSQE_IO_LINK; `--link 0` unlinks) to a Recv SQE, the Send posting no CQE when it
//! succeeds (IOSQE_CQE_SKIP_SUCCESS; `--skip-send-cqe 0` keeps it); a Recv that ends short of
//! ReadyForQuery queues another Recv. Each loop iteration is ONE `submit_and_wait(1)`: it submits every client's
//! pending SQEs and reaps whatever has completed, so at N clients one syscall can carry many
//! sends and receives. No SQPOLL (it would burn one of the two cores).
//!
//! Flavours: `uring` (default setup), `uring-coop` (COOP_TASKRUN + SINGLE_ISSUER: completions
//! are not forced on the task by an IPI), `uring-defer` (DEFER_TASKRUN + SINGLE_ISSUER:
//! completion work runs only inside our io_uring_enter).

use crate::pg::{self, Progress, Scanner};
use crate::{Calls, Config, Outcome, Rng, Window};
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Instant;

const RECV_BUF: usize = 8192;

/// A client's buffers: their addresses are handed to the kernel, so they are allocated once and
/// never grown while an SQE may point at them.
struct Client {
    fd: i32,
    out: Vec<u8>,
    inbuf: Box<[u8]>,
    scanner: Scanner,
    /// SQEs of this client whose CQE has not arrived yet.
    pending: u32,
}

fn build(flavour: &str, entries: u32) -> Result<IoUring, String> {
    let mut b = IoUring::builder();
    match flavour {
        "uring" => {}
        "uring-coop" => {
            b.setup_coop_taskrun().setup_single_issuer();
        }
        "uring-defer" => {
            b.setup_defer_taskrun().setup_single_issuer();
        }
        other => return Err(format!("unknown io_uring flavour {other}")),
    }
    b.setup_cqsize(entries * 2)
        .build(entries)
        .map_err(|e| format!("io_uring setup ({flavour}): {e}"))
}

/// user_data: client index in the high bits, 0 for Send and 1 for Recv in the low bit.
fn tag(i: usize, recv: bool) -> u64 {
    (i as u64) << 1 | recv as u64
}

fn recv_sqe(i: usize, c: &mut Client) -> squeue::Entry {
    opcode::Recv::new(types::Fd(c.fd), c.inbuf.as_mut_ptr(), RECV_BUF as u32)
        .build()
        .user_data(tag(i, true))
}

/// Flags of every Send SQE, and how many CQEs a transaction's SQEs post.
#[derive(Clone, Copy)]
struct SendFlags {
    flags: squeue::Flags,
    cqes: u32,
}

impl SendFlags {
    fn new(c: &Config) -> SendFlags {
        let mut flags = squeue::Flags::empty();
        if c.link {
            flags |= squeue::Flags::IO_LINK;
        }
        if c.skip_send_cqe {
            flags |= squeue::Flags::SKIP_SUCCESS;
        }
        let cqes = if c.skip_send_cqe { 1 } else { 2 };
        SendFlags { flags, cqes }
    }
}

/// Writes the next transaction into the client's buffer and returns its linked Send → Recv.
fn txn_sqes(i: usize, c: &mut Client, aid: u64, sf: SendFlags) -> [squeue::Entry; 2] {
    c.out.clear();
    pg::transaction(&mut c.out, aid);
    assert!(c.out.len() <= c.out.capacity(), "send buffer must not move");
    let send = opcode::Send::new(types::Fd(c.fd), c.out.as_ptr(), c.out.len() as u32)
        .flags(libc::MSG_NOSIGNAL)
        .build()
        .flags(sf.flags)
        .user_data(tag(i, false));
    c.pending += sf.cqes;
    [send, recv_sqe(i, c)]
}

pub fn run(
    c: &Config,
    socks: &[UnixStream],
    rng: &mut Rng,
    flavour: &str,
) -> Result<Outcome, String> {
    // At most 2 SQEs per client are ever queued, so the SQ never fills.
    let entries = (2 * socks.len()).next_power_of_two().max(8) as u32;
    let mut ring = build(flavour, entries)?;
    let sf = SendFlags::new(c);
    let mut clients: Vec<Client> = socks
        .iter()
        .map(|s| Client {
            fd: s.as_raw_fd(),
            out: Vec::with_capacity(128),
            inbuf: vec![0u8; RECV_BUF].into_boxed_slice(),
            scanner: Scanner::default(),
            pending: 0,
        })
        .collect();
    let mut calls = Calls {
        ring: true,
        ..Calls::default()
    };
    let mut txns = 0u64;
    let window = Window::open(c.seconds);
    let mut result = None;
    let (submitter, mut sq, mut cq) = ring.split();

    for (i, cl) in clients.iter_mut().enumerate() {
        let sqes = txn_sqes(i, cl, rng.aid(c.scale), sf);
        // SAFETY: the buffers the SQEs point at live in `clients` until every CQE is reaped.
        unsafe { sq.push_multiple(&sqes) }.map_err(|_| "submission queue full".to_string())?;
    }
    sq.sync();
    let mut in_flight: u32 = clients.iter().map(|c| c.pending).sum();
    while in_flight > 0 {
        match submitter.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => return Err(format!("io_uring_enter: {e}")),
        }
        calls.enter += 1;
        let stopping = result.is_some() || Instant::now() >= window.deadline;
        if stopping && result.is_none() {
            result = Some(window.close(txns, calls));
        }
        // Sees how far the kernel consumed the SQ (the split queue caches its head) and what
        // completed.
        sq.sync();
        cq.sync();
        if cq.is_empty() {
            calls.empty_waits += 1;
        }
        for cqe in &mut cq {
            let i = (cqe.user_data() >> 1) as usize;
            let is_recv = cqe.user_data() & 1 == 1;
            let res = cqe.result();
            let cl = &mut clients[i];
            cl.pending -= 1;
            in_flight -= 1;
            if !is_recv {
                calls.send += 1;
                if res < 0 {
                    return Err(format!("send: {}", std::io::Error::from_raw_os_error(-res)));
                }
                if res as usize != cl.out.len() {
                    return Err(format!("short send: {res} of {} bytes", cl.out.len()));
                }
                continue;
            }
            calls.recv += 1;
            if res < 0 {
                return Err(format!("recv: {}", std::io::Error::from_raw_os_error(-res)));
            }
            if res == 0 {
                return Err("server closed a connection".into());
            }
            let before = cl.pending;
            let progress = cl.scanner.feed(&cl.inbuf[..res as usize])?;
            let next: &[squeue::Entry] = match progress {
                Progress::More => {
                    cl.pending += 1;
                    &[recv_sqe(i, cl)]
                }
                Progress::Ready if stopping => &[],
                Progress::Ready => {
                    txns += 1;
                    &txn_sqes(i, cl, rng.aid(c.scale), sf)
                }
            };
            in_flight += cl.pending - before;
            // SAFETY: as above; each client has at most 2 SQEs queued, within the SQ size.
            unsafe { sq.push_multiple(next) }.map_err(|_| "submission queue full".to_string())?;
        }
        // Publishes the new SQ tail, and the CQ head: until the kernel sees the reaped CQEs
        // consumed, it counts them as ready and the next wait returns at once, empty.
        sq.sync();
        cq.sync();
    }
    Ok(result.expect("the loop ends only after the window closed"))
}
