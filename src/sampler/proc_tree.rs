//! The process tree under a postmaster: CPU ticks, major faults and resident memory summed
//! over the postmaster and its backends from `/proc`, for instances without a cgroup (CPU,
//! faults) and for every instance's `rss_bytes` (see [`super::cgroup`] for why `status` and not
//! `smaps_rollup`).
//!
//! A walk reads two small files per process, about 20 µs each on this 2-core VM: with 40
//! targets and 4 clients (160 backends) one walk took 3.5 ms of the sampler's CPU every second
//! (issue 16). [`WalkPace`] spaces the walks of a tree of more than [`ALWAYS_WALK`] processes
//! so they average under [`WALK_BUDGET`] per round; the rounds between report no tree rows
//! rather than old ones.

use std::time::{Duration, Instant};

/// One process's line of `/proc/<pid>/stat`, the fields used here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStat {
    pub ppid: u32,
    /// utime + stime, clock ticks.
    pub ticks: u64,
    /// cutime + cstime: reaped children, clock ticks.
    pub child_ticks: u64,
    pub majflt: u64,
    pub cmajflt: u64,
    /// Resident pages (all kinds: used when `status` cannot be read).
    pub rss_pages: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) may hold spaces and parentheses, so
/// fields are counted from the last `)`.
pub fn parse_proc_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state): field n is f[n - 3].
    let num = |n: usize| -> Option<u64> { f.get(n - 3)?.parse().ok() };
    Some(ProcStat {
        ppid: u32::try_from(num(4)?).ok()?,
        majflt: num(12)?,
        cmajflt: num(13)?,
        ticks: num(14)? + num(15)?,
        child_ticks: num(16)? + num(17)?,
        rss_pages: num(24)?,
    })
}

/// A process's resident memory by kind, from `/proc/<pid>/status`, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resident {
    /// Private pages (`RssAnon`).
    pub anon: u64,
    /// File-backed pages: the binary, libraries (`RssFile`).
    pub file: u64,
    /// Shared memory: PostgreSQL's shared buffers (`RssShmem`).
    pub shmem: u64,
}

/// `RssAnon`, `RssFile` and `RssShmem` of `/proc/<pid>/status`; `None` when one is missing
/// (kernels before 4.5).
pub fn parse_status(text: &str) -> Option<Resident> {
    let kb = |key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .split_whitespace()
            .next()?
            .parse::<u64>()
            .ok()?
            .checked_mul(1024)
    };
    Some(Resident {
        anon: kb("RssAnon:")?,
        file: kb("RssFile:")?,
        shmem: kb("RssShmem:")?,
    })
}

/// What the tree of processes under a postmaster adds up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeUsage {
    pub ticks: u64,
    pub majflt: u64,
    pub rss_bytes: u64,
    /// Processes read: the postmaster and its children.
    pub processes: u32,
}

/// Sums the postmaster `root` and its direct children (PostgreSQL forks every backend and
/// auxiliary process from the postmaster). `resident` gives a process's memory by kind when
/// readable; a process without it counts its whole RSS as private.
pub fn tree_usage(
    procs: &[(u32, ProcStat)],
    root: u32,
    page_size: u64,
    resident: impl Fn(u32) -> Option<Resident>,
) -> Option<TreeUsage> {
    let (_, top) = procs.iter().find(|(pid, _)| *pid == root)?;
    let mut u = TreeUsage {
        ticks: top.ticks + top.child_ticks,
        majflt: top.majflt + top.cmajflt,
        rss_bytes: 0,
        processes: 0,
    };
    let (mut anon, mut file, mut shmem) = (0, 0, 0);
    let tree = std::iter::once((root, top)).chain(
        procs
            .iter()
            .filter(|(_, p)| p.ppid == root)
            .map(|(pid, p)| (*pid, p)),
    );
    for (pid, p) in tree {
        u.processes += 1;
        if pid != root {
            u.ticks += p.ticks;
            u.majflt += p.majflt;
        }
        let r = resident(pid).unwrap_or(Resident {
            anon: p.rss_pages * page_size,
            ..Resident::default()
        });
        anon += r.anon;
        file = file.max(r.file);
        shmem = shmem.max(r.shmem);
    }
    u.rss_bytes = anon + file + shmem;
    Some(u)
}

