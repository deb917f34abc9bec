//! The guest image: a Debian kernel and a root file system made of the host's own PostgreSQL,
//! built once per host and cached, keyed by a hash of its recipe.
//!
//! Why not debootstrap: the guest must run exactly the host's PostgreSQL (same minor version,
//! same build), and a root of just the server's files, the libraries `ldd` names and
//! tidebench itself as init takes seconds to assemble where debootstrap takes minutes and a
//! gigabyte. The kernel is Debian's `-cloud-amd64` flavour (`apt-get download`, `dpkg-deb
//! -x`): NVMe and ext4 are built in, so it boots from an NVMe disk with no initramfs; the few
//! modules the guest loads itself (virtio-net, the balloon, virtio-serial) are copied beside it.
//! `mkfs.ext4 -d` turns the staging dir into a disk image without mounting anything.
//!
//! Layout of the cache (mode 0700): `kernels/<package>/` (the unpacked kernel package) and
//! `images/<recipe hash>/{root.img,vmlinuz,release,recipe}`. Each VM boots a qcow2 overlay
//! of `root.img`, so ten VMs cost one image.

use std::hash::{Hash, Hasher};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::VmError;
use crate::instance::error::InstanceError;

/// Bumped when what goes into the image changes.
const RECIPE_VERSION: u32 = 4;
/// The kernel flavour's metapackage: its dependency names the current kernel package.
const KERNEL_META: &str = "linux-image-cloud-amd64";
/// Modules the guest loads, dependencies first as far as known (the guest retries a module
/// whose dependencies are not loaded yet); those built into the kernel are skipped.
const MODULES: [&str; 10] = [
    "virtio_ring",
    "virtio",
    "virtio_pci_legacy_dev",
    "virtio_pci_modern_dev",
    "virtio_pci",
    "failover",
    "net_failover",
    "virtio_net",
    "virtio_balloon",
    // The stats port to the host (virtio-serial).
    "virtio_console",
];
/// In the guest: the list of module files to load, in order.
pub const MODULES_LIST: &str = "/etc/tidebench-modules";
/// In the guest: where tidebench (the init) lives.
pub const GUEST_INIT: &str = "/sbin/tidebench";
/// In the guest: the PostgreSQL data dir, on the data disk.
pub const GUEST_PGDATA: &str = "/data/pgdata";
/// The unprivileged user the guest's server runs as.
pub const GUEST_UID: u32 = 100;
pub const GUEST_GID: u32 = 100;

/// A built image: what QEMU boots.
#[derive(Debug, Clone)]
pub struct Image {
    pub root: PathBuf,
    pub kernel: PathBuf,
    /// The guest kernel's release (`uname -r` in the guest).
    pub release: String,
    /// Whether this call built it (false: taken from the cache).
    pub built: bool,
    /// How long building took, when it did.
    pub build_secs: f64,
}

/// The image cache: `$TIDEBENCH_VM_CACHE`, else `/var/cache/tidebench` for root, else
/// `<home>/vm-cache`.
pub fn cache_dir(home: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("TIDEBENCH_VM_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/cache/tidebench");
    }
    home.join("vm-cache")
}

/// Creates `dir` (and parents) with mode 0700.
pub fn private_dir(dir: &Path) -> Result<(), InstanceError> {
    std::fs::create_dir_all(dir).map_err(InstanceError::io("create", dir))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(InstanceError::io("set permissions of", dir))
}

