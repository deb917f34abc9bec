//! pgbench 15's lines for an aborted client (issues 38 and 56), made from `summary.json`'s
//! `aborted_clients`: a user who greps pgbench's stderr for "aborted in command" finds it.
//!
//! The driver words an abort as `results::down::AbortedClient` documents it: a server error
//! as `"NAME" command C: ERROR:  ...` (C counted from 0, as pgbench counts), a script's own
//! runtime error as `script "NAME" command N (KIND): ...` (N counted from 1, the script's own
//! numbering; KIND the meta-command's name or `SQL`), anything else as a sentence of its own
//! ("end of script reached without completing the last transaction (script ...); ..."). Each
//! becomes what pgbench 15 prints, one line after another:
//!
//! - `client 0 script 0 aborted in command 1 query 0: ERROR:  relation "nope" does not exist`
//! - a meta-command's failure: the error itself (`division by zero`), then
//!   `client 0 aborted in command 0 (set) of script 0; evaluation of meta-command failed`
//!   (`execution of` for `\shell`, `\setshell` and `\sleep`; the driver's own sentence, as
//!   `assignment of meta-command failed`, where it gives one after `; `);
//! - a pipeline command's: `client 0 aborted in command 0 (endpipeline) of script 0; not in
//!   pipeline mode`, the error itself as the reason;
//! - a `\gset`'s: the error, then `client 0 script 0 command 0 query 0: REASON`;
//! - `client 0 aborted: end of script reached without completing the last transaction`.
//!
//! tidebench's hints after pgbench's words (after `: ` in a pipeline command's error, in
//! parentheses after a sentence) are left out. A message in no known shape is shown whole
//! after `client N aborted: `, so no wording the driver or the script runner chooses is ever
//! lost. Pure: `cmd` prints the lines.

use super::plan::Script;
use crate::event::PrepareFailed;
use crate::results::down::AbortedClient;

/// A client aborted on a statement whose PREPARE failed, as pgbench 15 aborts it: pgbench
/// goes on to execute the statement it could not prepare, and the server's answer to that
/// is its reason (`prepared statement "P_0" does not exist`). `None`: another abort.
pub fn after_failed_prepare(
    aborted: &AbortedClient,
    unprepared: &[PrepareFailed],
) -> Option<AbortedClient> {
    let Shape::Server { name, command, .. } = shape(&aborted.message) else {
        return None;
    };
    let failed = unprepared
        .iter()
        .find(|f| f.client == aborted.client && f.txn_type == name && f.command == command)?;
    Some(AbortedClient {
        message: format!(
            "\"{name}\" command {command}: ERROR:  prepared statement \"{}\" does not exist",
            failed.statement
        ),
        ..aborted.clone()
    })
}

/// The two shapes of an abort message the driver writes (see the module's header).
enum Shape<'a> {
    /// A script's own runtime error: its command counted from 1, and its kind.
    Script {
        name: &'a str,
        number: u32,
        kind: &'a str,
        text: &'a str,
    },
    /// A server error: its command counted from 0, as pgbench's.
    Server {
        name: &'a str,
        command: u32,
        text: &'a str,
    },
    Other,
}

fn shape(message: &str) -> Shape<'_> {
    if let Some(rest) = message.strip_prefix("script ") {
        if let Some((name, number, kind, text)) = named_kind(rest) {
            return Shape::Script {
                name,
                number,
                kind,
                text,
            };
        }
    }
    match named_command(message) {
        Some((name, command, text)) => Shape::Server {
            name,
            command,
            text,
        },
        None => Shape::Other,
    }
}

/// pgbench's lines for one aborted client (each without the `pgbench: error: ` prefix).
pub fn lines(aborted: &AbortedClient, scripts: &[Script]) -> Vec<String> {
    let client = aborted.client;
    let place = |name: &str| match script_index(scripts, name) {
        Some(s) => s.to_string(),
        None => format!("\"{name}\""),
    };
    match shape(&aborted.message) {
        // The script's numbering starts at 1, pgbench's at 0.
        Shape::Script {
            name,
            number,
            kind,
            text,
        } => script_lines(client, number.saturating_sub(1), kind, &place(name), text),
        Shape::Server {
            name,
            command,
            text,
        } => vec![format!(
            "client {client} script {} aborted in command {command} query 0: {text}",
            place(name)
        )],
        Shape::Other => {
            // The driver's own words for the script come after pgbench's.
            let words = aborted
                .message
                .split_once(" (script \"")
                .map_or(aborted.message.as_str(), |(words, _)| words);
            vec![format!("client {client} aborted: {words}")]
        }
    }
}

