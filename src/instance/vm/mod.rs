//! Managed instances that are real virtual machines (issue 40): a QEMU guest running the
//! host's PostgreSQL, reachable on 127.0.0.1 through QEMU's user network.
//!
//! `tidebench instance start NAME --hypervisor qemu [--accel kvm|tcg] [--cpus N] [--memory
//! SIZE]` makes one. The guest boots a copy-on-write overlay of the cached image (`image`),
//! keeps PGDATA on its own data disk (`vm/data.img`, so a new image or a restart rebuilds
//! nothing), reads its settings from a config namespace written at every boot (`config`),
//! and its init is tidebench itself (`guest_init`). The server log is the guest's second
//! serial port, written straight into the instance's `server.log`.
//!
//! Files: `<instance>/vm/` (0700) holds the overlay, data disk, config, console log, QEMU's
//! pidfile and QMP socket, the guest's stats socket (`stats`), and `state.toml` (the
//! accelerator used, boot time, guest kernel).

pub mod balloon;
pub mod config;
pub(super) mod error;
pub mod guest_init;
pub mod image;
mod kvm_memo;
pub mod qemu;
mod seed;
pub mod shared;
pub mod stats;
mod types;

use std::path::Path;
use std::process::Command;

use super::checks::ensure_database;
use super::error::InstanceError;
use super::record::{self, Layout, Record, Setting};
use super::settings;
use super::types::{Instance, InstanceOptions, StartOutcome};
pub use balloon::{balloon, GuestMemory};
use config::{ClusterConfig, ConfShape, GuestConfig, GUEST_HBA, GUEST_PORT};
pub use error::VmError;
use qemu::VmFiles;
pub use types::{Accel, GuestInfo, GuestOptions, GuestRecord, GuestState, Hypervisor};

/// A guest's memory when `--memory` is not given.
pub const DEFAULT_MEMORY: u64 = 1 << 30;
/// The data disk's size (a sparse file: it costs what PostgreSQL writes).
const DATA_DISK: &str = "32G";

/// The guest's files: the instance's own `vm/` dir, or the shared VM's (see [`shared`]).
fn files_of(layout: &Layout, record: &Record) -> VmFiles {
    match &record.vm {
        Some(path) => shared::files(&layout.home, path),
        None => VmFiles {
            dir: layout.dir.join("vm"),
            server_log: layout.log(),
        },
    }
}

/// `--cpus` must be whole vCPUs for a guest.
pub(crate) fn validate(opts: &InstanceOptions) -> Result<u32, InstanceError> {
    opts.cpus.map_or(Ok(1), vcpus)
}

/// `--cpus` of a guest: whole vCPUs.
fn vcpus(cpus: f64) -> Result<u32, InstanceError> {
    if (1.0..=255.0).contains(&cpus) && cpus.fract() == 0.0 {
        return Ok(cpus as u32);
    }
    Err(VmError::Vcpus { cpus }.into())
}

/// For a guest's record with limits laid over it (`reconfigure`): the CPU and memory limits
/// are its vCPUs and RAM.
pub(crate) fn fold_limits(record: &mut Record) -> Result<(), InstanceError> {
    let Some(guest) = record.guest.as_mut() else {
        return Ok(());
    };
    if let Some(c) = record.cpus.take() {
        guest.vcpus = vcpus(c)?;
    }
    if let Some(m) = record.memory.take() {
        guest.memory = m;
    }
    Ok(())
}

