//! The emulated VM: one cgroup per instance with a CPU quota and a memory limit.
//!
//! cgroup v1 (one mount per controller: /sys/fs/cgroup/{cpu,cpuacct,memory}) uses
//! `<controller>/tidebench/<name>` with cpu.cfs_quota_us/cpu.cfs_period_us and
//! memory.limit_in_bytes; the cpuacct group is made too so a sampler can read CPU time.
//! cgroup v2 (unified /sys/fs/cgroup with cgroup.controllers) uses `tidebench/<name>` with
//! cpu.max and memory.max, after enabling the controllers in the parents' subtree_control.
//!
//! A group name may be a path (`host/vm1`): several instances can share one VM's group, and
//! the VMs of a consolidation experiment sit below one parent group standing for the host
//! (`host_group`). Memory limits are hierarchical in both versions (v1 with `use_hierarchy`,
//! which is always on since Linux 6.x and on in every distribution's root before).

use std::ffi::CString;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{CgroupError, InstanceError};

const ROOT: &str = "/sys/fs/cgroup";
/// The scheduler period for the CPU quota: 100 ms, the kernel's default.
const PERIOD_US: u64 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

/// Where an instance's cgroup lives, per controller (all the same directory in v2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupPaths {
    pub version: CgroupVersion,
    /// v1: `cpu.cfs_quota_us`, `cpu.stat` (throttling); v2: `cpu.max`, `cpu.stat`.
    pub cpu: PathBuf,
    /// v1: `cpuacct.usage`, `cpuacct.stat`; v2: `cpu.stat` (`usage_usec`).
    pub cpuacct: PathBuf,
    /// v1: `memory.limit_in_bytes`, `memory.usage_in_bytes`, `memory.stat`;
    /// v2: `memory.max`, `memory.current`, `memory.stat`.
    pub memory: PathBuf,
}

impl CgroupPaths {
    /// Finds the cgroup hierarchy in use and names this instance's group in it (no writes).
    pub fn locate(name: &str) -> Result<CgroupPaths, InstanceError> {
        locate_under(Path::new(ROOT), name)
    }

    /// Names a group beside `tidebench` at the hierarchy's root (no writes): one that must
    /// weigh against everything else on the host, not only against the instances, whose
    /// `tidebench` parent weighs as one task among the host's other processes.
    pub fn locate_top(name: &str) -> Result<CgroupPaths, InstanceError> {
        locate_at(Path::new(ROOT), Path::new(name))
    }

    /// Gives the group the heaviest CPU weight there is (v1 `cpu.shares` 262144, 256 tasks'
    /// worth; v2 `cpu.weight` 10000, 100 groups' worth), so the scheduler gives it what its
    /// quota allows before anything of default weight beside it.
    pub(crate) fn outweigh(&self) -> Result<(), InstanceError> {
        match self.version {
            CgroupVersion::V1 => write(&self.cpu.join("cpu.shares"), "262144"),
            CgroupVersion::V2 => write(&self.cpu.join("cpu.weight"), "10000"),
        }
    }

    /// Whether this process may make control groups (root, and a cgroup tree found): where it
    /// may not, an instance can only run without limits.
    pub fn can_create() -> bool {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        root && CgroupPaths::locate("probe").is_ok()
    }

    /// The distinct directories, one per mounted hierarchy.
    pub fn dirs(&self) -> Vec<&Path> {
        let mut dirs: Vec<&Path> = Vec::new();
        for d in [&self.cpu, &self.cpuacct, &self.memory] {
            if !dirs.contains(&d.as_path()) {
                dirs.push(d);
            }
        }
        dirs
    }

    /// Creates the groups (idempotent) and writes the limits; `None` means unlimited.
    pub(crate) fn create(
        &self,
        cpus: Option<f64>,
        memory: Option<u64>,
    ) -> Result<(), InstanceError> {
        if self.version == CgroupVersion::V2 {
            enable_v2_controllers(&self.cpu)?;
        }
        for dir in self.dirs() {
            std::fs::create_dir_all(dir).map_err(|e| not_writable(dir, e))?;
        }
        let quota = cpus.map(|c| (c * PERIOD_US as f64).round() as u64);
        match self.version {
            CgroupVersion::V1 => {
                write(&self.cpu.join("cpu.cfs_period_us"), &PERIOD_US.to_string())?;
                let quota = quota.map_or("-1".to_string(), |q| q.to_string());
                write(&self.cpu.join("cpu.cfs_quota_us"), &quota)?;
                let limit = memory.map_or("-1".to_string(), |m| m.to_string());
                write(&self.memory.join("memory.limit_in_bytes"), &limit)?;
            }
            CgroupVersion::V2 => {
                let quota = quota.map_or("max".to_string(), |q| q.to_string());
                write(&self.cpu.join("cpu.max"), &format!("{quota} {PERIOD_US}"))?;
                let limit = memory.map_or("max".to_string(), |m| m.to_string());
                write(&self.memory.join("memory.max"), &limit)?;
            }
        }
        Ok(())
    }

