//! Standbys (issue 54): an instance made as a streaming replica of another managed instance
//! of the same home, and its promotion. A standby is created once from a base backup of its
//! running primary (`pg_basebackup -R`: `standby.signal` and `primary_conninfo` over the
//! primary's unix socket, with the standby's name as `application_name`), gets its own port
//! and config like any instance, and logs in with the primary's password (the role is the
//! primary's, replicated). A synchronous standby is named in the primary's
//! `synchronous_standby_names` (`ALTER SYSTEM`, so the primary's own config file is left as
//! tidebench wrote it); destroying it takes its name out again, so the primary's commits never
//! wait for a standby that is gone.

use std::path::Path;
use std::time::{Duration, Instant};

use super::cgroup::CgroupPaths;
use super::checks::instance_from;
use super::error::InstanceError;
use super::os_user;
use super::record::{self, Layout, Record, Setting, StandbyRecord};
use super::server::Server;
use super::types::{Home, Instance, InstanceOptions};

/// How long a new standby may take to show up streaming in the primary's
/// `pg_stat_replication`.
const STREAMING_WAIT: Duration = Duration::from_secs(60);

fn refused(name: &str, primary: &str, message: impl Into<String>) -> InstanceError {
    InstanceError::Standby {
        name: name.to_string(),
        primary: primary.to_string(),
        message: message.into(),
    }
}

/// Why the primary named by `--standby-of` cannot be copied: it is missing or stopped.
pub(super) fn primary_missing(name: &str, primary: &str, e: InstanceError) -> InstanceError {
    match e {
        InstanceError::NotRunning { .. } | InstanceError::NotFound { .. } => refused(
            name,
            primary,
            format!("{e}; start the primary first (`tidebench instance start {primary}`)"),
        ),
        other => other,
    }
}

/// First start of `--standby-of PRIMARY`: base backup, config, start, the primary's password,
/// and (`--sync`) the primary waiting for it. A failure removes what was made.
pub(super) fn create(
    layout: &Layout,
    name: &str,
    primary: &Instance,
    opts: &InstanceOptions,
) -> Result<Instance, InstanceError> {
    let primary_name = primary.name.as_str();
    if opts.guest.is_some() || primary.guest().is_some() || opts.ssl || primary.ssl {
        return Err(refused(
            name,
            primary_name,
            "standbys are local servers without TLS here; leave out --hypervisor and --ssl, \
             and make the primary a local instance without --ssl",
        ));
    }
    let primary_record = Record::load(&primary.dir().join("instance.toml"))?;
    if let Some(dir) = opts
        .pg_bin
        .as_ref()
        .filter(|d| **d != primary_record.pg_bin_dir)
    {
        return Err(refused(
            name,
            primary_name,
            format!(
                "--pg-bin {} differs from the primary's {}; a standby runs the primary's \
                 build, so leave --pg-bin out",
                dir.display(),
                primary_record.pg_bin_dir.display()
            ),
        ));
    }
    let user = os_user::for_existing(&primary_record.os_user, primary_name)?;
    let (cgroups, port) = super::create::cgroup_and_port(name, opts, layout)?;
    let record = Record {
        port,
        name: name.to_string(),
        cpus: opts.cpus,
        memory: opts.memory,
        // The primary's settings first: a hot standby needs max_connections and the like at
        // least as high as its primary's.
        settings: primary_record
            .settings
            .iter()
            .cloned()
            .chain(Setting::all_of(&opts.settings))
            .collect(),
        vm: opts.vm.clone(),
        ssl: false,
        guest: None,
        standby: Some(StandbyRecord {
            primary: primary_name.to_string(),
            synchronous: opts.synchronous,
        }),
        ..primary_record
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
    let server = Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout,
    };
    let made = initialize(&server, primary, &record, cgroups.as_ref());
    if made.is_err() {
        if server.is_running().unwrap_or(false) {
            let _ = server.stop();
        }
        let _ = std::fs::remove_dir_all(&layout.dir);
        if let Some(cg) = &cgroups {
            let _ = cg.remove();
        }
        if record.standby.as_ref().is_some_and(|s| s.synchronous) {
            let _ = name_synchronous(&layout.home, primary, None);
        }
    }
    made
}

