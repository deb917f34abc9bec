//! pgbench scripts as a workload (issue 27): the user's own files and pgbench's built-ins run
//! with pgbench's language on a managed instance in every protocol; deterministic functions
//! give pgbench's own values (both tools run one script and write into one table); a parse
//! error stops before connecting with file:line:column and a caret; a runtime error ends its
//! client, counted and shown, while the run goes on.

use std::path::Path;

use crate::support::{self, output_text as text};

/// Writes `body` as `name` in the home dir and returns its path.
fn script(home: &support::TempHome, name: &str, body: &str) -> String {
    support::script_file(home, name, body)
}

fn run_script(
    home: &support::TempHome,
    target: &str,
    out: &Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "run",
        "-T",
        "1s",
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

#[test]
fn files_and_builtins_run_in_every_protocol_with_pgbench_semantics() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "scr");
    let target = "instance:scr";
    support::prepare_tpcb(&home, target);
    support::psql(
        &inst,
        "tidebench",
        "create table seen (proto int, client int, aid int, balance int, branch int, \
         slept bool, shell int, parity int)",
    );
    let file = script(
        &home,
        "mine.sql",
        "-- a script of the user's own\n\
         \\set aid random(1, 100000 * :scale)\n\
         \\set parity :aid % 2\n\
         SELECT abalance AS balance, bid AS branch\n  FROM pgbench_accounts WHERE aid = :aid \\gset\n\
         \\if :parity = 0\n  \\set half :aid / 2\n\\elif :parity = 1\n  \\set half (:aid - 1) / 2\n\\else\n  \\set half -1\n\\endif\n\
         \\sleep 1 us\n\
         \\setshell three echo 3\n\
         INSERT INTO seen VALUES (:proto, :client_id, :aid, :balance, :branch, \
         :half * 2 + :parity = :aid, :three, :parity);\n",
    );
    for (n, proto) in ["simple", "extended", "prepared"].iter().enumerate() {
        let out = home.path().join(format!("res-{proto}"));
        let define = format!("proto={n}");
        let o = run_script(
            &home,
            target,
            &out,
            &["-f", &file, "-D", &define, "-M", proto, "-c", "2"],
        );
        assert!(o.status.success(), "{proto}: {}", text(&o));
        let s = support::summary(&out);
        assert!(
            s["totals"]["committed"].as_i64().unwrap() > 10,
            "{proto}: {}",
            s["totals"]
        );
        assert_eq!(s["totals"]["failed"], 0, "{proto}: {}", s["totals"]);
    }
    // Every row: the account's own branch (scale 1: branch 1), the \if arithmetic held, the
    // shell said 3, and two clients wrote.
    let checks = support::psql(
        &inst,
        "tidebench",
        "select count(*), bool_and(slept), min(branch), max(branch), min(shell), max(shell), \
         count(distinct client) from seen",
    );
    let f: Vec<&str> = checks.trim().split('|').collect();
    assert!(f[0].parse::<i64>().unwrap() > 10, "{checks}");
    assert_eq!(&f[1..], ["t", "1", "1", "3", "3", "2"], "{checks}");
    let protocols = support::psql(&inst, "tidebench", "select count(distinct proto) from seen");
    assert_eq!(protocols.trim(), "3");

    // -b runs pgbench's built-in on the same interpreter, and the server's commit count
    // agrees (one transaction per script: BEGIN ... END).
    let out = home.path().join("res-builtin");
    let o = run_script(
        &home,
        target,
        &out,
        &[
            "-b",
            "tpcb-like@2",
            "-b",
            "select-only",
            "-M",
            "prepared",
            "-c",
            "2",
            "--report-per-command",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    // -r: every command of both scripts, timed over the whole run (so at least as often as
    // the window's commits), in the terminal and the report too.
    let commands = s["commands"].as_array().expect("per-command figures");
    let of = |script: &str| -> Vec<&serde_json::Value> {
        commands
            .iter()
            .filter(|c| c["txn_type"] == script)
            .collect()
    };
    assert_eq!(of("tpcb-like").len(), 11, "{commands:?}");
    assert_eq!(of("select-only").len(), 2, "{commands:?}");
    let committed = |script: &str| -> u64 {
        s["by_target_and_type"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["txn_type"] == script)
            .map(|r| r["committed"].as_u64().unwrap())
            .sum()
    };
    for c in of("tpcb-like") {
        assert!(
            c["count"].as_u64().unwrap() >= committed("tpcb-like"),
            "{c}"
        );
        assert_eq!(c["failed"], 0, "{c}");
    }
    let update = of("tpcb-like")[5];
    assert!(
        update["text"]
            .as_str()
            .unwrap()
            .starts_with("UPDATE pgbench_accounts"),
        "{update}"
    );
    assert!(update["mean_ms"].as_f64().unwrap() > 0.0, "{update}");
    assert!(text(&o).contains("script tpcb-like"), "{}", text(&o));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("script tpcb-like: command"),
        "report.html lacks the table"
    );
    let types: Vec<&str> = s["by_target_and_type"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["txn_type"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"tpcb-like") && types.contains(&"select-only"),
        "{types:?}"
    );
    // The terminal has a line per script, as pgbench's per-script blocks.
    let said = text(&o);
    assert!(said.contains("mix %"), "{said}");
    for name in ["tpcb-like ", "select-only "] {
        assert!(said.lines().any(|l| l.starts_with(name)), "{name}: {said}");
    }
    support::assert_server_agrees(&s["server"][0], 0);
}

