//! The same seeded draws as pgbench 15 (issue 38): run with the same `--random-seed`, clients
//! and threads, pgbench and tidebench draw the same `random*()` values per client and choose
//! the same weighted scripts per client. Both tools write what they drew into one table on one
//! instance, tagged by tool, in order (a serial column), and each client's sequences are
//! compared.
//!
//! tidebench runs for a duration while pgbench runs `-t 20`, so only the common prefix of each
//! client's sequence is compared, and tidebench must reach at least 20 rows per client; a
//! `-t/--transactions` in tidebench will let both run exactly 20.

use std::collections::BTreeMap;

use crate::support::{self, output_text as text};

/// Rows per client pgbench writes, and the fewest tidebench must write for a fair comparison.
const TRANSACTIONS: usize = 20;

fn script(home: &support::TempHome, name: &str, body: &str) -> String {
    support::script_file(home, name, body)
}

/// pgbench on `dsn` with `args`, `-t 20` and the seed; it must succeed.
fn pgbench(inst: &tidebench::instance::Instance, dsn: &str, args: &[&str]) {
    let t = TRANSACTIONS.to_string();
    let mut all = vec![
        "-n",
        "-M",
        "simple",
        "-t",
        &t,
        "--random-seed=7",
        "-D",
        "tool=pgbench",
    ];
    all.extend_from_slice(args);
    all.push(dsn);
    let o = std::process::Command::new(support::pgbench_path(inst))
        .args(&all)
        .output()
        .unwrap();
    assert!(o.status.success(), "pgbench: {}", text(&o));
}

/// tidebench for a second on `dsn` with `args` and the same seed; it must succeed.
fn tidebench(home: &support::TempHome, dsn: &str, name: &str, args: &[&str]) {
    let out = home.path().join(name);
    let mut all = vec![
        "run",
        "-T",
        "1s",
        "-P",
        "0",
        "--sample",
        "0",
        "-M",
        "simple",
        "--random-seed",
        "7",
        "-D",
        "tool=tidebench",
        "--target",
        dsn,
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = support::run_tidebench(home, &all);
    assert!(o.status.success(), "{}", text(&o));
}

/// `select client, <columns> from <table> where tool = ... order by n`, as each client's rows
/// in order.
fn per_client(
    inst: &tidebench::instance::Instance,
    table: &str,
    columns: &str,
    tool: &str,
) -> BTreeMap<String, Vec<String>> {
    let rows = support::psql(
        inst,
        "tidebench",
        &format!("select client, {columns} from {table} where tool = '{tool}' order by n"),
    );
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in rows.lines() {
        let (client, values) = line.split_once('|').unwrap_or((line, ""));
        out.entry(client.to_string())
            .or_default()
            .push(values.to_string());
    }
    out
}

/// Each of `clients` clients' first 20 rows must be the same for both tools.
fn assert_same_prefixes(
    inst: &tidebench::instance::Instance,
    table: &str,
    columns: &str,
    clients: usize,
) {
    let theirs = per_client(inst, table, columns, "pgbench");
    let ours = per_client(inst, table, columns, "tidebench");
    assert_eq!(theirs.len(), clients, "pgbench's clients: {theirs:?}");
    assert_eq!(
        ours.len(),
        clients,
        "tidebench's clients: {:?}",
        ours.keys()
    );
    for (client, expected) in &theirs {
        assert_eq!(expected.len(), TRANSACTIONS, "pgbench client {client}");
        let got = &ours[client];
        assert!(
            got.len() >= TRANSACTIONS,
            "tidebench client {client} wrote only {} rows",
            got.len()
        );
        assert_eq!(
            &got[..TRANSACTIONS],
            &expected[..],
            "client {client}: tidebench vs pgbench"
        );
    }
}

#[test]
fn seeded_random_functions_draw_pgbench_s_values_per_client() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "draws");
    let dsn = inst.dsn("tidebench");
    support::psql(
        &inst,
        "tidebench",
        "create table draws (n serial, tool text, client int, r bigint, e bigint, g bigint, z bigint)",
    );
    let file = script(
        &home,
        "draws.sql",
        "\\set r random(1, 1000000)\n\
         \\set e random_exponential(1, 1000, 2.5)\n\
         \\set g random_gaussian(1, 1000, 4)\n\
         \\set z random_zipfian(1, 1000, 1.5)\n\
         INSERT INTO draws (tool, client, r, e, g, z) VALUES (':tool', :client_id, :r, :e, :g, :z);\n",
    );
    pgbench(&inst, &dsn, &["-c", "3", "-j", "3", "-f", &file]);
    tidebench(
        &home,
        &dsn,
        "res-draws",
        &["-c", "3", "-j", "3", "-f", &file],
    );
    assert_same_prefixes(&inst, "draws", "r, e, g, z", 3);
}