/// Runs a host program; its stderr names the problem.
fn run(cmd: &mut Command, fix: &'static str) -> Result<String, InstanceError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd.output().map_err(|source| VmError::CannotRun {
        program: program.clone(),
        source,
        fix,
    })?;
    if !out.status.success() {
        return Err(VmError::Failed {
            what: program,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            fix: format!("; {fix}"),
        }
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The image for the host's PostgreSQL in `bin_dir`, from the cache or built now.
pub fn ensure(home: &Path, bin_dir: &Path) -> Result<Image, InstanceError> {
    let cache = cache_dir(home);
    private_dir(&cache)?;
    let kernel_pkg = kernel_package(&cache)?;
    let recipe = recipe(bin_dir, &kernel_pkg)?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    recipe.hash(&mut hasher);
    let dir = cache
        .join("images")
        .join(format!("{:016x}", hasher.finish()));
    if let Some(image) = load(&dir) {
        return Ok(image);
    }
    let started = std::time::Instant::now();
    let kernel = unpack_kernel(&cache, &kernel_pkg)?;
    let staging = cache.join(format!("build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    private_dir(&staging)?;
    let result = build(&staging, &kernel, bin_dir, &recipe);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    private_dir(&cache.join("images"))?;
    // Another tidebench may have built the same recipe meanwhile: either copy is good.
    if std::fs::rename(&staging, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    let mut image = load(&dir).ok_or_else(|| VmError::ImageIncomplete { dir: dir.clone() })?;
    prune_others(&cache.join("images"), &dir);
    image.built = true;
    image.build_secs = started.elapsed().as_secs_f64();
    Ok(image)
}

/// Removes the images of older recipes that no running QEMU boots (a VM's kernel path is on
/// its command line; a stopped VM gets a fresh overlay of the current image at its next boot),
/// so rebuilding tidebench does not pile up images.
fn prune_others(images: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(images) else {
        return;
    };
    let running: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).into_owned())
        .filter(|c| c.contains("qemu"))
        .collect();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let kernel = path.join("vmlinuz").to_string_lossy().into_owned();
        if path != keep && !running.iter().any(|c| c.contains(&kernel)) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

fn load(dir: &Path) -> Option<Image> {
    let release = std::fs::read_to_string(dir.join("release")).ok()?;
    let (root, kernel) = (dir.join("root.img"), dir.join("vmlinuz"));
    (root.is_file() && kernel.is_file()).then(|| Image {
        root,
        kernel,
        release: release.trim().to_string(),
        built: false,
        build_secs: 0.0,
    })
}

/// The apt lists, whose change time says when `apt-get update` last changed them.
const APT_LISTS: &str = "/var/lib/apt/lists";

/// The kernel package the metapackage points at, e.g. `linux-image-6.1.0-56-cloud-amd64`.
/// Every boot asks, and `apt-cache` rebuilds its package cache on each call where none is kept
/// on disk (7 s on a busy host here), so the answer is remembered in the image cache beside
/// the apt lists' change time, and asked again once they change.
fn kernel_package(cache: &Path) -> Result<String, InstanceError> {
    if let Some(pkg) = std::env::var_os("TIDEBENCH_VM_KERNEL_PACKAGE").filter(|p| !p.is_empty()) {
        return Ok(pkg.to_string_lossy().into_owned());
    }
    let memo = cache.join("kernel-package");
    let lists = std::fs::metadata(APT_LISTS)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().to_string());
    let remembered = std::fs::read_to_string(&memo).ok().and_then(|text| {
        let (stamp, pkg) = text.trim().split_once(' ')?;
        (Some(stamp) == lists.as_deref() && pkg.starts_with("linux-image-"))
            .then(|| pkg.to_string())
    });
    if let Some(pkg) = remembered {
        return Ok(pkg);
    }
    let pkg = ask_kernel_package()?;
    if let Some(stamp) = lists {
        let _ = std::fs::write(&memo, format!("{stamp} {pkg}\n"));
    }
    Ok(pkg)
}

/// `apt-cache depends` of the kernel metapackage: its `linux-image-` dependency.
fn ask_kernel_package() -> Result<String, InstanceError> {
    let fix = "a VM guest needs Debian's (or Ubuntu's) apt with its package lists \
               (`apt-get update`); or set TIDEBENCH_VM_KERNEL_PACKAGE to a linux-image package";
    let out = run(
        Command::new("apt-cache").args(["depends", KERNEL_META]),
        fix,
    )?;
    out.lines()
        .filter_map(|l| l.trim().strip_prefix("Depends: "))
        .find(|p| p.starts_with("linux-image-"))
        .map(str::to_string)
        .ok_or_else(|| {
            VmError::NoKernel {
                meta: KERNEL_META,
                fix: fix.to_string(),
            }
            .into()
        })
}

/// What the image is made of: a change to any of it means a new image.
fn recipe(bin_dir: &Path, kernel_pkg: &str) -> Result<String, InstanceError> {
    let version = run(
        Command::new(bin_dir.join("postgres")).arg("--version"),
        "check the PostgreSQL installation",
    )?;
    let exe = init_binary()?;
    let meta = std::fs::metadata(&exe).map_err(InstanceError::io("read", &exe))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!(
        "recipe {RECIPE_VERSION}\nkernel {kernel_pkg}\npostgres {} {}\ninit {} {} {mtime}\n",
        bin_dir.display(),
        version.trim(),
        exe.display(),
        meta.len()
    ))
}

/// Downloads and unpacks the kernel package once: `kernels/<package>/`.
fn unpack_kernel(cache: &Path, pkg: &str) -> Result<PathBuf, InstanceError> {
    let dir = cache.join("kernels").join(pkg);
    if dir.join("boot").is_dir() {
        return Ok(dir);
    }
    let work = cache.join(format!("kernel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    private_dir(&work)?;
    let fix = "check that Debian's mirror is reachable (apt-get update)";
    let result = run(
        Command::new("apt-get")
            .args(["download", "-q", pkg])
            .current_dir(&work),
        fix,
    )
    .and_then(|_| {
        let deb = std::fs::read_dir(&work)
            .map_err(InstanceError::io("list", &work))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "deb"))
            .ok_or_else(|| VmError::NoDeb {
                package: pkg.to_string(),
                fix: fix.to_string(),
            })?;
        run(
            Command::new("dpkg-deb")
                .arg("-x")
                .arg(&deb)
                .arg(work.join("x")),
            fix,
        )?;
        private_dir(&cache.join("kernels"))?;
        match std::fs::rename(work.join("x"), &dir) {
            // Another tidebench unpacked the same package meanwhile.
            Err(_) if dir.join("boot").is_dir() => Ok(()),
            r => r.map_err(InstanceError::io("move", &dir)),
        }
    });
    let _ = std::fs::remove_dir_all(&work);
    result.map(|()| dir)
}

/// Stages the root file system and makes `root.img`, `vmlinuz` and `release` in `out`.
fn build(out: &Path, kernel: &Path, bin_dir: &Path, recipe: &str) -> Result<(), InstanceError> {
    let root = out.join("root");
    for d in [
        "proc", "sys", "dev", "tmp", "run", "data", "etc", "sbin", "lib64",
    ] {
        std::fs::create_dir_all(root.join(d)).map_err(InstanceError::io("create", root.join(d)))?;
    }
    let release = stage_kernel(kernel, &root, out)?;
    stage_postgres(bin_dir, &root)?;
    stage_init(&root)?;
    let etc = root.join("etc");
    write(
        &etc.join("passwd"),
        "root:x:0:0:root:/:/bin/false\npostgres:x:100:100:PostgreSQL:/data:/bin/false\n",
    )?;
    write(&etc.join("group"), "root:x:0:\npostgres:x:100:\n")?;
    write(&out.join("recipe"), recipe)?;
    make_ext4(&root, &out.join("root.img"), "tidebench-root")?;
    std::fs::remove_dir_all(&root).map_err(InstanceError::io("remove", &root))?;
    write(&out.join("release"), &release)
}

fn write(path: &Path, text: &str) -> Result<(), InstanceError> {
    std::fs::write(path, text).map_err(InstanceError::io("write", path))
}

/// Copies `vmlinuz` to `out` and the listed modules into the root; returns the release.
fn stage_kernel(kernel: &Path, root: &Path, out: &Path) -> Result<String, InstanceError> {
    let modules = kernel.join("lib/modules");
    let release = std::fs::read_dir(&modules)
        .map_err(InstanceError::io("list", &modules))?
        .filter_map(Result::ok)
        .find_map(|e| e.file_name().to_str().map(str::to_string))
        .ok_or_else(|| VmError::NoModules {
            dir: modules.clone(),
        })?;
    let vmlinuz = kernel.join(format!("boot/vmlinuz-{release}"));
    std::fs::copy(&vmlinuz, out.join("vmlinuz")).map_err(InstanceError::io("copy", &vmlinuz))?;
    let mut found = std::collections::HashMap::new();
    index_modules(&modules.join(&release), &mut found)?;
    let mut list = String::new();
    for name in MODULES {
        // Not in the package: built into this kernel.
        let Some(src) = found.get(name) else { continue };
        let guest = format!("/lib/modules/{release}/{name}.ko");
        copy_file(src, &root.join(guest.trim_start_matches('/')))?;
        list.push_str(&guest);
        list.push('\n');
    }
    write(&root.join(MODULES_LIST.trim_start_matches('/')), &list)?;
    Ok(release)
}

/// Module name → file, for every `.ko` below `dir`.
fn index_modules(
    dir: &Path,
    found: &mut std::collections::HashMap<String, PathBuf>,
) -> Result<(), InstanceError> {
    for entry in std::fs::read_dir(dir).map_err(InstanceError::io("list", dir))? {
        let path = entry.map_err(InstanceError::io("list", dir))?.path();
        if path.is_dir() {
            index_modules(&path, found)?;
        } else if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if let Some(stem) = name.strip_suffix(".ko") {
                found.insert(stem.replace('-', "_"), path.clone());
            }
        }
    }
    Ok(())
}

fn copy_file(src: &Path, dst: &Path) -> Result<(), InstanceError> {
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).map_err(InstanceError::io("create", parent))?;
    }
    std::fs::copy(src, dst).map_err(InstanceError::io("copy", src))?;
    Ok(())
}

