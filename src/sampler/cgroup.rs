//! Per managed instance: the CPU time, memory and faults of all its processes, so the report can
//! show CPU per emulated VM over time and transactions per CPU-second. The process tree's walk
//! is in [`super::proc_tree`].
//!
//! CPU comes from the instance's cgroup when it has one (v1 `cpuacct.usage`, v2 `cpu.stat`
//! `usage_usec`): the kernel counts every process ever in it. Without a cgroup it comes from the
//! process tree: the postmaster's own time plus `cutime`/`cstime` (the time of children it has
//! reaped: backends that exited) plus the time of its live children. Memory: from each
//! process's `/proc/<pid>/status`, the private (anonymous) pages of every process plus the
//! largest shared-memory and file-backed resident of any one of them, so `shared_buffers` and
//! the binary count once, not once per backend; and, with a cgroup, its `memory.stat` (usage,
//! page cache, major faults, refaults), how often it hit its limit, and its OOM kill count,
//! which the instance's [`IncidentWatch`] turns into incidents with its server.log.
//!
//! Why not the proportional set size (`Pss` of `smaps_rollup`): the kernel walks every page
//! table of the process to make it, about 1 ms per busy backend with 1 GB of shared buffers,
//! which made a sampling round cost 11 ms of CPU at 4 clients (issue 16). `status` holds
//! counters the kernel keeps anyway. The sum is a lower bound of the instance's resident memory
//! (backends touch different shared pages; the largest one stands for all); it was within
//! 20 % of the Pss sum at 16 clients on a scale-1 database.

use std::path::{Path, PathBuf};

use crate::event::Incident;
use crate::instance::{CgroupPaths, CgroupVersion, Instance};

use super::guest::GuestChannel;
use super::incidents::IncidentWatch;
use super::proc_tree::WalkPace;
use super::run::Values;

/// `key value` lines (`memory.stat`, `cpu.stat`, `memory.events`, `memory.oom_control`).
pub fn flat_key(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some(key)).then(|| w.next()?.parse().ok())?
    })
}

fn sysconf(name: libc::c_int, fallback: u64) -> u64 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(name) };
    u64::try_from(v).ok().filter(|v| *v > 0).unwrap_or(fallback)
}

/// One managed instance to sample.
pub struct InstanceProbe {
    pub source: String,
    data_dir: PathBuf,
    cgroup: Option<CgroupPaths>,
    last_cpu_s: Option<f64>,
    /// Seconds since `last_cpu_s` was read (rounds without a reading add up).
    since_cpu_s: f64,
    watch: IncidentWatch,
    /// Which rounds read the process tree (spaced out when it is large).
    walk: WalkPace,
    /// A VM instance's QEMU (issue 40): the process read in place of a postmaster, so its
    /// CPU and RSS are what the guest costs the host.
    qemu_pid: Option<u32>,
    /// A VM instance's guest: its memory, as its balloon driver reports it through QMP.
    guest: Option<crate::instance::vm::GuestInfo>,
    /// A VM instance's stats port: the guest's own CPU, memory, disk and network counters.
    channel: Option<GuestChannel>,
}

impl InstanceProbe {
    pub fn new(inst: &Instance) -> InstanceProbe {
        InstanceProbe {
            source: format!("instance:{}", inst.name),
            data_dir: inst.data_dir(),
            cgroup: inst.cgroup_paths().cloned(),
            last_cpu_s: None,
            since_cpu_s: 0.0,
            watch: IncidentWatch::new(&inst.name, inst.log_path(), inst.limits().1),
            walk: WalkPace::default(),
            qemu_pid: inst.guest().and_then(|g| g.qemu_pid()),
            guest: inst.guest().cloned(),
            channel: inst.guest().map(|g| GuestChannel::new(g.files.stats())),
        }
    }

    /// The process to read: the VM's QEMU, or the postmaster of `postmaster.pid` (re-read
    /// each time: a restart changes it).
    fn pid(&self) -> Option<u32> {
        self.qemu_pid
            .or_else(|| read_postmaster_pid(&self.data_dir))
    }

    /// The instance's incidents since the last look (the first takes the starting point), at
    /// `t_s`, outside a sampling round: what limiting a host group did before a run.
    pub fn incidents_now(&mut self, t_s: f64) -> Vec<Incident> {
        let oom_kills = self.cgroup.as_ref().and_then(|c| read_cgroup(c).oom_kills);
        let pid = running_postmaster(self.pid());
        self.watch.check(t_s, oom_kills, pid)
    }

