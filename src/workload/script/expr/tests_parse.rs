//! Parsing checked against pgbench 15: where its errors point and what they say (each
//! offset and message below is what PostgreSQL 15.18's pgbench printed, unless a comment says
//! otherwise), and what a compiled expression holds: interned variables, folded constants,
//! bounded height.

use super::tests::{run, TestEnv};
use super::{parse, Value};

fn parse_error(text: &str) -> (usize, String) {
    match parse(text, &mut |_| 0) {
        Ok(_) => panic!("{text:?} parses"),
        Err(e) => (e.offset, e.message),
    }
}

#[test]
fn parse_errors_point_where_pgbench_points() {
    let syntax = "syntax error";
    let cases: &[(&str, usize, &str)] = &[
        ("foo(1)", 2, "unexpected function name (foo)"),
        ("foo", 2, "unexpected function name (foo)"),
        ("x + 1", 0, "unexpected function name (x)"),
        ("1 + _x(1)", 5, "unexpected function name (_x)"),
        ("andy", 3, "unexpected function name (andy)"),
        ("abs(1,2)", 7, "unexpected number of arguments (abs)"),
        ("hash(1,2,3)", 10, "unexpected number of arguments (hash)"),
        ("hash()", 5, "unexpected number of arguments (hash)"),
        ("permute(1)", 9, "unexpected number of arguments (permute)"),
        ("pi(1)", 4, "unexpected number of arguments (pi)"),
        ("random(1)", 8, "unexpected number of arguments (random)"),
        ("mod(1)", 5, "unexpected number of arguments (mod)"),
        ("least()", 6, "at least one argument expected (least)"),
        ("GREATEST()", 9, "at least one argument expected (greatest)"),
        ("1 @ 2", 2, "unexpected character (@)"),
        (":", 0, "unexpected character (:)"),
        (
            "100000000000000000000",
            20,
            "bigint constant overflow (100000000000000000000)",
        ),
        ("1.0E309", 6, "double constant overflow (1.0E309)"),
        ("1 +", 3, syntax),
        ("1 2", 2, syntax),
        ("", 0, syntax),
        ("not", 3, syntax),
        ("is null", 1, syntax),
        ("1e", 1, syntax),
        ("1.5.3", 4, syntax),
        ("abs", 3, syntax),
        ("abs(", 4, syntax),
        ("abs(1", 5, syntax),
        ("abs(1,)", 6, syntax),
        ("abs(,)", 5, syntax),
        ("pi", 2, syntax),
        ("(1", 2, syntax),
        ("1)", 1, syntax),
        ("1 + 2 )", 6, syntax),
        ("abs(1) abs(2)", 9, syntax),
        ("true false", 9, syntax),
        ("1 ~ 2", 2, syntax),
        ("1 is 5", 5, syntax),
        ("1 is not 5", 9, syntax),
        ("1 isnull 2", 9, syntax),
        ("3 and", 5, syntax),
        ("notnull", 6, syntax),
        ("isnull(1)", 5, syntax),
        ("and(1)", 2, syntax),
        ("1 < 2 < 3", 6, syntax),
        ("1 < 2 = 3", 6, syntax),
        ("1 = 1 = 1", 6, syntax),
        ("not 1 < 2 < 3", 10, syntax),
        ("9223372036854775808", 18, syntax),
        ("- (9223372036854775808)", 21, syntax),
        ("5 - 9223372036854775808", 22, syntax),
        ("case when true then 1 else 2", 28, syntax),
        ("case when true then 1", 21, syntax),
        ("case 1 when 1 then 2 end", 5, syntax),
        ("case when 1 then 2 when end", 26, syntax),
        ("case end", 7, syntax),
        ("case when 1 then end", 19, syntax),
        ("case when 1 then 2 else end", 26, syntax),
        ("case when 1 then 2 else 3 else 4 end", 29, syntax),
        // pgbench points at the last byte of `é` (5); the offset stays on a char boundary.
        ("1 + é", 4, "unexpected function name (é)"),
        // A newline ends the expression.
        ("1 +\n2", 3, syntax),
    ];
    for &(text, offset, message) in cases {
        assert_eq!(parse_error(text), (offset, message.to_string()), "{text:?}");
    }
    // pgbench reads the rest of the line before reporting, and its last lexical error wins.
    let later: &[(&str, usize, &str)] = &[
        ("foo(@)", 4, "unexpected character (@)"),
        ("abs(1,2) @", 9, "unexpected character (@)"),
        ("1 2 @", 4, "unexpected character (@)"),
        ("1 @ 2 @", 6, "unexpected character (@)"),
        ("1 @ 2 $ 3", 6, "unexpected character ($)"),
        (
            "1 @ 99999999999999999999",
            23,
            "bigint constant overflow (99999999999999999999)",
        ),
        ("99999999999999999999 @", 21, "unexpected character (@)"),
        (
            "abs(1,2) 1.0E309 2",
            15,
            "double constant overflow (1.0E309)",
        ),
    ];
    for &(text, offset, message) in later {
        assert_eq!(parse_error(text), (offset, message.to_string()), "{text:?}");
    }
    let deep = "(".repeat(2000) + "1" + &")".repeat(2000);
    assert_eq!(parse_error(&deep).1, "expression is too deeply nested");
}

#[test]
fn variables_are_interned_slots() {
    let mut names = Vec::new();
    let expr = parse(
        ":a + :b * :a + hash(:c) + permute(:a, 10)",
        &mut |n: &str| {
            names.iter().position(|x| x == n).unwrap_or_else(|| {
                names.push(n.to_string());
                names.len() - 1
            })
        },
    )
    .unwrap();
    assert_eq!(names, ["a", "b", "c", "default_seed"]);
    let mut env = TestEnv::new();
    for (n, v) in [("a", 3), ("b", 4), ("c", 5), ("default_seed", 6)] {
        env.set(n, Value::Int(v));
    }
    let want = 3 + 4 * 3 + super::hash::hash_murmur2(5, 6) + super::hash::permute(3, 10, 6);
    assert_eq!(expr.eval(&mut env), Ok(Value::Int(want)));
}

#[test]
fn constants_are_folded_but_errors_wait_for_run_time() {
    let expr = parse("1 + 2 * 3", &mut |_| 0).unwrap();
    assert_eq!(expr.nodes.len(), 1);
    let expr = parse("1 / 0", &mut |_| 0).unwrap();
    assert_eq!(expr.nodes.len(), 3);
    assert_eq!(
        expr.eval(&mut TestEnv::new()),
        Err("division by zero".to_string())
    );
    // debug and random are never folded: they act when evaluated.
    let mut env = TestEnv::new();
    let expr = parse("debug(1 + 1)", &mut |_| 0).unwrap();
    assert_eq!(expr.nodes.len(), 2);
    expr.eval(&mut env).unwrap();
    expr.eval(&mut env).unwrap();
    assert_eq!(env.debugged, vec![Value::Int(2), Value::Int(2)]);
}

#[test]
fn trees_too_tall_are_refused() {
    let tall = vec![":a"; 300].join(" + ");
    assert_eq!(parse_error(&tall).1, "expression is too deeply nested");
    let fine = vec![":a"; 200].join(" + ");
    assert!(parse(&fine, &mut |_| 0).is_ok());
    // Constants fold as they come, so a long sum of them stays one node.
    let constants = vec!["1"; 1000].join(" + ");
    assert_eq!(run(&constants), "1000");
}