#[test]
fn weighted_scripts_are_chosen_as_pgbench_chooses_them_per_client() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "picks");
    let dsn = inst.dsn("tidebench");
    support::psql(
        &inst,
        "tidebench",
        "create table picks (n serial, tool text, client int, script text)",
    );
    let insert = |name: &str| {
        format!(
            "INSERT INTO picks (tool, client, script) VALUES (':tool', :client_id, '{name}');\n"
        )
    };
    let a = script(&home, "a.sql", &insert("a"));
    let b = script(&home, "b.sql", &insert("b"));
    let (a, b) = (format!("{a}@1"), format!("{b}@3"));
    pgbench(&inst, &dsn, &["-c", "2", "-j", "2", "-f", &a, "-f", &b]);
    tidebench(
        &home,
        &dsn,
        "res-picks",
        &["-c", "2", "-j", "2", "-f", &a, "-f", &b],
    );
    assert_same_prefixes(&inst, "picks", "script", 2);
}

#[test]
fn builtin_tpcb_touches_pgbench_s_accounts_in_pgbench_s_order() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "bidraws");
    let target = "instance:bidraws";
    support::prepare_tpcb(&home, target);
    let dsn = inst.dsn("tidebench");
    // One client: pgbench_history has no client column, so one client's order is the table's
    // (its transactions' start times, CURRENT_TIMESTAMP, increase).
    let t = TRANSACTIONS.to_string();
    let o = std::process::Command::new(support::pgbench_path(&inst))
        .args(["-n", "-c", "1", "-t", &t, "--random-seed=7", &dsn])
        .output()
        .unwrap();
    assert!(o.status.success(), "pgbench: {}", text(&o));
    support::psql(
        &inst,
        "tidebench",
        "create table theirs as select * from pgbench_history; truncate pgbench_history",
    );
    let out = home.path().join("res-builtin");
    let o = support::run_tidebench(
        &home,
        &[
            "run",
            "-w",
            "tpcb",
            "-c",
            "1",
            "-T",
            "1s",
            "-P",
            "0",
            "--sample",
            "0",
            "--random-seed",
            "7",
            "--target",
            target,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let first = |table: &str| {
        support::psql(
            &inst,
            "tidebench",
            &format!(
                "select aid, bid, tid, delta from {table} order by mtime limit {TRANSACTIONS}"
            ),
        )
    };
    let theirs = first("theirs");
    assert_eq!(theirs.lines().count(), TRANSACTIONS, "{theirs}");
    assert_eq!(first("pgbench_history"), theirs, "tidebench vs pgbench");
}

#[test]
fn a_retry_replays_the_draws_and_the_next_transaction_goes_on_from_them() {
    use tidebench::workload::{Kind as _, Rng};

    let home = support::temp_home();
    let inst = support::start_instance(&home, "replay");
    support::psql(
        &inst,
        "tidebench",
        "create table replay (n serial, r bigint)",
    );
    let file = script(
        &home,
        "replay.sql",
        "\\set r random(1, 1000000)\nINSERT INTO replay (r) VALUES (:r);\n",
    );
    let mut options = tidebench::workload::OptionValues::new();
    options.insert("file".into(), toml::Value::Array(vec![file.into()]));
    options.insert(
        tidebench::workload::RUN_SEED.into(),
        toml::Value::Integer(7),
    );
    let workload = tidebench::workload::script::SCRIPT
        .build(1, &options)
        .unwrap();
    let mut terminal = workload.terminal(tidebench::workload::ClientSlot { index: 0, count: 1 });
    let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(1);
    support::on_driver_loop(async {
        let mut conn = pgwire::Connection::connect(&inst.connect_params("tidebench"))
            .await
            .unwrap();
        let protocol = pgwire::Protocol::Extended;
        // Two tries of one transaction (as the driver retries: execute again without a new
        // draw), then the next transaction.
        terminal.draw(0, &mut rng);
        terminal.execute(&mut conn, protocol, None).await.unwrap();
        terminal.execute(&mut conn, protocol, None).await.unwrap();
        terminal.draw(0, &mut rng);
        terminal.execute(&mut conn, protocol, None).await.unwrap();
        conn.close().await;
    });
    // pgbench 15 with --random-seed=7 drew 869439 then 372040 for client 0's first two
    // `random(1, 1000000)`; the retry drew the first again.
    let rows = support::psql(&inst, "tidebench", "select r from replay order by n");
    assert_eq!(
        rows.lines().collect::<Vec<_>>(),
        ["869439", "869439", "372040"]
    );
}
