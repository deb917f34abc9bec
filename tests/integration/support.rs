//! Shared test harness: temp homes, managed instances, running the real binary.
//!
//! Every test gets its own home (a temp dir) and instances on free ports, started through
//! tidebench's own `instance` code; dropping the [`TempHome`] destroys them.

#![allow(dead_code)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use tidebench::instance::{self, Home, Instance, InstanceOptions};

/// Small, fast settings for test instances: no fsync, small shared memory, few connections.
/// Autovacuum is off because its workers' transactions count in `pg_stat_database.xact_commit`
/// too, and the tests compare that count with the client's exactly.
pub const TEST_SETTINGS: [(&str, &str); 6] = [
    ("autovacuum", "off"),
    ("shared_buffers", "128MB"),
    ("fsync", "off"),
    ("synchronous_commit", "off"),
    ("full_page_writes", "off"),
    ("max_connections", "100"),
];

/// A tidebench home in a temp dir; its instances are destroyed when it is dropped.
pub struct TempHome {
    pub home: Home,
    // Dropped after the instances are destroyed (fields drop in declaration order, and
    // `Drop::drop` runs before any field is dropped).
    _dir: tempfile::TempDir,
}

impl TempHome {
    pub fn path(&self) -> &Path {
        &self.home.root
    }
}

impl Drop for TempHome {
    fn drop(&mut self) {
        let Ok(all) = instance::list(&self.home) else {
            return;
        };
        for status in all {
            if let Err(e) = instance::destroy(&self.home, &status.instance.name) {
                eprintln!("warning: could not destroy test instance: {e}");
            }
        }
    }
}

/// A new empty home, traversable by the `postgres` user (the server's user when tests run as
/// root). It lives directly under /tmp so socket paths stay short.
pub fn temp_home() -> TempHome {
    let dir = tempfile::Builder::new()
        .prefix("tb")
        .tempdir_in("/tmp")
        .expect("create a temp dir under /tmp");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod 0755 the temp home");
    TempHome {
        home: Home::at(dir.path()),
        _dir: dir,
    }
}

/// The test settings as `--set` pairs.
pub fn test_settings() -> Vec<(String, String)> {
    TEST_SETTINGS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Starts (creating on first use) an instance with [`TEST_SETTINGS`] on a free port.
pub fn start_instance(home: &TempHome, name: &str) -> Instance {
    start_with(home, name, InstanceOptions::default())
}

/// Where test instances' initdb output is kept and copied from (see `instance::initdb_cache`):
/// the suite makes more than a hundred instances, and a copy takes a fraction of initdb's time.
pub const INITDB_CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/initdb");

/// As [`start_instance`] with more options; `settings` are appended to the test settings.
pub fn start_with(home: &TempHome, name: &str, mut opts: InstanceOptions) -> Instance {
    instance::keep_initdb_output_in(Path::new(INITDB_CACHE));
    let mut settings = test_settings();
    settings.append(&mut opts.settings);
    opts.settings = settings;
    match instance::start(&home.home, name, &opts) {
        Ok(inst) => inst,
        Err(e) => panic!("starting test instance '{name}' failed:\n{e}"),
    }
}

/// The built `tidebench` binary with TIDEBENCH_HOME set to the temp home.
pub fn tidebench(home: &TempHome) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tidebench"));
    cmd.env("TIDEBENCH_HOME", home.path())
        .env(instance::initdb_cache::ENV, INITDB_CACHE);
    cmd
}

/// Starts tidebench with `args` in the background, its output piped.
pub fn spawn_tidebench(home: &TempHome, args: &[&str]) -> std::process::Child {
    tidebench(home)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends SIGINT (Ctrl-C) to `child` and waits for it: its output and how long it took to end.
pub fn interrupt(child: std::process::Child) -> (std::process::Output, std::time::Duration) {
    let sent = std::time::Instant::now();
    // SAFETY: plain kill(2) on a child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    (o, sent.elapsed())
}

/// Runs SQL with psql as the superuser; returns unaligned, tuples-only output. Panics on error.
pub fn psql(inst: &Instance, db: &str, sql: &str) -> String {
    match inst.psql(db, sql) {
        Ok(out) => out,
        Err(e) => panic!("psql on '{}' failed: {e}", inst.name),
    }
}

/// True when cgroups can be created here (root on a host with v1 or v2 cpu+memory).
pub fn cgroups_writable() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    root && tidebench::instance::CgroupPaths::locate("probe").is_ok()
}