/// Creates a guest instance: record, passfile, data disk, first boot, default database.
pub(crate) fn create(
    layout: &Layout,
    name: &str,
    opts: &InstanceOptions,
    guest: &GuestOptions,
) -> Result<(Instance, StartOutcome), InstanceError> {
    let vcpus = validate(opts)?;
    let bin = super::binaries::find()?;
    let user = super::os_user::for_new_instance()?;
    let record = Record {
        schema_version: record::SCHEMA_VERSION,
        name: name.to_string(),
        port: match opts.port {
            Some(p) => p,
            None => settings::choose_port(
                &layout.sockets,
                &super::create::recorded_ports(&layout.home),
            )?,
        },
        superuser: user.name.clone(),
        os_user: user.name.clone(),
        pg_bin_dir: bin,
        cpus: None,
        memory: None,
        settings: Setting::all_of(&opts.settings),
        vm: opts.vm.clone(),
        ssl: opts.ssl,
        guest: Some(GuestRecord {
            hypervisor: Hypervisor::Qemu,
            vcpus,
            memory: opts.memory.unwrap_or(DEFAULT_MEMORY),
            accel: guest.accel,
            cgroup: guest.cgroup.clone(),
            mem_merge: guest.mem_merge,
        }),
        standby: None,
    };
    let mut record = record;
    if let Some(path) = &opts.vm {
        let sized = opts.cpus.is_some() || opts.memory.is_some();
        let asked = record.guest.take().ok_or_else(|| VmError::NotAVm {
            name: name.to_string(),
        })?;
        record.guest = Some(shared::join(&layout.home, path, asked, sized)?);
    }
    let instances = record::instances_dir(&layout.home);
    std::fs::create_dir_all(&instances).map_err(InstanceError::io("create", &instances))?;
    if let Err(e) = std::fs::create_dir(&layout.dir) {
        return Err(match e.kind() {
            std::io::ErrorKind::AlreadyExists => InstanceError::BeingCreated {
                name: name.to_string(),
                dir: layout.dir.clone(),
            },
            _ => InstanceError::io("create", &layout.dir)(e),
        });
    }
    let result = initialize(layout, &record, &user);
    if result.is_err() {
        qemu::stop(&files_of(layout, &record));
        let _ = std::fs::remove_dir_all(&layout.dir);
        if let Some(path) = &record.vm {
            shared::forget_if_empty(&layout.home, path);
        }
    }
    result.map(|i| (i, StartOutcome::Created))
}

fn initialize(
    layout: &Layout,
    record: &Record,
    user: &super::os_user::ServerUser,
) -> Result<Instance, InstanceError> {
    let files = files_of(layout, record);
    image::private_dir(&layout.dir)?;
    if let Some(path) = &record.vm {
        // vms/, and each level of PATH: 0700 like the instance dirs.
        let mut dir = shared::vm_dir(&layout.home, "");
        image::private_dir(&dir)?;
        for part in path.split('/') {
            dir = dir.join(part);
            image::private_dir(&dir)?;
        }
        shared::link_log(layout, &files)?;
    }
    image::private_dir(&files.dir)?;
    if record.ssl {
        // Made on the host, as for a local instance: `instance dsn` names this CA.
        super::tls::ensure(&layout.dir, &record.name, user)?;
    }
    let password = super::password::random_password()?;
    super::password::write(&layout.dir, record.port, &record.superuser, &password)?;
    // This server's PGDATA, made by the host's initdb: a new data disk holds it from the start;
    // an existing one (a shared VM's) gets it from a seed disk at the next boot.
    let seed = seed::make(record, user, &guest_pgdata(record, &password), &password)?;
    if files.data().exists() {
        image::make_ext4(&seed.root(), &files.seed(), "tidebench-seed")?;
    } else {
        make_data_disk(&files.data(), &seed.root(), !record.fsync_off())?;
    }
    drop(seed);
    record.save(&layout.record())?;
    // A VM's config is read at boot: a member joining a running VM reboots it.
    qemu::stop(&files);
    boot(layout, record)?;
    let instance = super::checks::instance_from(layout, record)?;
    ensure_database(&instance, super::types::DEFAULT_DBNAME)?;
    Ok(instance)
}

/// The ext4 data disk (sparse), made without mounting, holding what is in `root` (the seeded
/// PGDATA); synced to the host's disk when the server syncs its own writes.
fn make_data_disk(path: &Path, root: &Path, sync: bool) -> Result<(), InstanceError> {
    let out = Command::new("mkfs.ext4")
        .args([
            "-q",
            "-F",
            "-L",
            "tidebench-data",
            "-E",
            "lazy_itable_init=1,lazy_journal_init=1",
            "-d",
        ])
        .arg(root)
        .arg(path)
        .arg(DATA_DISK)
        .output()
        .map_err(|source| VmError::CannotRun {
            program: "mkfs.ext4".into(),
            source,
            fix: "install e2fsprogs (1.43 or later, for mkfs.ext4 -d)",
        })?;
    if !out.status.success() {
        return Err(VmError::Failed {
            what: format!("mkfs.ext4 {}", path.display()),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            fix: String::new(),
        }
        .into());
    }
    if sync {
        std::fs::File::open(path)
            .and_then(|f| f.sync_all())
            .map_err(InstanceError::io("sync", path))?;
    }
    Ok(())
}