    /// Whether the instance's server accepts connections: a running postmaster whose pid
    /// file says `ready` (not `starting`, `stopping`, or in crash recovery).
    pub fn server_ready(&self) -> bool {
        if self.qemu_pid.is_some() {
            // The guest's server was ready when its instance started; QEMU still runs.
            return self.server_running();
        }
        let text =
            std::fs::read_to_string(self.data_dir.join("postmaster.pid")).unwrap_or_default();
        self.server_running() && text.lines().nth(7).map(str::trim) == Some("ready")
    }

    /// Whether the instance's postmaster runs (ready or not): one that is gone does not come
    /// back by itself.
    pub fn server_running(&self) -> bool {
        running_postmaster(self.pid()).is_some()
    }

    /// One probe per VM for the sampled instances: instances sharing a VM (`--vm`) read the
    /// same cgroup, hence the same OOM kill counter, so only the first of them turns it into
    /// incidents, naming the VM and its instances; the others still watch their own log and
    /// postmaster. Without this a plain run listed one OOM kill under every instance of the VM.
    pub fn for_instances(instances: &[Instance]) -> Vec<InstanceProbe> {
        let mut probes: Vec<InstanceProbe> = instances.iter().map(InstanceProbe::new).collect();
        for (i, inst) in instances.iter().enumerate() {
            let Some(vm) = inst.vm() else { continue };
            let sharing: Vec<&str> = instances
                .iter()
                .filter(|o| o.vm() == Some(vm))
                .map(|o| o.name.as_str())
                .collect();
            if sharing.len() < 2 {
                continue;
            }
            if sharing[0] == inst.name {
                probes[i].watch.share_vm(vm, &sharing);
            } else {
                probes[i].watch.leave_oom_kills_to_vm();
                // A real VM's stats port takes one reader: its rows go under the first
                // instance of the VM.
                probes[i].channel = None;
            }
        }
        probes
    }
}

/// Samples every managed instance.
pub struct InstanceReader {
    probes: Vec<InstanceProbe>,
    clk_tck: u64,
    page_size: u64,
}

impl InstanceReader {
    pub fn new(probes: Vec<InstanceProbe>) -> InstanceReader {
        InstanceReader {
            probes,
            clk_tck: sysconf(libc::_SC_CLK_TCK, 100),
            page_size: sysconf(libc::_SC_PAGESIZE, 4096),
        }
    }

    /// Appends this round's `instance:<name>` rows; `dt_s` is the time since the last round,
    /// zero for a round that reports no rates (the first, and a short last one). Returns the
    /// incidents seen since the last round, at `t_s` (the round's time since the run started).
    pub fn sample(&mut self, dt_s: f64, t_s: f64, out: &mut Values) -> Vec<Incident> {
        let mut incidents = Vec::new();
        for p in &mut self.probes {
            let pid = p.pid();
            let tree = p.walk.walk(pid, self.page_size);
            let cg = p.cgroup.as_ref().map(read_cgroup).unwrap_or_default();
            let cpu_s = cg
                .cpu_seconds
                .or_else(|| tree.map(|t| t.ticks as f64 / self.clk_tck as f64));
            p.since_cpu_s += dt_s;
            if let Some(cpu) = cpu_s {
                out.push(&p.source, "cpu_seconds", cpu);
                let last = p.last_cpu_s.filter(|_| dt_s > 0.0);
                if let Some(pct) = last.and_then(|last| cpu_pct(last, cpu, p.since_cpu_s)) {
                    out.push(&p.source, "cpu_pct", pct);
                }
                p.last_cpu_s = Some(cpu);
                p.since_cpu_s = 0.0;
            }
            if let Some(t) = tree {
                out.push(&p.source, "rss_bytes", t.rss_bytes as f64);
            }
            let faults = cg.major_faults.or(tree.map(|t| t.majflt));
            let rows = [
                ("mem_usage_bytes", cg.usage_bytes),
                ("mem_cache_bytes", cg.cache_bytes),
                ("major_faults", faults),
                ("oom_events", cg.oom_kills),
                ("mem_refaults", cg.refaults),
                ("mem_limit_hits", cg.limit_hits),
            ];
            for (metric, v) in rows {
                if let Some(v) = v {
                    out.push(&p.source, metric, v as f64);
                }
            }
            let reported = p.channel.as_mut().is_some_and(|c| c.sample(&p.source, out));
            if let Some(g) = p.guest.as_ref() {
                guest_memory(&p.source, g, reported, out);
            }
            incidents.extend(p.watch.check(t_s, cg.oom_kills, running_postmaster(pid)));
        }
        incidents
    }
}

