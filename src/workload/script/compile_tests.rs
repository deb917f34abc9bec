//! The compiler's tests: slots and numbered parameters, `\if` chains, `\gset`, pipelines, and
//! mistakes pointed at.

use super::super::lex::lex;
use super::*;

fn build(src: &str) -> Result<(Vec<Command>, VarNames), CompileError> {
    let mut vars = VarNames::default();
    let c = compile(lex(src).unwrap(), "t", &mut vars)?;
    assert_eq!(c.labels.len(), c.commands.len());
    assert_eq!(c.numbers.len(), c.commands.len());
    Ok((c.commands, vars))
}

#[test]
fn variables_become_slots_and_numbered_parameters() {
    let (cmds, vars) =
        build("select :a, :b::int, ':a', :a, x::text, :\"q\" from t where c = :c_1;").unwrap();
    let Command::Sql(s) = &cmds[0] else { panic!() };
    assert_eq!(
        s.statement.sql,
        "select $1, $2::int, '$3', $4, x::text, :\"q\" from t where c = $5;"
    );
    let names: Vec<&str> = s.params.iter().map(|&p| vars.name(p)).collect();
    assert_eq!(names, ["a", "b", "a", "a", "c_1"]);
    assert_eq!(s.parts[0], Part::Text("select ".into()));
    assert_eq!(s.parts[1], Part::Var(vars.get("a").unwrap()));
    assert!(s.statement.name.starts_with("tbs_t_"));
}

#[test]
fn if_chains_become_branches_and_jumps() {
    let (cmds, _) = build(
        "\\if :x = 1\nselect 1;\n\\elif :x = 2\nselect 2;\n\\else\nselect 3;\n\\endif\nselect 4;",
    )
    .unwrap();
    // 0 Branch(->3) 1 Sql 2 Jump(->7) 3 Branch(->6) 4 Sql 5 Jump(->7) 6 Sql 7 Sql
    let shape: Vec<String> = cmds
        .iter()
        .map(|c| match c {
            Command::Branch { otherwise, .. } => format!("B{otherwise}"),
            Command::Jump(to) => format!("J{to}"),
            Command::Sql(_) => "S".into(),
            _ => "?".into(),
        })
        .collect();
    assert_eq!(shape, ["B3", "S", "J7", "B6", "S", "J7", "S", "S"]);
}

