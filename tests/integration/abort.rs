//! pgbench's error behaviour and no silent failure (issue 38, item 4), with the real pgbench
//! 15 as the referee: an error no retry helps ends the client and the run exits 2 after "Run
//! was aborted; the above results are incomplete."; the server's message is shown and kept
//! in summary.json whatever the mode; `--continue-on-error` counts and goes on;
//! `--exit-on-abort` stops the run; serialization failures are retried and counted, never
//! an abort.

use std::path::Path;
use std::process::Output;

use crate::support;

const BAD: &str = "SELECT 1;\nSELECT * FROM nope;\n";
/// Only client 0 meets the error; client 1 goes on (or not, with --exit-on-abort).
const ONE_BAD: &str = "\\if :client_id = 0\nSELECT * FROM nope;\n\\endif\nSELECT 1;\n";
/// A serialization failure with every optional field, raised by the server.
const SERIAL: &str = "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = 'boom', \
                      DETAIL = 'd1', HINT = 'h1'; END $$;\n";

fn script(home: &support::TempHome, name: &str, body: &str) -> String {
    support::script_file(home, name, body)
}

fn pgbench(inst: &tidebench::instance::Instance, dsn: &str, extra: &[&str]) -> Output {
    let mut args = vec!["-n"];
    args.extend_from_slice(extra);
    args.push(dsn);
    support::run_pgbench(inst, &args)
}

fn run(home: &support::TempHome, dsn: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "-T",
        "2s",
        "-P",
        "0",
        "--sample",
        "0",
        "--target",
        dsn,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    support::run_tidebench(home, &args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The server's text after `ERROR:  ` on pgbench's abort line.
fn server_error(pgbench_stderr: &str) -> String {
    let line = pgbench_stderr
        .lines()
        .find(|l| l.contains("aborted in command"))
        .unwrap_or_else(|| panic!("no abort line in {pgbench_stderr}"));
    let at = line.find("ERROR:  ").expect("ERROR:  on the abort line");
    line[at + "ERROR:  ".len()..].to_string()
}

#[test]
fn issue_38_a_bad_table_aborts_the_clients_as_pgbench_and_is_never_silent() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "abrt");
    let dsn = inst.dsn("postgres");
    let bad = script(&home, "bad.sql", BAD);

    let theirs = pgbench(&inst, &dsn, &["-c", "2", "-t", "5", "-f", &bad]);
    assert_eq!(
        theirs.status.code(),
        Some(2),
        "pgbench: {}",
        stderr(&theirs)
    );
    let said = server_error(&stderr(&theirs));
    assert_eq!(said, "relation \"nope\" does not exist");
    assert!(stderr(&theirs).contains("Run was aborted; the above results are incomplete."));

    let out = home.path().join("res-abort");
    let ours = run(&home, &dsn, &out, &["-c", "2", "-f", &bad]);
    let text = support::output_text(&ours);
    assert_eq!(ours.status.code(), Some(2), "{text}");
    assert!(text.contains(&format!("ERROR:  {said}")), "{text}");
    assert!(
        text.contains("Run was aborted; the above results are incomplete"),
        "{text}"
    );
    let s = support::summary(&out);
    let aborted = s["aborted_clients"].as_array().expect("aborted_clients");
    assert_eq!(aborted.len(), 2, "{aborted:?}");
    assert!(aborted.iter().all(|a| a["message"]
        .as_str()
        .is_some_and(|m| m.contains("command 1: ERROR:  relation \"nope\""))));
    assert_eq!(s["on_error"], "abort-client");
    let errors = s["errors"].as_array().expect("errors in summary.json");
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(
        (&e["class"], &e["sqlstate"], &e["message"], &e["command"]),
        (
            &"other".into(),
            &"42P01".into(),
            &said.clone().into(),
            &1.into()
        ),
        "{e}"
    );
    // Each client failed once, then ended.
    assert_eq!(e["count"].as_u64(), Some(2), "{e}");
    assert_eq!(s["totals"]["failed_by_class"]["other"].as_u64(), Some(2));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Errors by kind") && html.contains("42P01"));

    // Told to go on, the run counts every failure, exits 0, and still shows and keeps the
    // server's message.
    let out = home.path().join("res-continue");
    let ours = run(
        &home,
        &dsn,
        &out,
        &["-c", "2", "-f", &bad, "--continue-on-error"],
    );
    let text = support::output_text(&ours);
    assert!(ours.status.success(), "{text}");
    assert!(text.contains(&format!("ERROR:  {said}")), "{text}");
    assert!(!text.contains("Run was aborted"), "{text}");
    let s = support::summary(&out);
    assert!(
        s.get("aborted_clients").is_none(),
        "{}",
        s["aborted_clients"]
    );
    let failed = s["totals"]["failed_by_class"]["other"].as_u64().unwrap();
    assert!(failed > 2, "both clients went on failing: {failed}");
    let e = &s["errors"][0];
    assert_eq!(e["message"].as_str(), Some(said.as_str()), "{e}");
    // The tally covers the ramps and the tries cut at the end too: never fewer.
    assert!(e["count"].as_u64().unwrap() >= failed, "{e}");
}

