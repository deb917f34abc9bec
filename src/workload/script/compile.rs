//! Lexed commands made ready to run: variables become slots of one table shared by a
//! workload's scripts, expressions are parsed once, `\if` chains become jumps, SQL is split
//! into the pieces the simple protocol substitutes and the `$n` text the extended and
//! prepared protocols send, and `\gset`/`\aset` join the SQL command they follow.

use std::collections::HashMap;

use super::expr::Expr;
use super::lex::Lexed;
use super::meta::{Builder, Meta};

/// Variable names and their slots; a slot is an index into a client's values.
#[derive(Debug, Default, Clone)]
pub struct VarNames {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl VarNames {
    /// The slot of `name`, made on first use.
    pub fn slot(&mut self, name: &str) -> usize {
        if let Some(&slot) = self.index.get(name) {
            return slot;
        }
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The slot of `name` if some command uses it (a `\gset` column nobody reads has none).
    pub fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn name(&self, slot: usize) -> &str {
        &self.names[slot]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }
}

/// One command ready to run.
#[derive(Debug)]
pub enum Command {
    Sql(Sql),
    Set {
        slot: usize,
        expr: Expr,
    },
    Sleep {
        amount: Amount,
        unit_us: i64,
    },
    /// `\shell` (`set` None) or `\setshell` (the slot the command's output goes to).
    Shell {
        set: Option<usize>,
        argv: Vec<Arg>,
    },
    /// `\if` / `\elif`: when `cond` is not true, go on at command `otherwise`.
    Branch {
        cond: Expr,
        otherwise: usize,
    },
    /// The end of a branch taken: go on past its `\endif`.
    Jump(usize),
    /// `\startpipeline`.
    StartPipeline,
    /// `\syncpipeline`: a Sync inside the pipeline.
    SyncPipeline,
    /// `\endpipeline`: the last Sync, then every answer.
    EndPipeline,
    /// A command pgbench 15 accepts when it reads the script but refuses when a client runs
    /// it (`\set . 1`, `\startpipeline` twice...): aborts the client with this message.
    Fail(String),
}

/// A `\sleep` count: a number, or a variable holding one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Fixed(i64),
    Var(usize),
}

/// A `\shell` word: as written, or a variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Text(String),
    Var(usize),
}

/// A piece of SQL text for the simple protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    /// `:name`: its value when set, else the text as written (pgbench leaves it alone).
    Var(usize),
}

/// One SQL command (several statements when joined with `\;`).
#[derive(Debug)]
pub struct Sql {
    /// Where it starts in the file (to point at it when a protocol cannot send it).
    pub at: usize,
    pub parts: Vec<Part>,
    /// The text with `$1..$n` in place of the variables (extended and prepared protocols),
    /// and its prepared statement's name; leaked once per build, as statements are `'static`.
    pub statement: pgwire::Statement,
    /// The variable of each `$n`, in order.
    pub params: Vec<usize>,
    /// `\gset` / `\aset` after it.
    pub store: Option<Store>,
}

/// Where query results go: `\gset` (the last query's only row) or `\aset` (every query's
/// last row), each column into the variable `prefix` + its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    pub all: bool,
    pub prefix: String,
}

/// A compile error at a byte offset of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    pub at: usize,
    pub message: String,
}

pub(super) fn error(at: usize, message: impl Into<String>) -> CompileError {
    CompileError {
        at,
        message: message.into(),
    }
}

/// A script compiled: its commands, each command's text as written (a jump `\elif`/`\else`
/// adds is labelled by it, for per-command reports), and each command's number as pgbench
/// counts them from 1 in `debug()` lines: every command written counts, `\elif`, `\else`
/// and `\endif` included, but not `\gset`/`\aset` (which join the SQL before them).
#[derive(Debug)]
pub struct Compiled {
    pub commands: Vec<Command>,
    pub labels: Vec<String>,
    pub numbers: Vec<usize>,
}

/// pgbench's limit on the `$n` parameters of one statement in the extended and prepared
/// protocols (its MAX_ARGS less the SQL text itself).
pub const MAX_PARAMS: usize = 255;

