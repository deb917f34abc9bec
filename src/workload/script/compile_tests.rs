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
    // pgbench takes letters, digits, _ and non-ASCII (so `1x` is a name); not `-`.
    let src = "\\set a-b 2";
    assert_eq!(build(src).unwrap_err().at, 5);
    for (src, says) in [
        ("\\gset", "must follow an SQL command"),
        ("\\sleep 1 fortnights", "time unit"),
        ("\\sleep x", "whole number"),
        ("\\if true\nselect 1;", "without a matching \\endif"),
        ("\\endif", "without a matching \\if"),
        ("\\if true\n\\else\n\\else\n\\endif", "after \\else"),
        ("\\frobnicate", "invalid command"),
        (
            "\\startpipeline\nselect 1;",
            "without a matching \\endpipeline",
        ),
        ("\\endpipeline", "without a matching \\startpipeline"),
        ("\\syncpipeline", "outside a pipeline"),
        ("\\startpipeline\n\\startpipeline", "inside a pipeline"),
        (
            "\\startpipeline\nselect 1 \\gset\n\\endpipeline",
            "cannot be used in a pipeline",
        ),
        (
            "\\if true\n\\startpipeline\n\\endif\n\\endpipeline",
            "branch it started in",
        ),
        (
            "\\startpipeline\n\\if true\n\\endpipeline\n\\endif",
            "branch it started in",
        ),
        ("", "no command"),
        ("select 1 \\gset a b", "too many"),
    ] {
        let e = build(src).unwrap_err();
        assert!(e.message.contains(says), "{src}: {}", e.message);
    }
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
