//! `tidebench prepare -w tpcb` with `pgbench -i`'s options (issue 38) against pgbench 15 as
//! the referee: for each option set, pgbench loads one database and tidebench another on the
//! same server, and their catalogs (tables, persistence, fill factors, partitions and bounds,
//! indexes, constraints, tablespaces, statistics) and rows must be the same; pgbench then runs
//! on tidebench's tables. Step lists that run in place follow pgbench step by step, and bad
//! values are refused as pgbench refuses them (exit 2 here, 1 there).

use std::os::unix::fs::MetadataExt;
use std::process::{Command, Output};

use tidebench::instance::Instance;

use crate::support::{self, output_text, pgbench_path, psql, run_tidebench, TempHome};

/// Every relation of the public schema: kind, persistence, options, tablespace, partition
/// bound, index definition, constraints, and (for tables) the row estimate the vacuum step
/// leaves (-1 without one).
const CATALOG: &str = "select c.relname, c.relkind, c.relpersistence,
       coalesce(array_to_string(c.reloptions, ','), '-'), coalesce(t.spcname, '-'),
       coalesce(pg_get_expr(c.relpartbound, c.oid), '-'),
       coalesce((select pg_get_indexdef(c.oid) where c.relkind in ('i', 'I')), '-'),
       coalesce((select string_agg(conname || ' ' || pg_get_constraintdef(k.oid), ', '
                                   order by conname)
                   from pg_constraint k where k.conrelid = c.oid), '-'),
       case when c.relkind = 'r' then c.reltuples::text else '-' end,
       (select string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                          || case when a.attnotnull then ' not null' else '' end, ', '
                          order by a.attnum)
          from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped)
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  left join pg_tablespace t on t.oid = c.reltablespace
 where n.nspname = 'public'
 order by c.relname";

/// Row counts, balance sums and a digest of every account, teller and branch.
const ROWS: &str = "select
    (select count(*) || ' ' || coalesce(sum(abalance), 0) || ' ' ||
            coalesce(md5(string_agg(aid || ',' || bid || ',' || abalance || ',' || filler, ';'
                                    order by aid)), '-')
       from pgbench_accounts),
    (select count(*) || ' ' || coalesce(sum(tbalance), 0) || ' ' ||
            coalesce(md5(string_agg(tid || ',' || bid || ',' || coalesce(filler, 'NULL'), ';'
                                    order by tid)), '-')
       from pgbench_tellers),
    (select count(*) || ' ' || coalesce(sum(bbalance), 0) from pgbench_branches),
    (select count(*) from pgbench_history)";

/// What the two databases are compared on.
fn state(inst: &Instance, db: &str) -> String {
    format!(
        "{}\n{}",
        psql(inst, db, CATALOG).trim(),
        psql(inst, db, ROWS).trim()
    )
}

/// The instance's pgbench with `args` on `db`.
fn pgbench(inst: &Instance, db: &str, args: &[&str]) -> Output {
    Command::new(pgbench_path(inst))
        .arg("-h")
        .arg(&inst.socket_dir)
        .args(["-p", &inst.port.to_string(), "-U", &inst.superuser])
        .args(args)
        .arg(db)
        .output()
        .expect("run pgbench")
}

fn pgbench_ok(inst: &Instance, db: &str, args: &[&str]) {
    let o = pgbench(inst, db, args);
    assert!(o.status.success(), "pgbench {args:?}: {}", output_text(&o));
}

/// `tidebench prepare -w tpcb --force` with `args` on `db` of `inst`.
fn prepare(home: &TempHome, inst: &Instance, db: &str, args: &[&str]) -> Output {
    let target = format!("instance:{}/{db}", inst.name);
    let mut all = vec!["prepare", "-w", "tpcb", "--target", &target, "--force"];
    all.extend_from_slice(args);
    run_tidebench(home, &all)
}

fn prepare_ok(home: &TempHome, inst: &Instance, db: &str, args: &[&str]) {
    let o = prepare(home, inst, db, args);
    assert!(o.status.success(), "prepare {args:?}: {}", output_text(&o));
}

/// A tablespace in a directory of the test's home, owned by the server's user.
fn tablespace(home: &TempHome, inst: &Instance, name: &str) {
    let dir = home.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    let owner = std::fs::metadata(inst.data_dir()).unwrap();
    std::os::unix::fs::chown(&dir, Some(owner.uid()), Some(owner.gid())).unwrap();
    psql(
        inst,
        "postgres",
        &format!("create tablespace {name} location '{}'", dir.display()),
    );
}

