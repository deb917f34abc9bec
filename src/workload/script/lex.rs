//! A pgbench script's text split into commands, as pgbench's own lexer splits it: SQL runs to
//! a `;` outside quotes, comments and parentheses (`\;` puts a `;` into the command without
//! ending it), and a backslash outside quotes starts a meta-command that runs to the end of
//! its line (a backslash at the very end of a line continues it on the next).
//!
//! Every piece keeps its byte offset in the file, so a later error can point at its line and
//! column with a caret.

/// One command as written: SQL text, or a meta-command's name and what follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lexed {
    /// SQL text as it is sent (`--` comments dropped, `\;` turned into `;`), with the offset
    /// of its first character.
    Sql { text: String, at: usize },
    /// `\name rest`: `rest` is the rest of the line with continuations blanked out (so an
    /// offset into it plus `rest_at` is an offset into the file).
    Meta {
        name: String,
        at: usize,
        rest: String,
        rest_at: usize,
    },
}

/// Where a lexing error is, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub at: usize,
    pub message: String,
}

/// Splits `src` into commands.
pub fn lex(src: &str) -> Result<Vec<Lexed>, LexError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut sql = String::new();
    let mut sql_at = 0;
    let mut depth = 0usize;
    let mut i = 0;
    // Pushes the SQL gathered so far as a command when it holds more than blanks.
    let flush = |sql: &mut String, at: usize, out: &mut Vec<Lexed>| {
        if !sql.trim().is_empty() {
            out.push(Lexed::Sql {
                text: sql.trim_end().to_string(),
                at,
            });
        }
        sql.clear();
    };
    while i < b.len() {
        let c = b[i];
        if sql.is_empty() {
            // Blanks between commands belong to none.
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            sql_at = i;
        }
        if let Some((end, unterminated)) = quoted_run(src, i) {
            // Quotes and block comments are copied whole: nothing inside them ends a command.
            let end = end.ok_or(LexError {
                at: i,
                message: unterminated,
            })?;
            sql.push_str(&src[i..end]);
            i = end;
            continue;
        }
        match c {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                // A comment to the end of the line: dropped, the line break kept.
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b';' if depth == 0 => {
                sql.push(';');
                flush(&mut sql, sql_at, &mut out);
                i += 1;
                continue;
            }
            b'\\' if b.get(i + 1) == Some(&b';') => {
                sql.push(';');
                i += 2;
                continue;
            }
            b'\\' => {
                flush(&mut sql, sql_at, &mut out);
                depth = 0;
                let (meta, end) = meta_command(src, i)?;
                out.push(meta);
                i = end;
                continue;
            }
            _ => {}
        }
        let ch = src[i..].chars().next().unwrap_or(' ');
        sql.push(ch);
        i += ch.len_utf8();
    }
    flush(&mut sql, sql_at, &mut out);
    Ok(out)
}

/// A quoted string, quoted identifier, dollar-quoted string or block comment starting at
/// byte `i`: its end (None when it never ends) and what to call it then; None for anything
/// else.
fn quoted_run(src: &str, i: usize) -> Option<(Option<usize>, String)> {
    let b = src.as_bytes();
    match b[i] {
        b'/' if b.get(i + 1) == Some(&b'*') => {
            Some((block_comment_end(b, i), "unterminated /* comment".into()))
        }
        b'\'' => {
            let escapes = i > 0 && matches!(b[i - 1], b'E' | b'e') && !word_before(b, i - 1);
            Some((
                quoted_end(b, i, b'\'', escapes),
                "unterminated quoted string".into(),
            ))
        }
        b'"' => Some((
            quoted_end(b, i, b'"', false),
            "unterminated quoted identifier".into(),
        )),
        b'$' => dollar_tag(b, i).map(|tag_end| {
            let tag = &src[i..tag_end];
            let end = src[tag_end..]
                .find(tag)
                .map(|body| tag_end + body + tag.len());
            (end, format!("unterminated dollar-quoted string {tag}"))
        }),
        _ => None,
    }
}

/// True when byte `at` continues a word (so `WHERE'x'` is not an E-string).
fn word_before(b: &[u8], at: usize) -> bool {
    at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_')
}

/// The end (exclusive) of a quoted run starting at `start` with `quote`; a doubled quote stays
/// inside, and with `escapes` a backslash takes the next byte along (E'...').
fn quoted_end(b: &[u8], start: usize, quote: u8, escapes: bool) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        if escapes && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// The end of a `/* ... */` comment (they nest in PostgreSQL).
fn block_comment_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0;
    let mut i = start;
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The end of a dollar-quote opening tag (`$$` or `$tag$`) at `start`; None for anything
/// else (`$1` is a parameter).
fn dollar_tag(b: &[u8], start: usize) -> Option<usize> {
    if start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
        return None;
    }
    let mut i = start + 1;
    if b.get(i).is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
        i += 1;
    }
    (b.get(i) == Some(&b'$')).then_some(i + 1)
}

