//! Running one guest: the QEMU command line, choosing the accelerator by trying, waiting for
//! the guest's READY line, QMP, and stopping (a graceful Ctrl-Alt-Del first, then `quit`,
//! then SIGKILL). A QEMU is found again by its pidfile, and only when `/proc/PID/cmdline`
//! still names this instance's QMP socket, so a reused pid is never signalled.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::config::{FAILED_LINE, READY_LINE, ROOT_DEVICE};
use super::image::{Image, GUEST_INIT};
use super::kvm_memo::KvmMemo;
use super::stats::PORT_NAME;
use super::{Accel, VmError};
use crate::instance::error::InstanceError;

/// A KVM guest that prints nothing on its console for this long is taken as hung (nested
/// virtualization missing): the kernel prints within a fraction of a second under KVM.
const KVM_PROBE: Duration = Duration::from_secs(10);
/// How long a killed QEMU gets to release its disks before the next one is started anyway.
const KILL_WAIT: Duration = Duration::from_secs(60);
/// From QEMU's start to the guest's READY line; TCG with a first initdb is the slow case.
const BOOT_TIMEOUT: Duration = Duration::from_secs(300);
/// A graceful shutdown (checkpoint, power off) gets this long before QEMU is told to quit.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(60);
/// The QEMU program.
const QEMU: &str = "qemu-system-x86_64";

/// The files of one guest, in the instance's `vm/` dir (mode 0700).
#[derive(Debug, Clone)]
pub struct VmFiles {
    pub dir: PathBuf,
    /// The server log on the host: the guest's second serial port.
    pub server_log: PathBuf,
}

impl VmFiles {
    pub fn overlay(&self) -> PathBuf {
        self.dir.join("root.qcow2")
    }
    pub fn data(&self) -> PathBuf {
        self.dir.join("data.img")
    }
    pub fn config(&self) -> PathBuf {
        self.dir.join("config.raw")
    }
    /// PGDATA dirs made on the host for servers new to an existing data disk (see `seed`).
    pub fn seed(&self) -> PathBuf {
        self.dir.join("seed.img")
    }
    pub fn console(&self) -> PathBuf {
        self.dir.join("console.log")
    }
    pub fn pidfile(&self) -> PathBuf {
        self.dir.join("qemu.pid")
    }
    pub fn qmp(&self) -> PathBuf {
        self.dir.join("qmp.sock")
    }
    /// The guest's stats port (see `stats`): QEMU listens, the host's sampler connects.
    pub fn stats(&self) -> PathBuf {
        self.dir.join("stats.sock")
    }
}

/// What one boot asks for.
pub struct Boot<'a> {
    pub name: &'a str,
    pub files: &'a VmFiles,
    pub image: &'a Image,
    pub vcpus: u32,
    pub memory: u64,
    /// Host port to guest port, one per server in the guest (all on the host's 127.0.0.1).
    pub forwards: &'a [(u16, u16)],
    /// The `cgroup.procs` files QEMU enters before exec (empty: it stays in ours), so the
    /// guest's memory is charged there from its first page.
    pub cgroup_procs: &'a [std::ffi::CString],
    /// `mem-merge` of the machine; `None`: QEMU's default.
    pub mem_merge: Option<bool>,
    /// Where a KVM that hung is remembered for this host's boot (see [`KvmMemo`]).
    pub kvm_memo: &'a Path,
}

/// A guest that said READY.
#[derive(Debug, Clone)]
pub struct Booted {
    pub accel: Accel,
    /// When the QEMU that booted was started.
    pub started: Instant,
    /// Why KVM was not used, when it was tried and given up.
    pub kvm_note: Option<String>,
}

/// Set by Ctrl-C or SIGTERM while a guest boots (see [`Interrupts`]).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// While a guest boots, Ctrl-C and SIGTERM are caught instead of ending tidebench at once:
/// QEMU runs detached (`-daemonize`), so a tidebench gone mid-boot would leave the VM running
/// without anyone waiting for it. The boot loop sees the flag, kills its QEMU and fails; the
/// former handlers (tokio's, in a run) are back when this is dropped.
struct Interrupts {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl Interrupts {
    fn catch() -> Interrupts {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let mut old = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: zeroed sigaction structs are valid; the handler only stores to an
            // atomic; both structs live across the call.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as usize;
                new.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut new.sa_mask);
                let mut was: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &new, &mut was) == 0 {
                    old.push((sig, was));
                }
            }
        }
        Interrupts { old }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        for (sig, was) in &self.old {
            // SAFETY: restores the action sigaction returned for this signal.
            unsafe { libc::sigaction(*sig, was, std::ptr::null_mut()) };
        }
    }
}

fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

fn interrupted_error(name: &str) -> InstanceError {
    VmError::Interrupted {
        name: name.to_string(),
    }
    .into()
}

/// Whether /dev/kvm can be opened for use (it may exist and still not work: see KVM_PROBE).
fn kvm_usable() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok()
}

/// Boots with the asked accelerator, or KVM falling back to TCG when none was asked.
pub fn boot(b: &Boot, asked: Option<Accel>) -> Result<Booted, InstanceError> {
    let _catch = Interrupts::catch();
    let tcg = |kvm_note: Option<String>| {
        boot_with(b, Accel::Tcg).map(|started| Booted {
            accel: Accel::Tcg,
            started,
            kvm_note,
        })
    };
    if let Some(accel) = asked {
        return boot_with(b, accel).map(|started| Booted {
            accel,
            started,
            kvm_note: None,
        });
    }
    if !kvm_usable() {
        return tcg(Some("/dev/kvm cannot be opened".into()));
    }
    let memo = KvmMemo { path: b.kvm_memo };
    if let Some(note) = memo.recalled() {
        return tcg(Some(note));
    }
    match boot_with(b, Accel::Kvm) {
        Ok(started) => Ok(Booted {
            accel: Accel::Kvm,
            started,
            kvm_note: None,
        }),
        Err(_) if interrupted() => Err(interrupted_error(b.name)),
        // KVM that fails to start or hangs (no nested virtualization): emulate instead, and
        // remember it, so the next guest on this host does not wait for KVM again.
        Err(e) => {
            let why = e.to_string();
            let first = why.lines().next().unwrap_or_default().to_string();
            memo.remember(&first);
            tcg(Some(first))
        }
    }
}

const KVM_SILENT: &str = "printed nothing on its console";