/// A temporary home for a test that needs control groups, or `None` (having said why the
/// test is skipped) on a host where they cannot be created.
pub fn home_with_cgroups(test_needs: &str) -> Option<TempHome> {
    if !cgroups_writable() {
        skip(
            test_needs,
            "control groups",
            "this host cannot create cgroups (needs root and cgroup v1 or v2)",
        );
        return None;
    }
    Some(temp_home())
}

/// The skip ledger `make test` counts after the run: one line per skipped test.
const SKIP_LEDGER: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/skipped.txt");

/// A test's prerequisite is missing (QEMU, control groups, root, Chromium, Slurm, a tmpfs).
/// Under CI (`CI=true`) that is a failure naming the prerequisite, so a setup that failed to
/// install it cannot show green (issue 49); elsewhere the test is skipped with the reason on
/// stderr and a line in the ledger, which `make test` counts in its closing lines. The caller
/// returns right after.
pub fn skip(test: &str, prerequisite: &str, why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "CI=true and {test} needs {prerequisite}, which is missing: {why} \
             (scripts/setup.sh --test installs the test tools)"
        );
    }
    eprintln!("SKIPPED {test}: needs {prerequisite}: {why}");
    use std::io::Write;
    let line = format!("{test}\t{prerequisite}\t{why}\n");
    let ledger = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(SKIP_LEDGER);
    // One write of one short line with O_APPEND: lines from parallel tests do not interleave.
    if let Err(e) = ledger.and_then(|mut f| f.write_all(line.as_bytes())) {
        eprintln!("could not note the skip in {SKIP_LEDGER}: {e}");
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

/// pgbench of the same installation as the instance's server.
pub fn pgbench_path(inst: &Instance) -> std::path::PathBuf {
    inst.bin_dir().join("pgbench")
}

/// Writes a script file into the test's home and returns its path, for `-f`.
pub fn script_file(home: &TempHome, name: &str, body: &str) -> String {
    let path = home.path().join(name);
    std::fs::write(&path, body).expect("write a script into the test's home");
    path.display().to_string()
}

/// Runs the instance's own pgbench with `args` (the DSN among them) and waits for it.
pub fn run_pgbench(inst: &Instance, args: &[&str]) -> std::process::Output {
    Command::new(pgbench_path(inst))
        .args(args)
        .output()
        .expect("run pgbench")
}

/// Runs the binary with `args` (TIDEBENCH_HOME set) and waits for it.
pub fn run_tidebench(home: &TempHome, args: &[&str]) -> std::process::Output {
    tidebench(home)
        .args(args)
        .output()
        .expect("the tidebench binary runs")
}

/// stdout and stderr of a finished command, as one text for messages and searches.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `o`, after asserting it exited 0 (its output is the failure message).
pub fn ok(o: std::process::Output) -> std::process::Output {
    assert!(o.status.success(), "{}", output_text(&o));
    o
}

/// Runs `future` to completion on a fresh single-threaded runtime.
/// Runs `future` on a driver thread's loop ([`evloop`]), which `pgwire` sessions need.
pub fn on_driver_loop<F: std::future::Future>(future: F) -> F::Output {
    evloop::block_on(future).expect("start an evloop loop")
}

pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("build a tokio runtime")
        .block_on(future)
}

/// `tidebench prepare --workload tpcc` of `warehouses` on instance `inst`, two jobs.
/// Loads pgbench's tables at scale 1 into `target`.
pub fn prepare_tpcb(home: &TempHome, target: &str) {
    let o = run_tidebench(
        home,
        &["prepare", "-w", "tpcb", "-s", "1", "--target", target],
    );
    assert!(o.status.success(), "prepare failed: {}", output_text(&o));
}

