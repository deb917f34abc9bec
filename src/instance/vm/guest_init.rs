//! PID 1 of a tidebench guest (`tidebench guest-init`, hidden): the whole init system of the VM.
//!
//! The kernel starts it from the guest's root disk (the image built by `image`). It mounts the
//! pseudo file systems, loads the few modules the guest needs (their order is written into the
//! image, dependencies first), brings up `lo` and `eth0` (10.0.2.15/24 on QEMU's user network,
//! where the host's forwarded connections arrive from 10.0.2.2, so no route is needed), mounts
//! the data disk, runs initdb where a server has no PGDATA yet (a new disk holds one the host
//! made, see `seed`, which it gives to the server user), starts postgres as an unprivileged user with its
//! log on the second serial port (the host's `server.log`) and says `READY` on the console.
//! A VM that several instances share runs one postgres per instance, each on its own PGDATA
//! and port, and says `READY` when all accept connections; a PGDATA no instance names any
//! more (a destroyed one's) is removed at boot.
//! From then on a thread sends the guest's counters to the host once a second (`stats`).
//! Ctrl-Alt-Del (sent by the host through QMP) is a fast shutdown, then power off.
//!
//! Nothing here runs on the host; it prints to the serial console because that is the guest's
//! only voice before the network is up.
//!
//! SAFETY (every `unsafe` below): plain system calls (mount, ioctl, finit_module, waitpid,
//! kill, reboot, uname) on C strings and structs that live across the call; none keeps a
//! pointer. The SIGINT handler only stores to an atomic.

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use super::config::{ClusterConfig, GuestConfig, CONFIG_DEVICE, DATA_DEVICE, SEED_DEVICE};
use super::config::{GUEST_CERT, GUEST_KEY, READY_LINE};
use super::image::{GUEST_GID, GUEST_UID, MODULES_LIST};
use super::stats::{GuestStats, PORT_NAME};

/// Set by the SIGINT handler (Ctrl-Alt-Del): shut down.
static SHUTDOWN: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    SHUTDOWN.store(true, Ordering::SeqCst);
}

/// Runs the guest; never returns (PID 1 must not exit: the kernel would panic).
pub fn run() -> ! {
    if let Err(e) = boot() {
        say(&format!("tidebench-guest: FAILED: {e}"));
    }
    power_off()
}

fn boot() -> Result<(), String> {
    mount_pseudo()?;
    say("tidebench-guest: init");
    // Ctrl-Alt-Del sends SIGINT to PID 1 instead of rebooting.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::reboot(libc::LINUX_REBOOT_CMD_CAD_OFF);
    }
    load_modules()?;
    net_up()?;
    let config = read_config()?;
    mount_data()?;
    remove_unnamed(&config);
    let seeded = mount_seed();
    let mut postmasters = Vec::new();
    for cluster in &config.clusters {
        if seeded {
            copy_seed(&cluster.pgdata)?;
        }
        own_pgdata(&cluster.pgdata)?;
        if !Path::new(&cluster.pgdata).join("PG_VERSION").exists() {
            initdb(&config.bin_dir, cluster)?;
        }
        write_server_files(cluster)?;
        postmasters.push(start_postgres(&config.bin_dir, cluster)?);
    }
    for cluster in &config.clusters {
        wait_ready(&cluster.pgdata)?;
    }
    say(&format!("{READY_LINE} {}", kernel_release()));
    std::thread::spawn(report_stats);
    supervise(postmasters);
    Ok(())
}

