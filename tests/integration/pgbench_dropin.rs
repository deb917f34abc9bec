//! `tidebench pgbench ARGS` as a drop-in for pgbench 15 (issue 38, item 2), with the real
//! pgbench as referee: the same command line against the same server gives the same exit
//! status, and tidebench's stdout has every label of pgbench's summary block with the same
//! static values (transaction type, scaling factor, query mode, clients, threads, tries,
//! duration, the scripts and their weights). Connection by -h/-p/-U/dbname and by PG*
//! variables or a connection string; `-i` loads what pgbench then runs on; bad options exit
//! 1 and an aborted client 2, as pgbench's.

use std::process::{Command, Output};

use tidebench::instance::Instance;

use crate::support::{self, output_text as text, TempHome};

/// The labels whose values come from the command line and the data, not the measurement.
const STATIC: [&str; 9] = [
    "transaction type",
    "scaling factor",
    "query mode",
    "number of clients",
    "number of threads",
    "maximum number of tries",
    "duration",
    "number of transactions per client",
    " - weight",
];

/// -h, -p and -U of the instance.
fn conn(inst: &Instance) -> Vec<String> {
    vec![
        "-h".into(),
        inst.socket_dir.display().to_string(),
        "-p".into(),
        inst.port.to_string(),
        "-U".into(),
        inst.superuser.clone(),
    ]
}

/// Runs the instance's pgbench and `tidebench pgbench` with `args` (and `env`), in `home`.
fn both(home: &TempHome, inst: &Instance, args: &[String], env: &[(&str, String)]) -> [Output; 2] {
    let mut pgbench = Command::new(support::pgbench_path(inst));
    let mut ours = support::tidebench(home);
    ours.arg("pgbench");
    [&mut pgbench, &mut ours].map(|c| {
        c.current_dir(home.path())
            .args(args)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .output()
            .expect("the command runs")
    })
}

/// The summary block's lines as (label, value): `label: value` and `label = value`.
fn block(o: &Output) -> Vec<(String, String)> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with("pgbench ("))
        .filter_map(|l| {
            // -r's `   0.057   0  SELECT ...`: the command is the label.
            if l.starts_with("   ") {
                let text: Vec<&str> = l.split_whitespace().skip(2).collect();
                return Some((format!("command {}", text.join(" ")), String::new()));
            }
            // A script's ` - 6083 transactions (67.1% of total, tps = ...)` has a count first.
            if l.strip_prefix(" - ")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            {
                return Some((" - transactions".to_string(), l.to_string()));
            }
            let at = [l.find(" = "), l.find(": ")].into_iter().flatten().min()?;
            let (label, value) = l.split_at(at);
            let value = value.trim_start_matches([' ', '=', ':']);
            Some((label.to_string(), value.to_string()))
        })
        .collect()
}