/// pgbench's lines for a script's runtime error in command `command` (from 0) of kind `kind`
/// in script `script`.
fn script_lines(client: u32, command: u32, kind: &str, script: &str, text: &str) -> Vec<String> {
    // `ERROR; SENTENCE (HINT)`: the error, then pgbench's sentence for the abort.
    let (error, sentence) = match text.split_once("; ") {
        Some((error, sentence)) => (error, Some(without_hint(sentence))),
        None => (text, None),
    };
    // A shell's exit status is tidebench's addition.
    let error = match error.split_once(" (exit status: ") {
        Some((words, _)) => words,
        None => error,
    };
    // A `\gset` in a pipeline is refused by the SQL it ends; pgbench names the `\gset`.
    let kind = match (kind, error.strip_prefix('\\')) {
        ("SQL", Some(rest)) if rest.contains(" is not allowed in pipeline mode") => {
            rest.split_whitespace().next().unwrap_or(kind)
        }
        _ => kind,
    };
    let aborted = |why: &str| {
        format!("client {client} aborted in command {command} ({kind}) of script {script}; {why}")
    };
    match kind {
        "set" | "if" | "elif" => vec![
            error.to_string(),
            aborted(sentence.unwrap_or("evaluation of meta-command failed")),
        ],
        "shell" | "setshell" | "sleep" => vec![
            error.to_string(),
            aborted(sentence.unwrap_or("execution of meta-command failed")),
        ],
        "SQL" => {
            let query = format!("client {client} script {script} command {command} query 0");
            match sentence {
                Some(why) => vec![error.to_string(), format!("{query}: {why}")],
                // `\gset: expected one row, got 0`: pgbench names the query, not the command.
                None => {
                    let why = error.split_once(": ").map_or(error, |(_, why)| why);
                    vec![format!("{query}: {why}")]
                }
            }
        }
        // A pipeline command's (or a `\gset` in a pipeline's) error is pgbench's reason.
        _ => vec![aborted(
            error.split_once(": ").map_or(error, |(words, _)| words),
        )],
    }
}

/// A sentence without tidebench's hint in parentheses at its end.
fn without_hint(sentence: &str) -> &str {
    match sentence.rsplit_once(" (") {
        Some((words, _)) if sentence.ends_with(')') => words,
        _ => sentence,
    }
}

/// The script (its place on the command line) whose transaction aborted the client, when the
/// message names it.
pub fn script_of(aborted: &AbortedClient, scripts: &[Script]) -> Option<usize> {
    match shape(&aborted.message) {
        Shape::Script { name, .. } | Shape::Server { name, .. } => script_index(scripts, name),
        Shape::Other => None,
    }
}