/// A guest's memory through its balloon driver (QMP): what the guest has, the balloon's size
/// (RAM less that), and the driver's MemTotal and MemAvailable when the stats port did not
/// report them this round (a guest booted from an older image has no port).
fn guest_memory(
    source: &str,
    guest: &crate::instance::vm::GuestInfo,
    reported: bool,
    out: &mut Values,
) {
    let Some(m) = guest.memory_stats() else {
        return;
    };
    out.push(source, "guest_memory_bytes", m.actual as f64);
    let balloon = guest.record.memory.saturating_sub(m.actual);
    out.push(source, "guest_balloon_bytes", balloon as f64);
    let mut rows = vec![("guest_mem_free_bytes", m.free)];
    if !reported {
        rows.push(("guest_mem_total_bytes", m.total));
        rows.push(("guest_mem_available_bytes", m.available));
    }
    for (metric, v) in rows {
        if let Some(v) = v {
            out.push(source, metric, v as f64);
        }
    }
}

/// CPU percent (100 = one core) between two cumulative readings `window_s` apart; `None`
/// without a window. A counter that went back (an instance restarted) counts as idle.
pub fn cpu_pct(last_s: f64, now_s: f64, window_s: f64) -> Option<f64> {
    (window_s > 0.0).then(|| 100.0 * (now_s - last_s).max(0.0) / window_s)
}

/// The pid if its process runs: a pid file left behind by a killed postmaster names no
/// running server.
fn running_postmaster(pid: Option<u32>) -> Option<u32> {
    pid.filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
}

