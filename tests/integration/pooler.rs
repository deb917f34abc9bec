//! Runs through a connection pooler (issue 57): Debian's pgbouncer in transaction mode, started
//! here as the server's own unprivileged user, in front of a managed instance. tpcb's default
//! protocol passes it (unnamed statements, said in a note), `-M prepared` is refused before
//! the run naming the fix, the statistics session that the pooler refuses `postgres` (08P01)
//! reads from the target's database instead (so the server's count is not compared, and the
//! run says why), and `tidebench pgbench` agrees with pgbench through the same pooler. Through
//! a managed pooler the server's count agrees with the clients', read on the instance itself.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use tidebench::instance::Instance;

use crate::support::{self, ok, output_text as text, TempHome};

/// Where Debian's package puts it.
const PGBOUNCER: &str = "/usr/sbin/pgbouncer";

/// A pgbouncer in front of one instance, stopped when dropped.
struct Pgbouncer {
    child: Child,
    port: u16,
    user: String,
    log: PathBuf,
}

impl Pgbouncer {
    /// Starts pgbouncer in `mode` with `pool_size` server sessions per database, serving the
    /// instance's databases `dbs` only (so `postgres` is refused with 08P01 unless named),
    /// listening on 127.0.0.1, the instance's superuser its admin where `admin`. `None` (the
    /// test skipped) where pgbouncer is not installed.
    fn start(
        home: &TempHome,
        inst: &Instance,
        (mode, pool_size): (&str, u32),
        dbs: &[&str],
        admin: bool,
    ) -> Option<Pgbouncer> {
        if !Path::new(PGBOUNCER).exists() {
            support::skip(
                "pooler",
                "pgbouncer",
                "install Debian's pgbouncer (scripts/setup.sh --test does)",
            );
            return None;
        }
        let dir = home.path().join("pgbouncer");
        std::fs::create_dir_all(&dir).expect("make pgbouncer's dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let port = support::free_port();
        let socket = inst.socket_dir.display().to_string();
        let databases: String = dbs
            .iter()
            .map(|db| format!("{db} = host={socket} port={} dbname={db}\n", inst.port))
            .collect();
        let ini = format!(
            "[databases]\n{databases}\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
             unix_socket_dir =\nauth_type = trust\nauth_file = {users}\npool_mode = {mode}\n\
             default_pool_size = {pool_size}\nmax_client_conn = 200\n\
             ignore_startup_parameters = extra_float_digits\n{admin}",
            users = dir.join("users.txt").display(),
            admin = if admin {
                format!("admin_users = {}\n", inst.superuser)
            } else {
                String::new()
            },
        );
        std::fs::write(
            dir.join("users.txt"),
            format!("\"{}\" \"\"\n", inst.superuser),
        )
        .expect("write the auth file");
        std::fs::write(dir.join("pgbouncer.ini"), ini).expect("write pgbouncer.ini");
        // The server's own user (pgbouncer refuses root, as PostgreSQL does): the owner of the
        // instance's data directory.
        let owner = std::fs::metadata(inst.data_dir()).expect("stat the data dir");
        let log = dir.join("pgbouncer.log");
        let err = std::fs::File::create(&log).expect("create pgbouncer's log");
        let child = Command::new(PGBOUNCER)
            .arg(dir.join("pgbouncer.ini"))
            .uid(owner.uid())
            .gid(owner.gid())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .expect("start pgbouncer");
        let mut bouncer = Pgbouncer {
            child,
            port,
            user: inst.superuser.clone(),
            log,
        };
        support::poll_until("pgbouncer to listen", || {
            if let Ok(Some(status)) = bouncer.child.try_wait() {
                panic!("pgbouncer exited ({status}): {}", bouncer.log_text());
            }
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Some(bouncer)
    }

    /// A connection string to database `db` through the pooler.
    fn dsn(&self, db: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user={} dbname={db}",
            self.port, self.user
        )
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Pgbouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A managed instance with pgbench's tables (scale 1) and a pgbouncer in transaction mode in
/// front of its `tidebench` database; with `admin`, of `postgres` too, the superuser its admin.
fn pooled(name: &str, admin: bool) -> Option<(TempHome, Instance, Pgbouncer)> {
    let home = support::temp_home();
    let inst = support::start_instance(&home, name);
    support::prepare_tpcb(&home, &format!("instance:{name}"));
    let dbs: &[&str] = if admin {
        &["tidebench", "postgres"]
    } else {
        &["tidebench"]
    };
    let bouncer = Pgbouncer::start(&home, &inst, ("transaction", 4), dbs, admin)?;
    Some((home, inst, bouncer))
}

/// Whether pgbouncer is installed; a skip is said where it is not.
fn pgbouncer_installed() -> bool {
    let there = Path::new(PGBOUNCER).exists();
    if !there {
        support::skip(
            "pooler",
            "pgbouncer",
            "install Debian's pgbouncer (scripts/setup.sh --test does)",
        );
    }
    there
}

/// Starts the managed pooler of the running instance `name` in transaction mode with four
/// server sessions (`instance start NAME --pooler transaction --pool-size 4`) and returns the
/// DSN through it (`instance dsn NAME --pooler`).
fn start_managed(home: &TempHome, name: &str) -> String {
    let start = ["instance", "start", name, "--pooler", "transaction"];
    let said = text(&ok(support::run_tidebench(
        home,
        &[&start[..], &["--pool-size", "4"]].concat(),
    )));
    assert!(
        said.contains("transaction mode, 4 server sessions"),
        "{said}"
    );
    let dsn = ok(support::run_tidebench(
        home,
        &["instance", "dsn", name, "--pooler"],
    ));
    String::from_utf8_lossy(&dsn.stdout).trim().to_string()
}

/// A managed instance with pgbench's tables (scale 1) and its managed pooler; `None`
/// (skipped) where pgbouncer is not installed.
fn managed(name: &str) -> Option<(TempHome, Instance, String)> {
    if !pgbouncer_installed() {
        return None;
    }
    let home = support::temp_home();
    let inst = support::start_instance(&home, name);
    support::prepare_tpcb(&home, &format!("instance:{name}"));
    let dsn = start_managed(&home, name);
    Some((home, inst, dsn))
}

/// The managed pooler's log, for a failure's message.
fn pooler_log(inst: &Instance) -> String {
    std::fs::read_to_string(inst.dir().join("pooler/pgbouncer.log")).unwrap_or_default()
}

/// Starts the managed pooler of the running instance `inst` (transaction mode, four server
/// sessions) and runs `workload` through it as [`run_through`] does, returning what it printed
/// (`None`: skipped where pgbouncer is not installed); the caller then checks
/// the data on the server. tpcc's and tpce's tests call this on the data they loaded (a
/// second load only for this would cost each about 20 s).
pub fn through_a_managed_pooler(
    home: &TempHome,
    inst: &Instance,
    workload: &str,
) -> Option<String> {
    if !pgbouncer_installed() {
        return None;
    }
    let dsn = start_managed(home, &inst.name);
    Some(run_through(home, inst, &dsn, workload))
}

/// Runs `workload` for a few seconds through `dsn` with four clients into
/// `<home>/pooled-<workload>`;
/// asserts it ended with committed transactions of every type and nothing failed that a
/// pooler could cause, and returns what it printed.
fn run_through(home: &TempHome, inst: &Instance, dsn: &str, workload: &str) -> String {
    let out = home.path().join(format!("pooled-{workload}"));
    let o = support::run_tidebench(
        home,
        &[
            "run",
            "-w",
            workload,
            "--target",
            dsn,
            "-c",
            "4",
            "-T",
            "3",
            "-P",
            "0",
            "--max-tries",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let said = text(&o);
    assert!(
        o.status.success(),
        "{workload} through pgbouncer failed: {said}\n{}",
        pooler_log(inst)
    );
    assert!(said.contains("-M extended"), "{said}");
    let s = support::summary(&out);
    // Nothing a pooler could cause failed: no lost session or statement (connection,
    // other), no timeout, and every error the server sent is a serialization failure or a
    // deadlock. Those are the workload's own contention (tpce's Trade-Result runs
    // serializable); on a busy machine one can outlast its tries, direct as well.
    let failed = &s["totals"]["failed_by_class"];
    for class in ["connection", "timeout", "other"] {
        assert_eq!(failed[class].as_u64(), Some(0), "{class}: {s}");
    }
    for e in s["errors"].as_array().into_iter().flatten() {
        assert!(
            matches!(e["class"].as_str(), Some("serialization" | "deadlock")),
            "{e}"
        );
    }
    for row in s["by_target_and_type"].as_array().unwrap() {
        assert!(row["committed"].as_u64().unwrap() > 0, "{row}");
    }
    assert_server_agrees_behind(&s, &said);
    said
}

/// The server behind a managed pooler agrees with the clients: its counters were read on the
/// instance itself with the pooler's server sessions closed, and every server session the
/// pooler opened is counted (its startup and pgbouncer's `SET application_name`), so what is
/// left is exactly what tidebench committed (or a try cut in flight).
fn assert_server_agrees_behind(s: &serde_json::Value, said: &str) {
    assert!(said.contains("read on the instance itself"), "{said}");
    let server = s["server"].as_array().expect("a server delta");
    assert_eq!(server.len(), 1, "{s}");
    support::assert_server_agrees(&server[0], 0);
    assert!(server[0]["client_committed"].as_i64().unwrap() > 0, "{s}");
    // The pooler opened at most its pool (4) of server sessions, two commits each.
    let opened = server[0]["readings"]["sessions"].as_i64().unwrap();
    assert!((2..=8).contains(&opened) && opened % 2 == 0, "{s}");
}

/// The managed pooler serves a run, its own counters reach `system.csv` and the report, and
/// it stops with the instance.
#[test]
fn a_managed_pooler_is_sampled_into_the_results_and_stops_with_its_instance() {
    let Some((home, inst, dsn)) = managed("poolm") else {
        return;
    };
    let out = home.path().join("tpcb");
    let o = support::run_tidebench(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "--target",
            &dsn,
            "-c",
            "8",
            "-T",
            "3",
            "-P",
            "0",
            "--sample",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}\n{}", text(&o), pooler_log(&inst));
    let s = support::summary(&out);
    assert_eq!(s["totals"]["failed"].as_i64(), Some(0), "{s}");
    assert_server_agrees_behind(&s, &text(&o));
    let committed = s["totals"]["committed"].as_f64().unwrap();
    let rows = tidebench::results::system::read(&out).unwrap().unwrap();
    let pooler = |metric: &str| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.source.starts_with("pooler:") && r.metric == metric)
            .map(|r| r.value)
            .collect()
    };
    // The pooler, started for this run, passed at least every transaction the clients
    // committed (its count is cumulative, and the first round may come after the first
    // commits), and its count grew while the run went on.
    let xacts = pooler("xact_count");
    assert!(xacts.len() >= 3, "{xacts:?}");
    let (first, last) = (xacts[0], xacts[xacts.len() - 1]);
    assert!(
        last >= committed,
        "pooler counted {last}, clients {committed}"
    );
    assert!(last > first, "{xacts:?}");
    // It never held more server sessions than its pool (4) while 8 clients ran, and held
    // some once they had been opened (they stay, idle, between transactions).
    let servers: Vec<f64> = ["sv_active", "sv_idle", "sv_used"]
        .iter()
        .map(|m| pooler(m))
        .fold(vec![0.0; xacts.len()], |sum, v| {
            sum.iter().zip(v).map(|(a, b)| a + b).collect()
        });
    let most = servers.iter().copied().fold(0.0, f64::max);
    assert!((1.0..=4.0).contains(&most), "{servers:?}");
    assert!(!pooler("cl_waiting").is_empty());
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("wait per transaction (ms)"),
        "no pooler table"
    );

    // A pgbench script of one's own through the same pooler: nothing fails, the server agrees.
    let script = support::script_file(
        &home,
        "move.sql",
        "\\set aid random(1, 100000 * :scale)\n\\set delta random(-50, 50)\n\
         BEGIN;\nUPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nEND;\n",
    );
    let scripted = home.path().join("script");
    let args = [
        "run", "-f", &script, "--target", &dsn, "-c", "4", "-T", "2", "-P", "0",
    ];
    let o = support::run_tidebench(
        &home,
        &[&args[..], &["--out", scripted.to_str().unwrap()]].concat(),
    );
    assert!(o.status.success(), "{}\n{}", text(&o), pooler_log(&inst));
    let s = support::summary(&scripted);
    assert_eq!(s["totals"]["failed"].as_i64(), Some(0), "{s}");
    assert_server_agrees_behind(&s, &text(&o));

    // Stopped with its instance: nothing listens on its port after.
    let port: u16 = dsn
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("port="))
        .and_then(|p| p.parse().ok())
        .expect("the DSN names a port");
    ok(support::run_tidebench(
        &home,
        &["instance", "stop", "poolm"],
    ));
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn tpcb_through_a_transaction_pooler_sends_unnamed_statements_and_refuses_prepared() {
    let Some((home, _inst, bouncer)) = pooled("pool", false) else {
        return;
    };
    let out = home.path().join("pooled");
    let dsn = bouncer.dsn("tidebench");
    let o = support::run_tidebench(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "--target",
            &dsn,
            "-c",
            "8",
            "-T",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let said = text(&o);
    assert!(
        o.status.success(),
        "run through pgbouncer failed: {said}\n{}",
        bouncer.log_text()
    );
    // Said, not hidden: the protocol it chose, and where the statistics are read.
    assert!(said.contains("-M extended"), "{said}");
    assert!(said.contains("reads from 'tidebench'"), "{said}");
    assert!(
        said.contains("the server's count is not compared"),
        "{said}"
    );
    let s = support::summary(&out);
    assert_eq!(s["totals"]["failed"].as_i64(), Some(0), "{s}");
    assert!(s["totals"]["committed"].as_i64().unwrap() > 0, "{s}");
    let runtime = std::fs::read_to_string(out.join("runtime.toml")).unwrap();
    assert!(runtime.contains("protocol = \"extended\""), "{runtime}");

    // A run refused before it starts: exit 2, nothing left in its results dir; what it said.
    let refused = |extra: &[&str]| {
        let out = home.path().join("refused");
        let mut args = vec!["run", "-w", "tpcb", "--target", &dsn, "-c", "2", "-T", "2"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let o = support::run_tidebench(&home, &args);
        let said = text(&o);
        assert_eq!(o.status.code(), Some(2), "{said}");
        assert!(!out.exists(), "a refused run left {}", out.display());
        said
    };
    // Asked for explicitly, named statements are refused before the run, naming the fix.
    let said = refused(&["-M", "prepared"]);
    assert!(said.contains("max_prepared_statements"), "{said}");
    // So are session settings sent as startup options, which pgbouncer refuses.
    let said = refused(&["--isolation", "serializable"]);
    assert!(said.contains("isolation serializable"), "{said}");
    assert!(said.contains("ALTER ROLE"), "{said}");
}

/// pgbench's summary line `label: value` of `o`'s stdout.
fn line(o: &std::process::Output, label: &str) -> Option<String> {
    String::from_utf8_lossy(&o.stdout).lines().find_map(|l| {
        l.strip_prefix(label)
            .map(|v| v.trim_start_matches(':').trim().to_string())
    })
}

/// Through a pgbouncer of one's own that serves `postgres` and lets the user in as its admin,
/// `tidebench pgbench` agrees with pgbench, and a run's server count agrees with the clients'.
#[test]
fn pgbench_dropin_agrees_with_pgbench_through_a_transaction_pooler() {
    let Some((home, inst, bouncer)) = pooled("poolpgb", true) else {
        return;
    };
    let dsn = bouncer.dsn("tidebench");
    let script = support::script_file(
        &home,
        "pick.sql",
        "\\set aid random(1, 100000 * :scale)\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    );
    // pgbench's default script in both protocols a pooler carries, and a script of one's own.
    for (mode, how, what) in [
        ("simple", "-b", "tpcb-like"),
        ("extended", "-b", "tpcb-like"),
        ("extended", "-f", script.as_str()),
    ] {
        let args = [
            "-n", "-c", "4", "-j", "2", "-t", "25", "-M", mode, how, what, &dsn,
        ];
        let theirs = support::run_pgbench(&inst, &args);
        let ours = support::tidebench(&home)
            .arg("pgbench")
            .args(args)
            .output()
            .expect("tidebench pgbench runs");
        assert!(
            theirs.status.success(),
            "pgbench -M {mode}: {}",
            text(&theirs)
        );
        assert!(
            ours.status.success(),
            "tidebench pgbench -M {mode}: {}\n{}",
            text(&ours),
            bouncer.log_text()
        );
        for label in [
            "query mode",
            "number of clients",
            "number of transactions actually processed",
            "number of failed transactions",
        ] {
            assert_eq!(
                line(&ours, label),
                line(&theirs, label),
                "{label} with -M {mode} {how} {what}"
            );
        }
        assert_eq!(
            line(&ours, "number of transactions actually processed").as_deref(),
            Some("100/100"),
            "{}",
            text(&ours)
        );
    }

    // A run through it: the server's sessions closed through the console around the reads,
    // the statistics read through the pooler on `postgres`, and the server agrees.
    let out = home.path().join("own-pooler");
    let args = [
        "run", "-w", "tpcb", "--target", &dsn, "-c", "4", "-T", "2", "-P", "0",
    ];
    let o = support::run_tidebench(
        &home,
        &[&args[..], &["--out", out.to_str().unwrap()]].concat(),
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}\n{}", bouncer.log_text());
    assert!(!said.contains("read on the instance itself"), "{said}");
    let s = support::summary(&out);
    assert_eq!(s["totals"]["failed"].as_i64(), Some(0), "{s}");
    let server = s["server"].as_array().expect("a server delta");
    assert_eq!(server.len(), 1, "{said}");
    support::assert_server_agrees(&server[0], 0);
}