#[test]
fn deterministic_functions_equal_pgbench_and_mistakes_are_named() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "par");
    let dsn = inst.dsn("tidebench");
    support::psql(
        &inst,
        "tidebench",
        "create table parity (tool text, v text)",
    );
    // Fixed inputs through every deterministic function and operator; pgbench and tidebench
    // each write one row per transaction, which must all be the same text.
    let file = script(
        &home,
        "parity.sql",
        "\\set a hash_murmur2(12345, 678)\n\
         \\set b hash_fnv1a(-7, 99) + hash(1, 2)\n\
         \\set c permute(3, 10, 42) * 100 + permute(999, 1000, -5)\n\
         \\set d abs(-5) + greatest(1, 7, 3) - least(4, 2) + mod(-7, 3) + int(7.9) + 5 % 3 + (1 << 4) + (6 & 3) + (6 | 1) + (6 # 3) + ~5\n\
         \\set e double(7) / 2 + sqrt(2.0) + pow(2, 10) + ln(exp(1.5)) + pi()\n\
         \\set f CASE WHEN :a > 0 THEN 1 WHEN :a < 0 THEN -1 ELSE 0 END\n\
         \\set g (NULL IS NULL) AND NOT (1 > 2) OR false\n\
         \\set h 9223372036854775807 / -1 + 1 < 0\n\
         \\set i hash(12345) + permute(5, 100)\n\
         INSERT INTO parity VALUES (':tool', ':a :b :c :d :e :f :g :h :i :random_seed :default_seed');\n",
    );
    let o = std::process::Command::new(support::pgbench_path(&inst))
        .args([
            "-n",
            "-t",
            "3",
            "-M",
            "simple",
            "-D",
            "tool=pgbench",
            "--random-seed=7",
            "-f",
            &file,
            &dsn,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "pgbench: {}", text(&o));
    let out = home.path().join("res-parity");
    let o = run_script(
        &home,
        &dsn,
        &out,
        &[
            "-f",
            &file,
            "-D",
            "tool=tidebench",
            "-M",
            "simple",
            "--random-seed",
            "7",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let rows = support::psql(
        &inst,
        "tidebench",
        "select tool, count(distinct v), min(v) from parity group by tool order by tool",
    );
    let rows: Vec<Vec<&str>> = rows.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0][0], "pgbench");
    assert_eq!(rows[1][0], "tidebench");
    assert_eq!((rows[0][1], rows[1][1]), ("1", "1"), "{rows:?}");
    assert_eq!(rows[0][2], rows[1][2], "pgbench vs tidebench values");
    assert!(
        !rows[0][2].contains(':') && rows[0][2].split(' ').count() == 11,
        "{rows:?}"
    );

    // debug() prints what pgbench prints, on stderr.
    let dbg = script(
        &home,
        "dbg.sql",
        "\\set d debug(2 * 3)\n\\set e debug(1.5) * 2\n\\set f debug(NULL IS NULL)\nSELECT 1;\n",
    );
    let o = std::process::Command::new(support::pgbench_path(&inst))
        .args(["-n", "-t", "1", "-f", &dbg, &dsn])
        .output()
        .unwrap();
    assert!(o.status.success(), "pgbench: {}", text(&o));
    let theirs: Vec<String> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("debug("))
        .map(str::to_string)
        .collect();
    assert_eq!(theirs.len(), 3, "{}", text(&o));
    let o = run_script(&home, &dsn, &home.path().join("res-dbg"), &["-f", &dbg]);
    assert!(o.status.success(), "{}", text(&o));
    let ours = String::from_utf8_lossy(&o.stderr);
    for line in &theirs {
        assert!(
            ours.lines().any(|l| l == line),
            "{line} not in {ours:.2000}"
        );
    }

    // A parse error: exit 2 before connecting, with file:line:column, the line and a caret.
    let bad = script(&home, "bad.sql", "SELECT 1;\n\\set x 1 + nosuch(2)\n");
    let o = run_script(
        &home,
        "host=/nonexistent port=1 dbname=x",
        &home.path().join("res-bad"),
        &["-f", &bad],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let said = text(&o);
    // pgbench's caret goes under the last letter of the token it stopped at.
    assert!(said.contains("bad.sql:2:17:"), "{said}");
    assert!(
        said.contains("\\set x 1 + nosuch(2)\n") && said.contains(&format!("{}^", " ".repeat(16))),
        "{said}"
    );

    // A runtime error ends its client, as pgbench's: counted and shown, while the run and
    // the other client go on; the run exits 2 as pgbench's does (issue 38).
    let zero = script(
        &home,
        "zero.sql",
        "\\if :client_id = 0\n\\set y 10 / 0\n\\endif\nSELECT 1;\n",
    );
    let out = home.path().join("res-zero");
    let o = run_script(&home, &dsn, &out, &["-f", &zero, "-c", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("client 0 aborted") && text(&o).contains("division by zero"),
        "{}",
        text(&o)
    );
    let s = support::summary(&out);
    assert!(
        s["totals"]["committed"].as_i64().unwrap() > 100,
        "{}",
        s["totals"]
    );
    assert_eq!(s["totals"]["failed"].as_i64(), Some(1), "{}", s["totals"]);
    assert_eq!(
        s["totals"]["failed_by_class"]["other"].as_i64(),
        Some(1),
        "{}",
        s["totals"]
    );
    let aborted = s["aborted_clients"].as_array().expect("aborted_clients");
    assert_eq!(aborted.len(), 1, "{aborted:?}");
    assert_eq!(aborted[0]["client"].as_u64(), Some(0), "{aborted:?}");
    assert!(
        aborted[0]["message"]
            .as_str()
            .unwrap()
            .contains("command 2 (set): division by zero"),
        "{aborted:?}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Aborted clients"));
}