/// The server programs, its lib and share dirs, the time zones and every library they need.
fn stage_postgres(bin_dir: &Path, root: &Path) -> Result<(), InstanceError> {
    let mut binaries = vec![bin_dir.join("postgres"), bin_dir.join("initdb")];
    for b in &binaries {
        copy_file(b, &under(root, b))?;
    }
    // initdb and the server run programs through popen/system: /bin/sh (dash on Debian).
    let sh = Path::new("/bin/sh");
    copy_file(sh, &under(root, sh))?;
    binaries.push(sh.to_path_buf());
    let install = bin_dir.parent().unwrap_or(bin_dir);
    let lib = install.join("lib");
    if lib.is_dir() {
        for entry in std::fs::read_dir(&lib).map_err(InstanceError::io("list", &lib))? {
            let path = entry.map_err(InstanceError::io("list", &lib))?.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // JIT (LLVM, hundreds of MB) stays out: the guest's server runs without it.
            if path.is_file() && name.ends_with(".so") && !name.starts_with("llvmjit") {
                copy_file(&path, &under(root, &path))?;
                binaries.push(path);
            }
        }
    }
    let share = share_dir(bin_dir)?;
    copy_tree(&share, root)?;
    let zoneinfo = Path::new("/usr/share/zoneinfo");
    if zoneinfo.is_dir() {
        copy_tree(zoneinfo, root)?;
    }
    binaries.push(init_binary()?);
    copy_libraries(&binaries, root)
}

