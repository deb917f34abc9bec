//! The draws themselves against pgbench 15's: with the same `--random-seed`, a client's
//! `random*()` values and a thread's script choices must be pgbench's very numbers, and the
//! built-in workloads' `aid`/`bid`/`tid`/`delta` must be what the script engine draws for the
//! built-in scripts' `\set` lines. Expected values are what PostgreSQL 15's pgbench printed
//! through `debug()` (`pgbench -n -f ... --random-seed=7 -t N`).

use super::tests::TestEnv;
use super::Value;
use crate::workload::pg_prng::PgbenchSeeds;
use crate::workload::pgbench::{Pgbench, SIMPLE_UPDATE_TXN, TPCB_TXN};
use crate::workload::script::builtin::BUILTINS;

/// The values of `exprs`, evaluated in order `transactions` times by one client whose state
/// is client `client`'s of a run seeded with `seed`.
fn drawn(seed: u64, client: u32, exprs: &[&str], transactions: usize) -> Vec<i64> {
    let mut env = TestEnv::new();
    env.rng = PgbenchSeeds::new(seed, client + 1, 1).client(client);
    env.set("scale", Value::Int(3));
    let mut out = Vec::new();
    for _ in 0..transactions {
        for e in exprs {
            match env.eval(e) {
                Ok(Value::Int(v)) => out.push(v),
                other => panic!("{e}: {other:?}"),
            }
        }
    }
    out
}

#[test]
fn random_functions_draw_pgbench_15_s_values_for_the_same_seed() {
    let exprs = [
        "random(1, 1000000)",
        "random_exponential(1, 1000, 2.5)",
        "random_gaussian(1, 1000, 4)",
        "random_zipfian(1, 1000, 1.5)",
    ];
    // pgbench 15, --random-seed=7, client 0, three transactions of the four \set lines.
    assert_eq!(
        drawn(7, 0, &exprs, 3),
        [869439, 158, 514, 1, 403942, 164, 448, 4, 901179, 624, 267, 4]
    );
    // Clients 1 and 2 of the same run: their first `random(1, 1000000)`.
    assert_eq!(drawn(7, 1, &exprs[..1], 1), [467069]);
    assert_eq!(drawn(7, 2, &exprs[..1], 1), [174739]);
}

#[test]
fn script_choice_draws_pgbench_15_s_sequence() {
    // pgbench 15 -f a.sql@1 -f b.sql@3 -c 1 -j 1 -t 16 --random-seed=7: the scripts run.
    let pgbench = [0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0];
    let mut choose = PgbenchSeeds::new(7, 1, 1).client_choose(0);
    let ours: Vec<i64> = (0..16)
        .map(|_| {
            let pick = choose.getrand(0, 3);
            i64::from(pick >= 1)
        })
        .collect();
    assert_eq!(ours, pgbench);
}

#[test]
fn builtin_draws_equal_the_script_engine_s_for_the_builtin_scripts() {
    for (script, name) in [
        (TPCB_TXN, "tpcb-like"),
        (SIMPLE_UPDATE_TXN, "simple-update"),
    ] {
        let text = BUILTINS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .unwrap_or_default();
        let exprs: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("\\set "))
            .map(|l| l.split_once(' ').map_or("", |(_, e)| e))
            .collect();
        assert_eq!(exprs.len(), 4, "{name}");
        let engine = drawn(11, 2, &exprs, 50);
        let w = Pgbench::new(script, 3);
        let mut state = PgbenchSeeds::new(11, 3, 1).client(2);
        let builtin: Vec<i64> = (0..50)
            .flat_map(|_| {
                let a = w.draw_args(script, &mut state);
                [a.aid, a.bid, a.tid, a.delta]
            })
            .collect();
        assert_eq!(engine, builtin, "{name}");
    }
}
