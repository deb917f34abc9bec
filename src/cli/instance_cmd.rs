//! `tidebench instance start|stop|status|destroy|dsn`: flags to `crate::instance` calls, and
//! their results printed for people (status table) or for other programs (dsn).

use crate::cli::CliError;
use crate::instance::{self, Home, InstanceOptions, StartOutcome};

const START_AFTER_HELP: &str = "\
The first start creates the instance (initdb) under $TIDEBENCH_HOME/instances/NAME and records
its port, settings and limits in instance.toml; later starts must use the same values (or leave
them out). To change them: tidebench instance destroy NAME, then start it anew.

Defaults: listen on 127.0.0.1 and a unix socket in $TIDEBENCH_HOME/sockets, max_connections=300,
shared_buffers=1GB (at most 25% of --memory). The database `tidebench` is created.

--cpus and --memory put the server and all its backends in their own cgroup (v1 or v2), the
emulated VM; they need writable cgroups (run as root).

--hypervisor qemu makes the instance a real VM: a QEMU guest running this host's PostgreSQL,
reached on 127.0.0.1:PORT (QEMU's user network), with --cpus whole vCPUs and --memory its RAM
(default 1 vCPU, 1GiB). The guest image is built on first use (the kernel from Debian's mirror)
and cached in /var/cache/tidebench (root) or $TIDEBENCH_VM_CACHE. KVM is used when a KVM guest
boots, else TCG (software emulation: its figures are emulated); --accel forces one.
With --vm PATH as well, the instance is one of several in that guest (each its own server,
port and password; one VM, one size): they start and stop together, and an instance added to
a running VM reboots it.

--standby-of PRIMARY makes a streaming replica of a running instance of this home
(pg_basebackup -R over its socket) on a port of its own, asynchronous unless --sync, which
names it in the primary's synchronous_standby_names (a commit there then waits for it: keep
a synchronous standby running, or destroy it). `instance status` shows each one's role; a run's
`fail` event kills the primary and a `promote` event promotes the standby, or one `failover`
event does both (the book: Reliability, section Standbys and fail-over).

Examples:
  tidebench instance start vm1 --cpus 2 --memory 4GiB
  tidebench instance start a && tidebench instance start b --standby-of a --sync
  tidebench instance start guest1 --hypervisor qemu --cpus 2 --memory 2GiB
  tidebench instance start db1 --hypervisor qemu --vm host1/vm1 --cpus 2 --memory 2GiB
  tidebench instance start db2 --hypervisor qemu --vm host1/vm1    # a second server in vm1
  tidebench instance start bench --port 5433 --set work_mem=64MB --set fsync=off
  tidebench instance start secure --ssl     # TLS; its DSN is verify-full with its own CA
  tidebench instance start pg18 --pg-bin /opt/pg18/bin   # another PostgreSQL build
  tidebench instance start pooled --pooler transaction --pool-size 20   # pgbouncer in front

--pooler starts Debian's pgbouncer (apt-get install pgbouncer) in front of the instance, its
config and log in the instance's pooler/ dir; a pooler already running is kept (stop the
instance to change its mode or size). Target the DSN it prints to run through it: the run
samples the pooler's counters, and reads the server's on the instance itself (the pooler's
server sessions closed around the reads), so the server's count is compared as on a direct run.";

const DSN_AFTER_HELP: &str = "\
Examples:
  psql \"$(tidebench instance dsn vm1)\"
  pgbench -i -s 10 \"$(tidebench instance dsn vm1 --db bench)\"
  tidebench run -w tpcb --target \"$(tidebench instance dsn pooled --pooler)\"";

