//! MPP on PostgreSQL (the Greenplum study's segments): `--segments N` starts N managed instances, the
//! segments, each holding the fact table (with its own time partitions) for a range of
//! customers; the target's database becomes the coordinator, where `order_lineitems` is
//! partitioned by customer into postgres_fdw foreign tables, one per segment, with
//! `async_capable` on so a scan runs on every segment at once, and partitionwise aggregation
//! and join on for the database. The reports run unchanged on it. Loading writes to the
//! segments directly, every stream a COPY to each.
//!
//! Customers are split into equal ranges of ids (not hashed): customers are drawn uniformly,
//! so the segments are even, and the queries group by customer, so the work splits the same.

use tokio_postgres::Client;

use super::error::{RetailError, SegmentsOver};
use super::gen::{self, Size};
use super::loader::{self, create_with};
use super::SCHEMA;
use crate::config::size::gib;
use crate::config::{OptionValues, PreparePlan, TargetSpec};
use crate::instance::{self, Home, InstanceOptions};
use crate::target::ResolvedTarget;
use crate::workload::kit::staging::{connect, db_error};
use crate::workload::WorkloadError;

/// The database every segment holds its share in.
const SEGMENT_DB: &str = "retail";

/// The segments of a load: where each is, which one a customer's rows go to, and each one's
/// share of the host (cores, bytes) when it could be enforced.
pub struct Segments {
    pub targets: Vec<ResolvedTarget>,
    pub route: Box<dyn Fn(u64) -> usize + Sync + Send>,
    pub share: Option<(f64, u64)>,
}

/// Each segment's share of the host, as the study's segment VMs split theirs: `--segment-cpus`
/// and `--segment-memory` when given, else the cores and the memory split evenly, enforced by
/// a control group. `None` where none can be made (it takes root): the segments run unlimited,
/// which only an even split may do quietly.
fn share_of_host(options: &OptionValues, n: u64) -> Result<Option<(f64, u64)>, WorkloadError> {
    let cpus = options
        .get(super::SEGMENT_CPUS)
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)));
    let memory = super::bytes_of(options, super::SEGMENT_MEMORY);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root || instance::CgroupPaths::locate("probe").is_err() {
        if cpus.is_some() || memory.is_some() {
            return Err(RetailError::SegmentLimitsNeedCgroups.into());
        }
        return Ok(None);
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as f64;
    let even_cpus = (cores / n as f64 * 100.0).floor() / 100.0;
    let Some(host_memory) = crate::instance::host_memory::total() else {
        // Without /proc/meminfo there is nothing to split; given limits are taken as they are.
        return Ok(cpus.zip(memory));
    };
    if let Some(c) = cpus.filter(|c| c * n as f64 > cores + 1e-9) {
        return Err(RetailError::SegmentsOverHost(Box::new(SegmentsOver {
            flag: "--segment-cpus",
            segments: n,
            each: format!("{c}"),
            total: format!("{} cores", c * n as f64),
            host: format!("{cores} cores"),
            most: format!("{even_cpus:.2}"),
        }))
        .into());
    }
    if let Some(m) = memory.filter(|m| m.saturating_mul(n) > host_memory) {
        return Err(RetailError::SegmentsOverHost(Box::new(SegmentsOver {
            flag: "--segment-memory",
            segments: n,
            each: gib(m),
            total: gib(m.saturating_mul(n)),
            host: gib(host_memory),
            most: gib(host_memory / n),
        }))
        .into());
    }
    Ok(Some((
        cpus.unwrap_or(even_cpus),
        memory.unwrap_or(host_memory / n),
    )))
}

/// A string inside single quotes in SQL.
fn quote(s: &str) -> String {
    s.replace('\'', "''")
}

/// What every segment is started with, and its share of the host (cores, bytes) as reported.
/// With `--segment-hypervisor` a segment is a QEMU guest: its share's cores rounded down to
/// whole vCPUs (at least 1), its share's memory as RAM (1GiB where no share is known).
fn segment_limits(
    options: &OptionValues,
    n: u64,
) -> Result<(Option<(f64, u64)>, InstanceOptions), WorkloadError> {
    let share = share_of_host(options, n)?;
    if options.get(super::SEGMENT_HYPERVISOR).is_none() {
        let limits = InstanceOptions {
            cpus: share.map(|s| s.0),
            memory: share.map(|s| s.1),
            ..InstanceOptions::default()
        };
        return Ok((share, limits));
    }
    let asked = options
        .get(super::SEGMENT_CPUS)
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)));
    if let Some(c) = asked.filter(|c| *c < 1.0 || c.fract() != 0.0) {
        return Err(RetailError::SegmentVcpus { cpus: c }.into());
    }
    let vcpus = share.map_or(1.0, |s| s.0.floor().max(1.0));
    let memory = share.map_or(instance::vm::DEFAULT_MEMORY, |s| s.1);
    let limits = InstanceOptions {
        cpus: Some(vcpus),
        memory: Some(memory),
        guest: Some(instance::vm::GuestOptions::default()),
        ..InstanceOptions::default()
    };
    Ok((Some((vcpus, memory)), limits))
}