/// `root` + an absolute host path.
fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Where the server's share files are (postgres.bki): Debian's layout, or beside the bin dir.
fn share_dir(bin_dir: &Path) -> Result<PathBuf, InstanceError> {
    let major = bin_dir
        .parent()
        .and_then(|p| p.file_name())
        .map(|m| m.to_string_lossy().into_owned())
        .unwrap_or_default();
    let install = bin_dir.parent().unwrap_or(bin_dir);
    let candidates = [
        PathBuf::from(format!("/usr/share/postgresql/{major}")),
        install.join("share/postgresql"),
        install.join("share"),
    ];
    candidates
        .into_iter()
        .find(|d| d.join("postgres.bki").is_file())
        .ok_or_else(|| {
            VmError::NoShareDir {
                bin_dir: bin_dir.to_path_buf(),
            }
            .into()
        })
}

/// `cp -a`: a tree at its own path below `root`, symlinks kept.
fn copy_tree(dir: &Path, root: &Path) -> Result<(), InstanceError> {
    let target = under(root, dir.parent().unwrap_or(dir));
    std::fs::create_dir_all(&target).map_err(InstanceError::io("create", &target))?;
    run(
        Command::new("cp").arg("-a").arg(dir).arg(&target),
        "check the free space of the image cache",
    )
    .map(|_| ())
}