pub fn prepare_tpcc(home: &TempHome, inst: &str, warehouses: &str) {
    let target = format!("instance:{inst}");
    ok(run_tidebench(
        home,
        &[
            "prepare",
            "--workload",
            "tpcc",
            "--warehouses",
            warehouses,
            "--jobs",
            "2",
            "--target",
            &target,
        ],
    ));
}

/// The single number `sql` returns on the instance's default database.
pub fn num(inst: &Instance, sql: &str) -> f64 {
    let out = psql(inst, instance::DEFAULT_DBNAME, sql);
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{sql} gave {out:?}"))
}

/// A results dir's summary.json.
pub fn summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("read summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// `experiment.json` of an experiment dir, parsed.
pub fn experiment(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("experiment.json")).expect("experiment.json");
    serde_json::from_str(&text).expect("experiment.json is JSON")
}

/// A TPC-C run's summary had no failure, committed every type on every target, and the
/// server's `xact_commit` moved by exactly the client's count (one TPC-C transaction is one
/// server transaction).
pub fn assert_clean_tpcc_run(s: &serde_json::Value) {
    assert_eq!(s["totals"]["failed"], 0, "{}", s["totals"]);
    for row in s["by_target_and_type"].as_array().unwrap() {
        assert!(row["committed"].as_u64().unwrap() > 0, "{row}");
    }
    for server in s["server"].as_array().unwrap() {
        assert_server_agrees(server, 0);
    }
}

/// One database's server count agrees with tidebench's: equal, or above by at most the
/// transactions cut in flight at the end (their fate is unknown: some may have committed),
/// with `extra` commits of other sessions on top.
pub fn assert_server_agrees(d: &serde_json::Value, extra: i64) {
    let over =
        d["xact_commit_delta"].as_i64().unwrap() - d["client_committed"].as_i64().unwrap() - extra;
    let cut = d["cut_in_flight"].as_i64().unwrap_or(0);
    assert!((0..=cut).contains(&over), "server vs client commits: {d}");
}

/// What tidebench committed over a whole run as the server counts it: the measured window's
/// commits plus those of transactions that were in flight at the end and committed just after.
pub fn committed_over_run(s: &serde_json::Value) -> i64 {
    s["totals"]["committed"].as_i64().unwrap() + s["committed_after_end"].as_i64().unwrap_or(0)
}

/// The staging dir of results dir `out` while its run is in flight (`<out>.partial`).
pub fn partial(out: &Path) -> std::path::PathBuf {
    let mut name = out.file_name().unwrap().to_os_string();
    name.push(".partial");
    out.with_file_name(name)
}

/// Waits until `path` exists; false after `limit`.
pub fn wait_for(path: &Path, limit: std::time::Duration) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// Seconds of its own clock that a running run has recorded in `intervals.csv` (in its staging
/// dir): the end of its last row, 0 before the first. Rows exist only for keys with
/// transactions, so this advances while some client commits.
pub fn recorded_s(out: &Path) -> f64 {
    let Ok(csv) = std::fs::read_to_string(partial(out).join("intervals.csv")) else {
        return 0.0;
    };
    csv.lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            let start: f64 = f.next()?.parse().ok()?;
            let length: f64 = f.next()?.parse().ok()?;
            Some(start + length)
        })
        .fold(0.0, f64::max)
}

/// How long a test waits for a run to reach a point of its own clock before it calls the run
/// hung. Only a guard against hanging forever: no assertion depends on how fast a run is.
pub const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(180);

/// Waits until the run writing to `out` has recorded `secs` seconds of its own clock (the
/// measured window's intervals, not the wall clock since spawn), so a fault lands at the same
/// point of the run however slow its setup was. Panics, with the run's output, if the run
/// ended first or [`HANG_GUARD`] passed.
pub fn wait_run_clock(child: &mut std::process::Child, out: &Path, secs: f64) {
    wait_until(child, &format!("{secs} s of the run recorded"), || {
        recorded_s(out) >= secs
    });
}

