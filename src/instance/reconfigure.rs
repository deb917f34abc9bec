//! Changing a managed instance's limits and settings between runs: what an experiment does
//! when a point varies `instance.cpus`, `instance.memory` or a server setting. The instance is
//! stopped (fast shutdown), its record, conf file and control groups rewritten, and started
//! again; data stays. `start` refuses such changes on purpose (a run must not silently
//! measure another VM than the one it names); an experiment asks for them explicitly.

use super::cgroup::CgroupPaths;
use super::checks::{check_bin_dir, check_name, check_socket_dir};
use super::error::{invalid, InstanceError};
use super::lifecycle::start_reporting;
use super::record::{Layout, Record, Setting};
use super::server::Server;
use super::types::{Home, Instance, InstanceOptions, StartOutcome};
use super::{create, os_user};

/// What [`reconfigure`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconfigured {
    /// The instance did not exist: created with the options.
    Created,
    /// Already running with these values.
    Unchanged,
    /// Stopped, with these values already: started.
    Started,
    /// Running or stopped with other values: rewritten and (re)started.
    Restarted,
}

/// Makes instance `name` run with `opts`: a CPU quota or memory limit given replaces the
/// recorded one, a setting given replaces the recorded value of its key (the others stay).
/// Returns when the server accepts connections.
pub fn reconfigure(
    home: &Home,
    name: &str,
    opts: &InstanceOptions,
) -> Result<(Instance, Reconfigured), InstanceError> {
    check_name("instance", name)?;
    opts.validate()?;
    let layout = Layout::new(&home.absolute()?, name);
    check_socket_dir(&layout.sockets)?;
    if let (false, Some(guest)) = (layout.record().exists(), &opts.guest) {
        let (instance, _) = super::vm::create(&layout, name, opts, guest)?;
        return Ok((instance, Reconfigured::Created));
    }
    if !layout.record().exists() {
        let instance = create::create(&layout, name, opts)?;
        return Ok((instance, Reconfigured::Created));
    }
    let record = Record::load(&layout.record())?;
    same_kind(&record, opts)?;
    let mut wanted = with_options(&record, opts);
    super::vm::fold_limits(&mut wanted)?;
    if same_values(&record, &wanted) {
        let (instance, outcome) = start_reporting(home, name, &InstanceOptions::default())?;
        let what = match outcome {
            StartOutcome::AlreadyRunning => Reconfigured::Unchanged,
            _ => Reconfigured::Started,
        };
        return Ok((instance, what));
    }
    if wanted.guest.is_some() {
        // A VM: power it off, and boot it with the new vCPUs, RAM and settings.
        if wanted.vm != record.vm {
            return Err(invalid("--vm")(format!(
                "instance '{name}' is in VM {}; a VM instance cannot move to another (destroy \
                 it and start it anew with the other --vm)",
                record.vm.as_deref().unwrap_or("of its own")
            )));
        }
        super::vm::stop(&layout, &record);
        if let (Some(path), Some(guest)) = (&wanted.vm, &wanted.guest) {
            // One VM has one size: its other members take the new one too.
            super::vm::shared::resize(&layout.home, path, guest)?;
        }
        wanted.save(&layout.record())?;
        let (instance, _) = start_reporting(home, name, &InstanceOptions::default())?;
        return Ok((instance, Reconfigured::Restarted));
    }
    check_bin_dir(&record, name)?;
    let user = os_user::for_existing(&record.os_user, name)?;
    let server = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    };
    if server.is_running()? {
        server.stop()?;
    }
    if wanted.ssl {
        super::tls::ensure(&layout.dir, name, &user)?;
    }
    server.write_config(&wanted.server_conf(&layout))?;
    if wanted.has_cgroup() {
        CgroupPaths::locate(wanted.cgroup_name())?.create(wanted.cpus, wanted.memory)?;
    }
    if record.has_cgroup() && record.cgroup_name() != wanted.cgroup_name() {
        // Moved to another VM: the old group goes when no other instance is left in it.
        CgroupPaths::locate(record.cgroup_name())?.remove_if_unused()?;
    }
    wanted.save(&layout.record())?;
    let (instance, _) = start_reporting(home, name, &InstanceOptions::default())?;
    // The pg_hba written above asks every TCP login for a password: an instance made before
    // it had one gets its password now.
    if instance.password().is_none() {
        super::password::create(&instance)?;
    }
    Ok((instance, Reconfigured::Restarted))
}

