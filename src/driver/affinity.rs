//! Pinning driver threads to CPUs, one each, as `taskset` would pin a pgbench thread.
//!
//! Why (issue 25): on the 2-core reference machine, select-only at 4 clients was bimodal for
//! every driver, pgbench included: identical runs gave about 100k or 165k tps, by where the
//! scheduler happened to put the driver threads and the server backends they wake. With each
//! driver thread pinned to a CPU of its own, 5 runs out of 5 landed in the fast mode (about
//! 3.0 µs of client CPU per transaction against 5.8 in the slow one); at 1 client pinning gave
//! 5-10 % more tps, at 16 and 64 it changed nothing beyond the noise. Threads are pinned only
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
