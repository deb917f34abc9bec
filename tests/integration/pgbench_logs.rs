//! pgbench's `-l` logs and `-L` (issue 38): `tidebench pgbench` and the real pgbench run the
//! same command line against the same server in their own directories, and their logs are
//! compared line by line for what does not depend on timing: the files (one per thread, named
//! `PREFIX.PID` and `PREFIX.PID.TID`), each line's field count, and which clients and
//! transaction numbers and script numbers appear.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use tidebench::instance::Instance;

use crate::support::{pgbench_path, psql, start_instance, temp_home, TempHome};

fn run(tool: &str, home: &TempHome, inst: &Instance, dir: &Path, args: &[&str]) -> String {
    let mut cmd = if tool == "pgbench" {
        Command::new(pgbench_path(inst))
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tidebench"));
        c.env("TIDEBENCH_HOME", home.path()).arg("pgbench");
        c
    };
    let out = cmd
        .current_dir(dir)
        .args(args)
        .env("PGHOST", &inst.socket_dir)
        .env("PGPORT", inst.port.to_string())
        .env("PGUSER", &inst.superuser)
        .env("PGDATABASE", "bench")
        .output()
        .expect("run the tool");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{tool} {args:?}: {text}");
    text
}

/// Each log file's name with the PID replaced by `PID`, and its lines split in fields.
fn logs(dir: &Path, prefix: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut files: Vec<(String, Vec<Vec<String>>)> = std::fs::read_dir(dir)
        .expect("list the dir")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix(&format!("{prefix}."))?;
            let mut parts = rest.splitn(2, '.');
            let pid = parts.next()?;
            assert!(
                pid.parse::<u32>().is_ok(),
                "{name}: no PID after the prefix"
            );
            let shape = match parts.next() {
                Some(tid) => format!("{prefix}.PID.{tid}"),
                None => format!("{prefix}.PID"),
            };
            let text = std::fs::read_to_string(e.path()).expect("read a log");
            let lines = text
                .lines()
                .map(|l| l.split(' ').map(String::from).collect())
                .collect();
            Some((shape, lines))
        })
        .collect();
    files.sort();
    files
}

/// What must agree: file names, field counts, and the (client, transaction_no, script_no)
/// triples over all files (pgbench deals clients to threads in blocks, tidebench in turn, so
/// which file a client is in is left out).
fn shape(files: &[(String, Vec<Vec<String>>)]) -> (Vec<String>, BTreeSet<usize>, BTreeSet<String>) {
    let names = files.iter().map(|f| f.0.clone()).collect();
    let widths = files
        .iter()
        .flat_map(|f| f.1.iter().map(Vec::len))
        .collect();
    let ids = files
        .iter()
        .flat_map(|f| f.1.iter())
        .map(|l| format!("{} {} {}", l[0], l[1], l[3]))
        .collect();
    (names, widths, ids)
}

#[test]
fn transaction_logs_have_pgbench_s_files_columns_and_clients() {
    let home = temp_home();
    let inst = start_instance(&home, "logs");
    psql(&inst, "postgres", "create database bench");
    let init = Command::new(pgbench_path(&inst))
        .args(["-i", "-q", "-h"])
        .arg(&inst.socket_dir)
        .args(["-p", &inst.port.to_string(), "-U", &inst.superuser, "bench"])
        .output()
        .expect("run pgbench -i");
    assert!(init.status.success(), "{init:?}");
    let script = "\\set aid random(1, 1000)\nselect :aid;\n";
    for args in [
        &[
            "-n",
            "-S",
            "-t",
            "20",
            "-c",
            "3",
            "-j",
            "2",
            "-l",
            "--log-prefix=lg",
        ][..],
        &[
            "-n", "-t", "10", "-c", "2", "-b", "se@1", "-f", "x.sql@1", "-l",
        ][..],
        &[
            "-n",
            "-S",
            "-t",
            "10",
            "-c",
            "2",
            "-R",
            "500",
            "--max-tries=2",
            "-l",
        ][..],
    ] {
        let prefix = args
            .iter()
            .find_map(|a| a.strip_prefix("--log-prefix="))
            .unwrap_or("pgbench_log");
        let mut seen = Vec::new();
        for tool in ["pgbench", "tidebench"] {
            let dir = tempfile::tempdir().expect("a dir");
            std::fs::write(dir.path().join("x.sql"), script).expect("write the script");
            run(tool, &home, &inst, dir.path(), args);
            seen.push(shape(&logs(dir.path(), prefix)));
        }
        assert!(!seen[0].2.is_empty(), "{args:?}: pgbench logged nothing");
        if args.contains(&"-b") {
            // Which script each transaction drew is random: the script numbers used must be
            // pgbench's (0 or 1), not which one each transaction had.
            let strip = |s: &BTreeSet<String>| -> BTreeSet<String> {
                s.iter()
                    .map(|l| l.rsplit_once(' ').map_or("", |x| x.0).to_string())
                    .collect()
            };
            assert_eq!(
                (&seen[0].0, &seen[0].1),
                (&seen[1].0, &seen[1].1),
                "{args:?}"
            );
            assert_eq!(strip(&seen[0].2), strip(&seen[1].2), "{args:?}");
            assert!(
                seen[1]
                    .2
                    .iter()
                    .all(|l| l.ends_with(" 0") || l.ends_with(" 1")),
                "{args:?}: {:?}",
                seen[1].2
            );
        } else {
            assert_eq!(seen[0], seen[1], "{args:?}");
        }
    }
}

#[test]
fn aggregated_logs_and_the_latency_limit_read_as_pgbench_s() {
    let home = temp_home();
    let inst = start_instance(&home, "agglogs");
    psql(&inst, "postgres", "create database bench");
    let init = Command::new(pgbench_path(&inst))
        .args(["-i", "-q", "-h"])
        .arg(&inst.socket_dir)
        .args(["-p", &inst.port.to_string(), "-U", &inst.superuser, "bench"])
        .output()
        .expect("run pgbench -i");
    assert!(init.status.success(), "{init:?}");
    let args = [
        "-n",
        "-S",
        "-T",
        "2",
        "-l",
        "--aggregate-interval=1",
        "-L",
        "100000",
    ];
    let mut widths = Vec::new();
    for tool in ["pgbench", "tidebench"] {
        let dir = tempfile::tempdir().expect("a dir");
        let text = run(tool, &home, &inst, dir.path(), &args);
        assert!(
            text.contains("number of transactions above the 100000.0 ms latency limit: 0/"),
            "{tool}: {text}"
        );
        let files = logs(dir.path(), "pgbench_log");
        assert_eq!(files.len(), 1, "{tool}");
        widths.push(shape(&files).1);
    }
    assert_eq!(widths[0], widths[1]);
}