/// A local server is not a VM: an experiment that asks for a VM where a local server of the
/// name exists (a density prefix used before without `--hypervisor`) must not silently measure
/// the local one. (No `hypervisor` asked where a VM exists keeps the VM, as `instance start`
/// does: a sweep's `[[instance]]` table made for an `instance:NAME` target names no kind.)
fn same_kind(record: &Record, opts: &InstanceOptions) -> Result<(), InstanceError> {
    if opts.guest.is_none() || record.guest.is_some() {
        return Ok(());
    }
    Err(InstanceError::Conflict {
        name: record.name.clone(),
        recorded: "no --hypervisor (a local server)".into(),
        requested: "--hypervisor qemu (a VM)".into(),
    })
}

/// `record` with the limits and settings of `opts` laid over it.
fn with_options(record: &Record, opts: &InstanceOptions) -> Record {
    let mut out = record.clone();
    if let (Some(g), Some(asked)) = (out.guest.as_mut(), opts.guest.as_ref()) {
        // A forced accelerator replaces the recorded choice; none asked keeps it.
        g.accel = asked.accel.or(g.accel);
    }
    out.cpus = opts.cpus.or(record.cpus);
    out.memory = opts.memory.or(record.memory);
    out.vm = opts.vm.clone().or_else(|| record.vm.clone());
    out.ssl = opts.ssl || record.ssl;
    if let (Some(g), Some(asked)) = (out.guest.as_mut(), &opts.guest) {
        g.overlay(asked);
    }
    for (key, value) in &opts.settings {
        match out
            .settings
            .iter_mut()
            .find(|s| s.key.eq_ignore_ascii_case(key))
        {
            Some(s) => s.value = value.clone(),
            None => out.settings.push(Setting {
                key: key.clone(),
                value: value.clone(),
            }),
        }
    }
    out
}

fn same_values(a: &Record, b: &Record) -> bool {
    a.cpus == b.cpus
        && a.memory == b.memory
        && a.vm == b.vm
        && a.ssl == b.ssl
        && a.guest == b.guest
        && a.settings() == b.settings()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            schema_version: 1,
            name: "vm".into(),
            port: 5500,
            superuser: "postgres".into(),
            os_user: "postgres".into(),
            pg_bin_dir: "/usr/lib/postgresql/15/bin".into(),
            cpus: Some(1.0),
            memory: None,
            settings: vec![Setting {
                key: "work_mem".into(),
                value: "4MB".into(),
            }],
            vm: None,
            ssl: false,
            guest: None,
            standby: None,
        }
    }

    #[test]
    fn options_replace_given_values_and_keep_the_rest() {
        let opts = InstanceOptions {
            port: None,
            settings: vec![
                ("WORK_MEM".into(), "8MB".into()),
                ("shared_buffers".into(), "256MB".into()),
            ],
            cpus: None,
            memory: Some(1 << 30),
            vm: None,
            ssl: false,
            standby_of: None,
            synchronous: false,
            guest: None,
            pg_bin: None,
        };
        let out = with_options(&record(), &opts);
        assert_eq!(out.cpus, Some(1.0));
        assert_eq!(out.memory, Some(1 << 30));
        assert_eq!(
            out.settings(),
            vec![
                ("work_mem".to_string(), "8MB".to_string()),
                ("shared_buffers".to_string(), "256MB".to_string())
            ]
        );
        assert!(!same_values(&record(), &out));
        assert!(same_values(
            &record(),
            &with_options(&record(), &InstanceOptions::default())
        ));
    }

    #[test]
    fn a_vm_is_not_made_of_a_local_server_and_a_forced_accel_is_laid_over() {
        let vm = InstanceOptions {
            guest: Some(crate::instance::vm::GuestOptions {
                accel: Some(crate::instance::vm::Accel::Tcg),
                ..Default::default()
            }),
            ..InstanceOptions::default()
        };
        let e = same_kind(&record(), &vm).unwrap_err().to_string();
        assert!(e.contains("instance destroy vm"), "{e}");
        let mut guest = record();
        guest.guest = Some(crate::instance::vm::GuestRecord {
            hypervisor: crate::instance::vm::Hypervisor::Qemu,
            vcpus: 1,
            memory: 512 << 20,
            accel: None,
            cgroup: None,
            mem_merge: None,
        });
        same_kind(&guest, &vm).unwrap();
        same_kind(&guest, &InstanceOptions::default()).unwrap();
        let out = with_options(&guest, &vm);
        assert_eq!(
            out.guest.as_ref().and_then(|g| g.accel),
            Some(crate::instance::vm::Accel::Tcg)
        );
        assert!(
            !same_values(&guest, &out),
            "a new accelerator reboots the VM"
        );
        let kept = with_options(&out, &InstanceOptions::default());
        assert!(
            same_values(&out, &kept),
            "no accel asked keeps the recorded one"
        );
    }
}
