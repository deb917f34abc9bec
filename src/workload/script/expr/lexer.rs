//! Tokens of pgbench 15's expression language, cut as its flex scanner (`exprscan.l`) cuts
//! them: the longest match wins, keywords only when the whole word is one, and numbers,
//! identifiers and variables with flex's character classes (any byte >= 0x80 is a letter).
//! The parser pulls one token at a time, as bison does, so that of two errors in a text the
//! one pgbench reports first is the one reported here.

use super::value::parse_c_double;
use super::ParseError;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Tok<'a> {
    /// The end of the expression: the end of the text, or a newline.
    End,
    Int(i64),
    /// `9223372036854775808`, which only `-` may precede (giving the smallest int64).
    MaxIntPlusOne,
    Double(f64),
    /// `:name`, without the colon.
    Var(&'a str),
    /// A name that is no keyword: a function, once the parser checks it.
    Ident(&'a str),
    Null,
    Bool(bool),
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    EndKw,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    BitOr,
    BitAnd,
    Hash,
    Tilde,
    LParen,
    RParen,
    Comma,
}

/// A token and the bytes of the text it covers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Token<'a> {
    pub tok: Tok<'a>,
    pub start: usize,
    pub end: usize,
}

impl Token<'_> {
    /// Where pgbench points at this token in an error: its last byte (the scanner's position
    /// minus one), or the end itself; never inside a multi-byte character.
    pub fn error_offset(&self, text: &str) -> usize {
        let mut at = if self.end > self.start {
            self.end - 1
        } else {
            self.start
        };
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    }
}

pub(super) struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

/// flex's `{alnum}`: ASCII letters, digits, `_`, and every non-ASCII byte.
fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// flex's `{alpha}`: `{alnum}` without the digits.
fn is_alpha(b: u8) -> bool {
    is_alnum(b) && !b.is_ascii_digit()
}