/// The first line of `postmaster.pid` (re-read each round: a restart changes it).
fn read_postmaster_pid(data_dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(data_dir.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// What an instance's cgroup says; each value absent when its file cannot be read.
#[derive(Debug, Default, PartialEq)]
pub struct CgroupUsage {
    pub cpu_seconds: Option<f64>,
    pub usage_bytes: Option<u64>,
    pub cache_bytes: Option<u64>,
    pub major_faults: Option<u64>,
    pub oom_kills: Option<u64>,
    /// Pages reclaimed and then needed again (file and anonymous): what reclaim cost.
    pub refaults: Option<u64>,
    /// How often usage reached the limit (and the kernel had to reclaim or OOM-kill).
    pub limit_hits: Option<u64>,
}

fn read_cgroup(paths: &CgroupPaths) -> CgroupUsage {
    let read = |dir: &Path, file: &str| std::fs::read_to_string(dir.join(file)).ok();
    match paths.version {
        CgroupVersion::V1 => cgroup_v1(
            read(&paths.cpuacct, "cpuacct.usage").as_deref(),
            read(&paths.memory, "memory.usage_in_bytes").as_deref(),
            read(&paths.memory, "memory.stat").as_deref(),
            read(&paths.memory, "memory.oom_control").as_deref(),
            read(&paths.memory, "memory.failcnt").as_deref(),
        ),
        CgroupVersion::V2 => cgroup_v2(
            read(&paths.cpu, "cpu.stat").as_deref(),
            read(&paths.memory, "memory.current").as_deref(),
            read(&paths.memory, "memory.stat").as_deref(),
            read(&paths.memory, "memory.events").as_deref(),
        ),
    }
}

fn first_number(text: Option<&str>) -> Option<u64> {
    text?.split_whitespace().next()?.parse().ok()
}

/// Refaults from `memory.stat` keys: `workingset_refault_file` + `workingset_refault_anon`
/// (Linux 5.9 on), or the older single `workingset_refault`.
fn refaults(key: impl Fn(&str) -> Option<u64>) -> Option<u64> {
    match (
        key("workingset_refault_file"),
        key("workingset_refault_anon"),
    ) {
        (None, None) => key("workingset_refault"),
        (file, anon) => Some(file.unwrap_or(0) + anon.unwrap_or(0)),
    }
}

/// v1: `cpuacct.usage` is nanoseconds; `memory.stat`'s `total_*` keys include child groups;
/// `memory.failcnt` counts the times usage hit the limit.
pub fn cgroup_v1(
    cpuacct_usage: Option<&str>,
    usage_in_bytes: Option<&str>,
    stat: Option<&str>,
    oom_control: Option<&str>,
    failcnt: Option<&str>,
) -> CgroupUsage {
    let stat_key = |k: &str| {
        let s = stat?;
        flat_key(s, &format!("total_{k}")).or_else(|| flat_key(s, k))
    };
    CgroupUsage {
        cpu_seconds: first_number(cpuacct_usage).map(|ns| ns as f64 / 1e9),
        usage_bytes: first_number(usage_in_bytes),
        cache_bytes: stat_key("cache"),
        major_faults: stat_key("pgmajfault"),
        // `oom_kill` appeared in Linux 4.13; older kernels only say `under_oom`.
        oom_kills: oom_control.and_then(|t| flat_key(t, "oom_kill")),
        refaults: refaults(stat_key),
        limit_hits: first_number(failcnt),
    }
}

/// v2: `cpu.stat` `usage_usec` is microseconds; page cache is `file` in `memory.stat`;
/// `memory.events` `max` counts the times usage was about to go over `memory.max`.
pub fn cgroup_v2(
    cpu_stat: Option<&str>,
    current: Option<&str>,
    stat: Option<&str>,
    events: Option<&str>,
) -> CgroupUsage {
    CgroupUsage {
        cpu_seconds: cpu_stat
            .and_then(|t| flat_key(t, "usage_usec"))
            .map(|us| us as f64 / 1e6),
        usage_bytes: first_number(current),
        cache_bytes: stat.and_then(|t| flat_key(t, "file")),
        major_faults: stat.and_then(|t| flat_key(t, "pgmajfault")),
        oom_kills: events.and_then(|t| flat_key(t, "oom_kill")),
        refaults: refaults(|k| stat.and_then(|t| flat_key(t, k))),
        limit_hits: events.and_then(|t| flat_key(t, "max")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_percent_is_over_the_time_since_the_last_reading() {
        assert_eq!(cpu_pct(1.0, 1.5, 1.0), Some(50.0));
        // Two rounds without a reading: the window is both, not the last one alone.
        assert_eq!(cpu_pct(1.0, 2.0, 2.0), Some(50.0));
        assert_eq!(
            cpu_pct(2.0, 1.0, 1.0),
            Some(0.0),
            "a restart is not negative"
        );
        assert_eq!(cpu_pct(1.0, 2.0, 0.0), None);
    }

    #[test]
    fn parses_cgroup_files() {
        let v1 = cgroup_v1(
            Some("2500000000\n"),
            Some("104857600\n"),
            Some("cache 10\nrss 5\npgmajfault 1\ntotal_cache 20\ntotal_pgmajfault 7\n"),
            Some("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"),
            Some("17\n"),
        );
        assert_eq!(
            v1,
            CgroupUsage {
                cpu_seconds: Some(2.5),
                usage_bytes: Some(104_857_600),
                cache_bytes: Some(20),
                major_faults: Some(7),
                oom_kills: Some(2),
                refaults: None,
                limit_hits: Some(17),
            }
        );
        let v2 = cgroup_v2(
            Some("usage_usec 1500000\nuser_usec 1000000\n"),
            Some("4096\n"),
            Some("anon 1\nfile 300\npgmajfault 4\n"),
            Some("low 0\nhigh 0\nmax 1\noom 1\noom_kill 1\n"),
        );
        assert_eq!(v2.cpu_seconds, Some(1.5));
        assert_eq!(
            (v2.cache_bytes, v2.major_faults, v2.oom_kills),
            (Some(300), Some(4), Some(1))
        );
        assert_eq!(
            cgroup_v1(None, None, None, None, None),
            CgroupUsage::default()
        );
    }

    #[test]
    fn parses_refaults_and_limit_hits_v1() {
        // memory.stat of a v1 group (Linux 6.x), shortened: the `total_` keys include children.
        let stat = "cache 352645120\nrss 3780608\nshmem 58851328\npgmajfault 3\n\
                    workingset_refault_anon 0\nworkingset_refault_file 44\n\
                    total_cache 352645120\ntotal_shmem 58851328\ntotal_pgmajfault 3\n\
                    total_workingset_refault_anon 5\ntotal_workingset_refault_file 1044\n";
        let u = cgroup_v1(None, None, Some(stat), None, Some("31\n"));
        assert_eq!((u.refaults, u.limit_hits), (Some(1049), Some(31)));
        // Before Linux 5.9 there was one `workingset_refault`.
        let old = cgroup_v1(None, None, Some("workingset_refault 9\n"), None, None);
        assert_eq!((old.refaults, old.limit_hits), (Some(9), None));
    }

    #[test]
    fn parses_refaults_and_limit_hits_v2() {
        let stat = "anon 1000\nfile 300\nshmem 0\npgmajfault 4\nworkingset_refault_anon 7\n\
                    workingset_refault_file 120\nworkingset_activate_anon 0\n";
        let events = "low 0\nhigh 0\nmax 52\noom 3\noom_kill 3\noom_group_kill 0\n";
        let u = cgroup_v2(None, None, Some(stat), Some(events));
        assert_eq!(
            (u.refaults, u.limit_hits, u.oom_kills),
            (Some(127), Some(52), Some(3))
        );
        // `max_something` must not be read as `max`.
        let u = cgroup_v2(None, None, None, Some("max_other 5\n"));
        assert_eq!(u.limit_hits, None);
    }
}