/// The same exit status; on success every label of pgbench's block in ours, the static
/// values equal. Returns tidebench's output.
fn same_as_pgbench(
    home: &TempHome,
    inst: &Instance,
    args: &[String],
    env: &[(&str, String)],
) -> Output {
    let [theirs, ours] = both(home, inst, args, env);
    assert_eq!(
        theirs.status.code(),
        ours.status.code(),
        "{args:?}\npgbench:\n{}\ntidebench:\n{}",
        text(&theirs),
        text(&ours)
    );
    if !theirs.status.success() {
        return ours;
    }
    let (want, got) = (block(&theirs), block(&ours));
    assert!(want.len() >= 10, "{args:?}: pgbench said {}", text(&theirs));
    for (label, value) in &want {
        let mine = got.iter().find(|(l, _)| l == label);
        assert!(mine.is_some(), "{args:?}: no '{label}' in\n{}", text(&ours));
        if STATIC.contains(&label.as_str()) {
            let found: Vec<&String> = got
                .iter()
                .filter(|(l, _)| l == label)
                .map(|(_, v)| v)
                .collect();
            assert!(
                found.contains(&value),
                "{args:?}: {label}: pgbench {value}, tidebench {found:?}\n{}",
                text(&ours)
            );
        }
    }
    // A SQL script line per script, in pgbench's order and words.
    let scripts = |b: &[(String, String)]| -> Vec<(String, String)> {
        b.iter()
            .filter(|(l, _)| l.starts_with("SQL script"))
            .cloned()
            .collect()
    };
    assert_eq!(scripts(&want), scripts(&got), "{args:?}");
    ours
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// A `-P` line as pgbench 15 writes it: `progress: 1.0 s, 1234.5 tps, lat 0.810 ms stddev
/// 0.123, 0 failed`.
fn words(s: &str) -> Vec<&str> {
    s.split(' ').collect()
}

fn is_progress_line(l: &str) -> bool {
    let Some(rest) = l.strip_prefix("progress: ") else {
        return false;
    };
    let parts: Vec<&str> = rest.split(", ").collect();
    let num = |s: &str, decimals: usize| {
        s.split_once('.').is_some_and(|(a, b)| {
            a.parse::<u64>().is_ok() && b.len() == decimals && b.parse::<u64>().is_ok()
        })
    };
    parts.len() == 4
        && matches!(words(parts[0]).as_slice(), [t, "s"] if num(t, 1))
        && matches!(words(parts[1]).as_slice(), [t, "tps"] if num(t, 1))
        && matches!(words(parts[2]).as_slice(), ["lat", a, "ms", "stddev", b] if num(a, 3) && num(b, 3))
        && matches!(words(parts[3]).as_slice(), [n, "failed"] if n.parse::<u64>().is_ok())
}

#[test]
fn runs_say_what_pgbench_says_with_its_exit_statuses() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "dropin");
    support::prepare_tpcb(&home, "instance:dropin");
    let db = tidebench::instance::DEFAULT_DBNAME;
    let file = home.path().join("mine.sql");
    std::fs::write(
        &file,
        "\\set aid random(1, 1000 * :x)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    )
    .unwrap();
    let weighted = format!("{}@2", file.display());
    let runs: [&[&str]; 7] = [
        &["-S", "-T", "1", "-c", "2", "-j", "2"],
        &["-N", "-T1", "-M", "prepared", "-n"],
        // 3 s: the lines at 1 s and 2 s come before the end, however busy the machine.
        &["-b", "tpcb-like", "-T", "3", "-M", "extended", "-P", "1"],
        &[
            "-f",
            &weighted,
            "-b",
            "select-only@1",
            "-D",
            "x=5",
            "-T",
            "1",
            "-n",
            "-r",
        ],
        &["--random-seed=7", "-Sn", "-c2", "-T1", "-r"],
        &["-D", "scale=3", "-f", &weighted, "--time=1", "-n"],
        &["-Sn", "-R", "200", "-T", "1", "--max-tries", "2"],
    ];
    for run in runs {
        let mut args = conn(&inst);
        args.extend(strings(run));
        args.push(db.into());
        let o = same_as_pgbench(&home, &inst, &args, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        // pgbench names no results dir; tidebench does only when asked.
        assert!(!err.contains("results in "), "{err}");
        if run.contains(&"-P") {
            let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("progress:")).collect();
            assert!(
                !lines.is_empty() && lines.iter().all(|l| is_progress_line(l)),
                "{err}"
            );
            assert!(
                block(&o).iter().any(|(l, _)| l == "latency stddev"),
                "{}",
                text(&o)
            );
        }
    }
    // The results dir is under TIDEBENCH_HOME, not in the working directory.
    let runs_dir = home.path().join("pgbench-runs");
    let dirs = std::fs::read_dir(&runs_dir).unwrap().count();
    assert_eq!(dirs, 7, "{}", runs_dir.display());
    assert!(!home.path().join("results").exists());

    // Connection from the PG* variables alone: pgbench's database is PGDATABASE.
    let env = [
        ("PGHOST", inst.socket_dir.display().to_string()),
        ("PGPORT", inst.port.to_string()),
        ("PGUSER", inst.superuser.clone()),
        ("PGDATABASE", db.to_string()),
    ];
    same_as_pgbench(&home, &inst, &strings(&["-S", "-T", "1", "-n"]), &env);
    // Without PGDATABASE it is PGUSER's name (the server's user, whose database has no
    // pgbench tables): both refuse, 1.
    let o = same_as_pgbench(&home, &inst, &strings(&["-S", "-T", "1"]), &env[..3]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // A connection string as the database name, as libpq expands it.
    let conninfo = format!(
        "host={} port={} user={} dbname={db}",
        inst.socket_dir.display(),
        inst.port,
        inst.superuser
    );
    same_as_pgbench(
        &home,
        &inst,
        &strings(&["-S", "-T", "1", "-n", &conninfo]),
        &[],
    );
    // A client's runtime error aborts it: pgbench's 2.
    let abort = home.path().join("abort.sql");
    std::fs::write(&abort, "\\set x 1 / 0\nSELECT 1;\n").unwrap();
    let mut args = conn(&inst);
    args.extend(strings(&[
        "-n",
        "-T",
        "1",
        "-f",
        &abort.display().to_string(),
        db,
    ]));
    let o = same_as_pgbench(&home, &inst, &args, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // A database without pgbench's tables: refused before the run, 1.
    let mut args = conn(&inst);
    args.extend(strings(&["-S", "-T", "1", "postgres"]));
    let o = same_as_pgbench(&home, &inst, &args, &[]);
    assert_eq!(o.status.code(), Some(1));
    // tidebench's own lines (issue 56) come with its own option, before pgbench's.
    let mut args = conn(&inst);
    args.extend(strings(&["-Sn", "-t", "1", db]));
    let o = support::tidebench(&home)
        .args(["pgbench", "--tidebench-notes"])
        .args(&args)
        .output()
        .expect("the command runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tidebench pgbench: results in "), "{err}");
}

#[test]
fn init_loads_what_pgbench_runs_on_and_bad_options_exit_1() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "dropin-init");
    support::psql(&inst, "postgres", "create database fresh");
    let mut args = conn(&inst);
    args.extend(strings(&["-i", "-s", "2", "fresh"]));
    let o = support::tidebench(&home)
        .arg("pgbench")
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        support::psql(&inst, "fresh", "select count(*) from pgbench_branches").trim(),
        "2"
    );
    // pgbench runs on it, and reads the same scale tidebench does.
    let mut args = conn(&inst);
    args.extend(strings(&["-S", "-T", "1", "fresh"]));
    let o = same_as_pgbench(&home, &inst, &args, &[]);
    assert!(block(&o).contains(&("scaling factor".into(), "2".into())));

    let bad: [&[&str]; 10] = [
        &["-X"],
        &["--bogus"],
        &["-c", "0"],
        &["-c"],
        &["-i", "-S"],
        &["-S", "--foreign-keys"],
        &["-T", "1", "a", "b"],
        &["-M", "fast"],
        &["-b", "zz"],
        &["--p", "5"],
    ];
    for b in bad {
        let o = same_as_pgbench(&home, &inst, &strings(b), &[]);
        assert_eq!(o.status.code(), Some(1), "{b:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        // getopt's own words come without `error: `, as glibc prints them.
        assert!(err.starts_with("tidebench pgbench: "), "{b:?}: {err}");
    }
    // --help explains the drop-in; -V and -b list exit 0 as pgbench's.
    let o = support::tidebench(&home)
        .args(["pgbench", "--help"])
        .output()
        .unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("alias pgbench="));
    for args in [["-V"], ["--version"]] {
        for o in both(&home, &inst, &strings(&args), &[]) {
            assert_eq!(o.status.code(), Some(0));
            assert!(String::from_utf8_lossy(&o.stdout).starts_with("pgbench (PostgreSQL) 15"));
        }
    }
    let [theirs, ours] = both(&home, &inst, &strings(&["-b", "list"]), &[]);
    assert_eq!(
        (theirs.status.code(), theirs.stderr),
        (ours.status.code(), ours.stderr)
    );
}