/// Every shared library `ldd` names for `binaries`, at its own path (symlinks followed).
fn copy_libraries(binaries: &[PathBuf], root: &Path) -> Result<(), InstanceError> {
    let mut libs = std::collections::BTreeSet::new();
    for b in binaries {
        let out = run(Command::new("ldd").arg(b), "install libc-bin (ldd)")?;
        for line in out.lines() {
            let path = match line.split_once("=>") {
                Some((_, right)) => right.trim().split(' ').next().unwrap_or(""),
                None => line.trim().split(' ').next().unwrap_or(""),
            };
            if path.starts_with('/') {
                libs.insert(PathBuf::from(path));
            }
        }
    }
    for lib in &libs {
        copy_file(lib, &under(root, lib))?;
    }
    Ok(())
}

/// The tidebench binary that becomes the guest's init: `$TIDEBENCH_GUEST_INIT`, else this
/// program when it is tidebench, else a `tidebench` beside or above it (a test harness runs
/// from `target/debug/deps/`).
fn init_binary() -> Result<PathBuf, InstanceError> {
    if let Some(p) = std::env::var_os("TIDEBENCH_GUEST_INIT").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(InstanceError::io("find", "tidebench itself"))?;
    if exe.file_name().is_some_and(|n| n == "tidebench") {
        return Ok(exe);
    }
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("tidebench"))
        .find(|p| p.is_file())
        .ok_or_else(|| VmError::NoGuestInit { exe: exe.clone() }.into())
}

/// tidebench itself as the guest's init, without its debug info when `strip` is there.
fn stage_init(root: &Path) -> Result<(), InstanceError> {
    let exe = init_binary()?;
    let dst = under(root, Path::new(GUEST_INIT));
    copy_file(&exe, &dst)?;
    // Debug builds are ~180 MB, stripped ~30 MB; an unstripped init still works.
    let _ = Command::new("strip").arg(&dst).output();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o755))
        .map_err(InstanceError::io("set permissions of", &dst))
}

/// `mkfs.ext4 -d`: the staging dir as a file system image, sized to fit with room to spare.
pub(super) fn make_ext4(root: &Path, img: &Path, label: &str) -> Result<(), InstanceError> {
    let used = run(
        Command::new("du").args(["-s", "-B1"]).arg(root),
        "install coreutils",
    )?;
    let bytes: u64 = used
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let size_mib = bytes / (1 << 20) * 5 / 4 + 64;
    run(
        Command::new("mkfs.ext4")
            .args([
                "-q",
                "-F",
                "-L",
                label,
                "-O",
                "^has_journal",
                "-E",
                "root_owner=0:0",
                "-d",
            ])
            .arg(root)
            .arg(img)
            .arg(format!("{size_mib}M")),
        "install e2fsprogs (1.43 or later, for mkfs.ext4 -d)",
    )
    .map(|_| ())
}
