//! Meta-commands (`\set`, `\sleep`, `\shell`, `\if`..., `\gset`, pipelines) compiled one
//! function each, with pgbench 15's rules for their arguments; a mistake points at the word
//! pgbench's caret points at (or, where pgbench shows none, at the command), and its message
//! starts with pgbench's words (`missing argument in command "set"`), tidebench's fix after.
//!
//! What pgbench 15 finds only when a client runs the command (a bad variable name in `\set`,
//! `\startpipeline` twice, `\endpipeline` outside a pipeline, `\gset` in a pipeline) compiles
//! into [`Command::Fail`], which aborts the client when reached, as pgbench's run does.

use super::compile::{
    check_name, error, valid_name, Amount, Arg, Command, CompileError, Store, VarNames,
};
use super::expr::{self, Expr};

/// pgbench's limit on the words after a meta-command's name (its MAX_ARGS, 256, counts the
/// name too).
pub const MAX_META_ARGS: usize = 255;

/// One meta-command as written: its name, where it starts, the rest of its line and that
/// rest's whitespace-separated words, each with its offset in the file.
pub struct Meta<'a> {
    name: &'a str,
    at: usize,
    rest: &'a str,
    rest_at: usize,
    words: Vec<Word<'a>>,
}

impl<'a> Meta<'a> {
    pub fn new(name: &'a str, at: usize, rest: &'a str, rest_at: usize) -> Meta<'a> {
        Meta {
            name,
            at,
            rest,
            rest_at,
            words: words(rest, rest_at),
        }
    }

    /// Just past the command's line, trailing blanks included: where pgbench points when an
    /// expression is missing (its line break; at a file's end see `sources::pointed`).
    fn end(&self) -> usize {
        self.rest_at + self.rest.len()
    }

    /// The expression in `text` (at file offset `text_at`).
    fn expression(
        &self,
        vars: &mut VarNames,
        text: &str,
        text_at: usize,
    ) -> Result<Expr, CompileError> {
        let name = self.name;
        if text.trim().is_empty() {
            return Err(error(
                self.end(),
                format!("syntax error in command \"{name}\": \\{name} needs an expression"),
            ));
        }
        // pgbench names the command after the expression's own message.
        expr::parse(text, &mut |n: &str| vars.slot(n)).map_err(|e| {
            error(
                text_at + e.offset,
                format!("{} in command \"{name}\"", e.message),
            )
        })
    }

    fn no_arguments(&self) -> Result<(), CompileError> {
        match self.words.first() {
            Some((_, at)) => Err(error(
                *at,
                format!(
                    "unexpected argument in command \"{0}\": \\{0} takes none",
                    self.name
                ),
            )),
            None => Ok(()),
        }
    }

    /// pgbench's "missing argument" refusal, with an example of the command written whole.
    fn missing(&self, what: &str, example: &str) -> CompileError {
        error(
            self.at,
            format!("{what} in command \"{0}\": write {example}", self.name),
        )
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

/// An open `\startpipeline`: the `\if` depth it must end at.
struct OpenPipeline {
    depth: usize,
}

/// The commands compiled so far, and the `\if` chains and pipeline still open.
pub struct Builder<'v> {
    pub vars: &'v mut VarNames,
    pub out: Vec<Command>,
    /// The number pgbench gives the command being compiled (from 1; `\gset` and `\aset`
    /// join the SQL before them), for a condition error.
    pub number: usize,
    /// The first line of the command before, when it was a meta-command (pgbench names it
    /// when a `\gset` follows one).
    pub after_meta: Option<String>,
    ifs: Vec<OpenIf>,
    pipeline: Option<OpenPipeline>,
    /// The first misplaced `\elif`, `\else` or `\endif`: pgbench checks a script's `\if`
    /// chains once it has read the whole script, so a syntax error further on comes first.
    misplaced: Option<CompileError>,
}