/// Where a server's PGDATA is in the guest: its own in a shared VM (named by its password, so
/// a remade instance gets a new one), else the guest's one.
fn guest_pgdata(record: &Record, password: &str) -> String {
    match record.vm {
        Some(_) => config::shared_pgdata(&record.name, password),
        None => image::GUEST_PGDATA.to_string(),
    }
}

/// Starts an existing guest instance (or finds it running).
pub(crate) fn start(
    layout: &Layout,
    record: &Record,
    guest: &GuestOptions,
) -> Result<(Instance, StartOutcome), InstanceError> {
    let recorded = record.guest.as_ref().ok_or_else(|| VmError::NotAVm {
        name: record.name.clone(),
    })?;
    if guest.accel.is_some() && guest.accel != recorded.accel {
        return Err(InstanceError::Conflict {
            name: record.name.clone(),
            recorded: recorded
                .accel
                .map_or("no --accel".into(), |a| format!("--accel {}", a.name())),
            requested: guest
                .accel
                .map_or("no --accel".into(), |a| format!("--accel {}", a.name())),
        });
    }
    let files = files_of(layout, record);
    if qemu::running_pid(&files).is_some() {
        if console_says_ready(&files) && serves(&files, record) {
            let instance = super::checks::instance_from(layout, record)?;
            return Ok((instance, StartOutcome::AlreadyRunning));
        }
        // A QEMU left by a killed tidebench before its guest was ready, or a shared VM
        // booted before this member was made: start afresh.
        qemu::stop(&files);
    }
    boot(layout, record)?;
    let instance = super::checks::instance_from(layout, record)?;
    // A creation cut short (Ctrl-C, a killed tidebench) may have stopped before this.
    ensure_database(&instance, super::types::DEFAULT_DBNAME)?;
    Ok((instance, StartOutcome::Started))
}

/// Whether the running guest's boot serves this instance (a shared VM's members as booted;
/// a state from before members were recorded: a guest of its own, so yes).
fn serves(files: &VmFiles, record: &Record) -> bool {
    read_state(files).is_none_or(|s| s.members.is_empty() || s.members.contains(&record.name))
}

/// What the last boot wrote in `state.toml`, when it is there and readable.
fn read_state(files: &VmFiles) -> Option<GuestState> {
    let text = std::fs::read_to_string(files.dir.join("state.toml")).ok()?;
    toml::from_str(&text).ok()
}

fn console_says_ready(files: &VmFiles) -> bool {
    std::fs::read_to_string(files.console())
        .is_ok_and(|t| t.lines().any(|l| l.starts_with(config::READY_LINE)))
}

