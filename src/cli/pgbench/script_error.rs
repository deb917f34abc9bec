//! pgbench 15's shape for a script it refuses when it reads it (issue 56). tidebench's script
//! reader says `FILE:LINE:COL: MESSAGE: HINT`, then the line and a caret, indented; pgbench
//! says `FILE:LINE: MESSAGE`, then, for a command it parsed, the command's line as written and,
//! where it knows a column, `^ error found here` under it, neither indented. The column is the
//! reader's (the same as pgbench's, checked by the script tests); what pgbench shows besides
//! is pgbench's, by its message:
//!
//! - no caret under `unexpected argument`, `missing command`, `missing argument` and
//!   `invalid command` (it knows no column there);
//! - no line under `too many arguments in command "shell"` (counted before the line is kept)
//!   and `missing argument in command "set"`;
//! - under a `\gset` or `\aset` that ends an SQL line, that command's part of the line alone;
//! - `empty command list for script "FILE"` without a place;
//! - a misplaced `\elif`, `\else` or `\endif` as `condition error in script "FILE" command
//!   N: ...`, without a place, the command's number as pgbench counts them.
//!
//! Pure: `cmd` prints the lines after `pgbench: error: ` (the first) or as they are.

/// Messages under which pgbench shows the command's line but no caret.
const NO_CARET: [&str; 4] = [
    "unexpected argument in command ",
    "missing command in command ",
    "missing argument in command ",
    "invalid command in command ",
];

/// Messages under which pgbench shows neither the line nor a caret.
const NO_LINE: [&str; 2] = [
    "too many arguments in command \"shell\"",
    "missing argument in command \"set\"",
];

/// Commands that end an SQL line (`SELECT 1 \gset a b`): pgbench shows their own part of the
/// line, without a caret.
const TRAILING: [&str; 2] = ["\\gset", "\\aset"];

/// pgbench's lines for tidebench's refusal of a script, `None` when `text` is no such refusal.
pub fn pgbench_lines(text: &str) -> Option<Vec<String>> {
    // The reader's refusal always ends with its caret line.
    let all: Vec<&str> = text.lines().collect();
    let [first, shown, caret] = all.as_slice() else {
        return None;
    };
    if !caret.ends_with("^ error found here") {
        return None;
    }
    let (origin, line_no, message) = place(first)?;
    if message.starts_with("empty command list for script") {
        return Some(vec![format!("empty command list for script \"{origin}\"")]);
    }
    if let Some(rest) = message.strip_prefix("condition error in command ") {
        // `N: WORDS: HINT` → pgbench's `condition error in script "FILE" command N: WORDS`.
        let (number, words) = rest.split_once(": ")?;
        let words = words.split_once(": ").map_or(words, |(w, _)| w);
        return Some(vec![format!(
            "condition error in script \"{origin}\" command {number}: {words}"
        )]);
    }
    // pgbench's message ends with the command's name; tidebench's hint follows it.
    // A message that names no command (`\gset must follow an SQL command`) comes alone.
    let Some(at) = message.find(" in command \"") else {
        return Some(vec![format!("{origin}:{line_no}: {message}")]);
    };
    let name_at = at + " in command \"".len();
    let words = &message[..=message[name_at..].find('"')? + name_at];
    let mut out = vec![format!("{origin}:{line_no}: {words}")];
    if NO_LINE.iter().any(|m| words.starts_with(m)) {
        return Some(out);
    }
    let shown = shown.strip_prefix("    ").unwrap_or(shown);
    if let Some(at) = TRAILING.iter().find_map(|c| shown.rfind(c)) {
        out.push(shown[at..].to_string());
        return Some(out);
    }
    out.push(shown.to_string());
    if !NO_CARET.iter().any(|m| words.starts_with(m)) {
        out.push(caret.strip_prefix("    ").unwrap_or(caret).to_string());
    }
    Some(out)
}