#[test]
fn issue_38_one_aborted_client_leaves_the_other_running_unless_exit_on_abort() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "abrt1");
    let dsn = inst.dsn("postgres");
    let one = script(&home, "one.sql", ONE_BAD);

    // pgbench 15: client 0 aborts, client 1 runs to the end, exit 2.
    let theirs = pgbench(&inst, &dsn, &["-c", "2", "-t", "50", "-f", &one]);
    assert_eq!(
        theirs.status.code(),
        Some(2),
        "pgbench: {}",
        stderr(&theirs)
    );
    let processed = String::from_utf8_lossy(&theirs.stdout).into_owned();
    assert!(
        processed.contains("actually processed: 50/100"),
        "{processed}"
    );

    let out = home.path().join("res-one");
    let ours = run(&home, &dsn, &out, &["-c", "2", "-f", &one]);
    let text = support::output_text(&ours);
    assert_eq!(ours.status.code(), Some(2), "{text}");
    let s = support::summary(&out);
    assert_eq!(s["complete"], true, "{text}");
    assert_eq!(s["aborted_clients"].as_array().map(Vec::len), Some(1));
    assert_eq!(s["aborted_clients"][0]["client"].as_u64(), Some(0));
    assert!(s["totals"]["committed"].as_u64().unwrap() > 0, "{text}");

    // pgbench 17's --exit-on-abort: the first abort stops the whole run.
    let out = home.path().join("res-exit");
    let ours = run(
        &home,
        &dsn,
        &out,
        &["-c", "2", "-f", &one, "--exit-on-abort"],
    );
    let text = support::output_text(&ours);
    assert_eq!(ours.status.code(), Some(2), "{text}");
    assert!(text.contains("--exit-on-abort"), "{text}");
    let s = support::summary(&out);
    assert_eq!(s["complete"], false, "{text}");
    assert_eq!(s["on_error"], "exit-run");
    assert_eq!(s["aborted_clients"].as_array().map(Vec::len), Some(1));
}

#[test]
fn issue_38_serialization_failures_are_retried_and_counted_never_an_abort() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "abrt2");
    let dsn = inst.dsn("postgres");
    let serial = script(&home, "serial.sql", SERIAL);

    let theirs = pgbench(
        &inst,
        &dsn,
        &["-c", "2", "-t", "3", "--max-tries", "2", "-f", &serial],
    );
    assert!(theirs.status.success(), "pgbench: {}", stderr(&theirs));
    let report = String::from_utf8_lossy(&theirs.stdout).into_owned();
    assert!(
        report.contains("number of failed transactions: 6"),
        "{report}"
    );

    let out = home.path().join("res-serial");
    let ours = run(
        &home,
        &dsn,
        &out,
        &["-c", "2", "--max-tries", "2", "-f", &serial],
    );
    let text = support::output_text(&ours);
    assert!(ours.status.success(), "{text}");
    // Never silent: the first one is shown in full.
    assert!(
        text.contains("ERROR:  boom\nDETAIL:  d1\nHINT:  h1\nCONTEXT:  "),
        "{text}"
    );
    let s = support::summary(&out);
    assert!(
        s.get("aborted_clients").is_none(),
        "{}",
        s["aborted_clients"]
    );
    let t = &s["totals"];
    let failed = t["failed"].as_u64().unwrap();
    assert!(failed > 0, "{t}");
    assert_eq!(t["failed_by_class"]["serialization"].as_u64(), Some(failed));
    assert!(t["retried"].as_u64().unwrap() > 0, "{t}");
    let e = &s["errors"][0];
    assert_eq!(
        (&e["class"], &e["sqlstate"], &e["detail"], &e["hint"]),
        (
            &"serialization".into(),
            &"40001".into(),
            &"d1".into(),
            &"h1".into()
        ),
        "{e}"
    );
}
