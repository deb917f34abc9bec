//! The pgbench workloads against real PostgreSQL 15: `prepare` leaves the rows and schema
//! `pgbench -i` would, pgbench itself runs on them, `check_ready` accepts pgbench's own data,
//! reloading needs `--force`, an interrupted load leaves nothing that looks loaded, and the
//! three scripts run through pgwire.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use tidebench::config::{PreparePlan, TargetSpec, WorkloadName};
use tidebench::event::{Discard, Event, Recorded, Sink};
use tidebench::instance::Instance;
use tidebench::target::ResolvedTarget;
use tidebench::workload::pgbench::{self, Pgbench};
use tidebench::workload::{Kind, TxnEnd, WorkloadError};

use crate::support::{psql, start_instance, temp_home};

/// A sink for loads whose events the test does not read.
fn quiet() -> Arc<dyn Sink> {
    Arc::new(Discard)
}

fn target(inst: &Instance, db: &str) -> ResolvedTarget {
    ResolvedTarget {
        label: format!("instance:{}/{db}", inst.name),
        params: inst.connect_params(db),
        notes: Vec::new(),
        choice: Default::default(),
        follow: Vec::new(),
    }
}

fn plan(inst: &Instance, db: &str, scale: u32, jobs: u32, force: bool) -> PreparePlan {
    PreparePlan {
        workload: WorkloadName::new("tpcb"),
        scale,
        target: TargetSpec::parse(&format!("instance:{}/{db}", inst.name)).unwrap(),
        jobs,
        force,
        options: Default::default(),
    }
}

fn create_db(inst: &Instance, db: &str) {
    psql(inst, "postgres", &format!("create database {db}"));
}

fn sql(inst: &Instance, db: &str, query: &str) -> String {
    psql(inst, db, query).trim().to_string()
}

