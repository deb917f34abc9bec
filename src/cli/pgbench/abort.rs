//! pgbench 15's lines for an aborted client (issue 38), made from `summary.json`'s
//! `aborted_clients`: a user who greps pgbench's stderr for "aborted in command" finds it.
//!
//! The driver words an abort as `results::down::AbortedClient` documents it: a server error
//! as `"NAME" command C: ERROR:  ...` (C counted from 0, as pgbench counts), a script's own
//! runtime error as `script "NAME" command N: ...` (N counted from 1, the script's own
//! numbering), anything else as a sentence of its own ("end of script reached without
//! completing the last transaction"). Each becomes pgbench's shape:
//!
//! - `client 0 script 0 aborted in command 1 query 0: ERROR:  relation "nope" does not exist`
//! - `client 0 aborted in command 0 of script 0: echo: undefined variable ":x"; ...`
//!   (pgbench also names the meta-command, `(shell)`, which the summary does not keep)
//! - `client 0 aborted: end of script reached without completing the last transaction ...`
//!
//! A message in no known shape is shown whole after `client N aborted: `, so no wording the
//! driver or the script runner chooses is ever lost. Pure: `cmd` prints the lines.

use super::plan::Script;
use crate::results::down::AbortedClient;

/// The two shapes of an abort message the driver writes (see the module's header).
enum Shape<'a> {
    /// A script's own runtime error: its command counted from 1.
    Script {
        name: &'a str,
        number: u32,
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
    if let Some((name, number, text)) = message.strip_prefix("script ").and_then(named_command) {
        return Shape::Script { name, number, text };
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

/// pgbench's line for one aborted client (without the `pgbench: error: ` prefix).
pub fn line(aborted: &AbortedClient, scripts: &[Script]) -> String {
    let client = aborted.client;
    let place = |name: &str| match script_index(scripts, name) {
        Some(s) => s.to_string(),
        None => format!("\"{name}\""),
    };
    match shape(&aborted.message) {
        // The script's numbering starts at 1, pgbench's at 0.
        Shape::Script { name, number, text } => format!(
            "client {client} aborted in command {} of script {}: {text}",
            number.saturating_sub(1),
            place(name)
        ),
        Shape::Server {
            name,
            command,
            text,
        } => format!(
            "client {client} script {} aborted in command {command} query 0: {text}",
            place(name)
        ),
        Shape::Other => format!("client {client} aborted: {}", aborted.message),
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

    #[test]
    fn a_server_error_reads_as_pgbench_s_abort_line() {
        let a = aborted(
            1,
            "\"bad\" command 1: ERROR:  relation \"nope\" does not exist",
        );
        assert_eq!(
            line(&a, &scripts(&["bad"])),
            "client 1 script 0 aborted in command 1 query 0: ERROR:  relation \"nope\" does not exist"
        );
    }

    #[test]
    fn a_script_error_counts_commands_from_zero_and_names_the_script_s_place() {
        let a = aborted(
            0,
            "script \"sh\" command 1: echo: undefined variable \":x\"",
        );
        assert_eq!(
            line(&a, &scripts(&["bad", "sh"])),
            "client 0 aborted in command 0 of script 1: echo: undefined variable \":x\""
        );
    }

    #[test]
    fn any_other_message_is_kept_whole() {
        let text = "end of script reached without completing the last transaction";
        assert_eq!(
            line(&aborted(0, text), &scripts(&["open"])),
            format!("client 0 aborted: {text}")
        );
        let odd = "\"x\" command one: ERROR:  boom";
        assert_eq!(
            line(&aborted(2, odd), &scripts(&["x"])),
            format!("client 2 aborted: {odd}")
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
            script_of(&aborted(0, "script \"a\" command 1: x"), &all),
            Some(0)
        );
        assert_eq!(script_of(&aborted(0, "end of script reached"), &all), None);
    }

    #[test]
    fn a_script_not_on_the_command_line_is_named() {
        let a = aborted(0, "\"other\" command 2: ERROR:  boom");
        assert_eq!(
            line(&a, &scripts(&["a", "b"])),
            "client 0 script \"other\" aborted in command 2 query 0: ERROR:  boom"
        );
    }
}