/// Starts QEMU (daemonized) and waits for READY; returns when QEMU was started.
fn boot_with(b: &Boot, accel: Accel) -> Result<Instant, InstanceError> {
    let console = b.files.console();
    let _ = std::fs::remove_file(&console);
    let _ = std::fs::remove_file(b.files.qmp());
    let _ = std::fs::remove_file(b.files.stats());
    let started = Instant::now();
    let mut cmd = command(b, accel);
    if !b.cgroup_procs.is_empty() {
        let procs = b.cgroup_procs.to_vec();
        use std::os::unix::process::CommandExt;
        // SAFETY: only raw open/write/close on paths prepared before fork (see os_user).
        unsafe {
            cmd.pre_exec(move || crate::instance::os_user::enter_cgroups(&procs));
        }
    }
    let out = cmd.output().map_err(|source| VmError::CannotRun {
        program: QEMU.into(),
        source,
        fix: "install QEMU (Debian/Ubuntu: apt-get install qemu-system-x86 qemu-utils)",
    })?;
    if !out.status.success() {
        let fix = match accel {
            Accel::Kvm => "; start with `--accel tcg` (emulation, slower)",
            Accel::Tcg => "",
        };
        return Err(VmError::QemuFailed {
            name: b.name.to_string(),
            qemu: QEMU,
            accel: accel.name(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            fix,
        }
        .into());
    }
    let pid = read_pid(b.files).ok_or_else(|| VmError::NoPidfile {
        qemu: QEMU,
        path: b.files.pidfile(),
    })?;
    match wait_ready(b, accel, pid, started) {
        Ok(()) => Ok(started),
        Err(e) => {
            kill_now(pid);
            Err(e)
        }
    }
}

fn command(b: &Boot, accel: Accel) -> Command {
    let f = b.files;
    let mut cmd = Command::new(QEMU);
    let (accel_arg, cpu) = match accel {
        Accel::Kvm => ("kvm", "host"),
        // TCG's translated code is capped (QEMU's default grows to 1GiB per guest): what a
        // guest costs the host stays predictable, and a host group's limit holds it.
        Accel::Tcg => ("tcg,thread=multi,tb-size=128", "max"),
    };
    let append = format!(
        "console=ttyS0 root={ROOT_DEVICE} rootfstype=ext4 rw panic=-1 init={GUEST_INIT} -- guest-init"
    );
    cmd.args(["-name", &format!("tidebench-{}", b.name)])
        .args(["-machine", &machine(b.mem_merge)])
        .args(["-accel", accel_arg, "-cpu", cpu])
        .args([
            "-smp",
            &b.vcpus.to_string(),
            "-m",
            &format!("{}M", b.memory >> 20),
        ])
        .args([
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
        ])
        .arg("-kernel")
        .arg(&b.image.kernel)
        .args(["-append", &append])
        .arg("-drive")
        .arg(drive("root", &f.overlay(), "qcow2", false))
        .arg("-drive")
        .arg(drive("data", &f.data(), "raw", false))
        .arg("-drive")
        .arg(drive("conf", &f.config(), "raw", true))
        .args(["-device", "nvme,id=nvme0,serial=tidebench"])
        .args(["-device", "nvme-ns,drive=root,bus=nvme0,nsid=1"])
        .args(["-device", "nvme-ns,drive=data,bus=nvme0,nsid=2"])
        .args(["-device", "nvme-ns,drive=conf,bus=nvme0,nsid=3"]);
    if f.seed().exists() {
        cmd.arg("-drive")
            .arg(drive("seed", &f.seed(), "raw", true))
            .args(["-device", "nvme-ns,drive=seed,bus=nvme0,nsid=4"]);
    }
    cmd
        // restrict=on: the guest reaches nothing outside; only the host's forward comes in,
        // and it listens on 127.0.0.1.
        .args(["-netdev", &netdev(b.forwards)])
        .args(["-device", "virtio-net-pci,netdev=net0"])
        .args(["-device", "virtio-balloon-pci,id=balloon0"])
        // The guest's counters, one record a second, to a unix socket in the 0700 `vm/` dir.
        .args(["-device", "virtio-serial-pci,id=vser0"])
        .arg("-chardev")
        .arg(format!(
            "socket,id=stats,path={},server=on,wait=off",
            opt_path(&f.stats())
        ))
        .args([
            "-device",
            &format!("virtserialport,bus=vser0.0,chardev=stats,name={PORT_NAME}"),
        ])
        .arg("-chardev")
        .arg(format!("file,id=console,path={}", opt_path(&f.console())))
        .args(["-serial", "chardev:console"])
        .arg("-chardev")
        .arg(format!(
            "file,id=serverlog,append=on,path={}",
            opt_path(&f.server_log)
        ))
        .args(["-serial", "chardev:serverlog"])
        .arg("-qmp")
        .arg(format!("unix:{},server=on,wait=off", opt_path(&f.qmp())))
        .arg("-pidfile")
        .arg(f.pidfile())
        .arg("-daemonize")
        .stdin(std::process::Stdio::null());
    cmd
}

/// QEMU's user network with one forward per server: `restrict=on`, so the guest reaches
/// nothing outside, and each forward listens on the host's 127.0.0.1 only.
fn netdev(forwards: &[(u16, u16)]) -> String {
    let mut out = String::from("user,id=net0,restrict=on");
    for (host, guest) in forwards {
        out.push_str(&format!(",hostfwd=tcp:127.0.0.1:{host}-:{guest}"));
    }
    out
}

/// The machine type, with KSM's merging of guest memory on or off when asked.
fn machine(mem_merge: Option<bool>) -> String {
    match mem_merge {
        Some(on) => format!("pc,mem-merge={}", if on { "on" } else { "off" }),
        None => "pc".into(),
    }
}

/// A path inside a QEMU option value: commas doubled.
fn opt_path(p: &Path) -> String {
    p.to_string_lossy().replace(',', ",,")
}

fn drive(id: &str, file: &Path, format: &str, readonly: bool) -> String {
    let ro = if readonly { ",readonly=on" } else { "" };
    format!(
        "if=none,id={id},file={},format={format},cache=writeback,discard=unmap{ro}",
        opt_path(file)
    )
}

/// Until the console says READY (or FAILED), QEMU exits, or time runs out.
fn wait_ready(b: &Boot, accel: Accel, pid: u32, started: Instant) -> Result<(), InstanceError> {
    let console = b.files.console();
    let failed = |why: String| -> InstanceError {
        VmError::DidNotBoot {
            name: b.name.to_string(),
            why,
            console: console.clone(),
            console_tail: crate::instance::server::log_tail(&console),
            log_tail: crate::instance::server::log_tail(&b.files.server_log),
        }
        .into()
    };
    loop {
        if interrupted() {
            return Err(interrupted_error(b.name));
        }
        let text = std::fs::read_to_string(&console).unwrap_or_default();
        if text.lines().any(|l| l.starts_with(READY_LINE)) {
            return Ok(());
        }
        if let Some(line) = text.lines().find(|l| l.starts_with(FAILED_LINE)) {
            return Err(failed(format!("the guest's init said: {line}")));
        }
        if !alive(pid) {
            return Err(failed("QEMU exited".into()));
        }
        let waited = started.elapsed();
        if accel == Accel::Kvm && text.is_empty() && waited > KVM_PROBE {
            return Err(VmError::KvmSilent {
                name: b.name.to_string(),
                silent: KVM_SILENT,
                secs: KVM_PROBE.as_secs(),
            }
            .into());
        }
        if waited > BOOT_TIMEOUT {
            return Err(failed(format!(
                "no READY line within {}s",
                BOOT_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The QEMU pid from the pidfile, when that process is still this instance's QEMU.
pub fn running_pid(files: &VmFiles) -> Option<u32> {
    let pid = read_pid(files)?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let qmp = opt_path(&files.qmp());
    let text = String::from_utf8_lossy(&cmdline);
    text.contains(&qmp).then_some(pid)
}

fn read_pid(files: &VmFiles) -> Option<u32> {
    std::fs::read_to_string(files.pidfile())
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn alive(pid: u32) -> bool {
    // A zombie has no cmdline: QEMU daemonized, so it is not our child to reap.
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty())
}

/// Whether the process has let go of its files: gone, or a zombie. Not `alive`: a process
/// that is exiting drops its memory (and so its cmdline) before it closes its files, and
/// QEMU's image locks go with the files, so the next QEMU on the same disks must wait for this.
/// A killed postmaster's WAL is final once it is released too.
pub(in crate::instance) fn released(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    // The state follows the command name, which is in parentheses and may hold spaces.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    matches!(state, Some("Z" | "X" | "x"))
}

/// SIGKILL, then wait until the process has released its disks. A QEMU whose vCPU threads are
/// stuck in a hung KVM can take a while to die on a busy host: the bound is generous.
fn kill_now(pid: u32) {
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    let t = Instant::now();
    while !released(pid) && t.elapsed() < KILL_WAIT {
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_exit(pid: u32, limit: Duration) -> bool {
    let t = Instant::now();
    while !released(pid) {
        if t.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    true
}

/// Stops the guest: Ctrl-Alt-Del (the guest's init shuts PostgreSQL down and powers off),
/// then QMP `quit`, then SIGKILL. Returns false when no QEMU of this instance was running.
pub fn stop(files: &VmFiles) -> bool {
    let Some(pid) = running_pid(files) else {
        return false;
    };
    let keys = serde_json::json!({"execute": "send-key", "arguments": {"keys": [
        {"type": "qcode", "data": "ctrl"}, {"type": "qcode", "data": "alt"},
        {"type": "qcode", "data": "delete"}]}});
    if qmp(&files.qmp(), &keys).is_ok() && wait_exit(pid, SHUTDOWN_WAIT) {
        return true;
    }
    quit_now(files, pid);
    true
}

/// Ends the guest without shutting it down (QMP `quit`, then SIGKILL): for a guest whose disks
/// are about to be removed (`destroy`). Returns false when no QEMU of this instance was running.
pub fn quit(files: &VmFiles) -> bool {
    let Some(pid) = running_pid(files) else {
        return false;
    };
    quit_now(files, pid);
    true
}

fn quit_now(files: &VmFiles, pid: u32) {
    let quit = serde_json::json!({"execute": "quit"});
    if qmp(&files.qmp(), &quit).is_ok() && wait_exit(pid, Duration::from_secs(10)) {
        return;
    }
    kill_now(pid);
}

/// One QMP command: greeting, capabilities, the command; its `return` value.
pub fn qmp(socket: &Path, command: &serde_json::Value) -> Result<serde_json::Value, String> {
    let stream = UnixStream::connect(socket).map_err(|e| format!("{}: {e}", socket.display()))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| format!("QMP greeting: {e}"))?;
    let mut send = |v: &serde_json::Value| -> Result<serde_json::Value, String> {
        writeln!(writer, "{v}").map_err(|e| format!("QMP: {e}"))?;
        loop {
            let mut reply = String::new();
            if reader
                .read_line(&mut reply)
                .map_err(|e| format!("QMP: {e}"))?
                == 0
            {
                return Err("QMP closed".into());
            }
            let v: serde_json::Value =
                serde_json::from_str(&reply).map_err(|e| format!("QMP: {e}"))?;
            // Events (e.g. SHUTDOWN) come between; the answer has `return` or `error`.
            if let Some(r) = v.get("return") {
                return Ok(r.clone());
            }
            if let Some(e) = v.get("error") {
                return Err(format!("QMP: {e}"));
            }
        }
    };
    send(&serde_json::json!({"execute": "qmp_capabilities"}))?;
    send(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guest_listens_on_the_hosts_loopback_only_and_its_files_are_its_own() {
        let files = VmFiles {
            dir: PathBuf::from("/h/instances/a,b/vm"),
            server_log: PathBuf::from("/h/instances/a,b/server.log"),
        };
        let image = Image {
            root: PathBuf::from("/c/root.img"),
            kernel: PathBuf::from("/c/vmlinuz"),
            release: "6.1.0-56-cloud-amd64".into(),
            built: false,
            build_secs: 0.0,
        };
        let boot = Boot {
            name: "a",
            files: &files,
            image: &image,
            vcpus: 2,
            memory: 512 << 20,
            forwards: &[(6543, 5432), (6544, 6544)],
            cgroup_procs: &[],
            mem_merge: Some(false),
            kvm_memo: Path::new("/c/kvm-failed"),
        };
        let cmd = command(&boot, Accel::Tcg);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let net = args.iter().find(|a| a.starts_with("user,")).unwrap();
        assert!(net.contains("restrict=on"), "{net}");
        assert!(net.contains("hostfwd=tcp:127.0.0.1:6543-:5432"), "{net}");
        assert!(
            net.contains(",hostfwd=tcp:127.0.0.1:6544-:6544"),
            "one per server: {net}"
        );
        assert_eq!(args.iter().filter(|a| a.contains("hostfwd")).count(), 1);
        // Commas in paths are doubled, or QEMU would read them as option separators.
        assert!(args
            .iter()
            .any(|a| a == "unix:/h/instances/a,,b/vm/qmp.sock,server=on,wait=off"));
        assert!(args.contains(&"-daemonize".to_string()));
        // The stats channel is a unix socket in the instance's own dir, not a TCP port.
        assert!(args.iter().any(
            |a| a == "socket,id=stats,path=/h/instances/a,,b/vm/stats.sock,server=on,wait=off"
        ));
        assert!(!args
            .iter()
            .any(|a| a.starts_with("tcp:") || a.contains("0.0.0.0")));
        let at = args.iter().position(|a| a == "-smp").unwrap();
        assert_eq!(
            (args[at + 1].as_str(), args[at + 3].as_str()),
            ("2", "512M")
        );
        assert!(args.iter().any(|a| a == "tcg,thread=multi,tb-size=128"));
        assert!(args.contains(&"pc,mem-merge=off".to_string()), "{args:?}");
    }

    #[test]
    fn a_process_has_released_its_disks_only_once_it_is_gone_or_a_zombie() {
        assert!(
            !released(std::process::id()),
            "this process holds its files"
        );
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert!(!released(pid));
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        // Not reaped yet: a zombie, which has closed its files.
        let t = Instant::now();
        while !released(pid) && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(released(pid), "a killed child is a zombie");
        child.wait().unwrap();
        assert!(released(pid), "and then gone");
    }
}