/// pgbench's stderr lines that say `what`, without the program's prefix.
fn said(o: &Output, what: &str) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(what))
        .map(|l| {
            l.trim_start_matches("tidebench pgbench: ")
                .trim_start_matches("pgbench: ")
                .to_string()
        })
        .collect();
    lines.sort_unstable();
    lines
}

#[test]
fn issue_38_aborts_missing_tables_and_unlimited_tries_say_what_pgbench_says() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "dropin-abort");
    support::prepare_tpcb(&home, "instance:dropin-abort");
    let db = tidebench::instance::DEFAULT_DBNAME;
    let with = |extra: &[&str]| {
        let mut args = conn(&inst);
        args.extend(strings(extra));
        args
    };

    // A server error aborts both clients: pgbench's abort line for each, word for word (its
    // LINE and caret lines aside), and the aborted transactions are not failures (NaN%).
    let bad = home.path().join("bad.sql");
    std::fs::write(&bad, "SELECT 1;\nSELECT * FROM nope;\n").unwrap();
    let bad = bad.display().to_string();
    let [theirs, ours] = both(
        &home,
        &inst,
        &with(&["-n", "-c", "2", "-t", "2", "-f", &bad, db]),
        &[],
    );
    assert_eq!(theirs.status.code(), Some(2), "{}", text(&theirs));
    assert_eq!(ours.status.code(), Some(2), "{}", text(&ours));
    let lines = said(&theirs, " aborted in command ");
    assert_eq!(lines.len(), 2, "{}", text(&theirs));
    assert_eq!(
        said(&ours, " aborted in command "),
        lines,
        "{}",
        text(&ours)
    );
    for o in [&theirs, &ours] {
        assert!(
            text(o).contains("number of failed transactions: 0 (NaN%)"),
            "{}",
            text(o)
        );
        assert_eq!(
            said(o, "Run was aborted"),
            ["error: Run was aborted; the above results are incomplete."]
        );
    }

    // A script's own error: pgbench names the meta-command, tidebench its place and the error.
    let div = home.path().join("div.sql");
    std::fs::write(&div, "\\set x 1 / 0\n").unwrap();
    let [theirs, ours] = both(
        &home,
        &inst,
        &with(&["-n", "-t", "1", "-f", &div.display().to_string(), db]),
        &[],
    );
    assert!(text(&theirs).contains("client 0 aborted in command 0 (set) of script 0"));
    assert_eq!(ours.status.code(), Some(2), "{}", text(&ours));
    for line in [
        "tidebench pgbench: error: division by zero\n",
        "client 0 aborted in command 0 (set) of script 0; evaluation of meta-command failed",
    ] {
        assert!(text(&ours).contains(line), "{}", text(&ours));
    }

    // A built-in script without pgbench's tables: pgbench's error and hint, before any vacuum.
    let [theirs, ours] = both(&home, &inst, &with(&["-S", "-t", "1", "postgres"]), &[]);
    assert_eq!(theirs.status.code(), Some(1), "{}", text(&theirs));
    assert_eq!(ours.status.code(), Some(1), "{}", text(&ours));
    let hint = said(&theirs, "Perhaps you need to do initialization");
    assert_eq!(hint.len(), 1, "{}", text(&theirs));
    assert_eq!(said(&ours, "Perhaps you need to do initialization"), hint);
    assert_eq!(
        said(&ours, "could not count number of branches"),
        said(&theirs, "could not count number of branches")
    );
    assert!(!text(&ours).contains("vacuum"), "{}", text(&ours));

    // Unlimited tries: refused without -T in pgbench's words, taken with it.
    let o = same_as_pgbench(&home, &inst, &with(&["--max-tries", "0", "-S", db]), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("an unlimited number of transaction tries can only be used"),
        "{}",
        text(&o)
    );
    let o = same_as_pgbench(
        &home,
        &inst,
        &with(&["--max-tries", "0", "-S", "-n", "-T", "1", db]),
        &[],
    );
    assert!(
        !text(&o).contains("maximum number of tries"),
        "{}",
        text(&o)
    );
}