fn initialize(
    server: &Server<'_>,
    primary: &Instance,
    record: &Record,
    cgroups: Option<&CgroupPaths>,
) -> Result<Instance, InstanceError> {
    let layout = server.layout;
    server.user.own(&layout.dir)?;
    record.save(&layout.record())?;
    // The primary's socket; the standby's name is its `application_name` there.
    let conninfo = format!(
        "host={} port={} user={} application_name={}",
        primary.socket_dir.display(),
        primary.port,
        primary.superuser,
        record.name
    );
    server.base_backup(&conninfo, !record.fsync_off())?;
    forget_copied_standby_names(&layout.data())?;
    server.write_config(&record.server_conf(layout))?;
    let procs = match cgroups {
        Some(cg) => cg.procs_files()?,
        None => Vec::new(),
    };
    server.start(&record.name, procs)?;
    let instance = instance_from(layout, record)?;
    if let Some(password) = primary.password() {
        super::password::write(&layout.dir, record.port, &record.superuser, &password)?;
    }
    if record.standby.as_ref().is_some_and(|s| s.synchronous) {
        name_synchronous(&layout.home, primary, None)?;
    }
    wait_streaming(primary, &record.name)?;
    Ok(instance)
}

/// The base backup copies the primary's `postgresql.auto.conf`, which may name the primary's
/// synchronous standbys: a promoted copy would then wait for standbys it does not have.
fn forget_copied_standby_names(data: &std::path::Path) -> Result<(), InstanceError> {
    let path = data.join("postgresql.auto.conf");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("synchronous_standby_names"))
        .collect();
    std::fs::write(&path, kept.join("\n") + "\n").map_err(InstanceError::io("write", &path))
}

/// Sets the primary's `synchronous_standby_names` to its synchronous standbys recorded in the
/// home (`ANY 1 (...)`: a commit waits for one of them), leaving out `leaving`; none left
/// resets it. The server reloads its config.
pub(super) fn name_synchronous(
    home: &Path,
    primary: &Instance,
    leaving: Option<&str>,
) -> Result<(), InstanceError> {
    let dir = record::instances_dir(home);
    let records = std::fs::read_dir(&dir).map_err(InstanceError::io("list", &dir))?;
    let mut names: Vec<String> = records
        .filter_map(Result::ok)
        .filter_map(|e| Record::load(&e.path().join("instance.toml")).ok())
        .filter(|r| {
            r.standby
                .as_ref()
                .is_some_and(|s| s.synchronous && s.primary == primary.name)
                && Some(r.name.as_str()) != leaving
        })
        .map(|r| format!("\"{}\"", r.name))
        .collect();
    names.sort();
    let set = match names.is_empty() {
        true => "ALTER SYSTEM RESET synchronous_standby_names".to_string(),
        false => format!(
            "ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 ({})'",
            names.join(", ")
        ),
    };
    primary.psql("postgres", &set)?;
    primary.psql("postgres", "SELECT pg_reload_conf()")?;
    Ok(())
}