/// The PGDATA dirs of instances the host no longer names (destroyed while the VM was down):
/// removed, so a new instance of the same name starts from initdb.
fn remove_unnamed(config: &GuestConfig) {
    let Ok(entries) = std::fs::read_dir("/data") else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let named = config.clusters.iter().any(|c| Path::new(&c.pgdata) == path);
        let ours = e.file_name().to_string_lossy().starts_with("i-");
        if ours && !named {
            say(&format!("tidebench-guest: removing {}", path.display()));
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

fn mount(source: &str, target: &str, fstype: &str, flags: libc::c_ulong) -> Result<(), String> {
    let _ = std::fs::create_dir_all(target);
    let rc = unsafe {
        libc::mount(
            c(source).as_ptr(),
            c(target).as_ptr(),
            c(fstype).as_ptr(),
            flags,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EBUSY) {
            return Err(format!("mount {fstype} on {target}: {e}"));
        }
    }
    Ok(())
}

fn mount_pseudo() -> Result<(), String> {
    mount("proc", "/proc", "proc", 0)?;
    mount("sysfs", "/sys", "sysfs", 0)?;
    mount("devtmpfs", "/dev", "devtmpfs", 0)?;
    mount("tmpfs", "/dev/shm", "tmpfs", 0)?;
    mount("tmpfs", "/tmp", "tmpfs", 0)?;
    mount("tmpfs", "/run", "tmpfs", 0)?;
    std::fs::set_permissions("/tmp", std::os::unix::fs::PermissionsExt::from_mode(0o1777))
        .map_err(|e| format!("chmod /tmp: {e}"))
}

/// `finit_module` for each module listed in the image. The list is in dependency order as
/// far as the image builder knows it; a module whose symbols are not there yet (ENOENT) is
/// tried again after the others, so the order need not be exact.
fn load_modules() -> Result<(), String> {
    let list = std::fs::read_to_string(MODULES_LIST).map_err(|e| format!("{MODULES_LIST}: {e}"))?;
    let mut pending: Vec<&str> = list.lines().filter(|l| !l.trim().is_empty()).collect();
    while !pending.is_empty() {
        let before = pending.len();
        let mut last = String::new();
        let mut waiting = Vec::new();
        for path in pending {
            match load_module(path) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    last = format!("load module {path}: {e}");
                    waiting.push(path);
                }
                Err(e) => return Err(format!("load module {path}: {e}")),
            }
        }
        if waiting.len() == before {
            return Err(last);
        }
        pending = waiting;
    }
    Ok(())
}

fn load_module(path: &str) -> std::io::Result<()> {
    let file = std::fs::File::open(path)?;
    let fd = std::os::unix::io::AsRawFd::as_raw_fd(&file);
    let params = c("");
    let rc = unsafe { libc::syscall(libc::SYS_finit_module, fd, params.as_ptr(), 0) };
    match std::io::Error::last_os_error() {
        _ if rc == 0 => Ok(()),
        e if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        e => Err(e),
    }
}

/// An ifreq for `name` with an IPv4 address in its union.
fn ifreq_addr(name: &str, addr: [u8; 4]) -> libc::ifreq {
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.as_bytes()) {
        *d = *s as libc::c_char;
    }
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(addr),
        },
        sin_zero: [0; 8],
    };
    unsafe {
        std::ptr::write(&mut req.ifr_ifru as *mut _ as *mut libc::sockaddr_in, sin);
    }
    req
}

