//! Driving Linux perf: finding it, checking it may sample, and one `perf record` of the whole
//! machine controlled through a pair of FIFOs.
//!
//! perf starts with its events off (`-D -1`) and listens on a control FIFO
//! (`--control fifo:ctl,ack`): a `disable` answered on the ack FIFO says it is set up (it
//! writes the machine's existing processes first, which takes a moment), `enable` and
//! `disable` then bound the samples to the measured window. Timestamps are CLOCK_MONOTONIC
//! (`-k`), the clock of Rust's `Instant`, so the window is also cut exactly when the samples
//! are read back. `-B` skips the build-id pass at exit, which reads every binary touched: the
//! symbols are resolved at once, on the same host, from the same files.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::profile::ProfilePlan;

/// How long perf may take to set up (it lists every process on the host first).
const SETUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an `enable` or `disable` may wait for perf's answer.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);
/// How long perf may take to write its file after SIGINT.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// The perf found on PATH.
#[derive(Debug, Clone)]
pub struct Perf {
    pub path: PathBuf,
    pub version: String,
}

/// Finds perf on PATH and checks it runs (Debian's `perf` is a wrapper that fails when no
/// perf matches the running kernel).
pub fn find() -> Result<Perf, String> {
    let path = on_path("perf").ok_or_else(|| {
        "--profile needs Linux perf, and none is on PATH: install it (Debian: apt-get install \
         linux-perf; Ubuntu: apt-get install linux-tools-$(uname -r)), or run without --profile"
            .to_string()
    })?;
    let out = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}; check the perf install", path.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || version.is_empty() {
        return Err(format!(
            "{} --version failed ({}): {}; install the perf that matches this kernel (Debian: \
             apt-get install linux-perf), or run without --profile",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Perf { path, version })
}

/// A user other than root samples every CPU only with `kernel.perf_event_paranoid` at 0 or
/// below (or CAP_PERFMON, which perf itself would then tell).
pub fn check_access() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Ok(());
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok());
    match paranoid {
        Some(p) if p > 0 => Err(format!(
            "kernel.perf_event_paranoid is {p}: a user other than root may not sample every \
             CPU, which --profile does. As root: sysctl -w kernel.perf_event_paranoid=0 (or \
             -1 to see kernel symbols too), or run tidebench as root"
        )),
        _ => Ok(()),
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A `perf record -a` in progress.
pub struct Recording {
    child: Child,
    ctl: File,
    ack: File,
    pub data: PathBuf,
    log: PathBuf,
    fifos: [PathBuf; 2],
}

impl Recording {
    /// Starts perf with its events off, writing into `work` (created), and waits until it is
    /// set up.
    pub fn start(perf: &Perf, plan: &ProfilePlan, work: &Path) -> Result<Recording, String> {
        std::fs::create_dir_all(work)
            .map_err(|e| format!("cannot create {}: {e}", work.display()))?;
        let fifos = [work.join("ctl.fifo"), work.join("ack.fifo")];
        for f in &fifos {
            let _ = std::fs::remove_file(f);
            make_fifo(f)?;
        }
        // Read-write opens of a FIFO never block, whichever end comes first.
        let open = |p: &Path| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .open(p)
                .map_err(|e| format!("cannot open {}: {e}", p.display()))
        };
        let (ctl, ack) = (open(&fifos[0])?, open(&fifos[1])?);
        let data = work.join("perf.data");
        let log = work.join("perf.log");
        let log_file =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let control = format!("fifo:{},{}", fifos[0].display(), fifos[1].display());
        let child = Command::new(&perf.path)
            .args(["record", "-a", "-e", "cpu-clock", "-F"])
            .arg(plan.hz.to_string())
            .args(["--call-graph", plan.call_graph.perf_arg()])
            .args(["-k", "CLOCK_MONOTONIC", "-D", "-1", "-B", "--control"])
            .arg(control)
            .arg("-o")
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", perf.path.display()))?;
        let mut rec = Recording {
            child,
            ctl,
            ack,
            data,
            log,
            fifos,
        };
        if let Err(e) = rec.command("disable", SETUP_TIMEOUT) {
            rec.kill();
            return Err(e);
        }
        Ok(rec)
    }

    pub fn enable(&mut self) -> Result<(), String> {
        self.command("enable", ACK_TIMEOUT)
    }

    pub fn disable(&mut self) -> Result<(), String> {
        self.command("disable", ACK_TIMEOUT)
    }

    /// Sends a control command and waits for perf's `ack`.
    fn command(&mut self, what: &str, timeout: Duration) -> Result<(), String> {
        self.ctl
            .write_all(format!("{what}\n").as_bytes())
            .map_err(|e| format!("cannot tell perf to {what}: {e}"))?;
        let deadline = Instant::now() + timeout;
        let mut got = Vec::new();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("perf ended ({status}): {}", self.log_tail()));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "perf did not answer `{what}` within {timeout:?}: {}",
                    self.log_tail()
                ));
            }
            if readable(&self.ack, Duration::from_millis(100)) {
                let mut buf = [0u8; 64];
                let n = self.ack.read(&mut buf).map_err(|e| e.to_string())?;
                got.extend_from_slice(&buf[..n]);
                if got.windows(3).any(|w| w == b"ack") {
                    return Ok(());
                }
            }
        }
    }

    /// Stops perf (SIGINT, as Ctrl-C would) and waits for it to write its file.
    pub fn stop(mut self) -> Result<PathBuf, String> {
        // SAFETY: kill with a pid of our own child has no memory effects.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    self.kill();
                    return Err(format!(
                        "perf did not finish writing within {STOP_TIMEOUT:?}: {}",
                        self.log_tail()
                    ));
                }
            }
        }
        // perf ends by SIGINT's own exit status; what counts is the file it wrote.
        if !self.log_text().contains("Captured and wrote") {
            return Err(format!("perf wrote no profile: {}", self.log_tail()));
        }
        self.remove_fifos();
        Ok(self.data.clone())
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.remove_fifos();
    }

    fn remove_fifos(&self) {
        for f in &self.fifos {
            let _ = std::fs::remove_file(f);
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// perf's last words, for an error message.
    fn log_tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
        if tail.is_empty() {
            "it said nothing".into()
        } else {
            tail
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// `perf script` over `data`, its output to be read line by line (see [`super::script`]).
pub fn script(perf: &Perf, data: &Path) -> Result<(Child, ChildStdout), String> {
    let mut child = Command::new(&perf.path)
        .args(["script", "--show-task-events", "-F"])
        .arg("comm,pid,tid,time,ip,sym,dso")
        .arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run perf script: {e}"))?;
    let out = child
        .stdout
        .take()
        .ok_or_else(|| "perf script gave no output pipe".to_string())?;
    Ok((child, out))
}

fn make_fifo(path: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} holds a NUL byte", path.display()))?;
    // SAFETY: `c` is a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(format!(
            "cannot make the FIFO {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Waits up to `wait` for `f` to have something to read.
fn readable(f: &File, wait: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: f.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the length given.
    let n = unsafe { libc::poll(&mut fd, 1, wait.as_millis() as libc::c_int) };
    n > 0 && fd.revents & libc::POLLIN != 0
}

/// CLOCK_MONOTONIC now, in ns: perf's timestamps with `-k CLOCK_MONOTONIC`, and what
/// `Instant` reads on Linux.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
