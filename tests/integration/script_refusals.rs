//! pgbench 15's refusals, limits and script details (issue 38, item 5): each script runs
//! under real pgbench and under tidebench against the same server, and the two must agree on
//! the outcome (refused before running, client aborted, or ran) and on what the message
//! says; where pgbench draws a caret under a script error, the columns must agree too.

use tidebench::instance::Instance;

use crate::support::{self, output_text as text};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Stopped before running anything.
    Refused,
    /// Ran, and a client was aborted.
    Aborted,
    /// Ran, no client aborted.
    Ran,
}

/// One run's class and its whole output.
struct Seen {
    class: Class,
    said: String,
}

/// Runs real pgbench: exit 1 is pgbench's refusal (bad script, or no tables); exit 2 a run
/// with an aborted client.
fn pgbench(inst: &Instance, dsn: &str, args: &[&str]) -> Seen {
    let o = std::process::Command::new(support::pgbench_path(inst))
        .args(["-n", "-t", "1"])
        .args(args)
        .arg(dsn)
        .output()
        .unwrap();
    let class = match o.status.code() {
        Some(0) => Class::Ran,
        Some(1) => Class::Refused,
        Some(2) => Class::Aborted,
        other => panic!("pgbench exited {other:?}: {}", text(&o)),
    };
    Seen {
        class,
        said: text(&o),
    }
}

