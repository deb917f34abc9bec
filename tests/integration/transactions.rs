//! Issue 38, "pgbench, exactly": clients that never wait on the network take turns on their
//! driver thread as pgbench's do, and `-t N` runs N transactions per client as pgbench's `-t`
//! (failed ones counted, refused beside a duration or out of range), each checked against the
//! real pgbench on the same input and server.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use crate::support::{self, output_text as text};

/// Writes `body` as `name` in the home dir and returns its path.
fn script(home: &support::TempHome, name: &str, body: &str) -> String {
    support::script_file(home, name, body)
}

/// tidebench `run` on `target` into `out`, quiet (no progress, no sampler), with `extra`.
fn run(home: &support::TempHome, target: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "-P",
        "0",
        "--sample",
        "0",
        "--target",
        target,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    support::run_tidebench(home, &args)
}

/// The real pgbench with `args`, then the DSN.
fn pgbench(inst: &tidebench::instance::Instance, args: &[&str], dsn: &str) -> Output {
    support::run_pgbench(inst, &[args, &[dsn]].concat())
}

/// pgbench's "number of transactions actually processed: X/Y" and "number of failed
/// transactions: F" (0 when it printed none).
fn pgbench_counts(o: &Output) -> (u64, u64, u64) {
    let said = String::from_utf8_lossy(&o.stdout).to_string();
    let after = |prefix: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .map(|rest| rest.trim().to_string())
    };
    let processed = after("number of transactions actually processed: ")
        .unwrap_or_else(|| panic!("no processed count in: {said}"));
    let (done, planned) = processed.split_once('/').unwrap();
    let failed = after("number of failed transactions: ")
        .and_then(|f| f.split(' ').next().map(|n| n.parse().unwrap()))
        .unwrap_or(0);
    (done.parse().unwrap(), planned.parse().unwrap(), failed)
}

/// Asserts every client's count is within 5 % of their mean.
fn assert_even(per_client: &BTreeMap<u32, u64>, who: &str) {
    assert_eq!(per_client.len(), 3, "{who}: {per_client:?}");
    let mean = per_client.values().sum::<u64>() as f64 / 3.0;
    for (client, n) in per_client {
        let off = (*n as f64 - mean).abs() / mean;
        assert!(
            off <= 0.05,
            "{who}: client {client} ran {n} of a mean {mean:.0} ({per_client:?})"
        );
    }
}

/// Issue 38: three clients of a script of meta-commands only, on one driver thread. Such a
/// client never waits on its socket; before `FairShare`, client 0 ran every transaction and
/// clients 1 and 2 none. pgbench (its per-client log, sampled) spreads them evenly, and so
/// must tidebench (its mix log, per client).
#[test]
fn issue_38_clients_of_a_meta_command_script_take_turns_as_pgbench_s() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "fair");
    let dsn = inst.dsn("tidebench");
    let file = script(
        &home,
        "meta.sql",
        "\\set x random(1, 10)\n\\set y :x * 2 + 1\n",
    );
    let prefix = home.path().join("pgbench_log");
    let o = pgbench(
        &inst,
        &[
            "-n",
            "-f",
            &file,
            "-c",
            "3",
            "-j",
            "1",
            "-T",
            "1",
            "-l",
            "--sampling-rate",
            "0.05",
            "--log-prefix",
            prefix.to_str().unwrap(),
        ],
        &dsn,
    );
    assert!(o.status.success(), "pgbench: {}", text(&o));
    let mut theirs: BTreeMap<u32, u64> = BTreeMap::new();
    for entry in std::fs::read_dir(home.path()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("pgbench_log") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let client = line.split(' ').next().unwrap().parse().unwrap();
            *theirs.entry(client).or_default() += 1;
        }
    }
    assert_even(&theirs, "pgbench");

    let out = home.path().join("res-fair");
    let o = run(
        &home,
        &dsn,
        &out,
        &["-f", &file, "-c", "3", "-j", "1", "-T", "1s", "--mix-log"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = support::ok(support::run_tidebench(
        &home,
        &["report", out.to_str().unwrap(), "--mix-log"],
    ));
    let csv = String::from_utf8_lossy(&o.stdout).to_string();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "client").unwrap();
    let mut ours: BTreeMap<u32, u64> = BTreeMap::new();
    for line in lines {
        let client = line.split(',').nth(col).unwrap().parse().unwrap();
        *ours.entry(client).or_default() += 1;
    }
    assert_even(&ours, "tidebench");
    let s = support::summary(&out);
    assert_eq!(
        ours.values().sum::<u64>(),
        s["totals"]["total"].as_u64().unwrap()
    );
}