impl<'v> Builder<'v> {
    pub fn new(vars: &'v mut VarNames) -> Builder<'v> {
        Builder {
            vars,
            out: Vec::new(),
            number: 0,
            after_meta: None,
            ifs: Vec::new(),
            pipeline: None,
            misplaced: None,
        }
    }

    /// pgbench's words for a misplaced `\elif`, `\else` or `\endif` (or an `\if` left open),
    /// with the command's number as pgbench counts it; `hint` says the fix.
    fn condition(&self, at: usize, number: usize, words: &str, hint: &str) -> CompileError {
        let hint = if hint.is_empty() {
            String::new()
        } else {
            format!(": {hint}")
        };
        error(
            at,
            format!("condition error in command {number}: {words}{hint}"),
        )
    }

    /// Keeps the first misplaced `\elif`, `\else` or `\endif` for [`Builder::finish`].
    fn misplaced(&mut self, at: usize, words: &str, hint: &str) {
        if self.misplaced.is_none() {
            self.misplaced = Some(self.condition(at, self.number, words, hint));
        }
    }

    /// The commands, once every `\if` and pipeline is closed.
    pub fn finish(self) -> Result<Vec<Command>, CompileError> {
        if let Some(e) = self.misplaced {
            return Err(e);
        }
        if let Some(unclosed) = self.ifs.last() {
            // pgbench numbers an unclosed chain one past the script's last command.
            return Err(self.condition(
                unclosed.at,
                self.number + 1,
                "\\if without matching \\endif",
                "close it with \\endif",
            ));
        }
        // A pipeline still open at the end is pgbench 15's run-time abort ("end of script
        // reached with pipeline open"), which `run` reports.
        if self.out.is_empty() {
            return Err(error(
                0,
                "empty command list for script: give the script at least one command",
            ));
        }
        Ok(self.out)
    }

    /// Compiles one meta-command.
    pub fn meta(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        self.check_pipeline(m)?;
        match m.name {
            "set" => self.set(m),
            "sleep" => self.sleep(m),
            "shell" | "setshell" => self.shell(m),
            "if" => self.if_(m),
            "elif" | "else" => self.elif_else(m),
            "endif" => self.endif(m),
            "gset" | "aset" => self.store(m),
            "startpipeline" => self.start_pipeline(m),
            "syncpipeline" => self.sync_pipeline(m),
            "endpipeline" => self.end_pipeline(m),
            other => Err(error(
                m.at,
                format!(
                    "invalid command in command \"{other}\": pgbench's are \\set, \\sleep, \\setshell, \\shell, \
                     \\if, \\elif, \\else, \\endif, \\gset, \\aset, \\startpipeline, \
                     \\syncpipeline and \\endpipeline"
                ),
            )),
        }
    }

    /// What a pipeline forbids inside it.
    fn check_pipeline(&self, m: &Meta<'_>) -> Result<(), CompileError> {
        let Some(p) = &self.pipeline else {
            return Ok(());
        };
        let name = m.name;
        // A pipeline lies within one branch of an \if, so every run that starts it ends it.
        let leaves_branch = matches!(name, "elif" | "else" | "endif") && self.ifs.len() <= p.depth;
        if leaves_branch {
            return Err(error(
                m.at,
                format!("\\{name} inside a pipeline: end the pipeline in the branch it started in"),
            ));
        }
        Ok(())
    }

    fn set(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        let Some(&(var, var_at)) = m.words.first() else {
            return Err(m.missing("missing argument", "\\set x 1 + 2"));
        };
        let after = var_at - m.rest_at + var.len();
        let expr = m.expression(self.vars, &m.rest[after..], m.rest_at + after)?;
        if !valid_name(var) {
            // pgbench 15 parses the expression, then aborts the client that sets the name.
            self.out.push(Command::Fail(bad_name("set", var)));
            return Ok(());
        }
        let slot = self.vars.slot(var);
        self.out.push(Command::Set { slot, expr });
        Ok(())
    }

    /// `\sleep N [us|ms|s]`, `\sleep Nms` (pgbench splits a unit written onto the number)
    /// or `\sleep :var [unit]`.
    fn sleep(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        let (amount, amount_at) = match m.words.as_slice() {
            [] => return Err(m.missing("missing argument", "\\sleep 10 ms")),
            [_, _, (_, extra_at), ..] => {
                return Err(error(
                    *extra_at,
                    "too many arguments in command \"sleep\": write \\sleep 10 ms",
                ))
            }
            [(a, a_at), ..] => (*a, *a_at),
        };
        let (amount, unit) = if let Some(var) = amount.strip_prefix(':') {
            check_name(var, amount_at + 1)?;
            (Amount::Var(self.vars.slot(var)), m.words.get(1).copied())
        } else {
            let (n, attached) = sleep_number(amount, amount_at, m.words.len())?;
            (
                Amount::Fixed(n),
                attached.or_else(|| m.words.get(1).copied()),
            )
        };
        let unit_us = match unit {
            None => 1_000_000,
            Some((u, u_at)) => unit_us(u).ok_or_else(|| {
                error(
                    u_at,
                    format!(
                        "unrecognized time unit, must be us, ms or s ({u}) in command \"sleep\""
                    ),
                )
            })?,
        };
        self.out.push(Command::Sleep { amount, unit_us });
        Ok(())
    }

    fn shell(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        let name = m.name;
        if let Some((_, extra_at)) = m.words.get(MAX_META_ARGS) {
            return Err(error(
                *extra_at,
                format!(
                    "too many arguments in command \"{name}\": pgbench takes at most \
                     {MAX_META_ARGS}; put the command in a shell script and call that"
                ),
            ));
        }
        let mut words = m.words.iter();
        let set = if name == "setshell" {
            let (Some(&(var, _)), true) = (words.next(), m.words.len() > 1) else {
                return Err(m.missing("missing argument", "\\setshell x echo 1"));
            };
            if !valid_name(var) {
                // As `\set`: pgbench 15 aborts the client that sets the name.
                self.out.push(Command::Fail(bad_name("setshell", var)));
                return Ok(());
            }
            Some(self.vars.slot(var))
        } else {
            None
        };
        let argv: Vec<Arg> = words
            .map(|&(w, _)| match w.strip_prefix(':') {
                Some(rest) if rest.starts_with(':') => Arg::Text(rest.to_string()),
                Some(var) if !var.is_empty() => Arg::Var(self.vars.slot(var)),
                _ => Arg::Text(w.to_string()),
            })
            .collect();
        if argv.is_empty() {
            return Err(m.missing("missing command", "\\shell echo 1"));
        }
        self.out.push(Command::Shell { set, argv });
        Ok(())
    }

    fn if_(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        let cond = m.expression(self.vars, m.rest, m.rest_at)?;
        self.ifs.push(OpenIf {
            at: m.at,
            last_branch: Some(self.out.len()),
            jumps: Vec::new(),
            seen_else: false,
        });
        self.out.push(Command::Branch {
            cond,
            otherwise: usize::MAX,
        });
        Ok(())
    }

    /// `\elif` / `\else`: the branch before ends with a jump past `\endif`, and its
    /// condition, when false, now leads here.
    fn elif_else(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        let name = m.name;
        let misplaced = match self.ifs.last() {
            None => Some((
                format!("\\{name} without matching \\if"),
                "open the chain with \\if first",
            )),
            Some(top) if top.seen_else => Some((format!("\\{name} after \\else"), "")),
            Some(_) => None,
        };
        if let Some((words, hint)) = misplaced {
            self.misplaced(m.at, &words, hint);
            // The rest is still read for its syntax; the script never runs.
            if name == "elif" {
                m.expression(self.vars, m.rest, m.rest_at)?;
            } else {
                m.no_arguments()?;
            }
            return Ok(());
        }
        let Some(top) = self.ifs.last_mut() else {
            return Ok(());
        };
        top.jumps.push(self.out.len());
        let last_branch = top.last_branch.take();
        self.out.push(Command::Jump(usize::MAX));
        if let Some(b) = last_branch {
            let next = self.out.len();
            patch(&mut self.out, b, next);
        }
        if name == "elif" {
            let cond = m.expression(self.vars, m.rest, m.rest_at)?;
            let branch = self.out.len();
            self.out.push(Command::Branch {
                cond,
                otherwise: usize::MAX,
            });
            if let Some(top) = self.ifs.last_mut() {
                top.last_branch = Some(branch);
            }
        } else {
            m.no_arguments()?;
            if let Some(top) = self.ifs.last_mut() {
                top.seen_else = true;
            }
        }
        Ok(())
    }

    fn endif(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        m.no_arguments()?;
        let Some(top) = self.ifs.pop() else {
            self.misplaced(
                m.at,
                "\\endif without matching \\if",
                "open the chain with \\if first",
            );
            return Ok(());
        };
        let end = self.out.len();
        if let Some(b) = top.last_branch {
            patch(&mut self.out, b, end);
        }
        for j in top.jumps {
            patch(&mut self.out, j, end);
        }
        Ok(())
    }

    /// `\gset [prefix]` / `\aset [prefix]`: joins the SQL command before it.
    fn store(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        let name = m.name;
        let prefix = match m.words.as_slice() {
            [] => String::new(),
            [(p, p_at)] => {
                check_name(p, *p_at)?;
                p.to_string()
            }
            [_, (_, extra_at), ..] => {
                return Err(error(
                    *extra_at,
                    format!("too many arguments in command \"{name}\": it takes one prefix"),
                ))
            }
        };
        // pgbench says `\gset` for `\aset` too, and names a meta-command before it (the SQL
        // compiled last may lie in an `\if` branch the meta-command closed).
        if let Some(before) = &self.after_meta {
            return Err(error(
                m.at,
                format!("\\gset must follow an SQL command ({before})"),
            ));
        }
        let in_pipeline = self.pipeline.is_some();
        match self.out.last_mut() {
            Some(last @ Command::Sql(_)) if in_pipeline => {
                // pgbench 15 aborts the client when it reaches the query, before sending it.
                *last = Command::Fail(format!("\\{name} is not allowed in pipeline mode"));
                Ok(())
            }
            Some(Command::Sql(sql)) if sql.store.is_none() => {
                sql.store = Some(Store {
                    all: name == "aset",
                    prefix,
                });
                Ok(())
            }
            _ => Err(error(m.at, "\\gset must follow an SQL command")),
        }
    }

    fn start_pipeline(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        m.no_arguments()?;
        if self.pipeline.is_some() {
            self.out.push(Command::Fail(
                "already in pipeline mode: end the pipeline with \\endpipeline first".into(),
            ));
            return Ok(());
        }
        self.pipeline = Some(OpenPipeline {
            depth: self.ifs.len(),
        });
        self.out.push(Command::StartPipeline);
        Ok(())
    }

    fn sync_pipeline(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        m.no_arguments()?;
        if self.pipeline.is_none() {
            return Err(error(m.at, "\\syncpipeline outside a pipeline"));
        }
        self.out.push(Command::SyncPipeline);
        Ok(())
    }

    fn end_pipeline(&mut self, m: &Meta<'_>) -> Result<(), CompileError> {
        m.no_arguments()?;
        let Some(p) = self.pipeline.take() else {
            self.out.push(Command::Fail(
                "not in pipeline mode: start the pipeline with \\startpipeline first".into(),
            ));
            return Ok(());
        };
        if self.ifs.len() != p.depth {
            return Err(error(
                m.at,
                "\\endpipeline inside an \\if the pipeline did not start in: end the \
                 pipeline in the branch it started in",
            ));
        }
        self.out.push(Command::EndPipeline);
        Ok(())
    }
}

/// pgbench 15's run-time message for a command that sets a variable whose name it refuses.
fn bad_name(command: &str, name: &str) -> String {
    format!(
        "{command}: invalid variable name: \"{name}\"; assignment of meta-command failed \
         (a name is letters, digits and _, and does not start with a digit)"
    )
}

/// A word and its offset in the file.
type Word<'a> = (&'a str, usize);