/// Runs tidebench for a moment: no results dir means refused (it must then exit 2); a
/// results dir with aborted clients means aborted.
fn tidebench(home: &support::TempHome, dsn: &str, out: &str, args: &[&str]) -> Seen {
    let out = home.path().join(out);
    let mut all = vec![
        "run",
        "-T",
        "1s",
        "-P",
        "0",
        "--sample",
        "0",
        "-c",
        "1",
        "--target",
        dsn,
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = support::run_tidebench(home, &all);
    let said = text(&o);
    if !out.join("summary.json").exists() {
        assert_eq!(o.status.code(), Some(2), "a refusal exits 2: {said}");
        return Seen {
            class: Class::Refused,
            said,
        };
    }
    let s = support::summary(&out);
    let aborted = s["aborted_clients"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    Seen {
        class: if aborted { Class::Aborted } else { Class::Ran },
        said,
    }
}

fn write(home: &support::TempHome, name: &str, body: &str) -> String {
    let path = home.path().join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

/// The column (from 0) of pgbench's caret under a script error, if it drew one.
fn pgbench_caret(said: &str) -> Option<usize> {
    let line = said.lines().find(|l| l.ends_with("^ error found here"))?;
    line.find('^')
}

/// The column (from 0) of tidebench's `file:line:col:` for script `name`.
fn tidebench_column(said: &str, name: &str) -> Option<usize> {
    let after = &said[said.find(&format!("{name}:"))? + name.len() + 1..];
    let col = after.split(':').nth(1)?;
    col.parse::<usize>().ok().map(|c| c - 1)
}

/// A script's name, its text, the options both tools get, the class both must end in, and
/// what pgbench and tidebench must say.
type Case<'a> = (&'a str, String, Vec<&'a str>, Class, &'a str, &'a str);

#[test]
fn scripts_are_refused_aborted_or_run_as_pgbench_15_does() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "ref");
    let dsn = inst.dsn("tidebench");
    support::prepare_tpcb(&home, "instance:ref");
    support::psql(&inst, "tidebench", "create database empty");
    let empty = inst.dsn("empty");

    let columns: String = (0..256).map(|i| format!(":v{i}, ")).collect();
    let wide = format!("\\set v0 1\nselect {}1;\n", columns);
    let shell256 = format!("\\shell echo {}\nselect 1;\n", vec!["a"; 255].join(" "));
    let cases: Vec<Case<'_>> = vec![
        (
            "open_block",
            "BEGIN;\nselect 1;\n".into(),
            vec![],
            Class::Aborted,
            "end of script reached without completing the last transaction",
            "end of script reached without completing the last transaction",
        ),
        (
            "sleep_forms",
            "\\set v 1\n\\sleep 2ms\n\\sleep 2 ms\n\\sleep 3us\n\\sleep 0s\n\\sleep :v ms\nselect 1;\n"
                .into(),
            vec![],
            Class::Ran,
            "",
            "",
        ),
        (
            "wide_prepared",
            wide.clone(),
            vec!["-M", "prepared"],
            Class::Refused,
            "too many arguments (maximum is 255)",
            "(maximum is 255)",
        ),
        (
            "wide_extended",
            wide,
            vec!["-M", "extended"],
            Class::Refused,
            "too many arguments (maximum is 255)",
            "(maximum is 255)",
        ),
        (
            "shell_args",
            shell256,
            vec![],
            Class::Refused,
            "too many arguments in command \"shell\"",
            "too many arguments in command \"shell\"",
        ),
        (
            "gset_column",
            "select 1 as \"a b\" \\gset\n".into(),
            vec![],
            Class::Aborted,
            "invalid variable name: \"a b\"",
            "invalid variable name: \"a b\"",
        ),
        // pgbench 15 finds these only when a client runs them: a run-time abort, not a
        // refusal of the script.
        (
            "set_bad_name",
            "\\set . 1\nselect 1;\n".into(),
            vec![],
            Class::Aborted,
            "invalid variable name: \".\"",
            "set: invalid variable name: \".\"",
        ),
        (
            "pipeline_twice",
            "\\startpipeline\n\\startpipeline\n".into(),
            vec!["-M", "extended"],
            Class::Aborted,
            "already in pipeline mode",
            "already in pipeline mode",
        ),
        (
            "pipeline_no_start",
            "\\endpipeline\n".into(),
            vec!["-M", "extended"],
            Class::Aborted,
            "not in pipeline mode",
            "not in pipeline mode",
        ),
        (
            "pipeline_gset",
            "\\startpipeline\nselect 1 \\gset f\n\\endpipeline\n".into(),
            vec!["-M", "extended"],
            Class::Aborted,
            "gset is not allowed in pipeline mode",
            "gset is not allowed in pipeline mode",
        ),
        (
            "pipeline_open",
            "\\startpipeline\nselect 1;\n".into(),
            vec!["-M", "extended"],
            Class::Aborted,
            "end of script reached with pipeline open",
            "end of script reached with pipeline open",
        ),
        // Meta-command failures at run time say pgbench's words.
        (
            "setshell_missing",
            "\\setshell v no-such-command\nselect 1;\n".into(),
            vec![],
            Class::Aborted,
            "no-such-command: could not read result of shell command",
            "no-such-command: could not read result of shell command",
        ),
        (
            "shell_undefined",
            "\\shell echo :nosuchvariable\nselect 1;\n".into(),
            vec![],
            Class::Aborted,
            "echo: undefined variable \":nosuchvariable\"",
            "echo: undefined variable \":nosuchvariable\"",
        ),
        (
            "gset_two_rows",
            "select 1 as v union select 2 \\gset\n".into(),
            vec![],
            Class::Aborted,
            "expected one row, got 2",
            "expected one row, got 2",
        ),
        // \setshell reads what the command printed, however it exited.
        (
            "setshell_status",
            "\\setshell v sh -c \"echo 5; exit 3\"\nselect :v;\n".into(),
            vec![],
            Class::Ran,
            "",
            "",
        ),
        (
            "shell_long",
            format!("\\shell true {}\nselect 1;\n", "x".repeat(250)),
            vec![],
            Class::Aborted,
            "shell command is too long",
            "shell command is too long",
        ),
    ];
    for (name, body, options, class, pg_says, tb_says) in cases {
        let file = write(&home, &format!("{name}.sql"), &body);
        let mut args = options.clone();
        args.extend(["-f", &file]);
        let pg = pgbench(&inst, &dsn, &args);
        let tb = tidebench(&home, &dsn, &format!("res-{name}"), &args);
        assert_eq!(pg.class, class, "{name}: pgbench: {}", pg.said);
        assert_eq!(tb.class, class, "{name}: tidebench: {}", tb.said);
        assert!(pg.said.contains(pg_says), "{name}: pgbench: {}", pg.said);
        assert!(tb.said.contains(tb_says), "{name}: tidebench: {}", tb.said);
    }

    // A built-in on a database without pgbench's tables: both stop before running, and
    // say how to load them.
    let pg = pgbench(&inst, &empty, &["-b", "select-only"]);
    let tb = tidebench(&home, &empty, "res-empty", &["-b", "select-only"]);
    assert_eq!((pg.class, tb.class), (Class::Refused, Class::Refused));
    assert!(pg.said.contains("pgbench -i"), "{}", pg.said);
    assert!(
        tb.said.contains("tidebench prepare --workload tpcb") && tb.said.contains("pgbench -i"),
        "{}",
        tb.said
    );

    // More than 128 scripts.
    let many: Vec<&str> = std::iter::repeat_n(["-b", "select-only"], 129)
        .flatten()
        .collect();
    let pg = pgbench(&inst, &dsn, &many);
    let tb = tidebench(&home, &dsn, "res-many", &many);
    assert_eq!((pg.class, tb.class), (Class::Refused, Class::Refused));
    assert!(
        pg.said.contains("at most 128 SQL scripts are allowed"),
        "{}",
        pg.said
    );
    assert!(
        tb.said.contains("at most 128 SQL scripts are allowed"),
        "{}",
        tb.said
    );
}