fn ioctl(
    sock: libc::c_int,
    request: libc::c_ulong,
    req: &mut libc::ifreq,
    what: &str,
) -> Result<(), String> {
    if unsafe { libc::ioctl(sock, request as _, req as *mut libc::ifreq) } != 0 {
        return Err(format!("{what}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Address, netmask and IFF_UP for one interface.
fn configure(sock: libc::c_int, name: &str, addr: [u8; 4], mask: [u8; 4]) -> Result<(), String> {
    ioctl(
        sock,
        libc::SIOCSIFADDR,
        &mut ifreq_addr(name, addr),
        &format!("address of {name}"),
    )?;
    ioctl(
        sock,
        libc::SIOCSIFNETMASK,
        &mut ifreq_addr(name, mask),
        &format!("netmask of {name}"),
    )?;
    let mut req = ifreq_addr(name, [0; 4]);
    ioctl(
        sock,
        libc::SIOCGIFFLAGS,
        &mut req,
        &format!("flags of {name}"),
    )?;
    unsafe {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    }
    ioctl(
        sock,
        libc::SIOCSIFFLAGS,
        &mut req,
        &format!("bring up {name}"),
    )
}

fn net_up() -> Result<(), String> {
    let sock = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    if sock < 0 {
        return Err(format!("socket: {}", std::io::Error::last_os_error()));
    }
    let result = configure(sock, "lo", [127, 0, 0, 1], [255, 0, 0, 0])
        .and_then(|()| configure(sock, "eth0", [10, 0, 2, 15], [255, 255, 255, 0]));
    unsafe { libc::close(sock) };
    result
}

/// The host's config namespace: TOML, padded with NULs to the device's size.
fn read_config() -> Result<GuestConfig, String> {
    let bytes = std::fs::read(CONFIG_DEVICE).map_err(|e| format!("{CONFIG_DEVICE}: {e}"))?;
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let text = std::str::from_utf8(&bytes[..end]).map_err(|e| format!("config: {e}"))?;
    toml::from_str(text).map_err(|e| format!("config: {e}"))
}

fn mount_data() -> Result<(), String> {
    mount(DATA_DEVICE, "/data", "ext4", libc::MS_NOATIME)?;
    let rc = unsafe { libc::chown(c("/data").as_ptr(), GUEST_UID, GUEST_GID) };
    if rc != 0 {
        return Err(format!("chown /data: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Where the seed disk is mounted, read-only, when the host gave one.
const SEED_MOUNT: &str = "/seed";

/// Mounts the seed disk when there is one; a seed that cannot be mounted is left out (each
/// server without a PGDATA is then initdb'd here).
fn mount_seed() -> bool {
    Path::new(SEED_DEVICE).exists()
        && mount(
            SEED_DEVICE,
            SEED_MOUNT,
            "ext4",
            libc::MS_RDONLY | libc::MS_NOATIME,
        )
        .is_ok()
}

/// The seed's copy of a PGDATA the data disk lacks (a server new to an existing disk).
fn copy_seed(pgdata: &str) -> Result<(), String> {
    let target = Path::new(pgdata);
    let Some(name) = target.file_name() else {
        return Ok(());
    };
    let source = Path::new(SEED_MOUNT).join(name);
    if target.exists() || !source.join("PG_VERSION").exists() {
        return Ok(());
    }
    say(&format!("tidebench-guest: seeding {pgdata}"));
    copy_tree(&source, target)
}

/// Files and dirs with their modes (a PGDATA holds nothing else).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(from).map_err(|e| format!("{}: {e}", from.display()))?;
    let mode = std::fs::Permissions::from_mode(meta.permissions().mode() & 0o7777);
    if meta.is_dir() {
        std::fs::create_dir(to).map_err(|e| format!("create {}: {e}", to.display()))?;
        let entries =
            std::fs::read_dir(from).map_err(|e| format!("list {}: {e}", from.display()))?;
        for e in entries {
            let name = e
                .map_err(|e| format!("list {}: {e}", from.display()))?
                .file_name();
            copy_tree(&from.join(&name), &to.join(&name))?;
        }
    } else {
        std::fs::copy(from, to).map_err(|e| format!("copy {}: {e}", from.display()))?;
    }
    std::fs::set_permissions(to, mode).map_err(|e| format!("chmod {}: {e}", to.display()))
}

/// A PGDATA the host made (see `seed`) comes owned by the host's server user: it becomes the
/// guest's server user's, once, before its first start.
fn own_pgdata(pgdata: &str) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(pgdata) else {
        return Ok(());
    };
    if (meta.uid(), meta.gid()) == (GUEST_UID, GUEST_GID) {
        return Ok(());
    }
    chown_tree(Path::new(pgdata))
}

fn chown_tree(path: &Path) -> Result<(), String> {
    std::os::unix::fs::lchown(path, Some(GUEST_UID), Some(GUEST_GID))
        .map_err(|e| format!("chown {}: {e}", path.display()))?;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let entries =
            std::fs::read_dir(path).map_err(|e| format!("list {}: {e}", path.display()))?;
        for e in entries {
            chown_tree(
                &e.map_err(|e| format!("list {}: {e}", path.display()))?
                    .path(),
            )?;
        }
    }
    Ok(())
}

/// A PostgreSQL program as the unprivileged server user, its output to the server log port.
fn as_server_user(program: &str) -> Result<Command, String> {
    let log = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/ttyS1")
        .map_err(|e| format!("/dev/ttyS1: {e}"))?;
    let log2 = log.try_clone().map_err(|e| format!("/dev/ttyS1: {e}"))?;
    let mut cmd = Command::new(program);
    cmd.uid(GUEST_UID)
        .gid(GUEST_GID)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TZ", "UTC")
        .env("LANG", "C")
        .current_dir("/data")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    Ok(cmd)
}

fn initdb(bin_dir: &str, config: &ClusterConfig) -> Result<(), String> {
    say(&format!("tidebench-guest: initdb {}", config.name));
    let pwfile = "/tmp/pw";
    std::fs::write(pwfile, format!("{}\n", config.password))
        .map_err(|e| format!("{pwfile}: {e}"))?;
    unsafe { libc::chown(c(pwfile).as_ptr(), GUEST_UID, GUEST_GID) };
    let status = as_server_user(&format!("{bin_dir}/initdb"))?
        .args([
            "-D",
            &config.pgdata,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        ])
        .args(["--encoding=UTF8", "--locale=C", "-U", &config.superuser])
        .arg(format!("--pwfile={pwfile}"))
        .args(config.initdb_no_sync.then_some("--no-sync"))
        .status()
        .map_err(|e| format!("initdb: {e}"));
    let _ = std::fs::remove_file(pwfile);
    match status? {
        s if s.success() => Ok(()),
        s => Err(format!("initdb exited with {s}")),
    }
}

fn write_owned(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?;
    unsafe { libc::chown(c(path).as_ptr(), GUEST_UID, GUEST_GID) };
    Ok(())
}

/// tidebench.conf and pg_hba.conf from the host, on every boot (settings may have changed).
fn write_server_files(config: &ClusterConfig) -> Result<(), String> {
    let pgdata = &config.pgdata;
    write_owned(&format!("{pgdata}/tidebench.conf"), &config.conf)?;
    write_owned(&format!("{pgdata}/pg_hba.conf"), &config.hba)?;
    if let Some(tls) = &config.tls {
        write_owned(&format!("{pgdata}/{GUEST_CERT}"), &tls.cert)?;
        let key = format!("{pgdata}/{GUEST_KEY}");
        write_owned(&key, &tls.key)?;
        // PostgreSQL refuses a key that others can read.
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .map_err(|e| format!("{key}: {e}"))?;
    }
    let main = format!("{pgdata}/postgresql.conf");
    let text = std::fs::read_to_string(&main).map_err(|e| format!("{main}: {e}"))?;
    let include = "include 'tidebench.conf'";
    if !text.lines().any(|l| l.trim() == include) {
        write_owned(&main, &format!("{text}\n{include}\n"))?;
    }
    Ok(())
}

fn start_postgres(bin_dir: &str, config: &ClusterConfig) -> Result<Child, String> {
    say(&format!(
        "tidebench-guest: starting postgres {}",
        config.name
    ));
    as_server_user(&format!("{bin_dir}/postgres"))?
        .args(["-D", &config.pgdata])
        .spawn()
        .map_err(|e| format!("postgres: {e}"))
}

/// Until postmaster.pid's status line says `ready` (PostgreSQL writes it when it accepts
/// connections), or the postmaster is gone.
fn wait_ready(pgdata: &str) -> Result<(), String> {
    let pidfile = format!("{pgdata}/postmaster.pid");
    loop {
        if let Ok(text) = std::fs::read_to_string(&pidfile) {
            if text.lines().nth(7).is_some_and(|l| l.trim() == "ready") {
                return Ok(());
            }
        }
        let mut status = 0;
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 && !Path::new(&pidfile).exists() {
            return Err("postgres exited during startup (see the server log)".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Reaps children until every postmaster has exited; Ctrl-Alt-Del asks each for a fast
/// shutdown.
fn supervise(postmasters: Vec<Child>) {
    let mut running: Vec<libc::pid_t> = postmasters.iter().map(|p| p.id() as libc::pid_t).collect();
    let mut asked = false;
    loop {
        if SHUTDOWN.load(Ordering::SeqCst) && !asked {
            say("tidebench-guest: shutting down");
            for pm in &running {
                unsafe { libc::kill(*pm, libc::SIGINT) };
            }
            asked = true;
        }
        let mut status = 0;
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if running.contains(&pid) {
            running.retain(|p| *p != pid);
            say("tidebench-guest: postgres exited");
            if running.is_empty() {
                return;
            }
        }
        if pid <= 0 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// Once a second, the guest's counters to the host's stats port (see `stats`), for as long as
/// the guest runs. Non-blocking: while no host reader is connected the port refuses writes
/// (EAGAIN) and the record is dropped; the init must never wait for the host.
fn report_stats() {
    let mut port: Option<std::fs::File> = None;
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
        if port.is_none() {
            port = open_stats_port();
        }
        let (Some(out), Some(record)) = (port.as_mut(), GuestStats::read()) else {
            continue;
        };
        let _ = out.write_all(format!("{}\n", record.to_line()).as_bytes());
    }
}

/// The virtio-serial port named [`PORT_NAME`]: `/dev/vportNpM`, found by its name in sysfs
/// (there is no udev here to make `/dev/virtio-ports/NAME`).
fn open_stats_port() -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let ports = std::fs::read_dir("/sys/class/virtio-ports").ok()?;
    let dev = ports.flatten().find_map(|p| {
        let name = std::fs::read_to_string(p.path().join("name")).ok()?;
        (name.trim() == PORT_NAME).then(|| Path::new("/dev").join(p.file_name()))
    })?;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(dev)
        .ok()
}

fn kernel_release() -> String {
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut uts) };
    let bytes: Vec<u8> = uts
        .release
        .iter()
        .take_while(|b| **b != 0)
        .map(|b| *b as u8)
        .collect();
    std::ffi::OsStr::from_bytes(&bytes)
        .to_string_lossy()
        .into_owned()
}

fn power_off() -> ! {
    unsafe {
        libc::sync();
        let _ = libc::umount2(c("/data").as_ptr(), 0);
        libc::sync();
        libc::reboot(libc::LINUX_REBOOT_CMD_POWER_OFF);
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