/// `"NAME" command N: TEXT` → (NAME, N, TEXT).
fn named_command(s: &str) -> Option<(&str, u32, &str)> {
    let rest = s.strip_prefix('"')?;
    let (name, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(" command ")?;
    let (number, text) = rest.split_once(": ")?;
    Some((name, number.parse().ok()?, text))
}

/// `"NAME" command N (KIND): TEXT` → (NAME, N, KIND, TEXT).
fn named_kind(s: &str) -> Option<(&str, u32, &str, &str)> {
    let (name, number, rest) = {
        let rest = s.strip_prefix('"')?;
        let (name, rest) = rest.split_once('"')?;
        let rest = rest.strip_prefix(" command ")?;
        let (number, rest) = rest.split_once(" (")?;
        (name, number.parse().ok()?, rest)
    };
    let (kind, text) = rest.split_once("): ")?;
    Some((name, number, kind, text))
}

/// pgbench's script number: the place of the script on the command line (one script: 0).
pub(super) fn script_index(scripts: &[Script], txn_type: &str) -> Option<usize> {
    match scripts {
        [_] => Some(0),
        _ => scripts.iter().position(|s| s.txn_type == txn_type),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripts(names: &[&str]) -> Vec<Script> {
        names
            .iter()
            .map(|n| Script {
                desc: format!("{n}.sql"),
                weight: 1,
                txn_type: n.to_string(),
            })
            .collect()
    }

    fn aborted(client: u32, message: &str) -> AbortedClient {
        AbortedClient {
            client,
            at_s: 0.0,
            message: message.into(),
        }
    }

    fn said(message: &str, names: &[&str]) -> Vec<String> {
        lines(&aborted(0, message), &scripts(names))
    }

    #[test]
    fn a_server_error_reads_as_pgbench_s_abort_line() {
        let a = aborted(
            1,
            "\"bad\" command 1: ERROR:  relation \"nope\" does not exist",
        );
        assert_eq!(
            lines(&a, &scripts(&["bad"])),
            ["client 1 script 0 aborted in command 1 query 0: ERROR:  relation \"nope\" does not exist"]
        );
    }

    #[test]
    fn a_meta_command_s_error_comes_first_then_pgbench_s_abort_line() {
        assert_eq!(
            said("script \"sh\" command 1 (set): division by zero", &["bad", "sh"]),
            [
                "division by zero",
                "client 0 aborted in command 0 (set) of script 1; evaluation of meta-command failed"
            ]
        );
        assert_eq!(
            said(
                "script \"e\" command 1 (setshell): no-such: could not read result of shell \
                 command; execution of meta-command failed (\\setshell takes a number)",
                &["e"]
            ),
            [
                "no-such: could not read result of shell command",
                "client 0 aborted in command 0 (setshell) of script 0; execution of meta-command failed"
            ]
        );
        assert_eq!(
            said(
                "script \"e\" command 1 (shell): x: could not launch shell command (exit status: 127)",
                &["e"]
            ),
            [
                "x: could not launch shell command",
                "client 0 aborted in command 0 (shell) of script 0; execution of meta-command failed"
            ]
        );
    }

    #[test]
    fn pipeline_and_gset_errors_take_pgbench_s_shapes() {
        assert_eq!(
            said(
                "script \"p\" command 1 (endpipeline): not in pipeline mode: start it first",
                &["p"]
            ),
            ["client 0 aborted in command 0 (endpipeline) of script 0; not in pipeline mode"]
        );
        assert_eq!(
            said(
                "script \"g\" command 1 (SQL): \\gset: expected one row, got 0",
                &["g"]
            ),
            ["client 0 script 0 command 0 query 0: expected one row, got 0"]
        );
        assert_eq!(
            said(
                "script \"g\" command 1 (SQL): gset: invalid variable name: \"a b\"; error \
                 storing into variable a b (name the column with AS)",
                &["g"]
            ),
            [
                "gset: invalid variable name: \"a b\"",
                "client 0 script 0 command 0 query 0: error storing into variable a b"
            ]
        );
    }

    #[test]
    fn a_gset_in_a_pipeline_is_named_as_pgbench_names_it() {
        assert_eq!(
            said(
                "script \"p\" command 2 (SQL): \\gset is not allowed in pipeline mode",
                &["p"]
            ),
            ["client 0 aborted in command 1 (gset) of script 0; \\gset is not allowed in pipeline mode"]
        );
    }

    #[test]
    fn any_other_message_is_kept_without_the_script_s_name() {
        let text = "end of script reached without completing the last transaction";
        assert_eq!(
            said(
                &format!("{text} (script \"open\"); end it with COMMIT"),
                &["open"]
            ),
            [format!("client 0 aborted: {text}")]
        );
        let odd = "\"x\" command one: ERROR:  boom";
        assert_eq!(
            lines(&aborted(2, odd), &scripts(&["x"])),
            [format!("client 2 aborted: {odd}")]
        );
    }

    #[test]
    fn the_script_of_an_abort_is_its_place_on_the_command_line() {
        let all = scripts(&["a", "b"]);
        assert_eq!(
            script_of(&aborted(0, "\"b\" command 2: ERROR:  x"), &all),
            Some(1)
        );
        assert_eq!(
            script_of(&aborted(0, "script \"a\" command 1 (set): x"), &all),
            Some(0)
        );
        assert_eq!(script_of(&aborted(0, "end of script reached"), &all), None);
    }

    #[test]
    fn an_abort_after_a_failed_prepare_is_on_the_statement_that_does_not_exist() {
        let failed = PrepareFailed {
            client: 1,
            txn_type: "bad".into(),
            command: 2,
            statement: "P_1".into(),
            text: "ERROR:  relation \"nope\" does not exist".into(),
        };
        let a = aborted(
            1,
            "\"bad\" command 2: ERROR:  relation \"nope\" does not exist",
        );
        let said = after_failed_prepare(&a, std::slice::from_ref(&failed)).map(|a| a.message);
        assert_eq!(
            said.as_deref(),
            Some("\"bad\" command 2: ERROR:  prepared statement \"P_1\" does not exist")
        );
        let other = aborted(0, &a.message);
        assert_eq!(after_failed_prepare(&other, &[failed]), None);
    }

    #[test]
    fn a_script_not_on_the_command_line_is_named() {
        let a = aborted(0, "\"other\" command 2: ERROR:  boom");
        assert_eq!(
            lines(&a, &scripts(&["a", "b"])),
            ["client 0 script \"other\" aborted in command 2 query 0: ERROR:  boom"]
        );
    }
}
