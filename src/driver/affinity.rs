//! Pinning driver threads to CPUs, one each, as `taskset` would pin a pgbench thread; only on
//! request (`--pin-threads true`).
//!
//! Why (issue 25): on the 2-core reference machine, select-only at 4 clients is multimodal for
//! every driver, pgbench included: identical runs give about 85k, 110k or 155k tps, by where
//! the scheduler happens to put the driver threads and the server backends they wake (the
//! fast mode costs the client about 2.8 µs of CPU per transaction, the slow one 6). Pinned,
//! the driver landed in the faster modes more often: 6 alternating rounds of 5 s gave a median
//! of 110k tps pinned against 85k unpinned (2 of 6 unpinned runs were fast, 4 of 6 pinned
//! ones). At 1 client it made no difference. But where transactions wait on each other's locks
//! it cost: TPC-C at 4 clients took 31-40 µs of client CPU per transaction pinned against
//! 19-21 unpinned (3 rounds each, the sys part tripled), tpcb at 16 clients 34-37 against 33.
//! So it is off by default. Threads are pinned only
//! when the process may run on at least as many CPUs as there are threads (pinning two threads
//! to one CPU would only take the scheduler's balancing away), and only inside the CPU set the
//! process was given (a cgroup cpuset, `taskset`), in that set's order.

use std::io;

/// The CPUs to pin `threads` driver threads to, one each: the first `threads` CPUs this
/// process may run on; `None` when it may use fewer, or the set cannot be read.
pub fn one_cpu_each(threads: usize) -> Option<Vec<usize>> {
    let allowed = allowed_cpus().ok()?;
    (threads >= 1 && allowed.len() >= threads).then(|| allowed[..threads].to_vec())
}

/// The CPUs this process may run on, in ascending order.
fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the size matches the set passed; pid 0 is the calling thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads a bit of a valid set, for indices below the set's size.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes one bit inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no such CPU"));
    }
    // SAFETY: `cpu` is below the set's size (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: the size matches the set passed; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_get_distinct_allowed_cpus_or_none() {
        let allowed = allowed_cpus().unwrap();
        assert!(!allowed.is_empty());
        let one = one_cpu_each(1).unwrap();
        assert_eq!(one, [allowed[0]]);
        let all = one_cpu_each(allowed.len()).unwrap();
        assert_eq!(all, allowed);
        assert_eq!(one_cpu_each(allowed.len() + 1), None);
        assert_eq!(one_cpu_each(0), None);
    }

    #[test]
    fn a_thread_pinned_runs_only_there() {
        let cpu = allowed_cpus().unwrap()[0];
        let seen = std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            allowed_cpus().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(seen, [cpu]);
        assert!(pin_current_thread(1 << 20).is_err());
    }
}