#[test]
fn gset_joins_the_sql_before_it() {
    let (cmds, _) = build("select 1 as one \\gset p_\nselect 2 \\; select 3; \\aset").unwrap();
    let stores: Vec<Option<Store>> = cmds
        .iter()
        .map(|c| match c {
            Command::Sql(s) => s.store.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(
        stores,
        [
            Some(Store {
                all: false,
                prefix: "p_".into()
            }),
            Some(Store {
                all: true,
                prefix: String::new()
            })
        ]
    );
}

#[test]
fn mistakes_point_at_the_place() {
    // pgbench 15 sets names of letters, digits, _ and non-ASCII, not starting with a digit.
    // Where pgbench reads the name with the script, it refuses it there.
    for (src, at) in [("select 1 \\gset 1p", 15), ("\\sleep :1x", 8)] {
        let e = build(src).unwrap_err();
        assert_eq!(e.at, at, "{src}");
        assert!(e.message.contains("invalid variable name"), "{src}: {e:?}");
    }
    assert!(build("\\set _1 2\n\\set x1 :_1").is_ok());
    for (src, says) in [
        ("\\gset", "must follow an SQL command"),
        ("\\sleep 1 fortnights", "time unit"),
        ("\\sleep x", "whole number"),
        ("\\if true\nselect 1;", "\\if without matching \\endif"),
        ("\\endif", "\\endif without matching \\if"),
        ("\\else", "\\else without matching \\if"),
        ("\\elif 1", "\\elif without matching \\if"),
        ("\\if true\n\\else\n\\else\n\\endif", "after \\else"),
        ("\\frobnicate", "invalid command in command \"frobnicate\""),
        ("\\set", "missing argument in command \"set\""),
        ("\\set x", "syntax error in command \"set\""),
        ("\\if", "syntax error in command \"if\""),
        ("\\set x 1 +", "syntax error in command \"set\""),
        (
            "\\set x foo(1)",
            "unexpected function name (foo) in command \"set\"",
        ),
        (
            "\\if 0\n\\else BAD\n\\endif",
            "unexpected argument in command \"else\"",
        ),
        (
            "\\if 0\n\\endif BAD",
            "unexpected argument in command \"endif\"",
        ),
        ("\\sleep", "missing argument in command \"sleep\""),
        ("\\shell", "missing command in command \"shell\""),
        ("\\setshell", "missing argument in command \"setshell\""),
        ("\\setshell v", "missing argument in command \"setshell\""),
        ("\\syncpipeline", "outside a pipeline"),
        (
            "\\if true\n\\startpipeline\n\\endif\n\\endpipeline",
            "branch it started in",
        ),
        (
            "\\startpipeline\n\\if true\n\\endpipeline\n\\endif",
            "branch it started in",
        ),
        ("", "empty command list for script"),
        ("select 1 \\gset a b", "too many"),
    ] {
        let e = build(src).unwrap_err();
        assert!(e.message.contains(says), "{src}: {}", e.message);
    }
}

/// What pgbench 15 refuses only when a client runs it compiles into a command that fails
/// with pgbench's words; what comes before it still runs.
#[test]
fn run_time_refusals_compile_into_failing_commands() {
    for (src, index, says) in [
        ("\\set . 1", 0, "set: invalid variable name: \".\""),
        ("\\set 1x 2", 0, "set: invalid variable name: \"1x\""),
        (
            "\\setshell a.b echo 1",
            0,
            "setshell: invalid variable name",
        ),
        (
            "\\startpipeline\n\\startpipeline\n",
            1,
            "already in pipeline mode",
        ),
        ("\\endpipeline", 0, "not in pipeline mode"),
        (
            "\\startpipeline\nselect 1 \\gset f\n\\endpipeline",
            1,
            "\\gset is not allowed in pipeline mode",
        ),
        (
            "\\startpipeline\nselect 1 \\aset\n\\endpipeline",
            1,
            "\\aset is not allowed in pipeline mode",
        ),
    ] {
        let (cmds, _) = build(src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
        let Command::Fail(m) = &cmds[index] else {
            panic!("{src}: {cmds:?}")
        };
        assert!(m.contains(says), "{src}: {m}");
    }
    // A pipeline left open is the run's abort too (`end of script reached with pipeline
    // open`), not a refusal.
    assert!(build("\\startpipeline\nselect 1;").is_ok());
}

#[test]
fn pipeline_commands_compile_in_place() {
    let (cmds, _) = build(
        "select 0;\n\\startpipeline\nselect 1;\n\\set x 2\nselect :x;\n\\syncpipeline\n\
         select 3;\n\\endpipeline\nselect 4;",
    )
    .unwrap();
    assert!(matches!(cmds[1], Command::StartPipeline));
    assert!(matches!(cmds[5], Command::SyncPipeline));
    assert!(matches!(cmds[7], Command::EndPipeline));
}

#[test]
fn sleep_and_shell_arguments() {
    let (cmds, vars) = build("\\sleep :t ms\n\\setshell v echo ::x :y").unwrap();
    assert!(matches!(
        cmds[0],
        Command::Sleep {
            amount: Amount::Var(_),
            unit_us: 1000
        }
    ));
    let Command::Shell { set: Some(_), argv } = &cmds[1] else {
        panic!()
    };
    assert_eq!(
        argv,
        &[
            Arg::Text("echo".into()),
            Arg::Text(":x".into()),
            Arg::Var(vars.get("y").unwrap())
        ]
    );
}

/// Where pgbench's caret goes (checked against pgbench 15's `error found here`): under the
/// offending token, or just past the command when an expression is missing.
#[test]
fn columns_agree_with_pgbench() {
    for (src, at) in [
        ("\\if\n\\endif\n", 3),
        ("\\set x\n", 6),
        ("\\set x 1 +\n", 10),
        ("\\set x foo(1)\n", 9),
        ("\\set x 1 2\n", 9),
        ("\\set i least()\n", 13),
        ("\\if 0\n\\elif +\n\\endif\n", 13),
        ("\\sleep 2x\n", 8),
        ("\\sleep x\n", 7),
        ("\\sleep 1.5\n", 8),
        ("\\sleep 2ms ms\n", 7),
        ("\\sleep :v x\n", 10),
        ("\\sleep 2 ms extra\n", 12),
    ] {
        let e = build(src).unwrap_err();
        assert_eq!(e.at, at, "{src:?}: {e:?}");
    }
}

#[test]
fn sleep_takes_pgbench_forms() {
    for (src, us) in [
        ("\\sleep 2ms", 2_000),
        ("\\sleep 2 ms", 2_000),
        ("\\sleep 2MS", 2_000),
        ("\\sleep 2us", 2),
        ("\\sleep 2s", 2_000_000),
        ("\\sleep 2", 2_000_000),
        ("\\sleep +2ms", 2_000),
        ("\\sleep -2 ms", -2_000),
    ] {
        let (cmds, _) = build(src).unwrap();
        let Command::Sleep {
            amount: Amount::Fixed(n),
            unit_us,
        } = cmds[0]
        else {
            panic!("{src}")
        };
        assert_eq!(n * unit_us, us, "{src}");
    }
}

/// pgbench counts every command written, `\elif`/`\else`/`\endif` too, not `\gset`.
#[test]
fn numbers_count_commands_as_pgbench() {
    let mut vars = VarNames::default();
    let src =
        "\\set x 1\n\\if false\n\\set y 2\n\\elif true\n\\set y 3\n\\else\n\\set y 4\n\\endif\n\
               select 1 \\gset\n\\set z 5\n";
    let c = compile(lex(src).unwrap(), "t", &mut vars).unwrap();
    let sets: Vec<usize> = c
        .commands
        .iter()
        .zip(&c.numbers)
        .filter(|(c, _)| matches!(c, Command::Set { .. }))
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(sets, [1, 3, 5, 7, 10]);
}

#[test]
fn shell_takes_at_most_255_words() {
    let words = |n: usize| vec!["a"; n].join(" ");
    assert!(build(&format!("\\shell echo {}", words(254))).is_ok());
    let e = build(&format!("\\shell echo {}", words(255))).unwrap_err();
    assert!(e.message.contains("too many arguments"), "{e:?}");
    assert_eq!(e.at, "\\shell echo ".len() + 2 * 254);
    let e = build(&format!("\\setshell v echo {}", words(254))).unwrap_err();
    assert!(e.message.contains("too many arguments"), "{e:?}");
}