fn keyword(word: &str) -> Option<Tok<'static>> {
    const KEYWORDS: [(&str, Tok<'static>); 14] = [
        ("and", Tok::And),
        ("or", Tok::Or),
        ("not", Tok::Not),
        ("is", Tok::Is),
        ("isnull", Tok::IsNull),
        ("notnull", Tok::NotNull),
        ("case", Tok::Case),
        ("when", Tok::When),
        ("then", Tok::Then),
        ("else", Tok::Else),
        ("end", Tok::EndKw),
        ("null", Tok::Null),
        ("true", Tok::Bool(true)),
        ("false", Tok::Bool(false)),
    ];
    KEYWORDS
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(word))
        .map(|&(_, t)| t)
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Lexer { text, pos: 0 }
    }

    pub fn next_token(&mut self) -> Result<Token<'a>, ParseError> {
        let b = self.text.as_bytes();
        // White space and line continuations (a backslash ending a line) separate tokens.
        loop {
            match b.get(self.pos) {
                Some(b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c') => self.pos += 1,
                Some(b'\\') if b.get(self.pos + 1) == Some(&b'\n') => self.pos += 2,
                Some(b'\\')
                    if b.get(self.pos + 1) == Some(&b'\r')
                        && b.get(self.pos + 2) == Some(&b'\n') =>
                {
                    self.pos += 3
                }
                _ => break,
            }
        }
        let start = self.pos;
        let Some(&c) = b.get(start) else {
            return Ok(Token {
                tok: Tok::End,
                start,
                end: start,
            });
        };
        let two = b.get(start + 1).copied();
        let (tok, len) = match c {
            // A newline ends the command; stay on it so that every later call ends too.
            b'\n' => {
                return Ok(Token {
                    tok: Tok::End,
                    start,
                    end: start,
                })
            }
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'*' => (Tok::Star, 1),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'=' => (Tok::Eq, 1),
            b'<' if two == Some(b'>') => (Tok::Ne, 2),
            b'<' if two == Some(b'=') => (Tok::Le, 2),
            b'<' if two == Some(b'<') => (Tok::Shl, 2),
            b'<' => (Tok::Lt, 1),
            b'>' if two == Some(b'=') => (Tok::Ge, 2),
            b'>' if two == Some(b'>') => (Tok::Shr, 2),
            b'>' => (Tok::Gt, 1),
            b'!' if two == Some(b'=') => (Tok::Ne, 2),
            b'|' => (Tok::BitOr, 1),
            b'&' => (Tok::BitAnd, 1),
            b'#' => (Tok::Hash, 1),
            b'~' => (Tok::Tilde, 1),
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b',' => (Tok::Comma, 1),
            b':' if two.is_some_and(is_alnum) => {
                let end = self.run(start + 1, is_alnum);
                (Tok::Var(&self.text[start + 1..end]), end - start)
            }
            b'0'..=b'9' | b'.' => return self.number(start),
            _ if is_alpha(c) => {
                let end = self.run(start, is_alnum);
                let word = &self.text[start..end];
                (keyword(word).unwrap_or(Tok::Ident(word)), end - start)
            }
            _ => {
                // One byte, as flex's `.` rule takes it; bytes >= 0x80 never get here.
                self.pos = start + 1;
                let ch = self.text[start..].chars().next().unwrap_or('\0');
                return Err(ParseError {
                    offset: start,
                    message: format!("unexpected character ({ch})"),
                });
            }
        };
        self.pos = start + len;
        Ok(Token {
            tok,
            start,
            end: self.pos,
        })
    }

    /// The end of the run of bytes from `from` that satisfy `class`.
    fn run(&self, from: usize, class: fn(u8) -> bool) -> usize {
        let b = self.text.as_bytes();
        let mut end = from;
        while end < b.len() && class(b[end]) {
            end += 1;
        }
        end
    }

    /// A number: the longest of `{digit}+`, `{digit}+(\.{digit}*)?([eE][-+]?{digit}+)?` and
    /// `\.{digit}+([eE][-+]?{digit}+)?`; digits alone are an int (or, spelled exactly
    /// `9223372036854775808`, the token only unary minus accepts).
    fn number(&mut self, start: usize) -> Result<Token<'a>, ParseError> {
        let b = self.text.as_bytes();
        let int_end = self.run(start, |c| c.is_ascii_digit());
        let mut end = int_end;
        if b.get(end) == Some(&b'.') {
            let frac_end = self.run(end + 1, |c| c.is_ascii_digit());
            // `.` needs digits after it when nothing comes before it.
            if int_end > start || frac_end > end + 1 {
                end = frac_end;
            }
        }
        if end == start {
            self.pos = start + 1;
            return Err(ParseError {
                offset: start,
                message: "unexpected character (.)".to_string(),
            });
        }
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut digits_at = end + 1;
            if matches!(b.get(digits_at), Some(b'+' | b'-')) {
                digits_at += 1;
            }
            let exp_end = self.run(digits_at, |c| c.is_ascii_digit());
            if exp_end > digits_at {
                end = exp_end;
            }
        }
        self.pos = end;
        let lexeme = &self.text[start..end];
        let token = |tok| Token { tok, start, end };
        let overflow = |what: &str| ParseError {
            offset: end - 1,
            message: format!("{what} constant overflow ({lexeme})"),
        };
        if end == int_end {
            if lexeme == "9223372036854775808" {
                return Ok(token(Tok::MaxIntPlusOne));
            }
            return lexeme
                .parse()
                .map(|i| token(Tok::Int(i)))
                .map_err(|_| overflow("bigint"));
        }
        parse_c_double(lexeme)
            .map(|d| token(Tok::Double(d)))
            .ok_or_else(|| overflow("double"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok<'_>> {
        let mut lexer = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token().expect("lexes").tok;
            if t == Tok::End {
                return out;
            }
            out.push(t);
        }
    }

    #[test]
    fn cuts_tokens_as_flex_does() {
        use Tok::*;
        assert_eq!(
            toks("1.5.3 1e 1.e5 .5 7"),
            vec![
                Double(1.5),
                Double(0.3),
                Int(1),
                Ident("e"),
                Double(1e5),
                Double(0.5),
                Int(7)
            ]
        );
        assert_eq!(toks("a<>b!=c<=d>=e<<f>>g<h>i"), {
            let mut v = vec![];
            for (i, op) in [Ne, Ne, Le, Ge, Shl, Shr, Lt, Gt].into_iter().enumerate() {
                v.push(Ident(["a", "b", "c", "d", "e", "f", "g", "h"][i]));
                v.push(op);
            }
            v.push(Ident("i"));
            v
        });
        assert_eq!(
            toks("AND andy IsNull notnull :1x_é é"),
            vec![And, Ident("andy"), IsNull, NotNull, Var("1x_é"), Ident("é")]
        );
        assert_eq!(toks("1 +\\\n 2 \\\r\n"), vec![Int(1), Plus, Int(2)]);
        assert_eq!(toks("1\n+ 2"), vec![Int(1)]);
        assert_eq!(
            toks("9223372036854775808 9223372036854775808.0"),
            vec![MaxIntPlusOne, Double(9223372036854775808.0)]
        );
    }

    #[test]
    fn errors_point_where_pgbench_points() {
        let err = |text| {
            let mut lexer = Lexer::new(text);
            loop {
                match lexer.next_token() {
                    Ok(t) if t.tok == Tok::End => panic!("no error in {text:?}"),
                    Ok(_) => {}
                    Err(e) => return (e.offset, e.message),
                }
            }
        };
        assert_eq!(err("1 @ 2"), (2, "unexpected character (@)".to_string()));
        assert_eq!(err(": x"), (0, "unexpected character (:)".to_string()));
        assert_eq!(err("1 \\ 2"), (2, "unexpected character (\\)".to_string()));
        assert_eq!(
            err("100000000000000000000"),
            (
                20,
                "bigint constant overflow (100000000000000000000)".to_string()
            )
        );
        assert_eq!(
            err("-09223372036854775808"),
            (
                20,
                "bigint constant overflow (09223372036854775808)".to_string()
            )
        );
        assert_eq!(
            err("1.0E309"),
            (6, "double constant overflow (1.0E309)".to_string())
        );
        assert_eq!(
            err(".1E310"),
            (5, "double constant overflow (.1E310)".to_string())
        );
        assert_eq!(
            err("2.5e-310"),
            (7, "double constant overflow (2.5e-310)".to_string())
        );
    }
}
