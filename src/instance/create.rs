//! Creating an instance on first start: dirs usable by the server user, cgroups, a port,
//! instance.toml, initdb, config files, first start, the password group role and the default
//! database. A failed creation removes what it made, so the same command can be run again.

use std::path::Path;

use super::binaries;
use super::cgroup::CgroupPaths;
use super::checks::{ensure_database, instance_from};
use super::error::InstanceError;
use super::os_user::{self, ServerUser};
use super::record::{self, Layout, Record, Setting};
use super::server::Server;
use super::settings::{self, PASSWORD_GROUP};
use super::types::{Instance, InstanceOptions, DEFAULT_DBNAME};

/// First start: prepare dirs, initdb, write config, start, create the password group and db.
pub(super) fn create(
    layout: &Layout,
    name: &str,
    opts: &InstanceOptions,
) -> Result<Instance, InstanceError> {
    let bin = match &opts.pg_bin {
        Some(dir) => binaries::given(dir)?,
        None => binaries::find()?,
    };
    let user = os_user::for_new_instance()?;
    prepare_home(layout, &user)?;
    let (cgroups, port) = cgroup_and_port(name, opts, layout)?;
    let record = Record {
        schema_version: record::SCHEMA_VERSION,
        name: name.to_string(),
        port,
        superuser: user.name.clone(),
        os_user: user.name.clone(),
        pg_bin_dir: bin,
        cpus: opts.cpus,
        memory: opts.memory,
        settings: Setting::all_of(&opts.settings),
        vm: opts.vm.clone(),
        ssl: opts.ssl,
        guest: None,
        standby: None,
    };
    if let Err(e) = std::fs::create_dir(&layout.dir) {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(InstanceError::BeingCreated {
                name: name.to_string(),
                dir: layout.dir.clone(),
            });
        }
        return Err(InstanceError::io("create", &layout.dir)(e));
    }
    // From here on the directory is ours: on failure, leave nothing half-made behind so the
    // same command can simply be run again.
    let result = initialize(layout, name, &record, &user, cgroups.as_ref());
    if result.is_err() {
        let server = Server {
            bin: &record.pg_bin_dir,
            user: &user,
            layout,
        };
        if server.is_running().unwrap_or(false) {
            let _ = server.stop();
        }
        let _ = std::fs::remove_dir_all(&layout.dir);
        if let Some(cg) = &cgroups {
            let _ = cg.remove();
        }
    }
    result
}

fn initialize(
    layout: &Layout,
    name: &str,
    record: &Record,
    user: &ServerUser,
    cgroups: Option<&CgroupPaths>,
) -> Result<Instance, InstanceError> {
    user.own(&layout.dir)?;
    record.save(&layout.record())?;
    let server = Server {
        bin: &record.pg_bin_dir,
        user,
        layout,
    };
    server.initdb(&record.superuser, !record.fsync_off())?;
    if record.ssl {
        super::tls::ensure(&layout.dir, name, user)?;
    }
    server.write_config(&record.server_conf(layout))?;
    let procs = match cgroups {
        Some(cg) => cg.procs_files()?,
        None => Vec::new(),
    };
    server.start(name, procs)?;
    let instance = instance_from(layout, record)?;
    instance.psql(
        "postgres",
        &format!(
            "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{PASSWORD_GROUP}') \
             THEN CREATE ROLE {PASSWORD_GROUP} NOLOGIN; END IF; END$$"
        ),
    )?;
    ensure_database(&instance, DEFAULT_DBNAME)?;
    super::password::create(&instance)?;
    Ok(instance)
}

/// Creates the home, `instances/` and `sockets/`, usable by the server user.
fn prepare_home(layout: &Layout, user: &ServerUser) -> Result<(), InstanceError> {
    use std::os::unix::fs::PermissionsExt;
    let instances = record::instances_dir(&layout.home);
    // Check before creating anything, and again after, for a home that existed with mode 0700.
    user.check_traversable(&instances)?;
    for dir in [&layout.home, &instances, &layout.sockets] {
        if !dir.exists() {
            std::fs::create_dir_all(dir).map_err(InstanceError::io("create", dir))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
                .map_err(InstanceError::io("set permissions of", dir))?;
        }
    }
    user.check_traversable(&instances)?;
    // The sockets dir is shared by all instances of the home, which all run as this user.
    user.own(&layout.sockets)
}

/// What a new instance, primary or standby, gets of the host: a cgroup when its options limit
/// CPU or memory or name a VM, and the port asked for or else a free one that no instance of
/// the home has recorded.
pub(super) fn cgroup_and_port(
    name: &str,
    opts: &InstanceOptions,
    layout: &Layout,
) -> Result<(Option<CgroupPaths>, u16), InstanceError> {
    let cgroups = if opts.cpus.is_some() || opts.memory.is_some() || opts.vm.is_some() {
        let cg = CgroupPaths::locate(opts.vm.as_deref().unwrap_or(name))?;
        cg.create(opts.cpus, opts.memory)?;
        Some(cg)
    } else {
        None
    };
    let port = match opts.port {
        Some(p) => p,
        None => settings::choose_port(&layout.sockets, &recorded_ports(&layout.home))?,
    };
    Ok((cgroups, port))
}

/// Ports recorded by the home's instances, so a stopped one keeps its port.
pub(super) fn recorded_ports(home: &Path) -> Vec<u16> {
    let Ok(entries) = std::fs::read_dir(record::instances_dir(home)) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| Record::load(&e.path().join("instance.toml")).ok())
        .map(|r| r.port)
        .collect()
}