#[test]
fn init_options_make_the_tables_pgbench_makes() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "pgb-init");
    for db in ["ref", "tb"] {
        psql(&inst, "postgres", &format!("create database {db}"));
    }
    tablespace(&home, &inst, "tbs_data");
    tablespace(&home, &inst, "tbs_index");
    let cases: &[&[&str]] = &[
        &["-s", "1"],
        &["-s", "1", "-F", "90"],
        &[
            "-s",
            "2",
            "--partitions",
            "3",
            "--partition-method",
            "range",
        ],
        &["-s", "2", "--partitions", "2", "--partition-method", "hash"],
        &["-s", "1", "--unlogged-tables"],
        &["-s", "2", "--foreign-keys", "--partitions", "2"],
        &["-s", "1", "--foreign-keys"],
        &["-s", "1", "-I", "dtGvp"],
        &["-s", "1", "-I", "dtg"],
        &["-s", "1", "-n", "-q"],
        &[
            "-s",
            "1",
            "--tablespace",
            "tbs_data",
            "--index-tablespace",
            "tbs_index",
            "-F",
            "80",
        ],
    ];
    for (i, args) in cases.iter().enumerate() {
        let mut init = vec!["-i"];
        init.extend_from_slice(args);
        pgbench_ok(&inst, "ref", &init);
        // Both loading paths: one COPY FREEZE session, and parallel sessions.
        let jobs = if i % 2 == 0 { "1" } else { "2" };
        let mut ours = args.to_vec();
        ours.extend_from_slice(&["-j", jobs]);
        prepare_ok(&home, &inst, "tb", &ours);
        let expected = state(&inst, "ref");
        assert!(expected.contains("pgbench_accounts"), "{expected}");
        assert_eq!(state(&inst, "tb"), expected, "pgbench -i {args:?}");
        assert_eq!(
            psql(
                &inst,
                "tb",
                "select count(*) from pg_namespace where nspname = 'tidebench_staging'"
            )
            .trim(),
            "0"
        );
        pgbench_ok(&inst, "tb", &["-S", "-t", "10"]);
    }
    // What the options reach is really there (not only equal to pgbench's).
    let spaces = psql(
        &inst,
        "tb",
        "select string_agg(distinct t.spcname, ',' order by t.spcname)
           from pg_class c join pg_tablespace t on t.oid = c.reltablespace
          where c.relname like 'pgbench%'",
    );
    assert_eq!(spaces.trim(), "tbs_data,tbs_index");
}

#[test]
fn steps_in_place_follow_pgbench_and_bad_values_are_refused_alike() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "pgb-steps");
    for db in ["ref", "tb"] {
        psql(&inst, "postgres", &format!("create database {db}"));
    }
    // pgbench -i run in pieces: tables, then rows, then vacuum and keys, then foreign keys;
    // then G over the loaded rows.
    for steps in ["dt", "g", "vp", "f", "G"] {
        pgbench_ok(&inst, "ref", &["-i", "-s", "2", "-I", steps]);
        prepare_ok(&home, &inst, "tb", &["-s", "2", "-I", steps, "-j", "2"]);
        assert_eq!(state(&inst, "tb"), state(&inst, "ref"), "-I {steps}");
    }
    pgbench_ok(&inst, "tb", &["-S", "-t", "10"]);
    let loaded = state(&inst, "tb");

    // Replacing rows of existing tables needs --force; creating them again needs a drop.
    let target = format!("instance:{}/tb", inst.name);
    for (steps, needle) in [
        ("g", "--force"),
        ("tgvp", "without dropping them first (d)"),
    ] {
        let o = run_tidebench(
            &home,
            &["prepare", "-w", "tpcb", "--target", &target, "-I", steps],
        );
        assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
        assert!(output_text(&o).contains(needle), "{}", output_text(&o));
    }

    // Bad values: pgbench exits 1, tidebench 2; both messages carry the same substance.
    let refusals: &[(&[&str], &[&str])] = &[
        (&["-F", "5"], &["fillfactor", "10", "100"]),
        (
            &["-I", "dtx"],
            &["unrecognized initialization step \"x\"", "dtgGvpf"],
        ),
        (&["-I", ""], &["no initialization steps specified"]),
        (&["--partitions", "-1"], &["partitions", "0", "2147483647"]),
        (&["--partition-method", "foo"], &["foo", "range", "hash"]),
        (
            &["--partition-method", "hash"],
            &["--partition-method requires greater than zero --partitions"],
        ),
    ];
    for (args, needles) in refusals {
        let mut init = vec!["-i"];
        init.extend_from_slice(args);
        let theirs = pgbench(&inst, "ref", &init);
        let ours = prepare(&home, &inst, "tb", args);
        assert_eq!(theirs.status.code(), Some(1), "{}", output_text(&theirs));
        assert_eq!(ours.status.code(), Some(2), "{}", output_text(&ours));
        for needle in *needles {
            for (who, o) in [("pgbench", &theirs), ("tidebench", &ours)] {
                let text = output_text(o);
                assert!(
                    text.contains(needle),
                    "{who} {args:?}: '{needle}' not in {text}"
                );
                assert!(!text.contains("panicked"), "{text}");
            }
        }
    }
    // The refusals left the loaded tables alone.
    assert_eq!(state(&inst, "tb"), loaded);
}
