//! The scripts a run names (`-f FILE[@WEIGHT]`, `-b NAME[@WEIGHT]`) and its `-D NAME=VALUE`
//! defines, read and compiled into one [`Scripts`]: every error says the file, line and
//! column with the line and a caret, before any connection is opened.

use std::path::Path;

use super::builtin;
use super::compile::{
    compile, name_char, param_count, Command, CompileError, VarNames, MAX_PARAMS,
};
use super::lex::{lex, locate, Lexed};
use super::run::Code;
use crate::config::OptionValues;

/// The option keys: `-f`, `-b`, `-D` on the command line; `scripts` takes run files' tables
/// (`{ file = "a.sql", weight = 3, role = "dss" }`).
pub const FILE: &str = "file";
pub const BUILTIN: &str = "builtin";
pub const DEFINE: &str = "define";
pub const SCRIPTS: &str = "scripts";

/// The roles a script may run on: a set's `oltp` target (the default) or its `dss` one.
pub const ROLES: &[&str] = &["oltp", "dss"];

/// Every script of a run, compiled over one variable table.
#[derive(Debug)]
pub struct Scripts {
    pub codes: Vec<Code>,
    pub weights: Vec<u64>,
    /// The role each script runs on.
    pub roles: Vec<String>,
    pub vars: VarNames,
    /// `-D` values by slot.
    pub defines: Vec<(usize, String)>,
}

/// A script as the options name it: a file or a built-in, its weight and role.
struct Named {
    file: Option<String>,
    builtin: Option<String>,
    weight: u64,
    role: String,
}

/// One script before compiling: its type name, where it came from, its text, weight, role.
struct Source {
    name: String,
    origin: String,
    /// As pgbench names it in its output (the path, `<builtin: select only>`).
    shown: String,
    text: String,
    weight: u64,
    role: String,
}

/// Splits `x@W` into `x` and the weight (1 without one), as pgbench reads `-f`/`-b`.
fn weighted(given: &str) -> Result<(&str, u64), String> {
    match given.rsplit_once('@') {
        Some((what, w)) => {
            let weight = w.parse::<u64>().map_err(|_| {
                format!("weight \"{w}\" of \"{given}\" is not a whole number (write NAME@3)")
            })?;
            check_weight(weight, given)?;
            Ok((what, weight))
        }
        None => Ok((given, 1)),
    }
}

fn check_weight(weight: u64, of: &str) -> Result<(), String> {
    if weight > i32::MAX as u64 {
        return Err(format!("weight {weight} of \"{of}\" is too large"));
    }
    Ok(())
}

/// The option's strings (an absent option is an empty list).
fn strings(options: &OptionValues, key: &str) -> Vec<String> {
    options
        .get(key)
        .and_then(|v| v.as_array())
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The scripts `options` name, in order: `file`, `builtin`, then `scripts`.
fn named(options: &OptionValues) -> Result<Vec<Named>, String> {
    let mut out = Vec::new();
    let oltp = || ROLES[0].to_string();
    for f in strings(options, FILE) {
        let (path, weight) = weighted(&f)?;
        out.push(Named {
            file: Some(path.to_string()),
            builtin: None,
            weight,
            role: oltp(),
        });
    }
    for b in strings(options, BUILTIN) {
        let (name, weight) = weighted(&b)?;
        out.push(Named {
            file: None,
            builtin: Some(name.to_string()),
            weight,
            role: oltp(),
        });
    }
    for entry in options
        .get(SCRIPTS)
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        out.push(match entry {
            toml::Value::Table(t) => table_entry(t)?,
            other => {
                let (path, weight) = weighted(other.as_str().unwrap_or_default())?;
                Named {
                    file: Some(path.to_string()),
                    builtin: None,
                    weight,
                    role: oltp(),
                }
            }
        });
    }
    Ok(out)
}

