//! What can go wrong with a real VM instance: its image, QEMU, its boot, its balloon. Each
//! variant carries the program, path or instance at fault and names the fix; an
//! [`InstanceError`](super::super::error::InstanceError) holds it boxed, to keep that enum small.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// A host program the image or the guest needs could not be started.
    #[error("cannot run {program} ({source}); {fix}")]
    CannotRun {
        program: String,
        source: std::io::Error,
        fix: &'static str,
    },
    /// A host program ran and failed; `stderr` is its own account.
    #[error("{what} failed: {stderr}{fix}")]
    Failed {
        /// The program and its object, as `mkfs.ext4 /path/data.img`.
        what: String,
        stderr: String,
        /// `; ` and the fix, or empty where the program's words are all there is.
        fix: String,
    },
    #[error("the image in {} is incomplete; remove it", .dir.display())]
    ImageIncomplete { dir: PathBuf },
    #[error("apt-cache names no kernel for {meta}; {fix}")]
    NoKernel { meta: &'static str, fix: String },
    #[error("apt-get download {package} left no .deb; {fix}")]
    NoDeb { package: String, fix: String },
    #[error("no modules in {}; remove it", .dir.display())]
    NoModules { dir: PathBuf },
    #[error(
        "cannot find the share dir (postgres.bki) of the PostgreSQL in {}; a VM guest needs a \
         Debian-style installation (apt-get install postgresql)",
        .bin_dir.display()
    )]
    NoShareDir { bin_dir: PathBuf },
    #[error(
        "{} is not tidebench and no tidebench binary is beside it; set TIDEBENCH_GUEST_INIT to \
         the tidebench binary the guest runs as its init",
        .exe.display()
    )]
    NoGuestInit { exe: PathBuf },
    #[error(
        "VM {vm} has {recorded} (instance '{member}' is in it); this instance asks for \
         {requested}. One VM has one size: leave --cpus, --memory and --accel out to join it, or \
         name another VM with --vm"
    )]
    SharedShape {
        vm: String,
        member: String,
        recorded: String,
        requested: String,
    },
    #[error(
        "--cpus {cpus} is not a number of vCPUs; give a whole number between 1 and 255 for a VM \
         instance"
    )]
    Vcpus { cpus: f64 },
    #[error("instance '{name}' is not a VM; a balloon needs one started with --hypervisor qemu")]
    NotAVm { name: String },
    #[error(
        "the VM's monitor socket {} is longer than unix sockets allow (107 bytes); set \
         TIDEBENCH_HOME to a shorter path, e.g. /var/tmp/tidebench",
        .path.display()
    )]
    SocketPathTooLong { path: PathBuf },
    #[error(
        "the passfile of '{name}' is missing; run `tidebench instance destroy {name}` and create \
         it anew"
    )]
    NoPassfile { name: String },
    /// The guest's config namespace (its settings) could not be written; `message` says why.
    #[error("{message}")]
    Config { message: String },
    #[error("cannot encode state: {message}")]
    EncodeState { message: String },
    #[error("balloon of VM instance '{name}': {message}")]
    Balloon { name: String, message: String },
    #[error("VM instance '{name}': interrupted while it booted; its QEMU is stopped")]
    Interrupted { name: String },
    #[error("VM instance '{name}': {qemu} with {accel} failed to start: {stderr}{fix}")]
    QemuFailed {
        name: String,
        qemu: &'static str,
        accel: &'static str,
        stderr: String,
        fix: &'static str,
    },
    #[error("{qemu} wrote no pidfile {}", .path.display())]
    NoPidfile { qemu: &'static str, path: PathBuf },
    #[error(
        "VM instance '{name}' did not boot: {why}\n--- last lines of {} ---\n{console_tail}\n--- \
         last lines of the server log ---\n{log_tail}",
        .console.display()
    )]
    DidNotBoot {
        name: String,
        why: String,
        console: PathBuf,
        console_tail: String,
        log_tail: String,
    },
    #[error(
        "VM instance '{name}': the KVM guest {silent} within {secs}s (nested virtualization \
         unavailable?); stopped it; start with `--accel tcg` (emulation, slower)"
    )]
    KvmSilent {
        name: String,
        silent: &'static str,
        secs: u64,
    },
}

impl From<VmError> for super::super::error::InstanceError {
    fn from(e: VmError) -> Self {
        super::super::error::InstanceError::Vm(Box::new(e))
    }
}