#[test]
fn script_errors_point_where_pgbench_points_and_commands_count_as_pgbench_counts() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "col");
    let dsn = inst.dsn("tidebench");
    // pgbench 15's own syntax-error cases (its t/002_pgbench_no_server.pl) and a few more.
    let bad = [
        ("set_op", "\\set i 1 +\n"),
        ("set_fn", "\\set x foo(1)\n"),
        ("set_two", "\\set x 1 2\n"),
        ("set_none", "\\set x\n"),
        ("if_none", "\\if\n\\endif\n"),
        ("elif_bad", "\\if 0\n\\elif +\n\\endif\n"),
        ("least", "\\set i least()\n"),
        ("hash", "\\set i hash(1,2,3)\n"),
        ("permute", "\\set i permute(1)\n"),
        ("overflow", "\\set i 100000000000000000000\n"),
        ("double", "\\set d 1.0E309\n"),
        ("sleep_unit", "\\sleep 2x\n"),
        ("sleep_time", "\\sleep x\n"),
        ("sleep_many", "\\sleep 2 ms extra\n"),
        ("no_endif", "\\if 1"),
        ("elif_no_if", "\\elif 1"),
        ("else_no_if", "\\else"),
        ("endif_no_if", "\\endif"),
        ("elif_after_else", "\\if 1\n\\else\n\\elif 0\n\\endif"),
        ("else_after_else", "\\if 1\n\\else\n\\else\n\\endif"),
        ("else_arg", "\\if 0\n\\else BAD\n\\endif\n"),
        ("endif_arg", "\\if 0\n\\endif BAD\n"),
        ("unknown", "select 1;\n\\nosuch a\n"),
        ("gset_first", "\\gset\n"),
        ("sleep_none", "\\sleep\n"),
    ];
    let mut compared = 0;
    for (name, body) in bad {
        let file = write(&home, &format!("{name}.sql"), body);
        let pg = pgbench(&inst, &dsn, &["-f", &file]);
        let tb = tidebench(&home, &dsn, &format!("res-{name}"), &["-f", &file]);
        assert_eq!(pg.class, Class::Refused, "{name}: pgbench: {}", pg.said);
        assert_eq!(tb.class, Class::Refused, "{name}: tidebench: {}", tb.said);
        if let Some(caret) = pgbench_caret(&pg.said) {
            let file_name = format!("{name}.sql");
            assert_eq!(
                tidebench_column(&tb.said, &file_name),
                Some(caret),
                "{name}: pgbench: {}\ntidebench: {}",
                pg.said,
                tb.said
            );
            compared += 1;
        }
    }
    assert!(compared >= 12, "pgbench drew {compared} carets");

    // debug() inside a taken \elif, \else and after \endif: the same command numbers.
    let file = write(
        &home,
        "numbers.sql",
        "\\set x debug(1)\n\\if false\n\\set y debug(2)\n\\elif true\n\\set y debug(3)\n\
         \\else\n\\set y debug(4)\n\\endif\nselect 1 as one \\gset\n\\set z debug(5)\n\
         \\if false\n\\elif false\n\\else\n\\set w debug(6)\n\\endif\n",
    );
    let pg = pgbench(&inst, &dsn, &["-f", &file]);
    let tb = tidebench(&home, &dsn, "res-numbers", &["-f", &file]);
    assert_eq!(
        (pg.class, tb.class),
        (Class::Ran, Class::Ran),
        "{}",
        tb.said
    );
    let lines = |said: &str| -> std::collections::BTreeSet<String> {
        said.lines()
            .filter_map(|l| l.find("debug(script=").map(|i| l[i..].to_string()))
            .collect()
    };
    let expected = lines(&pg.said);
    assert_eq!(expected.len(), 4, "{}", pg.said);
    assert!(
        expected.contains("debug(script=0,command=14): int 6"),
        "{expected:?}"
    );
    assert_eq!(lines(&tb.said), expected, "{}", tb.said);

    // \shell's output reaches stdout, as pgbench's.
    let file = write(
        &home,
        "shell.sql",
        "\\shell echo shell-said-this\nselect 1;\n",
    );
    for (tool, stdout) in [
        ("pgbench", {
            let o = std::process::Command::new(support::pgbench_path(&inst))
                .args(["-n", "-t", "1", "-f", &file, &dsn])
                .output()
                .unwrap();
            o.stdout
        }),
        ("tidebench", {
            let out = home.path().join("res-shell");
            let o = support::run_tidebench(
                &home,
                &[
                    "run",
                    "-T",
                    "1s",
                    "-P",
                    "0",
                    "--sample",
                    "0",
                    "-c",
                    "1",
                    "--target",
                    &dsn,
                    "--out",
                    out.to_str().unwrap(),
                    "-f",
                    &file,
                ],
            );
            o.stdout
        }),
    ] {
        let stdout = String::from_utf8_lossy(&stdout);
        assert!(stdout.contains("shell-said-this\n"), "{tool}: {stdout}");
    }
}