/// Runs the instance's own pgbench; panics with its output when it fails.
fn pgbench(inst: &Instance, db: &str, args: &[&str]) {
    let out = Command::new(inst.bin_dir().join("pgbench"))
        .arg("-h")
        .arg(&inst.socket_dir)
        .args(["-p", &inst.port.to_string(), "-U", &inst.superuser])
        .args(args)
        .arg(db)
        .output()
        .expect("run pgbench");
    assert!(
        out.status.success(),
        "pgbench {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn check_ready(inst: &Instance, db: &str) -> Result<u32, WorkloadError> {
    let client = target(inst, db).connect_tokio().await.unwrap();
    pgbench::TPCB
        .check_ready(&Default::default(), &client)
        .await
        .map(|loaded| loaded.scale)
}

/// Row counts and pgbench's row rules (bid from the key, zero balances, filler NULL in
/// branches and tellers and 84 blanks in accounts), as one line to compare.
const ROW_RULES: &str = "select
    (select count(*) from pgbench_branches),
    (select count(*) from pgbench_tellers),
    (select count(*) from pgbench_accounts),
    (select count(*) from pgbench_history),
    (select count(*) from pgbench_branches where bbalance <> 0 or filler is not null),
    (select count(*) from pgbench_tellers
       where bid <> (tid - 1) / 10 + 1 or tbalance <> 0 or filler is not null),
    (select count(*) from pgbench_accounts
       where bid <> (aid - 1) / 100000 + 1 or abalance <> 0 or octet_length(filler) <> 84
          or filler <> ''),
    (select min(aid) || '-' || max(aid) || '-' || count(distinct aid) from pgbench_accounts)";

/// Statistics are there and every page of accounts is all-visible, as after `pgbench -i`.
/// VACUUM marked (nearly) every page all-visible; a COPY alone leaves none. Not all of them:
/// under a loaded machine a page or two may still be pending when the count is read (the
/// full suite once saw `f` for equality, never alone).
const ALL_VISIBLE: &str = "select reltuples, relallvisible * 10 >= relpages * 9 from pg_class
  where relname = 'pgbench_accounts'";

/// Nothing half-loaded is left behind: the staging schema is gone.
const STAGING_LEFT: &str = "select count(*) from pg_namespace where nspname = 'tidebench_staging'";

#[tokio::test]
async fn prepare_loads_pgbench_rows_that_pgbench_runs_on() {
    let home = temp_home();
    let inst = start_instance(&home, "pgb-rows");
    create_db(&inst, "tb");

    let recorded = Recorded::new();
    let events: Arc<dyn Sink> = recorded.clone();
    pgbench::TPCB
        .prepare(
            &plan(&inst, "tb", 1, 2, false),
            &target(&inst, "tb"),
            &events,
        )
        .await
        .unwrap();
    // The load told its story as events, nothing printed: start, steps, stop, summary.
    let events = recorded.events();
    assert!(
        matches!(
            events.first(),
            Some(Event::LoadStarted { total: 100_011, .. })
        ),
        "{events:?}"
    );
    let steps: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::LoadStep(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(steps, ["vacuum analyze ...", "creating primary keys ..."]);
    match events.as_slice() {
        [.., Event::LoadStopped, Event::LoadFinished(s)] => {
            assert_eq!((s.rows, s.what.as_str()), (100_011, "pgbench scale 1"));
            assert_eq!(s.steps.len(), 3, "{s:?}");
        }
        other => panic!("a load ends with LoadStopped, LoadFinished: {other:?}"),
    }

    assert_eq!(
        sql(&inst, "tb", ROW_RULES),
        "1|10|100000|0|0|0|0|1-100000-100000"
    );
    assert_eq!(sql(&inst, "tb", STAGING_LEFT), "0");
    // VACUUM ANALYZE ran.
    assert_eq!(sql(&inst, "tb", ALL_VISIBLE), "100000|t");
    assert_eq!(check_ready(&inst, "tb").await.unwrap(), 1);

    // pgbench's own pre-run steps (vacuum, truncate history) and both scripts work on it.
    pgbench(&inst, "tb", &["-S", "-t", "50"]);
    pgbench(&inst, "tb", &["-n", "-t", "20"]);
    // TPC-B bookkeeping: every delta went into one account, teller, branch and history row.
    assert_eq!(
        sql(
            &inst,
            "tb",
            "select (select count(*) from pgbench_history),
                    (select sum(delta) from pgbench_history) = (select sum(abalance) from pgbench_accounts),
                    (select sum(delta) from pgbench_history) = (select sum(tbalance) from pgbench_tellers),
                    (select sum(delta) from pgbench_history) = (select sum(bbalance) from pgbench_branches)"
        ),
        "20|t|t|t"
    );
}

/// Tables, columns, storage options, indexes and constraints of the public schema.
const SCHEMA: &str = "select c.relname, c.relkind, c.relpersistence,
       coalesce(array_to_string(c.reloptions, ','), '-'),
       (select string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                          || case when a.attnotnull then ' not null' else '' end, ', ' order by a.attnum)
          from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped),
       coalesce((select pg_get_indexdef(c.oid) where c.relkind = 'i'), '-'),
       coalesce((select string_agg(conname || ' ' || pg_get_constraintdef(k.oid), ', ')
                   from pg_constraint k where k.conrelid = c.oid), '-')
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
 where n.nspname = 'public'
 order by c.relname";

/// A digest of every row, to compare two databases' contents.
const CONTENT: &str = "select
    (select md5(string_agg(aid || ',' || bid || ',' || abalance || ',' || octet_length(filler), ';' order by aid))
       from pgbench_accounts),
    (select md5(string_agg(tid || ',' || bid || ',' || tbalance || ',' || coalesce(filler, 'NULL'), ';' order by tid))
       from pgbench_tellers),
    (select md5(string_agg(bid || ',' || bbalance || ',' || coalesce(filler, 'NULL'), ';' order by bid))
       from pgbench_branches),
    (select count(*) from pgbench_history)";

#[tokio::test]
async fn schema_and_rows_match_pgbench_init_and_check_ready_accepts_pgbench_data() {
    let home = temp_home();
    let inst = start_instance(&home, "pgb-schema");
    create_db(&inst, "ref");
    create_db(&inst, "tb");
    pgbench(&inst, "ref", &["-i", "-q", "-s", "2"]);
    pgbench::TPCB
        .prepare(
            &plan(&inst, "tb", 2, 3, false),
            &target(&inst, "tb"),
            &quiet(),
        )
        .await
        .unwrap();

    let expected = sql(&inst, "ref", SCHEMA);
    assert!(expected.contains("pgbench_accounts_pkey"), "{expected}");
    assert_eq!(sql(&inst, "tb", SCHEMA), expected);
    assert_eq!(sql(&inst, "tb", CONTENT), sql(&inst, "ref", CONTENT));

    assert_eq!(check_ready(&inst, "ref").await.unwrap(), 2);

    create_db(&inst, "empty");
    match check_ready(&inst, "empty").await {
        Err(WorkloadError::NotPrepared { fix, .. }) => {
            assert!(fix.contains("tidebench prepare"), "{fix}")
        }
        other => panic!("expected NotPrepared, got {other:?}"),
    }
    psql(&inst, "ref", "delete from pgbench_branches");
    assert!(matches!(
        check_ready(&inst, "ref").await,
        Err(WorkloadError::NotPrepared { .. })
    ));
    psql(&inst, "ref", "drop table pgbench_history");
    match check_ready(&inst, "ref").await {
        Err(WorkloadError::NotPrepared { problem, .. }) => {
            assert!(problem.contains("pgbench_history"), "{problem}")
        }
        other => panic!("expected NotPrepared, got {other:?}"),
    }
}

#[tokio::test]
async fn reloading_needs_force_and_replaces_tables_whole() {
    let home = temp_home();
    let inst = start_instance(&home, "pgb-force");
    create_db(&inst, "tb");
    let t = target(&inst, "tb");

    // One job: the COPY FREEZE path.
    pgbench::TPCB
        .prepare(&plan(&inst, "tb", 1, 1, false), &t, &quiet())
        .await
        .unwrap();
    assert_eq!(sql(&inst, "tb", ALL_VISIBLE), "100000|t");
    match pgbench::TPCB
        .prepare(&plan(&inst, "tb", 1, 1, false), &t, &quiet())
        .await
    {
        Err(e @ WorkloadError::AlreadyPrepared { .. }) => {
            assert!(e.to_string().contains("--force"), "{e}")
        }
        other => panic!("expected AlreadyPrepared, got {other:?}"),
    }

    // Leftovers: changed data, and the staging schema of an interrupted load.
    psql(
        &inst,
        "tb",
        "update pgbench_accounts set abalance = 7 where aid = 1;
         create schema tidebench_staging;
         create table tidebench_staging.pgbench_accounts (junk int)",
    );
    pgbench::TPCB
        .prepare(&plan(&inst, "tb", 2, 3, true), &t, &quiet())
        .await
        .unwrap();
    assert_eq!(
        sql(&inst, "tb", ROW_RULES),
        "2|20|200000|0|0|0|0|1-200000-200000"
    );
    assert_eq!(sql(&inst, "tb", STAGING_LEFT), "0");
    assert_eq!(
        sql(
            &inst,
            "tb",
            "select string_agg(conname, ',' order by conname) from pg_constraint
              where conrelid in ('pgbench_accounts'::regclass, 'pgbench_tellers'::regclass,
                                 'pgbench_branches'::regclass)"
        ),
        "pgbench_accounts_pkey,pgbench_branches_pkey,pgbench_tellers_pkey"
    );
    assert_eq!(check_ready(&inst, "tb").await.unwrap(), 2);
}

#[tokio::test]
async fn interrupted_prepare_leaves_no_table_that_looks_loaded() {
    let home = temp_home();
    let inst = start_instance(&home, "pgb-cancel");
    create_db(&inst, "tb");
    let t = target(&inst, "tb");

    // Dropping the future is what Ctrl-C does to a running prepare.
    let cut = tokio::time::timeout(
        Duration::from_millis(150),
        pgbench::TPCB.prepare(&plan(&inst, "tb", 5, 2, false), &t, &quiet()),
    )
    .await;
    assert!(cut.is_err(), "scale 5 should take longer than 150 ms");
    assert_eq!(
        sql(
            &inst,
            "tb",
            "select count(*) from pg_class where relname in
               ('pgbench_accounts', 'pgbench_branches', 'pgbench_tellers', 'pgbench_history')
               and relnamespace = 'public'::regnamespace"
        ),
        "0"
    );
    assert!(matches!(
        check_ready(&inst, "tb").await,
        Err(WorkloadError::NotPrepared { .. })
    ));

    // No --force needed: only staging tables were left, and they are cleaned up.
    pgbench::TPCB
        .prepare(&plan(&inst, "tb", 1, 2, false), &t, &quiet())
        .await
        .unwrap();
    assert_eq!(sql(&inst, "tb", STAGING_LEFT), "0");
    assert_eq!(check_ready(&inst, "tb").await.unwrap(), 1);
}

/// History rows and the sums of the three balance columns.
const TOTALS: &str = "select (select count(*) from pgbench_history),
    (select sum(abalance) from pgbench_accounts), (select sum(tbalance) from pgbench_tellers),
    (select sum(bbalance) from pgbench_branches)";

fn totals(inst: &Instance) -> [i64; 4] {
    let line = sql(inst, "tb", TOTALS);
    let v: Vec<i64> = line.split('|').map(|x| x.parse().unwrap()).collect();
    [v[0], v[1], v[2], v[3]]
}

#[test]
fn each_script_runs_through_pgwire_on_every_protocol() {
    let home = temp_home();
    let inst = start_instance(&home, "pgb-wire");
    create_db(&inst, "tb");
    crate::support::block_on(pgbench::TPCB.prepare(
        &plan(&inst, "tb", 1, 2, false),
        &target(&inst, "tb"),
        &quiet(),
    ))
    .unwrap();
    // pgwire sessions live on a driver thread's loop, as in a run.
    crate::support::on_driver_loop(async {
        let mut conn = pgwire::Connection::connect(&inst.connect_params("tb"))
            .await
            .unwrap();
        let mut rng = tidebench::workload::Rng::seed_from_u64(7);
        let mut draws = tidebench::workload::pg_prng::PgPrng::seeded(7);

        for protocol in [
            pgwire::Protocol::Simple,
            pgwire::Protocol::Extended,
            pgwire::Protocol::Prepared,
        ] {
            // Twice each, so Prepared reuses its statements.
            for _ in 0..2 {
                for script in [
                    pgbench::TPCB_TXN,
                    pgbench::SIMPLE_UPDATE_TXN,
                    pgbench::SELECT_ONLY_TXN,
                ] {
                    let w = Pgbench::new(script, 1);
                    let name = w.name();
                    let txn = w.draw_txn(&mut rng);
                    let a = w.draw_args(txn, &mut draws);
                    let before = totals(&inst);
                    let end = w.execute(&mut conn, protocol, txn, &a).await;
                    assert_eq!(end.unwrap(), TxnEnd::Committed, "{name:?} on {protocol:?}");
                    assert_eq!(conn.tx_status(), pgwire::TxStatus::Idle);
                    let after = totals(&inst);
                    let expected = match script {
                        pgbench::TPCB_TXN => [
                            before[0] + 1,
                            before[1] + a.delta,
                            before[2] + a.delta,
                            before[3] + a.delta,
                        ],
                        pgbench::SIMPLE_UPDATE_TXN => {
                            [before[0] + 1, before[1] + a.delta, before[2], before[3]]
                        }
                        _ => before,
                    };
                    assert_eq!(after, expected, "{name:?} on {protocol:?} with {a:?}");
                    if script != pgbench::SELECT_ONLY_TXN {
                        // The history row carries the drawn values, as pgbench's INSERT does.
                        let q = format!(
                        "select count(*) from pgbench_history where tid = {} and bid = {} and aid = {} and delta = {}",
                        a.tid, a.bid, a.aid, a.delta
                    );
                        assert_ne!(sql(&inst, "tb", &q), "0", "{name:?} on {protocol:?}");
                    }
                }
            }
        }
        conn.close().await;
    });
}
