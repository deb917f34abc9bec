//! What every way to an instance shares (start, create, reconfigure and the VM path): its
//! name, the socket dir's length, the binaries it was made with, its record read back into an
//! [`Instance`], and the database a target names.

use std::path::Path;

use super::binaries;
use super::cgroup::CgroupPaths;
use super::error::{invalid, InstanceError};
use super::record::{Layout, Record};
use super::types::Instance;
use super::vm;

/// Room for the longest socket file name, `/.s.PGSQL.65535.lock`, within sun_path (108 bytes
/// including the terminating NUL).
const MAX_SOCKET_DIR_LEN: usize = 107 - "/.s.PGSQL.65535.lock".len();

/// Creates database `dbname` on a running instance if it does not exist.
pub fn ensure_database(instance: &Instance, dbname: &str) -> Result<(), InstanceError> {
    check_name("database", dbname)?;
    let exists = format!("SELECT 1 FROM pg_database WHERE datname = '{dbname}'");
    if instance.psql("postgres", &exists)? == "1" {
        return Ok(());
    }
    match instance.psql("postgres", &format!("CREATE DATABASE \"{dbname}\"")) {
        Ok(_) => Ok(()),
        // Another tidebench may have created it between the check and the CREATE.
        Err(e) => match instance.psql("postgres", &exists) {
            Ok(found) if found == "1" => Ok(()),
            _ => Err(e),
        },
    }
}

pub(super) fn check_socket_dir(sockets: &Path) -> Result<(), InstanceError> {
    let len = sockets.as_os_str().len();
    if len > MAX_SOCKET_DIR_LEN {
        return Err(InstanceError::SocketDirTooLong {
            dir: sockets.to_path_buf(),
            len,
            most: MAX_SOCKET_DIR_LEN,
        });
    }
    if sockets.to_string_lossy().contains(',') {
        return Err(InstanceError::SocketDirComma {
            dir: sockets.to_path_buf(),
        });
    }
    Ok(())
}

pub(super) fn check_bin_dir(record: &Record, name: &str) -> Result<(), InstanceError> {
    if binaries::is_bin_dir(&record.pg_bin_dir) {
        return Ok(());
    }
    Err(InstanceError::BinariesGone {
        name: name.to_string(),
        bin_dir: record.pg_bin_dir.clone(),
    })
}

pub(super) fn load_existing(layout: &Layout, name: &str) -> Result<Record, InstanceError> {
    if !layout.record().exists() {
        return Err(InstanceError::NotFound {
            name: name.to_string(),
            home: layout.home.clone(),
        });
    }
    Record::load(&layout.record())
}

pub(super) fn instance_from(layout: &Layout, record: &Record) -> Result<Instance, InstanceError> {
    let cgroups = if record.has_cgroup() {
        Some(CgroupPaths::locate(record.cgroup_name())?)
    } else {
        None
    };
    Ok(Instance {
        name: record.name.clone(),
        port: record.port,
        socket_dir: layout.sockets.clone(),
        superuser: record.superuser.clone(),
        dir: layout.dir.clone(),
        bin_dir: record.pg_bin_dir.clone(),
        cpus: record.cpus,
        memory: record.memory,
        vm: record.vm.clone(),
        cgroups,
        ssl: record.ssl,
        guest: record
            .guest
            .as_ref()
            .map(|g| vm::GuestInfo::of(layout, record, g)),
        standby: record.standby.clone(),
    })
}

pub(super) fn check_name(what: &str, name: &str) -> Result<(), InstanceError> {
    crate::config::target::check_name(what, name).map_err(invalid("a name"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn long_socket_dirs_are_refused_with_the_fix() {
        let long = PathBuf::from(format!("/{}", "d".repeat(100)));
        let err = check_socket_dir(&long).unwrap_err().to_string();
        assert!(err.contains("TIDEBENCH_HOME"), "{err}");
        assert!(check_socket_dir(Path::new("/tmp/h/sockets")).is_ok());
    }
}