/// Compiles one script's commands; `tag` makes its prepared statements' names unique.
pub fn compile(
    lexed: Vec<Lexed>,
    tag: &str,
    vars: &mut VarNames,
) -> Result<Compiled, CompileError> {
    let mut b = Builder::new(vars);
    let (mut labels, mut numbers) = (Vec::new(), Vec::new());
    let mut number = 0;
    for l in lexed {
        let label = match &l {
            Lexed::Sql { text, .. } => text.clone(),
            Lexed::Meta { name, rest, .. } => format!("\\{name} {}", rest.trim()),
        };
        match l {
            Lexed::Sql { text, at } => {
                number += 1;
                let name = format!("tbs_{tag}_{}", b.out.len());
                b.out.push(Command::Sql(sql(&text, at, name, b.vars)));
                b.after_meta = None;
            }
            Lexed::Meta {
                name,
                at,
                rest,
                rest_at,
            } => {
                let stores = matches!(name.as_str(), "gset" | "aset");
                if !stores {
                    number += 1;
                }
                b.number = number;
                b.meta(&Meta::new(&name, at, &rest, rest_at))?;
                if !stores {
                    b.after_meta = Some(first_line(&name, &rest));
                }
            }
        }
        labels.resize(b.out.len(), label);
        numbers.resize(b.out.len(), number);
    }
    b.number = number;
    let commands = b.finish()?;
    Ok(Compiled {
        commands,
        labels,
        numbers,
    })
}

/// A meta-command's line as written, as pgbench names it (its name lowercased; a line it
/// continues with a backslash joined).
fn first_line(name: &str, rest: &str) -> String {
    format!("\\{name}{}", rest.trim_end_matches('\r'))
}

/// A character pgbench allows in a variable name.
pub fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()
}

/// A name pgbench 15 lets a command set: name characters, and not a digit first.
pub fn valid_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| !c.is_ascii_digit()) && name.chars().all(name_char)
}

/// A name pgbench refuses where it reads it with the script (a `\sleep :var`, a `\gset`
/// prefix); a name `\set`/`\setshell` assign is checked when they run, as pgbench does.
pub(super) fn check_name(name: &str, at: usize) -> Result<(), CompileError> {
    if !valid_name(name) {
        return Err(error(
            at,
            format!(
                "invalid variable name \"{name}\": a name is letters, digits and _, \
                 and does not start with a digit"
            ),
        ));
    }
    Ok(())
}

/// Splits SQL at its `:variables` (`::` is a cast and stays), as pgbench does: everywhere in
/// the text, quotes included.
fn sql(text: &str, at: usize, name: String, vars: &mut VarNames) -> Sql {
    let (parts, numbered, params) = split(text, vars);
    Sql {
        at,
        statement: pgwire::Statement {
            name: Box::leak(name.into_boxed_str()),
            sql: Box::leak(numbered.into_boxed_str()),
        },
        parts,
        params,
        store: None,
    }
}

/// How many `$n` parameters SQL `text` is sent with in the extended and prepared protocols.
pub fn param_count(text: &str) -> usize {
    split(text, &mut VarNames::default()).2.len()
}

/// SQL `text` split at its variables: the parts, the text with `$n` in their place, and the
/// variable of each `$n`.
fn split(text: &str, vars: &mut VarNames) -> (Vec<Part>, String, Vec<usize>) {
    let mut parts = Vec::new();
    let mut numbered = String::with_capacity(text.len());
    let mut params = Vec::new();
    let mut lit = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != ':' {
            lit.push(c);
            numbered.push(c);
            continue;
        }
        if chars.peek().is_some_and(|&(_, n)| n == ':') {
            chars.next();
            lit.push_str("::");
            numbered.push_str("::");
            continue;
        }
        let start = i + 1;
        let end = text[start..]
            .char_indices()
            .find(|&(_, c)| !name_char(c))
            .map_or(text.len(), |(j, _)| start + j);
        if end == start {
            lit.push(':');
            numbered.push(':');
            continue;
        }
        let slot = vars.slot(&text[start..end]);
        if !lit.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut lit)));
        }
        parts.push(Part::Var(slot));
        params.push(slot);
        numbered.push('$');
        numbered.push_str(&params.len().to_string());
        while chars.peek().is_some_and(|&(j, _)| j < end) {
            chars.next();
        }
    }
    if !lit.is_empty() {
        parts.push(Part::Text(lit));
    }
    (parts, numbered, params)
}

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;
