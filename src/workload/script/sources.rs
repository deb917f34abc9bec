//! The scripts a run names (`-f FILE[@WEIGHT]`, `-b NAME[@WEIGHT]`) and its `-D NAME=VALUE`
//! defines, read and compiled into one [`Scripts`]: every error says the file, line and
//! column with the line and a caret, before any connection is opened.

use std::path::Path;

use super::builtin;
use super::compile::{compile, name_char, VarNames};
use super::lex::{lex, locate};
use super::run::Code;

/// The option keys (`-f`, `-b`, `-D` on the command line).
pub const FILE: &str = "file";
pub const BUILTIN: &str = "builtin";
pub const DEFINE: &str = "define";

/// Every script of a run, compiled over one variable table.
#[derive(Debug)]
pub struct Scripts {
    pub codes: Vec<Code>,
    pub weights: Vec<u64>,
    pub vars: VarNames,
    /// `-D` values by slot.
    pub defines: Vec<(usize, String)>,
}

/// One script before compiling: its type name, where it came from, its text and weight.
struct Source {
    name: String,
    origin: String,
    text: String,
    weight: u64,
}

/// Splits `x@W` into `x` and the weight (1 without one), as pgbench reads `-f`/`-b`.
fn weighted(given: &str) -> Result<(&str, u64), String> {
    match given.rsplit_once('@') {
        Some((what, w)) => {
            let weight = w.parse::<u64>().map_err(|_| {
                format!("weight \"{w}\" of \"{given}\" is not a whole number (write NAME@3)")
            })?;
            if weight > i32::MAX as u64 {
                return Err(format!("weight {weight} of \"{given}\" is too large"));
            }
            Ok((what, weight))
        }
        None => Ok((given, 1)),
    }
}

/// Reads the named scripts: files (relative to the working directory) and built-ins.
fn sources(files: &[String], builtins: &[String]) -> Result<Vec<Source>, String> {
    let mut out: Vec<Source> = Vec::new();
    for given in files {
        let (path, weight) = weighted(given)?;
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!("cannot read script {path}: {e} (give a pgbench script file with -f FILE)")
        })?;
        let stem = Path::new(path)
            .file_stem()
            .map_or_else(|| path.to_string(), |s| s.to_string_lossy().into_owned());
        out.push(Source {
            name: stem,
            origin: path.to_string(),
            text,
            weight,
        });
    }
    for given in builtins {
        let (name, weight) = weighted(given)?;
        let (name, text) = builtin::find(name)?;
        out.push(Source {
            name: name.to_string(),
            origin: format!("builtin:{name}"),
            text: text.to_string(),
            weight,
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

/// Reads, checks and compiles the scripts and defines of a run.
pub fn load(files: &[String], builtins: &[String], defines: &[String]) -> Result<Scripts, String> {
    if files.is_empty() && builtins.is_empty() {
        return Err(
            "the script workload needs a script: -f FILE[@WEIGHT] (a pgbench script) or \
             -b NAME[@WEIGHT] (tpcb-like, simple-update, select-only)"
                .into(),
        );
    }
    let mut vars = VarNames::default();
    let mut codes = Vec::new();
    let mut weights = Vec::new();
    for (i, s) in sources(files, builtins)?.into_iter().enumerate() {
        let lexed = lex(&s.text).map_err(|e| pointed(&s.origin, &s.text, e.at, &e.message))?;
        let commands = compile(lexed, &i.to_string(), &mut vars)
            .map_err(|e| pointed(&s.origin, &s.text, e.at, &e.message))?;
        codes.push(Code {
            name: s.name,
            commands,
        });
        weights.push(s.weight);
    }
    if weights.iter().sum::<u64>() == 0 {
        return Err("every script has weight 0; give at least one a weight above 0".into());
    }
    let mut set = Vec::new();
    for d in defines {
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
        vars,
        defines: set,
    })
}

/// `file:line:col: message`, then the line and a caret under the column.
fn pointed(origin: &str, text: &str, at: usize, message: &str) -> String {
    let (line, col, shown) = locate(text, at);
    let pad: String = shown
        .chars()
        .take(col - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("{origin}:{line}:{col}: {message}\n    {shown}\n    {pad}^")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn builtins_weights_names_and_defines() {
        let s = load(
            &[],
            &strings(&["tpcb-like@3", "select@1", "select-only"]),
            &strings(&["x=5"]),
        )
        .unwrap();
        let names: Vec<&str> = s.codes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["tpcb-like", "select-only", "select-only#2"]);
        assert_eq!(s.weights, [3, 1, 1]);
        assert_eq!(s.defines, [(s.vars.get("x").unwrap(), "5".to_string())]);
    }

    #[test]
    fn errors_point_at_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.sql");
        std::fs::write(&path, "select 1;\n\\sleep 2 fortnights\n").unwrap();
        let e = load(&[path.display().to_string()], &[], &[]).unwrap_err();
        assert!(e.contains("bad.sql:2:1: unrecognized time unit"), "{e}");
        assert!(e.ends_with("    \\sleep 2 fortnights\n    ^"), "{e}");
        for (files, builtins, defines, says) in [
            (vec![], vec![], vec![], "needs a script"),
            (
                vec!["/nonexistent/x.sql"],
                vec![],
                vec![],
                "cannot read script",
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
            let e = load(&strings(&files), &strings(&builtins), &strings(&defines)).unwrap_err();
            assert!(e.contains(says), "{says}: {e}");
        }
    }
}