#[derive(Debug, clap::Subcommand)]
pub enum InstanceCommand {
    /// Create (on first use) and start a managed instance
    #[command(after_help = START_AFTER_HELP)]
    Start {
        /// Instance name: letters, digits, '_' or '-'
        name: String,
        /// TCP port on 127.0.0.1 (default: a free one, chosen at creation)
        #[arg(long, short = 'p')]
        port: Option<u16>,
        /// A server setting, e.g. --set shared_buffers=256MB (repeatable; overrides defaults)
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_setting)]
        settings: Vec<(String, String)>,
        /// CPU quota in cores, e.g. 0.5 or 2 (cgroup)
        #[arg(long)]
        cpus: Option<f64>,
        /// Memory limit, e.g. 512MB, 2GiB, 1G (cgroup; binary units)
        #[arg(long, value_name = "SIZE", value_parser = instance::parse_size)]
        memory: Option<u64>,
        /// Run in this VM, which several instances may share, e.g. --vm host1/vm1: an emulated
        /// VM (a cgroup), or with --hypervisor a real guest (--cpus and --memory are then the
        /// VM's; give the same values to every instance of the VM, or leave them out to join)
        #[arg(long, value_name = "PATH")]
        vm: Option<String>,
        /// Serve TLS: make a CA and a server certificate for localhost/127.0.0.1 in the
        /// instance's tls/ dir and turn ssl on; `instance dsn` then prints a verify-full DSN
        #[arg(long)]
        ssl: bool,
        /// Run the server in a real VM under this hypervisor (a QEMU guest with the host's
        /// PostgreSQL; --cpus are then whole vCPUs and --memory its RAM, default 1GiB)
        #[arg(long, value_enum)]
        hypervisor: Option<instance::vm::Hypervisor>,
        /// With --hypervisor: force KVM or TCG (software emulation); default: KVM when a
        /// KVM guest boots, else TCG
        #[arg(long, value_enum, requires = "hypervisor")]
        accel: Option<instance::vm::Accel>,
        /// The PostgreSQL build to run: a dir holding its initdb, pg_ctl and postgres (default:
        /// $TIDEBENCH_PG_BIN, pg_config, PATH, then /usr/lib/postgresql's newest); kept in the
        /// instance's record, so one instance per build (A/B of two builds: two instances)
        #[arg(long, value_name = "DIR")]
        pg_bin: Option<std::path::PathBuf>,
        /// Make it a streaming standby of this running instance (a base backup of it, on a
        /// port of its own), asynchronous unless --sync
        #[arg(long, value_name = "PRIMARY")]
        standby_of: Option<String>,
        /// With --standby-of: the primary waits for this standby on every commit
        /// (synchronous_standby_names), so a promotion loses nothing committed
        #[arg(long, requires = "standby_of")]
        sync: bool,
        /// Put a connection pooler (Debian's pgbouncer) in front of the instance in this mode,
        /// on a port of its own on 127.0.0.1, with the instance's password; stopped with the
        /// instance. A run through it samples the pooler's own counters
        #[arg(long, value_enum, value_name = "MODE")]
        pooler: Option<instance::pooler::PoolMode>,
        /// With --pooler: server sessions per database (pgbouncer's default_pool_size)
        #[arg(long, value_name = "N", default_value_t = 20, requires = "pooler")]
        pool_size: u32,
    },
    /// Stop a running instance (fast shutdown: clients are disconnected)
    Stop {
        /// Instance name
        name: String,
    },
    /// Show instances: state, role (primary or standby), port, pid, data dir, cgroup limits
    Status {
        /// Only this instance (default: all instances in $TIDEBENCH_HOME)
        name: Option<String>,
    },
    /// Stop an instance and delete it: data, log and cgroups
    Destroy {
        /// Instance name
        name: String,
    },
    /// Set a VM instance's memory through its virtio balloon (QMP), e.g. 256MiB; its full
    /// size gives the memory back
    Balloon {
        /// Instance name (started with --hypervisor qemu)
        name: String,
        /// The memory the guest keeps, e.g. 256MiB (at most its --memory)
        #[arg(value_parser = instance::parse_size)]
        size: u64,
    },
    /// Print a libpq connection string for an instance (for psql, pgbench, ...)
    #[command(after_help = DSN_AFTER_HELP)]
    Dsn {
        /// Instance name
        name: String,
        /// Database name
        #[arg(long, default_value = crate::config::target::DEFAULT_DBNAME)]
        db: String,
        /// Through the instance's running pooler (`instance start NAME --pooler MODE`)
        #[arg(long)]
        pooler: bool,
    },
}

pub(super) fn parse_setting(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!(
            "'{text}' is not KEY=VALUE; write e.g. --set shared_buffers=256MB"
        )),
    }
}

pub fn run(cmd: InstanceCommand, home: &Home) -> Result<(), CliError> {
    match cmd {
        InstanceCommand::Start {
            name,
            port,
            settings,
            cpus,
            memory,
            vm,
            ssl,
            hypervisor,
            accel,
            pg_bin,
            standby_of,
            sync,
            pooler,
            pool_size,
        } => {
            let opts = InstanceOptions {
                pg_bin,
                standby_of,
                synchronous: sync,
                port,
                settings,
                cpus,
                memory,
                vm,
                ssl,
                guest: hypervisor.map(|_| instance::vm::GuestOptions {
                    accel,
                    ..Default::default()
                }),
            };
            let (inst, outcome) = instance::start_reporting(home, &name, &opts)?;
            let what = match outcome {
                StartOutcome::Created => "created and started",
                StartOutcome::Started => "started",
                StartOutcome::AlreadyRunning => "is already running",
            };
            if let Some(guest) = inst.guest() {
                if outcome != StartOutcome::AlreadyRunning {
                    println!("{}", describe_guest(guest));
                }
            }
            println!(
                "instance '{name}' {what} on port {} (socket dir {})",
                inst.port,
                inst.socket_dir.display()
            );
            println!(
                "connect: psql \"{}\"",
                inst.dsn(crate::config::target::DEFAULT_DBNAME)
            );
            if let Some(mode) = pooler {
                let opts = instance::pooler::PoolerOptions { mode, pool_size };
                let p = instance::pooler::start(home, &name, &opts)?;
                println!(
                    "pooler (pgbouncer, {} mode, {pool_size} server sessions per database) on \
                     port {}; its log: {}",
                    mode.as_str(),
                    p.port,
                    p.log().display()
                );
                println!(
                    "through the pooler: --target \"{}\"",
                    p.dsn(&inst, crate::config::target::DEFAULT_DBNAME)
                );
            }
            Ok(())
        }
        InstanceCommand::Stop { name } => {
            if instance::stop(home, &name)? {
                println!("instance '{name}' stopped");
            } else {
                println!("instance '{name}' was not running");
            }
            Ok(())
        }
        InstanceCommand::Status { name } => {
            let rows = match name {
                Some(n) => vec![instance::status(home, &n)?],
                None => instance::list(home)?,
            };
            if rows.is_empty() {
                println!(
                    "no instances in {}; create one with `tidebench instance start NAME`",
                    home.root.display()
                );
            } else {
                print!("{}", status_table(&rows));
            }
            Ok(())
        }
        InstanceCommand::Destroy { name } => {
            instance::destroy(home, &name)?;
            println!("instance '{name}' destroyed");
            Ok(())
        }
        InstanceCommand::Balloon { name, size } => {
            let inst = instance::find_running(home, &name)?;
            let actual = instance::vm::balloon(&inst, size)?;
            println!(
                "instance '{name}': the guest now has {} (balloon target {})",
                instance::format_size(actual),
                instance::format_size(size)
            );
            Ok(())
        }
        InstanceCommand::Dsn { name, db, pooler } => {
            crate::config::target::check_name("database", &db).map_err(CliError::usage)?;
            let inst = instance::find(home, &name)?;
            if !pooler {
                println!("{}", inst.dsn(&db));
                return Ok(());
            }
            let p = instance::pooler::find(&inst).ok_or_else(|| {
                CliError::usage(format!(
                    "instance '{name}' has no pooler running; start one with \
                     `tidebench instance start {name} --pooler transaction`"
                ))
            })?;
            println!("{}", p.dsn(&inst, &db));
            Ok(())
        }
    }
}