/// A `scripts` table: `file` or `builtin`, and optionally `weight` and `role`.
fn table_entry(t: &toml::Table) -> Result<Named, String> {
    const KEYS: [&str; 4] = ["file", "builtin", "weight", "role"];
    if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "scripts entry {t}: unknown key `{k}`; an entry takes file or builtin, weight and role"
        ));
    }
    let text = |key: &str| t.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let (file, builtin) = (text("file"), text("builtin"));
    if file.is_some() == builtin.is_some() {
        return Err(format!(
            "scripts entry {t}: give file = \"PATH\" or builtin = \"NAME\", one of the two"
        ));
    }
    let weight = match t.get("weight") {
        None => 1,
        Some(toml::Value::Integer(w)) if *w >= 0 => *w as u64,
        Some(other) => {
            return Err(format!(
                "scripts entry {t}: weight {other} is not a whole number of at least 0"
            ))
        }
    };
    check_weight(weight, &t.to_string())?;
    let role = text("role").unwrap_or_else(|| ROLES[0].to_string());
    if !ROLES.contains(&role.as_str()) {
        return Err(format!(
            "scripts entry {t}: role \"{role}\" is not one of {}",
            ROLES.join(", ")
        ));
    }
    Ok(Named {
        file,
        builtin,
        weight,
        role,
    })
}

/// Reads the named scripts: files (relative to the working directory, or to the run file
/// that named them) and built-ins.
fn sources(named: Vec<Named>) -> Result<Vec<Source>, String> {
    let mut out: Vec<Source> = Vec::new();
    for n in named {
        out.push(match (n.file, n.builtin) {
            (Some(path), _) => {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    format!(
                        "could not open file \"{path}\": {e} (give a pgbench script file \
                         with -f FILE)"
                    )
                })?;
                let stem = Path::new(&path)
                    .file_stem()
                    .map_or_else(|| path.clone(), |s| s.to_string_lossy().into_owned());
                Source {
                    name: stem,
                    shown: path.clone(),
                    origin: path,
                    text,
                    weight: n.weight,
                    role: n.role,
                }
            }
            (None, builtin) => {
                let (name, text) = builtin::find(builtin.as_deref().unwrap_or_default())?;
                Source {
                    name: name.to_string(),
                    origin: format!("builtin:{name}"),
                    shown: builtin::shown(name),
                    text: text.to_string(),
                    weight: n.weight,
                    role: n.role,
                }
            }
        });
    }
    // Type names must be unique: a script named twice gets #2, #3...
    for i in 1..out.len() {
        let taken = |n: &str, out: &[Source]| out[..i].iter().any(|s| s.name == n);
        if taken(&out[i].name, &out) {
            let base = out[i].name.clone();
            let mut k = 2;
            while taken(&format!("{base}#{k}"), &out) {
                k += 1;
            }
            out[i].name = format!("{base}#{k}");
        }
    }
    Ok(out)
}

/// Whether `options` name one of pgbench's built-in scripts (which need pgbench's tables).
pub fn uses_builtin(options: &OptionValues) -> bool {
    named(options).is_ok_and(|n| n.iter().any(|n| n.builtin.is_some()))
}