/// One boot: a fresh overlay of the current image, the config namespace, QEMU, READY.
fn boot(layout: &Layout, record: &Record) -> Result<GuestState, InstanceError> {
    let guest = record.guest.as_ref().ok_or_else(|| VmError::NotAVm {
        name: record.name.clone(),
    })?;
    let files = files_of(layout, record);
    let qmp = files.qmp();
    // QEMU's monitor is a unix socket: its path must fit sun_path.
    if qmp.as_os_str().len() > 107 {
        return Err(VmError::SocketPathTooLong { path: qmp }.into());
    }
    let image = image::ensure(&layout.home, &record.pg_bin_dir)?;
    make_overlay(&image.root, &files.overlay())?;
    // The servers this guest runs: the instance, or every member of its shared VM.
    let servers = match &record.vm {
        Some(path) => shared::members(&layout.home, path),
        None => vec![(layout.clone(), record.clone())],
    };
    let clusters = servers
        .iter()
        .map(|(l, r)| cluster_config(l, r, guest.memory / servers.len() as u64))
        .collect::<Result<Vec<_>, _>>()?;
    let forwards: Vec<(u16, u16)> = servers
        .iter()
        .map(|(_, r)| (r.port, guest_port(r)))
        .collect();
    let config = GuestConfig {
        bin_dir: record.pg_bin_dir.to_string_lossy().into_owned(),
        clusters,
    };
    let bytes = config
        .to_disk()
        .map_err(|message| VmError::Config { message })?;
    write_private(&files.config(), &bytes)?;
    let cgroup = match &guest.cgroup {
        Some(name) => {
            let paths = super::cgroup::CgroupPaths::locate(name)?;
            // No limits of its own: the guest's RAM is its limit, the parent's is the host's.
            paths.create(None, None)?;
            paths.procs_files()?
        }
        None => Vec::new(),
    };
    let booted = qemu::boot(
        &qemu::Boot {
            name: record.vm.as_deref().unwrap_or(&record.name),
            files: &files,
            image: &image,
            vcpus: guest.vcpus,
            memory: guest.memory,
            forwards: &forwards,
            cgroup_procs: &cgroup,
            mem_merge: guest.mem_merge,
            kvm_memo: &image::cache_dir(&layout.home).join("kvm-failed"),
        },
        guest.accel,
    );
    // The guest copied what the seed held before it said READY (or the boot failed).
    let _ = std::fs::remove_file(files.seed());
    let booted = booted?;
    // The balloon driver reports the guest's memory every second from now on (read by
    // `memory_stats`); a QEMU without the property only loses those rows.
    let _ = qemu::qmp(
        &files.qmp(),
        &serde_json::json!({"execute": "qom-set", "arguments": {
            "path": balloon::BALLOON_PATH, "property": "guest-stats-polling-interval", "value": 1}}),
    );
    let mut state = GuestState {
        accel: booted.accel,
        // Until the first connection: the time to the guest's READY.
        ready_secs: booted.started.elapsed().as_secs_f64(),
        kernel_release: ready_release(&files).unwrap_or_else(|| image.release.clone()),
        kvm_note: booted.kvm_note,
        image_build_secs: image.build_secs,
        image_bytes: allocated_bytes(&image.root),
        members: servers.iter().map(|(_, r)| r.name.clone()).collect(),
    };
    // Saved at once, so a tidebench killed now leaves a guest whose accelerator is known to
    // the `start` that adopts it (a TCG guest's figures must never pass for a VM's overhead).
    save_state(&files, &state)?;
    // The first connection from the host, through each forward: what "ready" means to a user.
    for (l, r) in &servers {
        super::checks::instance_from(l, r)?.psql("postgres", "SELECT 1")?;
    }
    state.ready_secs = booted.started.elapsed().as_secs_f64();
    save_state(&files, &state)?;
    Ok(state)
}

/// The port a server listens on in the guest: 5432 in a guest of its own, its host port in a
/// shared VM (all distinct there).
fn guest_port(record: &Record) -> u16 {
    match record.vm {
        Some(_) => record.port,
        None => GUEST_PORT,
    }
}

/// One server of the guest, from its instance's record, passfile and TLS files; `memory` is
/// its share of the guest's RAM, which its defaults are sized for.
fn cluster_config(
    layout: &Layout,
    record: &Record,
    memory: u64,
) -> Result<ClusterConfig, InstanceError> {
    let password = super::password::read(&layout.dir).ok_or_else(|| VmError::NoPassfile {
        name: record.name.clone(),
    })?;
    let shape = ConfShape {
        port: guest_port(record),
        memory,
        tls: record.ssl,
        shared_log: record.vm.as_ref().map(|_| record.name.clone()),
    };
    Ok(ClusterConfig {
        name: record.name.clone(),
        pgdata: guest_pgdata(record, &password),
        superuser: record.superuser.clone(),
        password,
        conf: config::guest_conf(&shape, &record.settings()),
        hba: GUEST_HBA.to_string(),
        tls: guest_tls(layout, record)?,
        initdb_no_sync: record.fsync_off(),
    })
}

/// The certificate and key the guest serves TLS with, when the instance has `--ssl`.
fn guest_tls(layout: &Layout, record: &Record) -> Result<Option<config::GuestTls>, InstanceError> {
    if !record.ssl {
        return Ok(None);
    }
    let dir = super::tls::dir_of(&layout.dir);
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(InstanceError::io("read", &path))
    };
    Ok(Some(config::GuestTls {
        cert: read(super::tls::SERVER_CERT)?,
        key: read(super::tls::SERVER_KEY)?,
    }))
}