/// The meta-command starting at the backslash at `start`: its name, then the rest of its
/// line. A backslash ending a line joins the next one; it and the line break become blanks
/// so offsets into `rest` still match the file.
fn meta_command(src: &str, start: usize) -> Result<(Lexed, usize), LexError> {
    let b = src.as_bytes();
    let mut i = start + 1;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    let name = src[start + 1..i].to_ascii_lowercase();
    if name.is_empty() {
        return Err(LexError {
            at: start,
            message: "a backslash must start a meta-command (\\set, \\sleep, ...) or be \\;".into(),
        });
    }
    let rest_at = i;
    let mut rest = String::new();
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
            rest.push_str("  ");
            i += 2;
            continue;
        }
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') {
            rest.push_str("   ");
            i += 3;
            continue;
        }
        if b[i] == b'\n' {
            break;
        }
        let ch = src[i..].chars().next().unwrap_or(' ');
        rest.push(ch);
        i += ch.len_utf8();
    }
    Ok((
        Lexed::Meta {
            name,
            at: start,
            rest,
            rest_at,
        },
        i,
    ))
}

/// Line (1-based), column (1-based, in characters) and the line's text of byte `at`.
pub fn locate(src: &str, at: usize) -> (usize, usize, &str) {
    let at = at.min(src.len());
    let line_start = src[..at].rfind('\n').map_or(0, |p| p + 1);
    let line_end = src[at..].find('\n').map_or(src.len(), |p| at + p);
    let line = src[..at].matches('\n').count() + 1;
    let col = src[line_start..at].chars().count() + 1;
    (line, col, src[line_start..line_end].trim_end_matches('\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str) -> Lexed {
        Lexed::Sql {
            text: text.into(),
            at: 0,
        }
    }

    fn texts(src: &str) -> Vec<String> {
        lex(src)
            .unwrap()
            .into_iter()
            .map(|l| match l {
                Lexed::Sql { text, .. } => text,
                Lexed::Meta { name, rest, .. } => format!("\\{name}|{}", rest.trim()),
            })
            .collect()
    }

    #[test]
    fn sql_ends_at_semicolons_outside_quotes_comments_and_parentheses() {
        assert_eq!(
            texts("select ';' , \"a;b\", $$x;y$$, $q$;$q$ -- c;\n from t;\nselect (1;2);"),
            vec![
                "select ';' , \"a;b\", $$x;y$$, $q$;$q$ \n from t;",
                "select (1;2);"
            ]
        );
        assert_eq!(
            texts("select 1 \\; select 2;"),
            vec!["select 1 ; select 2;"]
        );
        assert_eq!(texts("select E'a\\'b;' ;"), vec!["select E'a\\'b;' ;"]);
        assert_eq!(
            texts("select /* a /* b; */ ; */ 1;"),
            vec!["select /* a /* b; */ ; */ 1;"]
        );
        assert_eq!(texts("select $1;"), vec!["select $1;"]);
        assert_eq!(
            lex("  select 1;").unwrap()[0],
            Lexed::Sql {
                text: "select 1;".into(),
                at: 2
            }
        );
        let _ = sql("");
    }

    #[test]
    fn meta_commands_run_to_the_end_of_the_line_and_end_sql_before_them() {
        assert_eq!(
            texts("\\set aid random(1, 10)\nselect :aid \\gset p_\n\\SLEEP 1 ms\n"),
            vec![
                "\\set|aid random(1, 10)",
                "select :aid",
                "\\gset|p_",
                "\\sleep|1 ms"
            ]
        );
        assert_eq!(
            texts("\\set x 1 + \\\n  2\nselect 1"),
            vec!["\\set|x 1 +     2", "select 1"]
        );
        let lexed = lex("\\set x 1 + \\\n 2").unwrap();
        let Lexed::Meta { rest, rest_at, .. } = &lexed[0] else {
            panic!()
        };
        // Offsets into `rest` are offsets into the file.
        let two = rest.find('2').unwrap();
        assert_eq!(&"\\set x 1 + \\\n 2"[rest_at + two..], "2");
    }

    #[test]
    fn unterminated_pieces_say_where_they_start() {
        for (src, at, says) in [
            ("select 'abc", 7, "quoted string"),
            ("select \"x", 7, "identifier"),
            ("select $a$ x", 7, "dollar"),
            ("select /* x", 7, "comment"),
            ("select 1;\n\\ x", 10, "backslash"),
        ] {
            let e = lex(src).unwrap_err();
            assert_eq!(e.at, at, "{src}");
            assert!(e.message.contains(says), "{src}: {}", e.message);
        }
    }

    #[test]
    fn locate_gives_line_column_and_the_line() {
        let src = "select 1;\n\\set x foo(1)\n";
        let at = src.find("foo").unwrap();
        assert_eq!(locate(src, at), (2, 8, "\\set x foo(1)"));
        assert_eq!(locate(src, 0), (1, 1, "select 1;"));
    }
}