/// Reads, checks and compiles the scripts and defines `options` name.
pub fn load(options: &OptionValues) -> Result<Scripts, String> {
    let named = named(options)?;
    if named.is_empty() {
        return Err(
            "the script workload needs a script: -f FILE[@WEIGHT] (a pgbench script) or \
             -b NAME[@WEIGHT] (tpcb-like, simple-update, select-only)"
                .into(),
        );
    }
    if named.len() > MAX_SCRIPTS {
        return Err(format!(
            "{} scripts named, but at most {MAX_SCRIPTS} SQL scripts are allowed (pgbench's \
             limit); \
             give fewer -f/-b (a weight, as -f FILE@3, stands for repeats)",
            named.len()
        ));
    }
    let mut vars = VarNames::default();
    let (mut codes, mut weights, mut roles) = (Vec::new(), Vec::new(), Vec::new());
    for (i, s) in sources(named)?.into_iter().enumerate() {
        let lexed = lex(&s.text).map_err(|e| pointed(&s.origin, &s.text, e.at, &e.message))?;
        let compiled = compile(lexed, &i.to_string(), &mut vars)
            .map_err(|e| pointed(&s.origin, &s.text, e.at, &e.message))?;
        if let Some(e) = too_many_params(&compiled.commands, options) {
            return Err(pointed(&s.origin, &s.text, e.at, &e.message));
        }
        codes.push(Code {
            name: s.name,
            shown: s.shown,
            commands: compiled.commands,
            labels: compiled.labels,
            numbers: compiled.numbers,
        });
        weights.push(s.weight);
        roles.push(s.role);
    }
    if weights.iter().sum::<u64>() == 0 {
        return Err("every script has weight 0; give at least one a weight above 0".into());
    }
    let mut set = Vec::new();
    for d in strings(options, DEFINE) {
        let (name, value) = d
            .split_once('=')
            .ok_or_else(|| format!("define \"{d}\" has no '=': write -D NAME=VALUE"))?;
        if name.is_empty() || !name.chars().all(name_char) {
            return Err(format!("define \"{d}\": \"{name}\" is not a variable name"));
        }
        set.push((vars.slot(name), value.to_string()));
    }
    Ok(Scripts {
        codes,
        weights,
        roles,
        vars,
        defines: set,
    })
}

/// pgbench's limit on the scripts of one run (its MAX_SCRIPTS).
const MAX_SCRIPTS: usize = 128;

/// An SQL command with more parameters than pgbench sends, in the protocols that send them
/// as parameters (pgbench 15 refuses it when it parses the script under -M extended or
/// prepared; the simple protocol puts the values into the text).
fn too_many_params(commands: &[Command], options: &OptionValues) -> Option<CompileError> {
    // The protocol is known when the run builds its workload (not while options resolve).
    let protocol = options
        .get(crate::workload::RUN_PROTOCOL)
        .and_then(|v| v.as_str())?;
    if protocol == "simple" {
        return None;
    }
    commands.iter().find_map(|c| match c {
        Command::Sql(sql) if sql.params.len() > MAX_PARAMS => Some(CompileError {
            at: sql.at,
            message: format!(
                "statement has too many arguments (maximum is {MAX_PARAMS}): it has {} \
                 variables; split the statement, or run with -M simple",
                sql.params.len()
            ),
        }),
        _ => None,
    })
}

/// The first SQL command of script `text` with more parameters than the extended and prepared
/// protocols send, as written (`--` comments left out): pgbench 15 refuses it before it
/// connects. `None` when there is none, or the script does not lex (its error comes later).
pub fn wide_statement(text: &str) -> Option<String> {
    lex(text).ok()?.into_iter().find_map(|l| match l {
        Lexed::Sql { text, .. } if param_count(&text) > MAX_PARAMS => Some(text),
        _ => None,
    })
}