#[test]
fn tenants_scripts_hold_their_shares_per_phase_and_a_phase_mix_names_scripts() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "ten");
    // Each script is one server transaction, so the server's commits must equal the run's.
    std::fs::create_dir_all(home.path().join("sql")).unwrap();
    script(
        &home,
        "sql/a.sql",
        "\\set x random(1, 1000)\nSELECT :x + 1;\n",
    );
    script(
        &home,
        "sql/b1.sql",
        "\\set y random(1, 10)\nSELECT :y * 2;\n",
    );
    script(&home, "sql/b2.sql", "SELECT :client_id;\n");
    // Script paths in a run file are relative to the file.
    let cfg = "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
        [[group]]\nname = \"A\"\nworkload = \"script\"\nfile = [\"sql/a.sql\"]\ninstance = \"ten\"\n\
        [[group]]\nname = \"B\"\nworkload = \"script\"\nfile = [\"sql/b1.sql@3\", \"sql/b2.sql\"]\ninstance = \"ten\"\n\
        [[phase]]\nduration = \"3s\"\nshares = { A = 25, B = 75 }\n\
        [[phase]]\nduration = \"3s\"\nshares = { A = 75, B = 25 }\nmix = { b2 = 1, b1 = 0, a = 1 }\n";
    let cfg_path = home.path().join("tenants.toml");
    std::fs::write(&cfg_path, cfg).unwrap();
    let o = support::run_tidebench(&home, &["prepare", cfg_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = home.path().join("res-tenants");
    let o = support::tidebench(&home)
        .current_dir("/")
        .args([
            "run",
            cfg_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    for phase in s["phases"].as_array().unwrap() {
        for g in phase["groups"].as_array().unwrap() {
            let (want, got) = (
                g["configured_share"].as_f64().unwrap(),
                g["achieved_share"].as_f64().unwrap(),
            );
            assert!(
                (want - got).abs() <= 1.0,
                "phase {} group {}: {got} vs {want}",
                phase["phase"],
                g["group"]
            );
        }
    }
    let server = s["server"].as_array().unwrap();
    assert_eq!(server.len(), 2, "{s}");
    for d in server {
        support::assert_server_agrees(d, 0);
    }
    // Phase 2's mix ran only b2 in group B; phase 1 ran both of its scripts.
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (phase, ty, count) = (col("phase"), col("txn_type"), col("count"));
    let mut per = std::collections::BTreeMap::<(String, String), u64>::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        *per.entry((f[phase].to_string(), f[ty].to_string()))
            .or_default() += f[count].parse::<u64>().unwrap();
    }
    let got = |p: &str, t: &str| {
        per.get(&(p.to_string(), t.to_string()))
            .copied()
            .unwrap_or(0)
    };
    assert!(got("p1", "b1") > 0 && got("p1", "b2") > 0, "{per:?}");
    assert!(got("p2", "b2") > 0 && got("p2", "b1") == 0, "{per:?}");
}

#[test]
fn a_sweep_over_clients_runs_a_script() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "swp");
    let file = script(&home, "probe.sql", "\\set x random(1, 100)\nSELECT :x;\n");
    let out = home.path().join("sweep");
    let o = support::run_tidebench(
        &home,
        &[
            "sweep",
            "-f",
            &file,
            "--vary",
            "clients=1,2",
            "-T",
            "1s",
            "-P",
            "0",
            "--sample",
            "0",
            "--target",
            "instance:swp",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let e = support::experiment(&out);
    assert_eq!(e["complete"], true, "{e}");
    let runs: Vec<&serde_json::Value> = e["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["runs"].as_array().unwrap())
        .collect();
    assert_eq!(runs.len(), 2);
    for r in runs {
        let s = support::summary(&out.join(r["dir"].as_str().unwrap()));
        let row = &s["by_target_and_type"][0];
        assert_eq!(row["txn_type"], "probe", "{row}");
        assert!(row["committed"].as_i64().unwrap() > 0, "{row}");
    }
}

#[test]
fn a_script_on_the_dss_role_runs_only_on_the_dss_database() {
    let home = support::temp_home();
    let _inst = support::start_instance(&home, "sr");
    script(&home, "o.sql", "SELECT current_database();\n");
    script(
        &home,
        "d.sql",
        "\\set n random(1, 5)\nSELECT count(*) FROM generate_series(1, :n);\n",
    );
    let cfg = "clients = 2\nprogress = \"0\"\npoll = \"0\"\ninterval = \"1s\"\n\
        [[group]]\nname = \"R\"\nworkload = \"script\"\n\
        scripts = [{ file = \"o.sql\", weight = 3 }, { file = \"d.sql\", role = \"dss\" }]\n\
        [[group.set]]\noltp = \"instance:sr/r_oltp\"\ndss = \"instance:sr/r_dss\"\n\
        [[phase]]\nduration = \"2s\"\nshares = { R = 100 }\n";
    let cfg_path = home.path().join("roles.toml");
    std::fs::write(&cfg_path, cfg).unwrap();
    let o = support::run_tidebench(&home, &["prepare", cfg_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = home.path().join("res-roles");
    let o = support::run_tidebench(
        &home,
        &[
            "run",
            cfg_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    let rows = s["by_target_and_type"].as_array().unwrap();
    let on = |txn: &str| -> Vec<(String, String)> {
        rows.iter()
            .filter(|r| r["txn_type"] == txn)
            .map(|r| {
                (
                    r["target"].as_str().unwrap().to_string(),
                    r["role"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        on("o"),
        [("instance:sr/r_oltp".to_string(), "oltp".to_string())],
        "{rows:?}"
    );
    assert_eq!(
        on("d"),
        [("instance:sr/r_dss".to_string(), "dss".to_string())],
        "{rows:?}"
    );
    let server = s["server"].as_array().unwrap();
    assert_eq!(server.len(), 2, "{s}");
    for d in server {
        support::assert_server_agrees(d, 0);
        assert!(d["client_committed"].as_i64().unwrap() > 0, "{d}");
    }
}

#[test]
fn pipelines_send_statements_together_and_a_sync_bounds_an_error() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "pipe");
    let dsn = inst.dsn("tidebench");
    support::psql(
        &inst,
        "tidebench",
        "create table pipe (proto text, k int, step text); create table pipe_err (v int)",
    );
    // Both statements of a pipelined transaction land, in both protocols that pipeline.
    let file = script(
        &home,
        "pipe.sql",
        "\\set k random(1, 1000000)\n\
         \\startpipeline\n\
         BEGIN;\n\
         INSERT INTO pipe VALUES (:proto, :k, 'a');\n\
         \\set k2 :k + 0\n\
         INSERT INTO pipe VALUES (:proto, :k2, 'b');\n\
         END;\n\
         \\endpipeline\n",
    );
    for proto in ["extended", "prepared"] {
        let out = home.path().join(format!("res-{proto}"));
        let define = format!("proto={proto}");
        let o = run_script(
            &home,
            &dsn,
            &out,
            &["-f", &file, "-M", proto, "-D", &define],
        );
        assert!(o.status.success(), "{proto}: {}", text(&o));
        let s = support::summary(&out);
        let committed = support::committed_over_run(&s);
        assert!(committed > 20, "{proto}: {}", s["totals"]);
        assert_eq!(s["totals"]["failed"].as_i64(), Some(0), "{}", s["totals"]);
        let rows = support::psql(
            &inst,
            "tidebench",
            &format!(
                "select count(*) filter (where step = 'a'), count(*) filter (where step = 'b'), \
                 count(distinct (k, step)) from pipe where proto = '{proto}'"
            ),
        );
        let counts: Vec<i64> = rows.trim().split('|').map(|c| c.parse().unwrap()).collect();
        assert_eq!(counts[0], counts[1], "{proto}: {rows}");
        assert!(counts[0] >= committed, "{proto}: {rows} vs {committed}");
        support::assert_server_agrees(&s["server"][0], 0);
    }

    // An error skips the rest of its part of the pipeline (and rolls back the statements of
    // that implicit transaction); the part after a \syncpipeline still runs.
    let file = script(
        &home,
        "pipe_err.sql",
        "\\startpipeline\n\
         INSERT INTO pipe_err VALUES (1);\n\
         SELECT 1 / 0;\n\
         INSERT INTO pipe_err VALUES (2);\n\
         \\syncpipeline\n\
         INSERT INTO pipe_err VALUES (3);\n\
         \\endpipeline\n",
    );
    let out = home.path().join("res-err");
    // Told to go on after errors (pgbench 15 would end the client at the first: issue 38),
    // so the pipeline runs again and again.
    let o = run_script(
        &home,
        &dsn,
        &out,
        &["-f", &file, "-M", "extended", "--continue-on-error"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = support::summary(&out);
    let failed = s["totals"]["failed_by_class"]["other"].as_i64().unwrap();
    assert!(failed > 20, "{}", s["totals"]);
    assert!(
        s.get("aborted_clients").is_none(),
        "with --continue-on-error a server error ends no client: {s}"
    );
    assert_eq!(s["errors"][0]["sqlstate"], "22012", "{}", s["errors"]);
    let rows = support::psql(
        &inst,
        "tidebench",
        "select coalesce(sum((v = 1)::int), 0), coalesce(sum((v = 2)::int), 0), \
         coalesce(sum((v = 3)::int), 0) from pipe_err",
    );
    let counts: Vec<i64> = rows.trim().split('|').map(|c| c.parse().unwrap()).collect();
    assert_eq!((counts[0], counts[1]), (0, 0), "{rows}");
    // Every execution's third insert committed; one still in flight at the end may add one.
    assert!(
        counts[2] >= failed && counts[2] <= failed + 1,
        "{rows} vs {failed} failed"
    );

    // The simple protocol cannot pipeline: refused before any client runs, with the fix.
    let o = run_script(
        &home,
        &dsn,
        &home.path().join("res-simple"),
        &["-f", &file, "-M", "simple"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("simple protocol") && text(&o).contains("-M extended"),
        "{}",
        text(&o)
    );
}