fn save_state(files: &VmFiles, state: &GuestState) -> Result<(), InstanceError> {
    let text = toml::to_string(state).map_err(|e| VmError::EncodeState {
        message: e.to_string(),
    })?;
    // Through a temp file and a rename: a reader never finds it missing or half written.
    let (tmp, path) = (
        files.dir.join("state.toml.tmp"),
        files.dir.join("state.toml"),
    );
    write_private(&tmp, text.as_bytes())?;
    std::fs::rename(&tmp, &path).map_err(InstanceError::io("rename", &tmp))
}

/// The release the guest printed after READY.
fn ready_release(files: &VmFiles) -> Option<String> {
    let text = std::fs::read_to_string(files.console()).ok()?;
    let line = text.lines().find(|l| l.starts_with(config::READY_LINE))?;
    let release = line[config::READY_LINE.len()..].trim();
    (!release.is_empty()).then(|| release.to_string())
}

fn allocated_bytes(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map_or(0, |m| m.blocks() * 512)
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), InstanceError> {
    let _ = std::fs::remove_file(path);
    seed::create_private(path, bytes)
}

/// `qemu-img create -f qcow2 -b base -F raw`: the guest's writes stay in its own file.
fn make_overlay(base: &Path, overlay: &Path) -> Result<(), InstanceError> {
    let _ = std::fs::remove_file(overlay);
    let out = Command::new("qemu-img")
        .args(["create", "-q", "-f", "qcow2", "-F", "raw", "-b"])
        .arg(base)
        .arg(overlay)
        .output()
        .map_err(|source| VmError::CannotRun {
            program: "qemu-img".into(),
            source,
            fix: "install it (Debian/Ubuntu: apt-get install qemu-utils)",
        })?;
    if !out.status.success() {
        return Err(VmError::Failed {
            what: format!("qemu-img create {}", overlay.display()),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            fix: String::new(),
        }
        .into());
    }
    Ok(())
}

/// Stops the guest (a shared VM with all its members); false when it was not running.
pub(crate) fn stop(layout: &Layout, record: &Record) -> bool {
    qemu::stop(&files_of(layout, record))
}

/// Ends the guest at once, without a clean shutdown: its disks are about to go (`destroy`).
/// A shared VM's disk stays for its other members: it gets the clean shutdown.
pub(crate) fn discard(layout: &Layout, record: &Record) -> bool {
    match record.vm {
        Some(_) => qemu::stop(&files_of(layout, record)),
        None => qemu::quit(&files_of(layout, record)),
    }
}

/// After a destroyed instance's dir is gone: a shared VM left with no member goes too.
pub(crate) fn forget(layout: &Layout, record: &Record) {
    if let Some(path) = &record.vm {
        shared::forget_if_empty(&layout.home, path);
    }
}

/// The balloon device in QEMU's object tree (`-device virtio-balloon-pci,id=balloon0`).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcpus_are_whole_and_limits_fold_into_the_guest() {
        assert_eq!(vcpus(2.0).unwrap(), 2);
        let err = vcpus(1.5).unwrap_err().to_string();
        assert!(err.contains("whole number"), "{err}");
        assert!(vcpus(0.0).is_err());
        // --vm with a guest: one of several instances in that VM.
        let opts = InstanceOptions {
            vm: Some("host/vm1".into()),
            cpus: Some(2.0),
            ..Default::default()
        };
        assert_eq!(validate(&opts).unwrap(), 2);
        let mut record: Record = toml::from_str(
            "schema_version = 1\nname = \"g\"\nport = 5000\nsuperuser = \"postgres\"\n\
             os_user = \"postgres\"\npg_bin_dir = \"/usr/lib/postgresql/15/bin\"\n\
             [guest]\nhypervisor = \"qemu\"\nvcpus = 1\nmemory = 536870912\n",
        )
        .unwrap();
        assert!(!record.has_cgroup());
        record.cpus = Some(4.0);
        record.memory = Some(1 << 30);
        fold_limits(&mut record).unwrap();
        let guest = record.guest.as_ref().unwrap();
        assert_eq!((guest.vcpus, guest.memory), (4, 1 << 30));
        assert_eq!((record.cpus, record.memory), (None, None));
        assert!(!record.has_cgroup(), "a guest never gets a cgroup");
    }
}