/// `FILE:LINE:COL: MESSAGE` → (FILE, LINE, MESSAGE); the file's name may hold colons.
fn place(first: &str) -> Option<(&str, u32, &str)> {
    let mut from = 0;
    while let Some(i) = first[from..].find(':').map(|i| i + from) {
        let rest = &first[i + 1..];
        if let Some((line, after)) = rest.split_once(':') {
            if let Some((col, message)) = after.split_once(": ") {
                let numbers = line.parse::<u32>().ok().zip(col.parse::<u32>().ok());
                if let Some((line, _)) = numbers {
                    return Some((&first[..i], line, message));
                }
            }
        }
        from = i + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expression_s_error_keeps_the_line_and_the_caret_unindented() {
        let ours = "bad.sql:1:11: syntax error in command \"set\": \\set needs an expression\n    \
                    \\set i 1 +\n              ^ error found here";
        assert_eq!(
            pgbench_lines(ours).unwrap(),
            [
                "bad.sql:1: syntax error in command \"set\"",
                "\\set i 1 +",
                "          ^ error found here"
            ]
        );
    }

    #[test]
    fn a_message_without_a_hint_keeps_its_line_and_caret_too() {
        let ours = "bad.sql:1:13: unexpected number of arguments (hash) in command \"set\"\n    \
                    \\set i hash()\n                ^ error found here";
        assert_eq!(pgbench_lines(ours).unwrap().len(), 3);
    }

    #[test]
    fn pgbench_shows_no_caret_or_no_line_where_it_knows_no_column() {
        let arg = "b.sql:2:7: unexpected argument in command \"else\": \\else takes none\n    \
                   \\else BAD\n          ^ error found here";
        assert_eq!(
            pgbench_lines(arg).unwrap(),
            [
                "b.sql:2: unexpected argument in command \"else\"",
                "\\else BAD"
            ]
        );
        let shell = "b.sql:1:1: too many arguments in command \"shell\": at most 255\n    \
                     \\shell echo\n    ^ error found here";
        assert_eq!(
            pgbench_lines(shell).unwrap(),
            ["b.sql:1: too many arguments in command \"shell\""]
        );
        let gset =
            "b.sql:1:1: \\gset must follow an SQL command\n    \\gset\n    ^ error found here";
        assert_eq!(
            pgbench_lines(gset).unwrap(),
            ["b.sql:1: \\gset must follow an SQL command"]
        );
        let empty = "dir/b:c.sql:1:1: empty command list for script: give it one\n    \n    \
                     ^ error found here";
        assert_eq!(
            pgbench_lines(empty).unwrap(),
            ["empty command list for script \"dir/b:c.sql\""]
        );
    }

    #[test]
    fn a_condition_error_names_the_script_and_the_command_s_number() {
        let ours = "c.sql:1:1: condition error in command 2: \\if without matching \\endif: \
                    close it with \\endif\n    \\if 1\n    ^ error found here";
        assert_eq!(
            pgbench_lines(ours).unwrap(),
            ["condition error in script \"c.sql\" command 2: \\if without matching \\endif"]
        );
        let no_hint = "c.sql:3:1: condition error in command 3: \\else after \\else\n    \
                       \\else\n    ^ error found here";
        assert_eq!(
            pgbench_lines(no_hint).unwrap(),
            ["condition error in script \"c.sql\" command 3: \\else after \\else"]
        );
    }

    #[test]
    fn a_gset_shows_its_own_part_of_the_line() {
        let ours = "b.sql:1:18: too many arguments in command \"gset\": give one prefix\n    \
                    SELECT 1 \\gset a b\n                     ^ error found here";
        assert_eq!(
            pgbench_lines(ours).unwrap(),
            [
                "b.sql:1: too many arguments in command \"gset\"",
                "\\gset a b"
            ]
        );
    }

    #[test]
    fn anything_else_is_left_alone() {
        assert_eq!(pgbench_lines("could not connect: refused"), None);
    }
}