/// `file:line:col: message`, then the line and pgbench's caret under the column.
fn pointed(origin: &str, text: &str, at: usize, message: &str) -> String {
    // An error at the end of the text (an expression cut short) points at the line break
    // after it; at a file's end without one, pgbench's scanner stands on the last character.
    let at = if at >= text.len() && !text.ends_with('\n') {
        text.char_indices().last().map_or(0, |(i, _)| i)
    } else {
        at
    };
    let (line, col, shown) = locate(text, at);
    let pad: String = shown
        .chars()
        .take(col - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("{origin}:{line}:{col}: {message}\n    {shown}\n    {pad}^ error found here")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(files: &[&str], builtins: &[&str], defines: &[&str]) -> OptionValues {
        let list = |v: &[&str]| toml::Value::Array(v.iter().map(|s| (*s).into()).collect());
        [(FILE, files), (BUILTIN, builtins), (DEFINE, defines)]
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.to_string(), list(v)))
            .collect()
    }

    #[test]
    fn builtins_weights_names_and_defines() {
        let s = load(&options(
            &[],
            &["tpcb-like@3", "select@1", "select-only"],
            &["x=5"],
        ))
        .unwrap();
        let names: Vec<&str> = s.codes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["tpcb-like", "select-only", "select-only#2"]);
        assert_eq!(s.weights, [3, 1, 1]);
        assert_eq!(s.roles, ["oltp", "oltp", "oltp"]);
        assert_eq!(s.defines, [(s.vars.get("x").unwrap(), "5".to_string())]);
    }

    #[test]
    fn run_file_tables_name_a_role_and_mistakes_say_which_entry() {
        let table: toml::Table = toml::from_str(
            "scripts = [{ builtin = \"select-only\", weight = 2, role = \"dss\" }, { builtin = \"tpcb-like\" }]",
        )
        .unwrap();
        let opts: OptionValues = table.into_iter().collect();
        let s = load(&opts).unwrap();
        assert_eq!(s.roles, ["dss", "oltp"]);
        assert_eq!(s.weights, [2, 1]);
        for (text, says) in [
            (
                "scripts = [{ builtin = \"select-only\", role = \"olap\" }]",
                "not one of oltp, dss",
            ),
            (
                "scripts = [{ builtin = \"select-only\", file = \"x\" }]",
                "one of the two",
            ),
            (
                "scripts = [{ builtin = \"select-only\", weight = -1 }]",
                "at least 0",
            ),
            (
                "scripts = [{ builtin = \"select-only\", wieght = 2 }]",
                "unknown key `wieght`",
            ),
        ] {
            let table: toml::Table = toml::from_str(text).unwrap();
            let e = load(&table.into_iter().collect()).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn errors_point_at_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.sql");
        std::fs::write(&path, "select 1;\n\\sleep 2 fortnights\n").unwrap();
        let e = load(&options(&[&path.display().to_string()], &[], &[])).unwrap_err();
        assert!(e.contains("bad.sql:2:10: unrecognized time unit"), "{e}");
        assert!(
            e.ends_with("    \\sleep 2 fortnights\n             ^ error found here"),
            "{e}"
        );
        for (files, builtins, defines, says) in [
            (vec![], vec![], vec![], "needs a script"),
            (
                vec!["/nonexistent/x.sql"],
                vec![],
                vec![],
                "could not open file \"/nonexistent/x.sql\"",
            ),
            (vec![], vec!["nope"], vec![], "no built-in script"),
            (vec![], vec!["select-only@x"], vec![], "not a whole number"),
            (vec![], vec!["select-only@0"], vec![], "weight 0"),
            (vec![], vec!["select-only"], vec!["x"], "no '='"),
            (
                vec![],
                vec!["select-only"],
                vec!["a b=1"],
                "not a variable name",
            ),
        ] {
            let e = load(&options(&files, &builtins, &defines)).unwrap_err();
            assert!(e.contains(says), "{says}: {e}");
        }
    }

    #[test]
    fn pgbench_limits_on_scripts_and_parameters() {
        let many = vec!["select-only"; MAX_SCRIPTS + 1];
        let e = load(&options(&[], &many, &[])).unwrap_err();
        assert!(e.contains("at most 128 SQL scripts"), "{e}");
        let enough = vec!["select-only"; MAX_SCRIPTS];
        assert!(load(&options(&[], &enough, &[])).is_ok());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wide.sql");
        let cols = |n: usize| {
            (0..n)
                .map(|i| format!(":v{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        std::fs::write(&path, format!("\\set v0 1\nselect {};\n", cols(256))).unwrap();
        let file = path.display().to_string();
        let with = |protocol: &str| {
            let mut o = options(&[&file], &[], &[]);
            o.insert(crate::workload::RUN_PROTOCOL.into(), protocol.into());
            load(&o)
        };
        // Refused where values go as parameters, and only once the protocol is known.
        for protocol in ["extended", "prepared"] {
            let e = with(protocol).unwrap_err();
            assert!(
                e.contains("wide.sql:2:1: statement has too many arguments (maximum is 255)"),
                "{e}"
            );
            assert!(e.contains("it has 256 variables"), "{e}");
        }
        assert!(with("simple").is_ok());
        assert!(load(&options(&[&file], &[], &[])).is_ok());
        std::fs::write(&path, format!("select {};\n", cols(255))).unwrap();
        assert!(with("prepared").is_ok());
    }
}