fn read_stat(pid: u32) -> Option<(u32, ProcStat)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some((pid, parse_proc_stat(&text)?))
}

/// The pids of `root`'s children: from `/proc/<root>/task/<root>/children` where the kernel
/// has it (one read), else by reading every process's stat. Sorted.
fn child_pids(root: u32) -> Vec<u32> {
    let mut pids: Vec<u32> =
        match std::fs::read_to_string(format!("/proc/{root}/task/{root}/children")) {
            Ok(text) => text
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect(),
            Err(_) => std::fs::read_dir("/proc")
                .map(|dir| {
                    dir.filter_map(|e| read_stat(e.ok()?.file_name().to_str()?.parse().ok()?))
                        .filter(|(_, s)| s.ppid == root)
                        .map(|(pid, _)| pid)
                        .collect()
                })
                .unwrap_or_default(),
        };
    pids.sort_unstable();
    pids
}

/// How often a tree walk is retried while backends come and go.
const TREE_TRIES: usize = 3;

/// The tree's usage, read while no process joined or left it; `None` when it kept changing.
///
/// A walk is a series of reads, and PostgreSQL forks and reaps backends all the time (all at
/// once when a run's clients disconnect). A backend reaped between the reads moves its CPU
/// time into the postmaster's `cutime` after or before it was counted (counted twice or not
/// at all, so the next round's rate jumps), and one that exits hands its share of shared
/// memory to the others' `Pss`, so the sum grows far beyond what the instance holds. The walk
/// is kept only when the children before and after it are the same processes.
pub fn stable_tree_usage(
    root: u32,
    page_size: u64,
    resident: impl Fn(u32) -> Option<Resident>,
) -> Option<TreeUsage> {
    for _ in 0..TREE_TRIES {
        let before = child_pids(root);
        let procs: Vec<(u32, ProcStat)> = std::iter::once(root)
            .chain(before.iter().copied())
            .filter_map(read_stat)
            .collect();
        let usage = tree_usage(&procs, root, page_size, &resident);
        if procs.len() == before.len() + 1 && child_pids(root) == before {
            return usage;
        }
    }
    None
}