/// Waits until `done` holds while `child` runs; panics naming `what` if the child ended first
/// or [`HANG_GUARD`] passed.
pub fn wait_until(child: &mut std::process::Child, what: &str, mut done: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !done() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the run ended ({status}) before {what}");
        }
        assert!(t.elapsed() < HANG_GUARD, "no {what} after {HANG_GUARD:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Polls `done` until it holds; panics naming `what` after [`HANG_GUARD`].
pub fn poll_until(what: &str, mut done: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !done() {
        assert!(t.elapsed() < HANG_GUARD, "no {what} after {HANG_GUARD:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Sessions of `inst` waiting on a lock right now (the server's own view).
pub fn lock_waiters(inst: &Instance) -> usize {
    psql(
        inst,
        "postgres",
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
    )
    .trim()
    .parse()
    .unwrap_or(0)
}

/// True once a session of `inst` holds a granted lock of `mode` on the table `rel` of `db`.
pub fn lock_held(inst: &Instance, db: &str, rel: &str, mode: &str) -> bool {
    let sql = format!(
        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
         WHERE c.relname = '{rel}' AND l.mode = '{mode}' AND l.granted"
    );
    psql(inst, db, &sql).trim() != "0"
}

/// A hot standby of a managed instance: its base backup taken with `pg_basebackup -R`, run by
/// `pg_ctl` as the server's OS user on a port of its own (127.0.0.1 and a socket in its data
/// dir). Stopped when dropped; keep it declared before the [`TempHome`] it lives in.
pub struct Standby {
    pub port: u16,
    data: std::path::PathBuf,
    bin: std::path::PathBuf,
    user: String,
}

impl Standby {
    /// Runs one of PostgreSQL's programs as the server's OS user (as root), or as ourselves.
    fn run(bin: &Path, user: &str, program: &str, args: &[&str]) -> std::process::Output {
        // SAFETY: geteuid has no preconditions.
        let mut cmd = if unsafe { libc::geteuid() } == 0 {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(bin.join(program));
            c
        } else {
            Command::new(bin.join(program))
        };
        cmd.args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"))
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        Standby::run(
            &self.bin,
            &self.user,
            "pg_ctl",
            &["-D", &data, "stop", "-m", "immediate"],
        );
    }
}

/// Starts a hot standby of `primary` under `home`; panics with the tools' output if it cannot.
pub fn start_standby(home: &TempHome, primary: &Instance) -> Standby {
    let owner = std::fs::metadata(primary.data_dir()).expect("the primary's data dir");
    let data = home.path().join("standby");
    std::fs::create_dir(&data).expect("create the standby's dir");
    std::os::unix::fs::chown(&data, Some(owner.uid()), Some(owner.gid())).expect("chown it");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).expect("chmod it");
    let standby = Standby {
        port: free_port(),
        data,
        bin: primary.bin_dir().to_path_buf(),
        user: primary.superuser.clone(),
    };
    let (data, port) = (standby.data.display().to_string(), primary.port.to_string());
    let socket = primary.socket_dir.display().to_string();
    let backup = Standby::run(
        &standby.bin,
        &standby.user,
        "pg_basebackup",
        // A fast checkpoint: the default spread one waits out most of checkpoint_timeout.
        &[
            "-D", &data, "-R", "-X", "stream", "-c", "fast", "-h", &socket, "-p", &port,
        ],
    );
    assert!(
        backup.status.success(),
        "pg_basebackup: {}",
        output_text(&backup)
    );
    let options = format!("-p {} -k {data}", standby.port);
    let log = format!("{data}/standby.log");
    let start = Standby::run(
        &standby.bin,
        &standby.user,
        "pg_ctl",
        &[
            "-D", &data, "-o", &options, "-l", &log, "-w", "-t", "120", "start",
        ],
    );
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        start.status.success(),
        "pg_ctl start: {}\n{said}",
        output_text(&start)
    );
    standby
}