/// Waits until the primary lists the standby as streaming, so a run started next measures a
/// replica that is attached.
fn wait_streaming(primary: &Instance, name: &str) -> Result<(), InstanceError> {
    let began = Instant::now();
    let asked = format!(
        "SELECT count(*) FROM pg_stat_replication WHERE application_name = '{name}' \
         AND state = 'streaming'"
    );
    loop {
        if primary.psql("postgres", &asked)? == "1" {
            return Ok(());
        }
        if began.elapsed() > STREAMING_WAIT {
            return Err(refused(
                name,
                &primary.name,
                format!(
                    "it is not streaming from the primary after {} s; see its server.log",
                    STREAMING_WAIT.as_secs()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Promotes a standby: it ends recovery and takes writes. Says what was done.
pub fn promote(home: &Home, name: &str) -> Result<String, InstanceError> {
    let layout = Layout::new(&home.absolute()?, name);
    let record = super::checks::load_existing(&layout, name)?;
    let instance = instance_from(&layout, &record)?;
    let Some(s) = &record.standby else {
        return Err(InstanceError::Disrupt {
            action: "promote",
            name: name.to_string(),
            message: "it is not a standby; promote an instance made with --standby-of".into(),
        });
    };
    if !instance.in_recovery() {
        return Err(InstanceError::Disrupt {
            action: "promote",
            name: name.to_string(),
            message: "it was promoted already (no standby.signal)".into(),
        });
    }
    let user = os_user::for_existing(&record.os_user, name)?;
    Server {
        bin: &record.pg_bin_dir,
        user: &user,
        layout: &layout,
    }
    .promote()?;
    Ok(format!(
        "pg_ctl promote: {name} (standby of {}) takes writes",
        s.primary
    ))
}

/// The commits a promotion left behind: those in the old primary's WAL past the point where
/// the promoted standby's new timeline begins (its newest `.history` file), which the new
/// primary never received. Counted only once the old primary is down, so its WAL is final. A
/// commit whose answer never reached its client is among them; one the old primary had not
/// flushed (`synchronous_commit = off`) is lost without a trace here.
pub fn commits_past_promotion(home: &Home, name: &str) -> Result<u64, InstanceError> {
    let home = home.absolute()?;
    let layout = Layout::new(&home, name);
    let record = super::checks::load_existing(&layout, name)?;
    let not_counted = |message: String| InstanceError::Disrupt {
        action: "count the commits lost at the promotion of",
        name: name.to_string(),
        message,
    };
    let Some(s) = &record.standby else {
        return Err(not_counted("it was never a standby".into()));
    };
    let (timeline, switch) = newest_switch(&layout.data().join("pg_wal"))
        .ok_or_else(|| not_counted("no timeline history in its pg_wal".into()))?;
    let old = Layout::new(&home, &s.primary);
    let old_record = super::checks::load_existing(&old, &s.primary)?;
    let user = os_user::for_existing(&old_record.os_user, &s.primary)?;
    let server = Server {
        bin: &old_record.pg_bin_dir,
        user: &user,
        layout: &old,
    };
    if super::server::read_pid(&old.data()).is_some_and(|pid| !super::vm::qemu::released(pid)) {
        return Err(not_counted(format!(
            "its old primary '{}' still runs and takes commits; fail it before the promotion",
            s.primary
        )));
    }
    server.commits_in_wal(timeline, &switch)
}

/// The commits in a stopped instance's WAL on `timeline` from the LSN `start` on (issue 54):
/// the own count of a server that died during a run (its `pg_stat_database` went with it).
/// Refused while it runs: its WAL is not final then.
pub fn commits_since(
    home: &Home,
    name: &str,
    timeline: u32,
    start: &str,
) -> Result<u64, InstanceError> {
    let home = home.absolute()?;
    let layout = Layout::new(&home, name);
    let rec = super::checks::load_existing(&layout, name)?;
    if super::server::read_pid(&layout.data()).is_some_and(|pid| !super::vm::qemu::released(pid)) {
        return Err(InstanceError::Disrupt {
            action: "count the commits in the WAL of",
            name: name.to_string(),
            message: "it still runs, so its WAL is not final; read its counters instead".into(),
        });
    }
    let user = os_user::for_existing(&rec.os_user, name)?;
    let server = Server {
        bin: &rec.pg_bin_dir,
        user: &user,
        layout: &layout,
    };
    server.commits_in_wal(timeline, start)
}

/// The parent timeline and switch point (an LSN) of the newest timeline history file in
/// `pg_wal`: where the promoted server's WAL left its primary's.
fn newest_switch(pg_wal: &Path) -> Option<(u32, String)> {
    let newest = std::fs::read_dir(pg_wal)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let tli = u32::from_str_radix(name.strip_suffix(".history")?, 16).ok()?;
            Some((tli, e.path()))
        })
        .max_by_key(|(tli, _)| *tli)?;
    last_switch(&std::fs::read_to_string(newest.1).ok()?)
}

/// A history file's last entry: `parentTLI<TAB>switchpoint<TAB>reason`.
fn last_switch(text: &str) -> Option<(u32, String)> {
    let line = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))?;
    let mut fields = line.split_whitespace();
    let tli = fields.next()?.parse().ok()?;
    let lsn = fields.next().filter(|l| l.contains('/'))?;
    Some((tli, lsn.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_files_last_entry_is_the_switch_point() {
        let text = "1\t0/3000158\tno recovery target specified\n\n\
                    2\t0/5000A28\tno recovery target specified\n";
        assert_eq!(last_switch(text), Some((2, "0/5000A28".to_string())));
        assert_eq!(last_switch("# comment\n"), None);
        assert_eq!(last_switch("1\tnot-an-lsn\n"), None);
    }

    #[test]
    fn copied_standby_names_are_dropped_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("postgresql.auto.conf");
        std::fs::write(
            &path,
            "# Do not edit\nwork_mem = '8MB'\nsynchronous_standby_names = 'ANY 1 (\"b\")'\n",
        )
        .unwrap();
        forget_copied_standby_names(dir.path()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "# Do not edit\nwork_mem = '8MB'\n");
    }
}
