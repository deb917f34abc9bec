//! An instance's life: start (creating it on first use), find, status and list, stop and
//! destroy. A start of an existing instance refuses changed limits (see `reconfigure`).

use super::cgroup::CgroupPaths;
use super::checks::{check_bin_dir, check_name, check_socket_dir, instance_from, load_existing};
use super::error::InstanceError;
use super::record::{self, Layout, Record};
use super::server::Server;
use super::types::{Home, Instance, InstanceOptions, InstanceStatus, StartOutcome};
use super::{create, os_user, standby, vm};

/// Creates (initdb) on first use and starts; returns when the server accepts connections.
pub fn start(home: &Home, name: &str, opts: &InstanceOptions) -> Result<Instance, InstanceError> {
    start_reporting(home, name, opts).map(|(instance, _)| instance)
}

/// As [`start`], also telling whether the instance was created, started or already running.
pub fn start_reporting(
    home: &Home,
    name: &str,
    opts: &InstanceOptions,
) -> Result<(Instance, StartOutcome), InstanceError> {
    check_name("instance", name)?;
    opts.validate()?;
    let layout = Layout::new(&home.absolute()?, name);
    check_socket_dir(&layout.sockets)?;
    if let (false, Some(p)) = (layout.record().exists(), &opts.standby_of) {
        let primary = find_running(home, p).map_err(|e| standby::primary_missing(name, p, e))?;
        return standby::create(&layout, name, &primary, opts).map(|i| (i, StartOutcome::Created));
    }
    if let (false, Some(guest)) = (layout.record().exists(), &opts.guest) {
        return vm::create(&layout, name, opts, guest);
    }
    if !layout.record().exists() {
        return create::create(&layout, name, opts).map(|i| (i, StartOutcome::Created));
    }
    let record = Record::load(&layout.record())?;
    record.check_matches(opts)?;
    if record.guest.is_some() {
        return vm::start(&layout, &record, &opts.guest.clone().unwrap_or_default());
    }
    let user = os_user::for_existing(&record.os_user, name)?;
    let instance = instance_from(&layout, &record)?;
    let server = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    };
    if server.is_running()? {
        return Ok((instance, StartOutcome::AlreadyRunning));
    }
    check_bin_dir(&record, name)?;
    let procs = match &instance.cgroups {
        Some(cg) => {
            // The groups vanish on reboot; recreate them and rewrite the limits every start.
            cg.create(record.cpus, record.memory)?;
            cg.procs_files()?
        }
        None => Vec::new(),
    };
    server.start(name, procs)?;
    Ok((instance, StartOutcome::Started))
}

/// Starts the instance if it exists and is stopped, creates it with defaults if it does not exist.
pub fn ensure_running(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    start(home, name, &InstanceOptions::default())
}

/// Finds an existing instance by name and checks that it is running.
pub fn find_running(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    let status = status(home, name)?;
    if !status.running {
        return Err(InstanceError::NotRunning {
            name: name.to_string(),
        });
    }
    Ok(status.instance)
}

/// Finds an existing instance by name, running or not.
pub fn find(home: &Home, name: &str) -> Result<Instance, InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    instance_from(&layout, &record)
}

/// The state of one instance (`pg_ctl status` + postmaster.pid).
pub fn status(home: &Home, name: &str) -> Result<InstanceStatus, InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    let instance = instance_from(&layout, &record)?;
    if record.guest.is_some() {
        let pid = instance.pid();
        return Ok(InstanceStatus {
            running: pid.is_some(),
            instance,
            pid,
        });
    }
    let user = os_user::for_existing(&record.os_user, name)?;
    let running = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    }
    .is_running()?;
    let pid = if running { instance.pid() } else { None };
    Ok(InstanceStatus {
        instance,
        running,
        pid,
    })
}

/// The state of every instance in the home, by name.
pub fn list(home: &Home) -> Result<Vec<InstanceStatus>, InstanceError> {
    let dir = record::instances_dir(&home.absolute()?);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(InstanceError::io("list", &dir)(e)),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("instance.toml").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    names.iter().map(|n| status(home, n)).collect()
}

/// Stops a running instance and its managed pooler; returns false when it was already
/// stopped.
pub fn stop(home: &Home, name: &str) -> Result<bool, InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    if record.guest.is_some() {
        return Ok(vm::stop(&layout, &record));
    }
    // Its pooler first: it goes with the server it serves.
    super::pooler::stop(name, &layout.dir)?;
    let user = os_user::for_existing(&record.os_user, name)?;
    let server = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    };
    if !server.is_running()? {
        return Ok(false);
    }
    server.stop()?;
    Ok(true)
}

/// Stops the instance if running, removes its cgroups and its directory (data included).
pub fn destroy(home: &Home, name: &str) -> Result<(), InstanceError> {
    check_name("instance", name)?;
    let layout = Layout::new(&home.absolute()?, name);
    let record = load_existing(&layout, name)?;
    if record.guest.is_some() {
        // The data disk goes with the dir: no clean shutdown to wait for (one of a guest
        // still booting could wait a minute for a key press nobody reads).
        vm::discard(&layout, &record);
    } else {
        // A synchronous standby leaves its primary's list while the primary runs (a stopped
        // primary reads the list when it starts).
        let primary = record.standby.as_ref().filter(|s| s.synchronous);
        if let Some(primary) = primary.and_then(|s| find_running(home, &s.primary).ok()) {
            standby::name_synchronous(&layout.home, &primary, Some(name))?;
        }
        stop(home, name)?;
    }
    if record.has_cgroup() {
        let cg = CgroupPaths::locate(record.cgroup_name())?;
        match record.vm {
            // A VM shared with other instances stays while they are in it.
            Some(_) => cg.remove_if_unused()?,
            None => cg.remove()?,
        }
    }
    // A VM's QEMU placed in a group (a consolidation's host group) leaves it with the VM.
    if let Some(group) = record.guest.as_ref().and_then(|g| g.cgroup.as_deref()) {
        CgroupPaths::locate(group)?.remove_if_unused()?;
    }
    std::fs::remove_dir_all(&layout.dir).map_err(InstanceError::io("remove", &layout.dir))?;
    vm::forget(&layout, &record);
    Ok(())
}
