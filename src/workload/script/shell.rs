//! pgbench's `\shell` and `\setshell`: the command line made from the script's words and
//! variables, run through `sh -c`, and what `\setshell` reads of its output.

use std::process::{Command as Process, Stdio};

use super::compile::{Arg, VarNames};

/// A client's variable's text by its slot, `None` while it is undefined. The interpreter
/// hands it in, so this module needs nothing of how a client keeps its variables.
pub(super) type TextOf<'a> = dyn Fn(usize) -> Option<&'a str> + 'a;

/// `\shell` / `\setshell`: runs the command; for `\setshell`, returns the text its variable
/// is set to.
pub(super) fn run_shell(
    set: Option<usize>,
    argv: &[Arg],
    names: &VarNames,
    text_of: &TextOf<'_>,
) -> Result<Option<String>, String> {
    let out = shell(argv, set.is_some(), names, text_of)
        .map_err(|m| format!("{m}; execution of meta-command failed"))?;
    if set.is_some() {
        // pgbench reads the first line the command prints (its exit status aside).
        let Some(line) = out.lines().next() else {
            return Err(format!(
                "{}: could not read result of shell command; execution of meta-command \
                 failed (\\setshell takes the number the command prints)",
                command_word(argv, names)
            ));
        };
        let text = line.trim();
        if text.parse::<i64>().is_err() {
            return Err(format!(
                "{}: shell command must return an integer (not \"{text}\"); execution of \
                 meta-command failed",
                command_word(argv, names)
            ));
        }
        return Ok(Some(text.to_string()));
    }
    Ok(None)
}

/// pgbench's longest `\shell` command line, in bytes (its SHELL_COMMAND_SIZE less the space
/// it puts first and the terminating NUL).
const MAX_SHELL_LINE: usize = 254;

/// Runs a `\shell` / `\setshell` command line through `sh -c` (pgbench hands it to the
/// shell too) and returns what `\setshell` reads. As pgbench's, the command writes to the
/// terminal: `\shell` inherits stdout and stderr, `\setshell` stderr (its stdout is the
/// value). That output is the user's command's, not tidebench's: it does not go through
/// events. It blocks the driver thread, as pgbench's does.
fn shell(
    argv: &[Arg],
    capture: bool,
    names: &VarNames,
    text_of: &TextOf<'_>,
) -> Result<String, String> {
    let mut line = String::new();
    for (i, arg) in argv.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        match arg {
            Arg::Text(t) => line.push_str(t),
            Arg::Var(slot) => match text_of(*slot) {
                Some(text) => line.push_str(text),
                None => {
                    return Err(format!(
                        "{}: undefined variable \":{}\"",
                        command_word(argv, names),
                        names.name(*slot)
                    ))
                }
            },
        }
    }
    if line.len() > MAX_SHELL_LINE {
        return Err(format!(
            "{}: shell command is too long ({} bytes; pgbench takes at most \
             {MAX_SHELL_LINE}): put it in a shell script and call that",
            command_word(argv, names),
            line.len()
        ));
    }
    let mut process = Process::new("sh");
    process.arg("-c").arg(&line).stderr(Stdio::inherit());
    if !capture {
        process.stdout(Stdio::inherit());
    }
    let launch = |why: String| {
        format!(
            "{}: could not launch shell command ({why})",
            command_word(argv, names)
        )
    };
    let out = process.output().map_err(|e| launch(e.to_string()))?;
    // `\shell` fails on a command that fails; `\setshell` only on one that prints nothing
    // (pgbench 15 reads its output and does not look at how it exited).
    if !capture && !out.status.success() {
        return Err(launch(out.status.to_string()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The command's first word as written (`:var` for a variable), which pgbench's messages
/// about a shell command start with.
fn command_word(argv: &[Arg], names: &VarNames) -> String {
    match argv.first() {
        Some(Arg::Text(t)) => t.clone(),
        Some(Arg::Var(slot)) => format!(":{}", names.name(*slot)),
        None => String::new(),
    }
}