    /// The `cgroup.procs` files a child writes itself into before exec, prepared before fork.
    pub(crate) fn procs_files(&self) -> Result<Vec<CString>, InstanceError> {
        self.dirs()
            .into_iter()
            .map(|d| {
                CString::new(d.join("cgroup.procs").as_os_str().as_bytes()).map_err(|_| {
                    CgroupError::NulInPath {
                        path: d.to_path_buf(),
                    }
                    .into()
                })
            })
            .collect()
    }

    /// Removes a shared VM's groups unless another instance (or a child group) is still in
    /// them.
    pub(crate) fn remove_if_unused(&self) -> Result<(), InstanceError> {
        if self.dirs().into_iter().any(in_use_by_others) {
            return Ok(());
        }
        self.remove()?;
        // A host group left without VMs goes too (best effort: it may hold a limit in use).
        for dir in self.dirs() {
            for parent in dir.ancestors().skip(1) {
                if parent.file_name().is_none_or(|n| n == "tidebench")
                    || std::fs::remove_dir(parent).is_err()
                {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Removes the groups; waits briefly for exiting processes to leave them.
    pub(crate) fn remove(&self) -> Result<(), InstanceError> {
        for dir in self.dirs() {
            let mut tries = 0;
            loop {
                match std::fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == ErrorKind::NotFound => break,
                    Err(e) if tries < 50 && e.raw_os_error() == Some(libc::EBUSY) => {
                        tries += 1;
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    Err(e) => {
                        return Err(CgroupError::Remove {
                            dir: dir.to_path_buf(),
                            source: e,
                        }
                        .into())
                    }
                }
            }
        }
        Ok(())
    }
}

/// Whether `dir` has child groups, or processes other than ones about to exit: another
/// instance of the same VM is running there.
fn in_use_by_others(dir: &Path) -> bool {
    let has_children = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).any(|e| e.path().is_dir()))
        .unwrap_or(false);
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    // Our own server was stopped just before: wait for its processes to leave, then look.
    let mut settled = procs.trim().is_empty();
    for _ in 0..20 {
        if settled {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        settled = std::fs::read_to_string(dir.join("cgroup.procs"))
            .map(|t| t.trim().is_empty())
            .unwrap_or(true);
    }
    has_children || !settled
}

fn locate_under(root: &Path, name: &str) -> Result<CgroupPaths, InstanceError> {
    locate_at(root, &Path::new("tidebench").join(name))
}

/// The group at `rel` below the root of the hierarchy found under `root`.
fn locate_at(root: &Path, rel: &Path) -> Result<CgroupPaths, InstanceError> {
    if root.join("cgroup.controllers").is_file() {
        let controllers =
            std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
        let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
        if !(has("cpu") && has("memory")) {
            return Err(CgroupError::NoControllers {
                root: root.to_path_buf(),
                has: controllers.trim().to_string(),
            }
            .into());
        }
        let dir = root.join(rel);
        return Ok(CgroupPaths {
            version: CgroupVersion::V2,
            cpu: dir.clone(),
            cpuacct: dir.clone(),
            memory: dir,
        });
    }
    let cpu = root.join("cpu");
    let memory = root.join("memory");
    if cpu.join("cpu.cfs_quota_us").is_file() && memory.join("memory.limit_in_bytes").is_file() {
        // cpuacct is its own mount on some hosts and co-mounted with cpu ("cpu,cpuacct") on others.
        let cpuacct = if root.join("cpuacct").join("cpuacct.usage").is_file() {
            root.join("cpuacct")
        } else {
            cpu.clone()
        };
        let group = |c: PathBuf| c.join(rel);
        return Ok(CgroupPaths {
            version: CgroupVersion::V1,
            cpu: group(cpu),
            cpuacct: group(cpuacct),
            memory: group(memory),
        });
    }
    Err(CgroupError::NoHierarchy {
        root: root.to_path_buf(),
    }
    .into())
}

/// v2 only lets a group limit cpu/memory if every parent delegates those controllers: the
/// root's and each group's from `tidebench` down to the group's parent (the root's alone for a
/// group beside `tidebench`).
fn enable_v2_controllers(group: &Path) -> Result<(), InstanceError> {
    let Some(parent) = group.parent() else {
        return Ok(());
    };
    std::fs::create_dir_all(parent).map_err(|e| not_writable(parent, e))?;
    let mut chain: Vec<&Path> = Vec::new();
    for dir in parent.ancestors() {
        chain.push(dir);
        if dir
            .parent()
            .is_none_or(|p| !p.join("cgroup.controllers").is_file())
        {
            break;
        }
        if dir.file_name().is_some_and(|n| n == "tidebench") {
            if let Some(root) = dir.parent() {
                chain.push(root);
            }
            break;
        }
    }
    for dir in chain.into_iter().rev() {
        let file = dir.join("cgroup.subtree_control");
        let current = std::fs::read_to_string(&file).unwrap_or_default();
        for c in ["cpu", "memory"] {
            if !current.split_whitespace().any(|x| x == c) {
                write(&file, &format!("+{c}"))?;
            }
        }
    }
    Ok(())
}

fn write(path: &Path, value: &str) -> Result<(), InstanceError> {
    std::fs::write(path, value).map_err(|e| match e.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => not_writable(path, e),
        _ if e.raw_os_error() == Some(libc::EBUSY) => InstanceError::CgroupBusy {
            context: None,
            value: value.to_string(),
            path: path.to_path_buf(),
            source: e,
        },
        _ => CgroupError::Write {
            value: value.to_string(),
            path: path.to_path_buf(),
            source: e,
        }
        .into(),
    })
}

fn not_writable(path: &Path, e: std::io::Error) -> InstanceError {
    CgroupError::NotWritable {
        path: path.to_path_buf(),
        source: e,
    }
    .into()
}

/// "cpus=0.5 memory=512MiB", or "-" when there are no limits.
pub fn describe_limits(cpus: Option<f64>, memory: Option<u64>) -> String {
    let mut parts = Vec::new();
    if let Some(c) = cpus {
        parts.push(format!("cpus={c}"));
    }
    if let Some(m) = memory {
        parts.push(format!("memory={}", super::settings::format_size(m)));
    }
    if parts.is_empty() {
        "-".to_string()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_with_separate_cpuacct() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for (dir, file) in [
            ("cpu", "cpu.cfs_quota_us"),
            ("cpuacct", "cpuacct.usage"),
            ("memory", "memory.limit_in_bytes"),
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::fs::write(root.join(dir).join(file), "").unwrap();
        }
        let paths = locate_under(root, "a").unwrap();
        assert_eq!(paths.version, CgroupVersion::V1);
        assert_eq!(paths.cpuacct, root.join("cpuacct/tidebench/a"));
        assert_eq!(paths.dirs().len(), 3);
    }

    #[test]
    fn v2_is_one_directory() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("cgroup.controllers"),
            "cpuset cpu io memory pids\n",
        )
        .unwrap();
        let paths = locate_under(tmp.path(), "b").unwrap();
        assert_eq!(paths.version, CgroupVersion::V2);
        assert_eq!(paths.dirs(), vec![tmp.path().join("tidebench/b").as_path()]);
    }

    #[test]
    fn nothing_mounted_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let err = locate_under(tmp.path(), "c").unwrap_err().to_string();
        assert!(err.contains("leave out --cpus"), "{err}");
    }

    #[test]
    fn nested_group_paths() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("cgroup.controllers"), "cpu memory\n").unwrap();
        let paths = locate_under(tmp.path(), "host/vm1").unwrap();
        assert_eq!(paths.memory, tmp.path().join("tidebench/host/vm1"));
    }

    #[test]
    fn a_top_group_sits_beside_tidebench() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("cgroup.controllers"), "cpu memory\n").unwrap();
        let paths = locate_at(tmp.path(), Path::new("tidebench-noise-1-2")).unwrap();
        assert_eq!(paths.cpu, tmp.path().join("tidebench-noise-1-2"));
    }

    #[test]
    fn limits_are_described() {
        assert_eq!(describe_limits(None, None), "-");
        assert_eq!(
            describe_limits(Some(0.5), Some(512 << 20)),
            "cpus=0.5 memory=512MiB"
        );
    }
}