/// A `\sleep` number as pgbench 15 reads it: an optional sign and digits, and a unit
/// written onto them (`2ms`) when it is the command's only word. Returns the number and the
/// attached unit with its offset.
fn sleep_number(
    word: &str,
    at: usize,
    words: usize,
) -> Result<(i64, Option<Word<'_>>), CompileError> {
    let sign = usize::from(word.starts_with(['+', '-']));
    let digits = word[sign..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(word.len(), |i| sign + i);
    let not_integer = || {
        error(
            at,
            format!("invalid sleep time \"{word}\": write a whole number, \\sleep 10 ms"),
        )
    };
    if digits == sign || (digits < word.len() && words > 1) {
        return Err(not_integer());
    }
    let n = word[..digits].parse::<i64>().map_err(|_| not_integer())?;
    let attached = (digits < word.len()).then(|| (&word[digits..], at + digits));
    Ok((n, attached))
}

/// Microseconds in one `unit` (any case, as pgbench).
fn unit_us(unit: &str) -> Option<i64> {
    match unit.to_ascii_lowercase().as_str() {
        "us" => Some(1),
        "ms" => Some(1_000),
        "s" => Some(1_000_000),
        _ => None,
    }
}

/// Points the branch or jump at `index` to command `to`.
fn patch(out: &mut [Command], index: usize, to: usize) {
    match &mut out[index] {
        Command::Branch { otherwise, .. } => *otherwise = to,
        Command::Jump(target) => *target = to,
        _ => unreachable!("only branches and jumps are patched"),
    }
}

/// Whitespace-separated words of `rest` with their file offsets.
fn words(rest: &str, rest_at: usize) -> Vec<Word<'_>> {
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