/// `-t 50 -c 3`: exactly 150 transactions, as pgbench's, every one committed and counted by
/// the server; the run ends when the clients have, complete, its last interval as long as
/// the run was. With a rate, the count is of scheduled transactions.
#[test]
fn t_runs_n_transactions_per_client_as_pgbench_and_the_server_agrees() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "cnt");
    support::prepare_tpcb(&home, "instance:cnt");
    let o = pgbench(
        &inst,
        &["-n", "-t", "50", "-c", "3"],
        &inst.dsn("tidebench"),
    );
    assert!(o.status.success(), "pgbench: {}", text(&o));
    assert_eq!(pgbench_counts(&o), (150, 150, 0), "{}", text(&o));

    let out = home.path().join("res-t");
    let o = run(
        &home,
        "instance:cnt",
        &out,
        &["-w", "tpcb", "-t", "50", "-c", "3", "--interval", "1s"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("threads, 50 transactions per client"),
        "{}",
        text(&o)
    );
    let s = support::summary(&out);
    assert_eq!(s["complete"], true, "{s}");
    assert_eq!(s["totals"]["total"].as_u64(), Some(150), "{}", s["totals"]);
    assert_eq!(
        s["totals"]["committed"].as_u64(),
        Some(150),
        "{}",
        s["totals"]
    );
    for server in s["server"].as_array().unwrap() {
        support::assert_server_agrees(server, 0);
    }
    // The measured window is the real elapsed time, and intervals.csv covers it exactly.
    let elapsed = s["elapsed_s"].as_f64().unwrap();
    assert!(elapsed > 0.0 && elapsed < 60.0, "{elapsed}");
    assert_eq!(s["duration_s"].as_f64(), Some(elapsed));
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let count: u64 = rows
        .iter()
        .map(|r| r[at("count")].parse::<u64>().unwrap())
        .sum();
    assert_eq!(count, 150);
    let last = rows.last().unwrap();
    let end: f64 = last[at("interval_start_s")].parse::<f64>().unwrap()
        + last[at("interval_length_s")].parse::<f64>().unwrap();
    assert!(
        (end - elapsed).abs() < 0.002,
        "intervals end at {end}, run at {elapsed}"
    );
    let runtime = std::fs::read_to_string(out.join("runtime.toml")).unwrap();
    assert!(runtime.contains("transactions = 50"), "{runtime}");

    // With a rate, each client runs its count of scheduled transactions, as pgbench -R -t.
    let out = home.path().join("res-rate");
    let o = run(
        &home,
        "instance:cnt",
        &out,
        &["-w", "tpcb", "-t", "10", "-c", "2", "-R", "400"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    assert_eq!(s["totals"]["total"].as_u64(), Some(20), "{}", s["totals"]);
    assert_eq!(s["complete"], true);
}

/// pgbench refuses `-t` beside `-T`, and a count of 0: so does tidebench, with exit 2 and
/// pgbench's words; and a count beside what makes a run more than one phase.
#[test]
fn t_is_refused_beside_a_duration_at_zero_and_with_ramps() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "bad");
    let dsn = inst.dsn("tidebench");
    let both = "specify either a number of transactions (-t) or a duration (-T), not both";
    let o = pgbench(&inst, &["-n", "-S", "-t", "5", "-T", "10"], &dsn);
    assert!(!o.status.success());
    assert!(text(&o).contains(both), "pgbench said: {}", text(&o));
    let out = home.path().join("res-bad");
    let o = run(&home, &dsn, &out, &["-S", "-t", "5", "-T", "10s"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(both), "{}", text(&o));
    assert!(text(&o).contains("drop -T"), "{}", text(&o));

    let o = pgbench(&inst, &["-n", "-S", "-t", "0"], &dsn);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("1..2147483647"),
        "pgbench said: {}",
        text(&o)
    );
    let o = run(&home, &dsn, &out, &["-S", "-t", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("1..2147483647"), "{}", text(&o));

    let o = run(&home, &dsn, &out, &["-S", "-t", "5", "--ramp-up", "5s"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("runs one group in one phase"),
        "{}",
        text(&o)
    );
    assert!(!out.exists(), "a refused run left a results dir");
}

/// `-t` with a script (and as the run file's `transactions` key): every client runs its N,
/// as pgbench's do (one row per transaction and client in one table); a failed transaction
/// (SQLSTATE 40001, raised for client 0 every time) counts toward N, as in pgbench 15.
#[test]
fn t_with_a_script_counts_each_clients_transactions_failed_ones_too() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "scr");
    let dsn = inst.dsn("tidebench");
    support::psql(
        &inst,
        "tidebench",
        "create table seen (tool int, client int);\n\
         create function fail_if(b bool) returns int language plpgsql as $$ begin if b then \
         raise exception 'planned failure' using errcode = '40001'; end if; return 1; end $$;",
    );
    let seen = script(
        &home,
        "seen.sql",
        "\\set x random(1, 10)\nINSERT INTO seen VALUES (:tool, :client_id);\n",
    );
    let o = pgbench(
        &inst,
        &["-n", "-f", &seen, "-t", "20", "-c", "3", "-D", "tool=1"],
        &dsn,
    );
    assert!(o.status.success(), "pgbench: {}", text(&o));
    let file = home.path().join("by-count.toml");
    std::fs::write(
        &file,
        format!("workload = \"script\"\nfile = [\"{seen}\"]\ntransactions = 20\nclients = 3\n"),
    )
    .unwrap();
    let out = home.path().join("res-seen");
    let o = run(&home, &dsn, &out, &[file.to_str().unwrap(), "-D", "tool=2"]);
    assert!(o.status.success(), "{}", text(&o));
    let rows = support::psql(
        &inst,
        "tidebench",
        "select tool, client, count(*) from seen group by 1, 2 order by 1, 2",
    );
    // Tool 1 is pgbench, tool 2 tidebench.
    let expected: Vec<String> = (1..=2)
        .flat_map(|tool| (0..3).map(move |c| format!("{tool}|{c}|20")))
        .collect();
    assert_eq!(rows.lines().collect::<Vec<_>>(), expected);

    let failing = script(&home, "fail.sql", "SELECT fail_if(:client_id = 0);\n");
    let o = pgbench(&inst, &["-n", "-f", &failing, "-t", "20", "-c", "3"], &dsn);
    assert!(o.status.success(), "pgbench: {}", text(&o));
    assert_eq!(pgbench_counts(&o), (40, 60, 20), "{}", text(&o));
    let out = home.path().join("res-fail");
    let o = run(&home, &dsn, &out, &["-f", &failing, "-t", "20", "-c", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    let t = &s["totals"];
    assert_eq!(
        (
            t["total"].as_u64(),
            t["committed"].as_u64(),
            t["failed"].as_u64()
        ),
        (Some(60), Some(40), Some(20)),
        "{t}"
    );
    assert_eq!(
        t["failed_by_class"]["serialization"].as_u64(),
        Some(20),
        "{t}"
    );
    for server in s["server"].as_array().unwrap() {
        support::assert_server_agrees(server, 0);
    }
}

/// `-C`: every transaction on a new session, as pgbench's `--connect`: the server counts one
/// commit per session opened beside the transactions' own, and both tools print the average
/// connection time (summary.json has it under `connections`).
#[test]
fn connect_opens_a_session_per_transaction_as_pgbench_s() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "conn");
    support::prepare_tpcb(&home, "instance:conn");
    let o = pgbench(
        &inst,
        &["-n", "-C", "-t", "20", "-c", "2"],
        &inst.dsn("tidebench"),
    );
    assert!(o.status.success(), "pgbench: {}", text(&o));
    assert_eq!(pgbench_counts(&o), (40, 40, 0), "{}", text(&o));
    assert!(
        text(&o).contains("average connection time = "),
        "{}",
        text(&o)
    );

    let out = home.path().join("res-c");
    let o = run(
        &home,
        "instance:conn",
        &out,
        &["-w", "tpcb", "-C", "-t", "20", "-c", "2"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("average connection time = "),
        "{}",
        text(&o)
    );
    let s = support::summary(&out);
    assert_eq!(
        s["totals"]["committed"].as_u64(),
        Some(40),
        "{}",
        s["totals"]
    );
    let c = &s["connections"];
    assert_eq!(c["opened"].as_u64(), Some(40), "{c}");
    assert!(c["mean_ms"].as_f64().unwrap() > 0.0, "{c}");
    // 40 transactions and 40 sessions opened for them, each one commit at the server.
    let server = &s["server"][0];
    support::assert_server_agrees(server, 0);
    assert_eq!(server["xact_commit_delta"].as_i64(), Some(80), "{server}");
}
