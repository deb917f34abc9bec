//! Lexed commands made ready to run: variables become slots of one table shared by a
//! workload's scripts, expressions are parsed once, `\if` chains become jumps, SQL is split
//! into the pieces the simple protocol substitutes and the `$n` text the extended and
//! prepared protocols send, and `\gset`/`\aset` join the SQL command they follow.

use std::collections::HashMap;

use super::expr::{self, Expr};
use super::lex::Lexed;

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

fn error(at: usize, message: impl Into<String>) -> CompileError {
    CompileError {
        at,
        message: message.into(),
    }
}

/// An open `\if` chain: its last branch (to point at the next one), the jumps out of the
/// branches taken so far, and whether `\else` was seen.
struct OpenIf {
    at: usize,
    last_branch: Option<usize>,
    jumps: Vec<usize>,
    seen_else: bool,
}

/// An open `\startpipeline`: where it was written and the `\if` depth it must end at.
struct OpenPipeline {
    at: usize,
    depth: usize,
}

/// What `meta` keeps between commands: the open `\if` chains and pipeline.
#[derive(Default)]
struct Open {
    ifs: Vec<OpenIf>,
    pipeline: Option<OpenPipeline>,
}

/// Compiles one script's commands; `tag` makes its prepared statements' names unique. Also
/// returns each command's text as written (a jump `\elif`/`\else` adds is labelled by it),
/// for per-command reports.
pub fn compile(
    lexed: Vec<Lexed>,
    tag: &str,
    vars: &mut VarNames,
) -> Result<(Vec<Command>, Vec<String>), CompileError> {
    let mut out: Vec<Command> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut open = Open::default();
    for l in lexed {
        let label = match &l {
            Lexed::Sql { text, .. } => text.clone(),
            Lexed::Meta { name, rest, .. } => format!("\\{name} {}", rest.trim()),
        };
        match l {
            Lexed::Sql { text, .. } => {
                let name = format!("tbs_{tag}_{}", out.len());
                out.push(Command::Sql(sql(&text, name, vars)));
            }
            Lexed::Meta {
                name,
                at,
                rest,
                rest_at,
            } => meta(&name, at, &rest, rest_at, vars, &mut out, &mut open)?,
        }
        labels.resize(out.len(), label);
    }
    if let Some(unclosed) = open.ifs.last() {
        return Err(error(unclosed.at, "\\if without a matching \\endif"));
    }
    if let Some(p) = open.pipeline {
        return Err(error(
            p.at,
            "\\startpipeline without a matching \\endpipeline",
        ));
    }
    if out.is_empty() {
        return Err(error(0, "the script has no command"));
    }
    Ok((out, labels))
}