/// Starts the segments, creates their tables and the coordinator's foreign tables.
pub async fn create(
    plan: &PreparePlan,
    coordinator: &ResolvedTarget,
    client: &Client,
    size: &Size,
    n: u64,
) -> Result<Segments, WorkloadError> {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get() as u64);
    if n > 4 * cores || n > 32 {
        return Err(RetailError::TooManySegments {
            segments: n,
            cores,
            most: (4 * cores).min(32),
        }
        .into());
    }
    let base = match &plan.target {
        TargetSpec::Instance { name, .. } => name.clone(),
        TargetSpec::Dsn(_) => "retail".to_string(),
    };
    let home = Home::from_env();
    let (share, limits) = segment_limits(&plan.options, n)?;
    let mut targets = Vec::new();
    let mut servers = Vec::new();
    for k in 1..=n {
        let name = format!("{base}-seg{k}");
        let (inst, target) = start_segment(&home, &name, &limits).await?;
        let seg = connect(&target).await?;
        loader::create(&seg, &target, true, SCHEMA).await?;
        servers.push(inst);
        targets.push(target);
    }
    // The coordinator: dimensions here, the fact table over the segments.
    let schema = SCHEMA.replace(
        "PARTITION BY RANGE (order_datetime)",
        "PARTITION BY RANGE (customer_id)",
    );
    drop_servers(client, coordinator).await?;
    create_with(client, coordinator, plan.force, &schema, false).await?;
    let mut sql = String::from("CREATE EXTENSION IF NOT EXISTS postgres_fdw;\n");
    for (k, inst) in servers.iter().enumerate() {
        let (lo, hi) = gen::customer_range(size, k as u64, n);
        let s = k + 1;
        // A VM segment is reached through its forwarded port with its password; a local
        // one through its socket.
        let (host, password) = match inst.guest() {
            Some(_) => (
                "127.0.0.1".to_string(),
                format!(
                    ", password '{}'",
                    quote(&inst.password().unwrap_or_default())
                ),
            ),
            None => (inst.socket_dir.display().to_string(), String::new()),
        };
        sql.push_str(&format!(
            "CREATE SERVER retail_seg{s} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '{}', \
             port '{}', dbname '{SEGMENT_DB}', async_capable 'true', fetch_size '10000');\n\
             CREATE USER MAPPING FOR CURRENT_USER SERVER retail_seg{s} OPTIONS (user '{}'{password});\n\
             CREATE FOREIGN TABLE order_lineitems_seg{s} PARTITION OF order_lineitems FOR VALUES \
             FROM ({lo}) TO ({hi}) SERVER retail_seg{s} OPTIONS (table_name 'order_lineitems');\n",
            quote(&host),
            inst.port,
            inst.superuser
        ));
    }
    client
        .batch_execute(&sql)
        .await
        .map_err(|e| db_error(coordinator, "creating the segments' foreign tables", &e))?;
    let db: String = client
        .query_one("SELECT current_database()", &[])
        .await
        .map_err(|e| db_error(coordinator, "reading the database's name", &e))?
        .get(0);
    let quoted = db.replace('"', "\"\"");
    client
        .batch_execute(&format!(
            "ALTER DATABASE \"{quoted}\" SET enable_partitionwise_aggregate = on;\n\
             ALTER DATABASE \"{quoted}\" SET enable_partitionwise_join = on;"
        ))
        .await
        .map_err(|e| db_error(coordinator, "turning partitionwise plans on", &e))?;
    let size = *size;
    Ok(Segments {
        targets,
        route: Box::new(move |c| gen::segment_of(&size, c, n)),
        share,
    })
}

/// Starts (creating on first use) segment `name` with `limits`, and its database.
async fn start_segment(
    home: &Home,
    name: &str,
    limits: &InstanceOptions,
) -> Result<(instance::Instance, ResolvedTarget), WorkloadError> {
    let (home, name, limits) = (home.clone(), name.to_string(), limits.clone());
    tokio::task::spawn_blocking(move || {
        // Another segment count gives each another share: the segment restarts with it.
        let (inst, _) =
            instance::reconfigure(&home, &name, &limits).map_err(|e| RetailError::Segment {
                name: name.clone(),
                source: e.into(),
            })?;
        let spec = TargetSpec::instance(&name, SEGMENT_DB);
        let target = crate::target::resolve(&spec, &home).map_err(|e| RetailError::Segment {
            name: name.clone(),
            source: e.into(),
        })?;
        Ok((inst, target))
    })
    .await?
}

/// An earlier load's segment servers (and with them its foreign tables).
async fn drop_servers(client: &Client, target: &ResolvedTarget) -> Result<(), WorkloadError> {
    client
        .batch_execute(
            "DO $$ DECLARE s text; BEGIN FOR s IN SELECT srvname FROM pg_foreign_server \
             WHERE srvname LIKE 'retail\\_seg%' LOOP EXECUTE format('DROP SERVER %I CASCADE', s); \
             END LOOP; END $$;",
        )
        .await
        .map_err(|e| db_error(target, "dropping an earlier load's segments", &e))
}
