//! Host facts for `runtime.toml`: who ran the driver, on how many CPUs, under which hypervisor or
//! container. Read once before the run, from /proc, /sys and uname; a fact that cannot be read is
//! left out, never an error (the kit also runs on hosts that hide some of them).
//!
//! The type itself lives in `results::runtime` with the rest of the on-disk format, so that
//! `report` can read it back without importing samplers; it is re-exported here.

use std::path::Path;

pub use crate::results::HostFacts;

impl HostFacts {
    /// Reads every fact this host exposes. Never fails; takes a few milliseconds.
    pub fn collect() -> HostFacts {
        let uname = Uname::read();
        let cpuinfo = read_text("/proc/cpuinfo");
        let cpu = cpuinfo.as_deref().map(parse_cpuinfo).unwrap_or_default();
        HostFacts {
            hostname: uname
                .as_ref()
                .map(|u| u.nodename.clone())
                .or_else(|| read_line("/proc/sys/kernel/hostname")),
            cpus_available: std::thread::available_parallelism()
                .ok()
                .map(|n| n.get() as u64),
            cpus_online: cpus_online(),
            cpu_model: cpu.model,
            memory_total_bytes: crate::instance::host_memory::total(),
            kernel: uname
                .map(|u| u.release)
                .or_else(|| read_line("/proc/sys/kernel/osrelease")),
            os: read_text("/etc/os-release")
                .as_deref()
                .and_then(parse_os_release),
            hypervisor: cpu.hypervisor,
            dmi_vendor: read_line("/sys/class/dmi/id/sys_vendor"),
            dmi_product: read_line("/sys/class/dmi/id/product_name"),
            container: detect_container(),
            cgroup_version: cgroup_version(Path::new("/sys/fs/cgroup")),
        }
    }
}

fn read_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The first line of a one-value file (sysfs, procfs), when it says anything.
fn read_line(path: &str) -> Option<String> {
    let text = read_text(path)?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_string())
}

struct Uname {
    nodename: String,
    release: String,
}

impl Uname {
    fn read() -> Option<Uname> {
        // SAFETY: utsname is plain data; zeroed is a valid value, and uname only writes into it.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        // SAFETY: `u` is a valid, writable utsname.
        if unsafe { libc::uname(&mut u) } != 0 {
            return None;
        }
        Some(Uname {
            nodename: c_field(&u.nodename)?,
            release: c_field(&u.release)?,
        })
    }
}

/// A NUL-terminated utsname field as text.
fn c_field(field: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn cpus_online() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u64::try_from(n).ok().filter(|&n| n > 0)
}

#[derive(Debug, Default, PartialEq)]
struct CpuInfo {
    model: Option<String>,
    /// Only known where the CPU flags are listed (x86): elsewhere `None`, not `false`.
    hypervisor: Option<bool>,
}

fn parse_cpuinfo(text: &str) -> CpuInfo {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.trim() == key)
                .map(|(_, v)| v.trim())
        })
    };
    CpuInfo {
        model: value("model name")
            .filter(|m| !m.is_empty())
            .map(str::to_string),
        // x86 kernels set the `hypervisor` flag when CPUID says a hypervisor is present.
        hypervisor: value("flags").map(|flags| flags.split_whitespace().any(|f| f == "hypervisor")),
    }
}

fn parse_os_release(text: &str) -> Option<String> {
    let value = text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))?;
    let value = value.trim().trim_matches('"').trim_matches('\'');
    (!value.is_empty()).then(|| value.to_string())
}

fn detect_container() -> Option<String> {
    if Path::new("/.dockerenv").exists() {
        return Some("docker".into());
    }
    if Path::new("/run/.containerenv").exists() {
        return Some("podman".into());
    }
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        return Some("kubernetes".into());
    }
    read_text("/proc/1/cgroup")
        .as_deref()
        .and_then(container_from_cgroup)
}

/// Container runtimes leave their name in init's cgroup path (cgroup v1, or v2 without a
/// cgroup namespace).
fn container_from_cgroup(text: &str) -> Option<String> {
    let path_has = |needle: &str| {
        text.lines()
            .any(|l| l.rsplit(':').next().is_some_and(|p| p.contains(needle)))
    };
    [
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("lxc", "lxc"),
    ]
    .into_iter()
    .find(|(needle, _)| path_has(needle))
    .map(|(_, name)| name.to_string())
}

/// 2 when the unified hierarchy is mounted at the root, 1 when controllers are mounted one by one.
fn cgroup_version(root: &Path) -> Option<u8> {
    if root.join("cgroup.controllers").exists() {
        Some(2)
    } else if root.is_dir() && std::fs::read_dir(root).ok()?.next().is_some() {
        Some(1)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpuinfo() {
        let text = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu vme hypervisor lahf_lm\n";
        assert_eq!(
            parse_cpuinfo(text),
            CpuInfo {
                model: Some("Intel(R) Xeon(R) Processor".into()),
                hypervisor: Some(true)
            }
        );
        let bare_metal = "model name\t: AMD EPYC\nflags\t\t: fpu vme\n";
        assert_eq!(parse_cpuinfo(bare_metal).hypervisor, Some(false));
        assert_eq!(
            parse_cpuinfo("processor : 0\nBogoMIPS : 50\n"),
            CpuInfo::default()
        );
    }

    #[test]
    fn parses_os_release() {
        let os = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            parse_os_release(os).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
    }

    #[test]
    fn finds_containers_in_init_cgroup() {
        assert_eq!(container_from_cgroup("0::/\n1:cpu:/\n"), None);
        assert_eq!(
            container_from_cgroup("12:memory:/docker/0123abcd\n").as_deref(),
            Some("docker")
        );
        assert_eq!(
            container_from_cgroup("0::/kubepods/burstable/pod1/abc\n").as_deref(),
            Some("kubernetes")
        );
    }

    #[test]
    fn collects_what_this_host_exposes() {
        let facts = HostFacts::collect();
        assert!(facts.cpus_available.is_some_and(|n| n >= 1), "{facts:?}");
        assert!(facts.kernel.is_some(), "{facts:?}");
        if cfg!(target_os = "linux") {
            assert!(facts.memory_total_bytes.is_some_and(|b| b > 0), "{facts:?}");
            assert!(facts.cgroup_version.is_some(), "{facts:?}");
        }
    }
}
