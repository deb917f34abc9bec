//! What `--profile` samples in a run: the managed instances behind the targets (by their
//! postmaster's pid), the servers of DSN targets on this host (found through the backend of
//! the statistics session: its parent is the postmaster, checked against the data directory
//! when the role may read it), the driver, and with `--profile host` the host. A server on
//! another host, or hidden in another PID namespace, is named as out of reach. A managed
//! instance that is a QEMU guest is profiled as its QEMU process (its pid): what the VM costs
//! the host; its server's pids are the guest's, never looked for here.

use crate::config::RunPlan;
use crate::instance::Home;
use crate::profile::{self, Request, Subject};
use crate::sampler::proc_tree::parse_proc_stat;

use super::databases::{Databases, ServerProcess};
use super::targets::{managed_instances, Targets};
use super::RunError;

/// The profile's request, when the plan asks for one. perf was checked by
/// [`profile::preflight`] before anything else.
pub async fn request(
    plan: &RunPlan,
    perf: Option<profile::perf::Perf>,
    targets: &Targets,
    dbs: &Databases,
    home: &Home,
) -> Result<Option<Request>, RunError> {
    let (Some(profile_plan), Some(perf)) = (plan.profile, perf) else {
        return Ok(None);
    };
    let mut subjects = Vec::new();
    let mut missing = Vec::new();
    let mut guest_ports = Vec::new();
    for i in managed_instances(&targets.planned, home)? {
        if i.guest().is_some() {
            guest_ports.push(i.port);
        }
        match i.pid() {
            Some(pid) => subjects.push(Subject {
                name: i.name.clone(),
                kind: "instance",
                root: Some(pid),
            }),
            None => missing.push(format!(
                "instance '{}' is not running: not profiled",
                i.name
            )),
        }
    }
    for server in dbs.server_processes().await {
        if in_guest(&server, &guest_ports) {
            continue;
        }
        match local_postmaster(&server) {
            Ok(pid) if subjects.iter().any(|s| s.root == Some(pid)) => {}
            Ok(pid) => subjects.push(Subject {
                name: server.target.label.clone(),
                kind: "server",
                root: Some(pid),
            }),
            Err(why) => missing.push(why),
        }
    }
    Ok(Some(Request {
        plan: profile_plan,
        perf,
        subjects: profile::with_scope_subjects(&profile_plan, subjects),
        missing,
    }))
}

/// A server reached through a guest's forwarded port: a backend pid it reports is the
/// guest's, and the QEMU process already stands for it.
fn in_guest(server: &ServerProcess, guest_ports: &[u16]) -> bool {
    let params = &server.target.params;
    guest_ports.contains(&params.port) && is_local(&params.host)
}

/// The pid of the postmaster serving `server`, when it runs on this host.
fn local_postmaster(server: &ServerProcess) -> Result<u32, String> {
    let label = &server.target.label;
    if !is_local(&server.target.params.host) {
        return Err(format!(
            "target '{label}' is on another host: its server is out of reach of a profile \
             taken here (run tidebench with --profile on that host, or --profile host inside \
             the VM)"
        ));
    }
    let unseen = |why: &str| {
        format!(
            "target '{label}': its server's processes cannot be found here ({why}; a server in \
             a container has pids of its own): not profiled"
        )
    };
    let backend = server
        .backend_pid
        .ok_or_else(|| unseen("pg_backend_pid() failed"))?;
    let stat = std::fs::read_to_string(format!("/proc/{backend}/stat"))
        .map_err(|_| unseen("its backend's pid is not a process of this host"))?;
    let postmaster = parse_proc_stat(&stat)
        .map(|s| s.ppid)
        .filter(|p| *p > 1)
        .ok_or_else(|| unseen("its backend has no postmaster as its parent"))?;
    if let (Some(dir), Ok(cwd)) = (
        &server.data_directory,
        std::fs::read_link(format!("/proc/{postmaster}/cwd")),
    ) {
        if cwd != std::path::Path::new(dir) {
            return Err(unseen(&format!(
                "pid {postmaster} runs in {}, not in the server's data directory {dir}",
                cwd.display()
            )));
        }
    }
    Ok(postmaster)
}

fn is_local(host: &pgwire::Host) -> bool {
    match host {
        pgwire::Host::Unix(_) => true,
        pgwire::Host::Tcp(h) => {
            h == "localhost"
                || h == "::1"
                || h.parse::<std::net::Ipv4Addr>()
                    .is_ok_and(|a| a.is_loopback())
        }
    }
}