pub fn read_resident(pid: u32) -> Option<Resident> {
    parse_status(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// The tree walk's average cost a round may carry.
pub const WALK_BUDGET: Duration = Duration::from_micros(500);
/// Trees up to this many processes are walked every round, whatever a walk cost (a loaded
/// host makes a small walk slow now and then; its rows should not thin out for that).
pub const ALWAYS_WALK: u32 = 64;
/// The most rounds between two walks: a large tree is still read every 10 s at 1 s sampling.
pub const MAX_WALK_EVERY: u32 = 10;

/// Which rounds walk the tree: every round while walks are cheap, every n-th as it grows.
#[derive(Debug, Clone, Copy)]
pub struct WalkPace {
    every: u32,
    since: u32,
}

impl Default for WalkPace {
    fn default() -> WalkPace {
        WalkPace { every: 1, since: 0 }
    }
}

impl WalkPace {
    /// Whether this round walks (counts the round either way).
    pub fn due(&mut self) -> bool {
        self.since += 1;
        if self.since >= self.every {
            self.since = 0;
            true
        } else {
            false
        }
    }

    /// Sets the spacing from what the last walk of `processes` cost.
    pub fn walked(&mut self, took: Duration, processes: u32) {
        if processes <= ALWAYS_WALK {
            self.every = 1;
            return;
        }
        let n = took.as_nanos().div_ceil(WALK_BUDGET.as_nanos().max(1));
        self.every = u32::try_from(n)
            .unwrap_or(u32::MAX)
            .clamp(1, MAX_WALK_EVERY);
    }

    /// Walks the tree under `root` when due; `None` in the rounds between.
    pub fn walk(&mut self, root: Option<u32>, page_size: u64) -> Option<TreeUsage> {
        if !self.due() {
            return None;
        }
        let began = Instant::now();
        let tree = root.and_then(|pid| stable_tree_usage(pid, page_size, read_resident));
        self.walked(began.elapsed(), tree.map_or(0, |t| t.processes));
        tree
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat_line(pid: u32, ppid: u32, utime: u64, stime: u64, cutime: u64, rss: u64) -> String {
        format!(
            "{pid} (postgres: a (b) c) S {ppid} 1 1 0 -1 4194560 100 0 3 1 {utime} {stime} \
             {cutime} 0 20 0 1 0 1000 100000 {rss} 18446744073709551615 0 0 0"
        )
    }

    #[test]
    fn parses_proc_stat_with_parentheses_in_the_name() {
        let s = parse_proc_stat(&stat_line(10, 1, 7, 3, 5, 250)).unwrap();
        assert_eq!(
            s,
            ProcStat {
                ppid: 1,
                ticks: 10,
                child_ticks: 5,
                majflt: 3,
                cmajflt: 1,
                rss_pages: 250
            }
        );
        assert!(parse_proc_stat("garbage").is_none());
    }

    #[test]
    fn tree_sums_the_postmaster_and_its_children() {
        let procs: Vec<(u32, ProcStat)> = [
            (10, 1, 7, 3, 5, 100),
            (11, 10, 20, 10, 0, 100),
            (12, 10, 1, 1, 0, 100),
            (13, 11, 1000, 0, 0, 100), // a grandchild: not PostgreSQL's, not counted
            (14, 1, 1000, 0, 0, 100),
        ]
        .iter()
        .map(|&(pid, ppid, u, s, c, r)| {
            (
                pid,
                parse_proc_stat(&stat_line(pid, ppid, u, s, c, r)).unwrap(),
            )
        })
        .collect();
        // The postmaster and one backend say what they hold; the other backend only its RSS.
        let resident = |pid: u32| match pid {
            10 => Some(Resident {
                anon: 1000,
                file: 500,
                shmem: 7000,
            }),
            11 => Some(Resident {
                anon: 300,
                file: 600,
                shmem: 9000,
            }),
            _ => None,
        };
        let u = tree_usage(&procs, 10, 4096, resident).unwrap();
        assert_eq!(u.ticks, 10 + 5 + 30 + 2);
        assert_eq!(u.majflt, 3 * 3 + 1);
        // Private memory adds up; shared memory and the binary count once (the largest).
        assert_eq!(u.rss_bytes, 1000 + 300 + 100 * 4096 + 600 + 9000);
        assert!(tree_usage(&procs, 99, 4096, resident).is_none());
    }

    #[test]
    fn parses_status() {
        let status = "Name:\tpostgres\nVmRSS:\t  1800 kB\nRssAnon:\t   332 kB\n\
                      RssFile:\t  1000 kB\nRssShmem:\t   468 kB\nVmData:\t 9 kB\n";
        assert_eq!(
            parse_status(status),
            Some(Resident {
                anon: 332 * 1024,
                file: 1000 * 1024,
                shmem: 468 * 1024
            })
        );
        assert_eq!(parse_status("Name:\tpostgres\nVmRSS:\t 1 kB\n"), None);
    }

    #[test]
    fn walks_space_out_as_they_cost_more() {
        let mut pace = WalkPace::default();
        assert!(pace.due() && pace.due());
        pace.walked(Duration::from_micros(1_400), 170);
        let walks = (0..30).filter(|_| pace.due()).count();
        assert_eq!(walks, 10);
        pace.walked(Duration::from_millis(50), 170);
        assert_eq!((0..30).filter(|_| pace.due()).count(), 3);
        pace.walked(Duration::from_micros(100), 170);
        assert!(pace.due() && pace.due());
        // A small tree is walked every round, however slow a walk was.
        pace.walked(Duration::from_millis(50), 12);
        assert!(pace.due() && pace.due());
    }
}