fn meta(
    name: &str,
    at: usize,
    rest: &str,
    rest_at: usize,
    vars: &mut VarNames,
    out: &mut Vec<Command>,
    open: &mut Open,
) -> Result<(), CompileError> {
    let words = words(rest, rest_at);
    if let Some(p) = &open.pipeline {
        // A pipeline lies within one branch of an \if, so every run that starts it ends it.
        let leaves_branch = matches!(name, "elif" | "else" | "endif") && open.ifs.len() <= p.depth;
        if leaves_branch {
            return Err(error(
                at,
                format!("\\{name} inside a pipeline: end the pipeline in the branch it started in"),
            ));
        }
        if matches!(name, "gset" | "aset") {
            return Err(error(
                at,
                format!(
                    "\\{name} cannot be used in a pipeline: the results are not there yet \
                     when the next command runs"
                ),
            ));
        }
    }
    let expression = |vars: &mut VarNames, text: &str, text_at: usize| {
        if text.trim().is_empty() {
            return Err(error(at, format!("\\{name} needs an expression")));
        }
        expr::parse(text, &mut |n: &str| vars.slot(n))
            .map_err(|e| error(text_at + e.offset, e.message))
    };
    match name {
        "set" => {
            let Some(&(var, var_at)) = words.first() else {
                return Err(error(at, "\\set needs a variable name and an expression"));
            };
            check_name(var, var_at)?;
            let slot = vars.slot(var);
            let after = var_at - rest_at + var.len();
            let expr = expression(vars, &rest[after..], rest_at + after)?;
            out.push(Command::Set { slot, expr });
        }
        "sleep" => {
            let (amount, unit) = match words.as_slice() {
                [(a, a_at)] => ((*a, *a_at), "s"),
                [(a, a_at), (u, _)] => ((*a, *a_at), *u),
                [] => return Err(error(at, "\\sleep needs a time: \\sleep 10 ms")),
                [_, _, (_, extra_at), ..] => {
                    return Err(error(*extra_at, "too many arguments to \\sleep"))
                }
            };
            let unit_us = match unit.to_ascii_lowercase().as_str() {
                "us" => 1,
                "ms" => 1_000,
                "s" => 1_000_000,
                other => {
                    return Err(error(
                        at,
                        format!("unrecognized time unit \"{other}\"; use us, ms or s"),
                    ))
                }
            };
            let amount = match amount.0.strip_prefix(':') {
                Some(var) => {
                    check_name(var, amount.1 + 1)?;
                    Amount::Var(vars.slot(var))
                }
                None => Amount::Fixed(amount.0.parse().map_err(|_| {
                    error(
                        amount.1,
                        format!(
                            "\\sleep takes a whole number or a :variable, not \"{}\"",
                            amount.0
                        ),
                    )
                })?),
            };
            out.push(Command::Sleep { amount, unit_us });
        }
        "shell" | "setshell" => {
            let mut words = words.into_iter();
            let set = if name == "setshell" {
                let Some((var, var_at)) = words.next() else {
                    return Err(error(at, "\\setshell needs a variable and a command"));
                };
                check_name(var, var_at)?;
                Some(vars.slot(var))
            } else {
                None
            };
            let argv: Vec<Arg> = words
                .map(|(w, _)| match w.strip_prefix(':') {
                    Some(rest) if rest.starts_with(':') => Arg::Text(rest.to_string()),
                    Some(var) if !var.is_empty() => Arg::Var(vars.slot(var)),
                    _ => Arg::Text(w.to_string()),
                })
                .collect();
            if argv.is_empty() {
                return Err(error(at, format!("\\{name} needs a command")));
            }
            out.push(Command::Shell { set, argv });
        }
        "if" => {
            let cond = expression(vars, rest, rest_at)?;
            open.ifs.push(OpenIf {
                at,
                last_branch: Some(out.len()),
                jumps: Vec::new(),
                seen_else: false,
            });
            out.push(Command::Branch {
                cond,
                otherwise: usize::MAX,
            });
        }
        "elif" | "else" => {
            let Some(top) = open.ifs.last_mut() else {
                return Err(error(at, format!("\\{name} without a matching \\if")));
            };
            if top.seen_else {
                return Err(error(at, format!("\\{name} after \\else")));
            }
            top.jumps.push(out.len());
            out.push(Command::Jump(usize::MAX));
            if let Some(b) = top.last_branch.take() {
                let next = out.len();
                patch(out, b, next);
            }
            if name == "elif" {
                let cond = expression(vars, rest, rest_at)?;
                let top = open.ifs.last_mut().expect("checked above");
                top.last_branch = Some(out.len());
                out.push(Command::Branch {
                    cond,
                    otherwise: usize::MAX,
                });
            } else {
                no_arguments(name, &words)?;
                top.seen_else = true;
            }
        }
        "endif" => {
            no_arguments(name, &words)?;
            let Some(top) = open.ifs.pop() else {
                return Err(error(at, "\\endif without a matching \\if"));
            };
            let end = out.len();
            if let Some(b) = top.last_branch {
                patch(out, b, end);
            }
            for j in top.jumps {
                patch(out, j, end);
            }
        }
        "gset" | "aset" => {
            let prefix = match words.as_slice() {
                [] => String::new(),
                [(p, p_at)] => {
                    check_name(p, *p_at)?;
                    p.to_string()
                }
                [_, (_, extra_at), ..] => {
                    return Err(error(*extra_at, format!("too many arguments to \\{name}")))
                }
            };
            match out.last_mut() {
                Some(Command::Sql(sql)) if sql.store.is_none() => {
                    sql.store = Some(Store {
                        all: name == "aset",
                        prefix,
                    })
                }
                _ => return Err(error(at, format!("\\{name} must follow an SQL command"))),
            }
        }
        "startpipeline" => {
            no_arguments(name, &words)?;
            if open.pipeline.is_some() {
                return Err(error(at, "\\startpipeline inside a pipeline"));
            }
            open.pipeline = Some(OpenPipeline {
                at,
                depth: open.ifs.len(),
            });
            out.push(Command::StartPipeline);
        }
        "syncpipeline" => {
            no_arguments(name, &words)?;
            if open.pipeline.is_none() {
                return Err(error(at, "\\syncpipeline outside a pipeline"));
            }
            out.push(Command::SyncPipeline);
        }
        "endpipeline" => {
            no_arguments(name, &words)?;
            let Some(p) = open.pipeline.take() else {
                return Err(error(
                    at,
                    "\\endpipeline without a matching \\startpipeline",
                ));
            };
            if open.ifs.len() != p.depth {
                return Err(error(
                    at,
                    "\\endpipeline inside an \\if the pipeline did not start in: end the \
                     pipeline in the branch it started in",
                ));
            }
            out.push(Command::EndPipeline);
        }
        other => {
            return Err(error(
                at,
                format!(
                    "invalid command \\{other}; pgbench's are \\set, \\sleep, \\setshell, \\shell, \
                     \\if, \\elif, \\else, \\endif, \\gset, \\aset, \\startpipeline, \
                     \\syncpipeline and \\endpipeline"
                ),
            ))
        }
    }
    Ok(())
}

/// Points the branch or jump at `index` to command `to`.
fn patch(out: &mut [Command], index: usize, to: usize) {
    match &mut out[index] {
        Command::Branch { otherwise, .. } => *otherwise = to,
        Command::Jump(target) => *target = to,
        _ => unreachable!("only branches and jumps are patched"),
    }
}

fn no_arguments(name: &str, words: &[(&str, usize)]) -> Result<(), CompileError> {
    match words.first() {
        Some((_, at)) => Err(error(*at, format!("\\{name} takes no argument"))),
        None => Ok(()),
    }
}

/// Whitespace-separated words of `rest` with their file offsets.
fn words(rest: &str, rest_at: usize) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in rest.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((&rest[s..i], rest_at + s));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((&rest[s..], rest_at + s));
    }
    out
}

/// A character pgbench allows in a variable name.
pub fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()
}

fn check_name(name: &str, at: usize) -> Result<(), CompileError> {
    if name.is_empty() || !name.chars().all(name_char) {
        return Err(error(at, format!("invalid variable name \"{name}\"")));
    }
    Ok(())
}

/// Splits SQL at its `:variables` (`::` is a cast and stays), as pgbench does: everywhere in
/// the text, quotes included.
fn sql(text: &str, name: String, vars: &mut VarNames) -> Sql {
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
    Sql {
        statement: pgwire::Statement {
            name: Box::leak(name.into_boxed_str()),
            sql: Box::leak(numbered.into_boxed_str()),
        },
        parts,
        params,
        store: None,
    }
}

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;