/// What a VM instance's start did: accelerator, size, kernel, times, image.
fn describe_guest(guest: &instance::vm::GuestInfo) -> String {
    let r = &guest.record;
    let mut out = format!(
        "VM: QEMU, {} vCPU{}, {} RAM",
        r.vcpus,
        if r.vcpus == 1 { "" } else { "s" },
        instance::format_size(r.memory)
    );
    let Some(s) = &guest.state else {
        return out;
    };
    let accel = match s.accel {
        instance::vm::Accel::Kvm => "KVM",
        instance::vm::Accel::Tcg => {
            "TCG (software emulation: figures are emulated, not a VM's overhead)"
        }
    };
    out.push_str(&format!(
        ", accelerator {accel}\nVM: guest kernel {}; first connection {:.1} s after QEMU started",
        s.kernel_release, s.ready_secs
    ));
    if let Some(note) = &s.kvm_note {
        out.push_str(&format!("\nVM: KVM not used: {note}"));
    }
    if s.image_build_secs > 0.0 {
        out.push_str(&format!(
            "\nVM: guest image built in {:.1} s ({})",
            s.image_build_secs,
            instance::format_size(s.image_bytes)
        ));
    }
    out
}

/// The LIMITS cell of a VM instance: `qemu/tcg 2 vCPUs 512MiB`.
fn guest_limits(guest: Option<&instance::vm::GuestInfo>) -> String {
    let Some(g) = guest else {
        return String::new();
    };
    let accel = g
        .state
        .as_ref()
        .map_or("qemu".to_string(), |s| format!("qemu/{}", s.accel.name()));
    format!(
        "{accel} {} vCPU {}",
        g.record.vcpus,
        instance::format_size(g.record.memory)
    )
}

/// Left-aligned columns separated by two spaces.
fn status_table(rows: &[instance::InstanceStatus]) -> String {
    let header = ["NAME", "STATE", "ROLE", "PORT", "PID", "DATA DIR", "LIMITS"].map(String::from);
    let mut table = vec![header.to_vec()];
    for r in rows {
        let (cpus, memory) = r.instance.limits();
        table.push(vec![
            r.instance.name.clone(),
            if r.running { "running" } else { "stopped" }.to_string(),
            r.instance.role(),
            r.instance.port.to_string(),
            r.pid.map_or("-".to_string(), |p| p.to_string()),
            r.instance.data_dir().display().to_string(),
            match r.instance.vm() {
                Some(vm) if r.instance.guest().is_some() => {
                    format!("{} vm={vm}", guest_limits(r.instance.guest()))
                }
                None if r.instance.guest().is_some() => guest_limits(r.instance.guest()),
                Some(vm) => format!("{} vm={vm}", instance::describe_limits(cpus, memory)),
                None => instance::describe_limits(cpus, memory),
            },
        ]);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| table.iter().map(|row| row[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_need_a_key_and_an_equals_sign() {
        assert_eq!(
            parse_setting("work_mem=64MB"),
            Ok(("work_mem".into(), "64MB".into()))
        );
        assert_eq!(
            parse_setting("search_path=a,b=c"),
            Ok(("search_path".into(), "a,b=c".into()))
        );
        assert!(parse_setting("work_mem").is_err());
        assert!(parse_setting("=1").is_err());
    }
}
