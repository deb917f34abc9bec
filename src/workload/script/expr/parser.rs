//! The grammar of pgbench 15's expressions (`exprparse.y`), parsed by precedence climbing
//! that settles every case the way bison settles pgbench's precedence declarations:
//!
//! | level | operators                         | associativity |
//! |-------|-----------------------------------|---------------|
//! | 1     | `OR`                              | left          |
//! | 2     | `AND`                             | left          |
//! | 3     | `NOT` (prefix)                    | right         |
//! | 4     | `IS [NOT] NULL/TRUE/FALSE`, `ISNULL`, `NOTNULL` (postfix) | none |
//! | 5     | `=` `<>` `!=` `<` `<=` `>` `>=`   | none          |
//! | 6     | `\|` `#` `&` `<<` `>>`, prefix `~` | left         |
//! | 7     | `+` `-`                           | left          |
//! | 8     | `*` `/` `%`                       | left          |
//! | 9     | prefix `+` `-`                    | right         |
//!
//! A prefix operator takes as operand everything that binds tighter than its own level,
//! whatever surrounds it: bison shifts rather than reduces there, so `2 * ~1 + 3` is
//! `2 * ~(1 + 3)`. Two comparisons in a row are a syntax error (non-associative).
//!
//! Errors are found at the token bison finds them at, and checks that bison makes when it
//! reduces a rule (function names, argument counts) happen before the next token is read;
//! then, as pgbench does, the rest of the line is read and its last lexical error, if any,
//! is the one reported.

use super::lexer::{Lexer, Tok, Token};
use super::{Env, Expr, Func, Node, ParseError, Value};

const OR: u8 = 1;
const AND: u8 = 2;
const NOT: u8 = 3;
const IS: u8 = 4;
const CMP: u8 = 5;
const BIT: u8 = 6;
const ADD: u8 = 7;
const MUL: u8 = 8;
/// Binds tighter than every binary operator: the operand of prefix `+` and `-`.
const UNARY_OPERAND: u8 = 10;

/// How deep expressions may nest (parentheses and prefix operators while parsing, the height
/// of the tree for evaluation), so that a pathological text fails to parse instead of
/// exhausting a stack later (bison's own stack gives up at 10000 states).
const MAX_DEPTH: usize = 256;

/// How many arguments a function takes, checked at parse time as pgbench does.
#[derive(Clone, Copy)]
enum Arity {
    Exactly(usize),
    AtLeastOne,
    /// One, plus the seed, `:default_seed` when omitted.
    Hash,
    /// Two, plus the seed, `:default_seed` when omitted.
    Permute,
}

/// pgbench's function table, with its names (the ones its errors use), matched ignoring case.
const FUNCTIONS: [(&str, Func, Arity); 21] = [
    ("abs", Func::Abs, Arity::Exactly(1)),
    ("least", Func::Least, Arity::AtLeastOne),
    ("greatest", Func::Greatest, Arity::AtLeastOne),
    ("debug", Func::Debug, Arity::Exactly(1)),
    ("pi", Func::Pi, Arity::Exactly(0)),
    ("sqrt", Func::Sqrt, Arity::Exactly(1)),
    ("ln", Func::Ln, Arity::Exactly(1)),
    ("exp", Func::Exp, Arity::Exactly(1)),
    ("int", Func::Int, Arity::Exactly(1)),
    ("double", Func::Double, Arity::Exactly(1)),
    ("random", Func::Random, Arity::Exactly(2)),
    ("random_gaussian", Func::RandomGaussian, Arity::Exactly(3)),
    (
        "random_exponential",
        Func::RandomExponential,
        Arity::Exactly(3),
    ),
    ("random_zipfian", Func::RandomZipfian, Arity::Exactly(3)),
    ("pow", Func::Pow, Arity::Exactly(2)),
    ("power", Func::Pow, Arity::Exactly(2)),
    ("mod", Func::Mod, Arity::Exactly(2)),
    ("hash", Func::HashMurmur2, Arity::Hash),
    ("hash_murmur2", Func::HashMurmur2, Arity::Hash),
    ("hash_fnv1a", Func::HashFnv1a, Arity::Hash),
    ("permute", Func::Permute, Arity::Permute),
];

pub(super) fn parse(text: &str, intern: &mut dyn FnMut(&str) -> usize) -> Result<Expr, ParseError> {
    let mut parser = Parser {
        text,
        lexer: Lexer::new(text),
        ahead: None,
        expr: Expr {
            nodes: Vec::new(),
            args: Vec::new(),
            root: 0,
        },
        intern,
        depth: 0,
        heights: Vec::new(),
        last: None,
    };
    let root = match parser.whole() {
        Ok(root) => root,
        Err(e) => return Err(parser.last_lexical_error(e)),
    };
    // Constant folding leaves unreachable nodes behind: keep only the live tree.
    let built = parser.expr;
    let mut out = Expr {
        nodes: Vec::with_capacity(built.nodes.len()),
        args: Vec::new(),
        root: 0,
    };
    out.root = copy_tree(&built, root, &mut out);
    Ok(out)
}

/// Copies the tree under `id` from `from` into `to`, children first; returns its new index.
fn copy_tree(from: &Expr, id: u32, to: &mut Expr) -> u32 {
    let node = match from.nodes[id as usize] {
        Node::Call { func, first, len } => {
            let kids: Vec<u32> = from.args[first as usize..(first + len) as usize]
                .iter()
                .map(|&kid| copy_tree(from, kid, to))
                .collect();
            let first = to.args.len() as u32;
            to.args.extend(kids);
            Node::Call { func, first, len }
        }
        leaf => leaf,
    };
    to.nodes.push(node);
    (to.nodes.len() - 1) as u32
}

struct Parser<'a, 'i> {
    text: &'a str,
    lexer: Lexer<'a>,
    /// The lookahead token, read only when the grammar needs it (as bison reads it).
    ahead: Option<Token<'a>>,
    expr: Expr,
    intern: &'i mut dyn FnMut(&str) -> usize,
    /// Nesting of `expr` calls.
    depth: usize,
    /// The height of the tree under each node of `expr.nodes`.
    heights: Vec<usize>,
    /// The last token consumed, where a tree grown too high is reported.
    last: Option<Token<'a>>,
}

impl<'a> Parser<'a, '_> {
    /// The whole text as one expression.
    fn whole(&mut self) -> Result<u32, ParseError> {
        let root = self.expr(0)?;
        let end = self.peek()?;
        if end.tok != Tok::End {
            return Err(self.syntax_error(end));
        }
        Ok(root)
    }

    /// The error pgbench reports once it has met `first`: before reporting, pgbench reads the
    /// rest of the line to show it, and a lexical error met on the way (an unexpected
    /// character, a constant out of range) is reported instead, the last one winning.
    fn last_lexical_error(&mut self, first: ParseError) -> ParseError {
        let mut error = first;
        loop {
            match self.lexer.next_token() {
                Ok(t) if t.tok == Tok::End => return error,
                Ok(_) => {}
                Err(e) => error = e,
            }
        }
    }

    fn peek(&mut self) -> Result<Token<'a>, ParseError> {
        match self.ahead {
            Some(t) => Ok(t),
            None => {
                let t = self.lexer.next_token()?;
                self.ahead = Some(t);
                Ok(t)
            }
        }
    }

    /// Consumes the lookahead token, which the caller has peeked.
    fn bump(&mut self) -> Token<'a> {
        let t = self.ahead.take().expect("bump after peek");
        self.last = Some(t);
        t
    }

    fn expect(&mut self, want: Tok<'_>) -> Result<Token<'a>, ParseError> {
        let t = self.peek()?;
        if t.tok == want {
            Ok(self.bump())
        } else {
            Err(self.syntax_error(t))
        }
    }

    fn syntax_error(&self, at: Token<'_>) -> ParseError {
        self.error(at, "syntax error".to_string())
    }

    fn error(&self, at: Token<'_>, message: String) -> ParseError {
        ParseError {
            offset: at.error_offset(self.text),
            message,
        }
    }

    /// An expression whose binary and postfix operators all bind at `min` or tighter.
    fn expr(&mut self, min: u8) -> Result<u32, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let at = self.peek()?;
            return Err(self.error(at, "expression is too deeply nested".to_string()));
        }
        let result = self.expr_at_depth(min);
        self.depth -= 1;
        result
    }

    fn expr_at_depth(&mut self, min: u8) -> Result<u32, ParseError> {
        let mut left = self.prefix()?;
        loop {
            let t = self.peek()?;
            let (level, func, swap) = match t.tok {
                Tok::Or => (OR, Func::Or, false),
                Tok::And => (AND, Func::And, false),
                Tok::Is | Tok::IsNull | Tok::NotNull => {
                    if min > IS {
                        return Ok(left);
                    }
                    self.bump();
                    left = self.postfix_is(t, left)?;
                    continue;
                }
                Tok::Eq => (CMP, Func::Eq, false),
                Tok::Ne => (CMP, Func::Ne, false),
                Tok::Lt => (CMP, Func::Lt, false),
                Tok::Le => (CMP, Func::Le, false),
                Tok::Gt => (CMP, Func::Lt, true),
                Tok::Ge => (CMP, Func::Le, true),
                Tok::BitOr => (BIT, Func::BitOr, false),
                Tok::BitAnd => (BIT, Func::BitAnd, false),
                Tok::Hash => (BIT, Func::BitXor, false),
                Tok::Shl => (BIT, Func::Shl, false),
                Tok::Shr => (BIT, Func::Shr, false),
                Tok::Plus => (ADD, Func::Add, false),
                Tok::Minus => (ADD, Func::Sub, false),
                Tok::Star => (MUL, Func::Mul, false),
                Tok::Slash => (MUL, Func::Div, false),
                Tok::Percent => (MUL, Func::Mod, false),
                _ => return Ok(left),
            };
            if level < min {
                return Ok(left);
            }
            self.bump();
            let right = self.expr(level + 1)?;
            left = if swap {
                self.call(func, &[right, left])?
            } else {
                self.call(func, &[left, right])?
            };
            if level == CMP {
                let next = self.peek()?;
                if is_comparison(next.tok) {
                    return Err(self.syntax_error(next));
                }
            }
        }
    }

    /// `ISNULL`, `NOTNULL` or `IS [NOT] NULL/TRUE/FALSE` after `operand`; `op` is consumed.
    fn postfix_is(&mut self, op: Token<'a>, operand: u32) -> Result<u32, ParseError> {
        let (negate, what) = match op.tok {
            Tok::IsNull => (false, Value::Null),
            Tok::NotNull => (true, Value::Null),
            _ => {
                let mut t = self.peek()?;
                let negate = t.tok == Tok::Not;
                if negate {
                    self.bump();
                    t = self.peek()?;
                }
                let what = match t.tok {
                    Tok::Null => Value::Null,
                    Tok::Bool(b) => Value::Bool(b),
                    _ => return Err(self.syntax_error(t)),
                };
                self.bump();
                (negate, what)
            }
        };
        let what = self.constant(what);
        let is = self.call(Func::Is, &[operand, what])?;
        if negate {
            self.call(Func::Not, &[is])
        } else {
            Ok(is)
        }
    }

    /// A primary or a prefix operator with its operand.
    fn prefix(&mut self) -> Result<u32, ParseError> {
        let t = self.peek()?;
        match t.tok {
            Tok::LParen => {
                self.bump();
                let inner = self.expr(0)?;
                self.expect(Tok::RParen)?;
                Ok(inner)
            }
            Tok::Plus => {
                self.bump();
                self.expr(UNARY_OPERAND)
            }
            Tok::Minus => {
                self.bump();
                // Only here may 9223372036854775808 appear: -9223372036854775808 is the
                // smallest int64, as a constant rather than an overflowing subtraction.
                if self.peek()?.tok == Tok::MaxIntPlusOne {
                    self.bump();
                    return Ok(self.constant(Value::Int(i64::MIN)));
                }
                let operand = self.expr(UNARY_OPERAND)?;
                let zero = self.constant(Value::Int(0));
                self.call(Func::Sub, &[zero, operand])
            }
            Tok::Tilde => {
                self.bump();
                let operand = self.expr(BIT + 1)?;
                let ones = self.constant(Value::Int(-1));
                self.call(Func::BitXor, &[ones, operand])
            }
            Tok::Not => {
                self.bump();
                let operand = self.expr(NOT + 1)?;
                self.call(Func::Not, &[operand])
            }
            Tok::Null => Ok(self.leaf(Value::Null)),
            Tok::Bool(b) => Ok(self.leaf(Value::Bool(b))),
            Tok::Int(i) => Ok(self.leaf(Value::Int(i))),
            Tok::Double(d) => Ok(self.leaf(Value::Double(d))),
            Tok::Var(name) => {
                self.bump();
                let slot = (self.intern)(name);
                Ok(self.push(Node::Var(slot)))
            }
            Tok::Ident(name) => {
                self.bump();
                self.function(t, name)
            }
            Tok::Case => {
                self.bump();
                self.case()
            }
            _ => Err(self.syntax_error(t)),
        }
    }

    /// Consumes the peeked literal token and makes its constant.
    fn leaf(&mut self, v: Value) -> u32 {
        self.bump();
        self.constant(v)
    }

    /// `name(args)`, with `name` consumed (and reported unknown before anything else is read).
    fn function(&mut self, name_tok: Token<'a>, name: &str) -> Result<u32, ParseError> {
        let Some(&(canonical, func, arity)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(self.error(name_tok, format!("unexpected function name ({name})")));
        };
        self.expect(Tok::LParen)?;
        let mut argv = Vec::new();
        if self.peek()?.tok != Tok::RParen {
            // pgbench's argument list may start with a comma: `abs(,-2)` is `abs(-2)`.
            if self.peek()?.tok != Tok::Comma {
                argv.push(self.expr(0)?);
            }
            while self.peek()?.tok == Tok::Comma {
                self.bump();
                argv.push(self.expr(0)?);
            }
        }
        let close = self.expect(Tok::RParen)?;
        let n = argv.len();
        let bad_count = match arity {
            Arity::Exactly(k) => n != k,
            Arity::AtLeastOne => {
                if n == 0 {
                    return Err(self.error(
                        close,
                        format!("at least one argument expected ({canonical})"),
                    ));
                }
                false
            }
            Arity::Hash => !(1..=2).contains(&n),
            Arity::Permute => !(2..=3).contains(&n),
        };
        if bad_count {
            return Err(self.error(
                close,
                format!("unexpected number of arguments ({canonical})"),
            ));
        }
        if matches!((arity, n), (Arity::Hash, 1) | (Arity::Permute, 2)) {
            let slot = (self.intern)("default_seed");
            argv.push(self.push(Node::Var(slot)));
        }
        self.call(func, &argv)
    }

    /// `WHEN c THEN v [WHEN c THEN v ...] [ELSE e] END`, after `CASE`; a missing `ELSE` is
    /// `ELSE NULL`.
    fn case(&mut self) -> Result<u32, ParseError> {
        self.expect(Tok::When)?;
        let mut argv = Vec::new();
        loop {
            argv.push(self.expr(0)?);
            self.expect(Tok::Then)?;
            argv.push(self.expr(0)?);
            let t = self.peek()?;
            match t.tok {
                Tok::When => {
                    self.bump();
                }
                Tok::Else => {
                    self.bump();
                    argv.push(self.expr(0)?);
                    self.expect(Tok::EndKw)?;
                    break;
                }
                Tok::EndKw => {
                    self.bump();
                    argv.push(self.constant(Value::Null));
                    break;
                }
                _ => return Err(self.syntax_error(t)),
            }
        }
        self.call(Func::Case, &argv)
    }

    fn push(&mut self, node: Node) -> u32 {
        self.expr.nodes.push(node);
        self.heights.push(1);
        (self.expr.nodes.len() - 1) as u32
    }

    fn constant(&mut self, v: Value) -> u32 {
        self.push(Node::Const(v))
    }

    /// A call node, computed now when its arguments are constants, the function has no
    /// effect (not `debug`, not random) and computing it succeeds.
    fn call(&mut self, func: Func, argv: &[u32]) -> Result<u32, ParseError> {
        let height = 1 + argv
            .iter()
            .map(|&a| self.heights[a as usize])
            .max()
            .unwrap_or(0);
        if height > MAX_DEPTH {
            let at = self.last.expect("a call follows a consumed token");
            return Err(self.error(at, "expression is too deeply nested".to_string()));
        }
        let first = self.expr.args.len() as u32;
        self.expr.args.extend_from_slice(argv);
        let id = self.push(Node::Call {
            func,
            first,
            len: argv.len() as u32,
        });
        self.heights[id as usize] = height;
        let foldable = !matches!(
            func,
            Func::Debug
                | Func::Random
                | Func::RandomGaussian
                | Func::RandomExponential
                | Func::RandomZipfian
        ) && argv
            .iter()
            .all(|&a| matches!(self.expr.nodes[a as usize], Node::Const(_)));
        if foldable {
            if let Ok(v) = self
                .expr
                .eval_node(id, &mut NoEnv(crate::workload::pg_prng::PgPrng::seeded(0)))
            {
                self.expr.nodes[id as usize] = Node::Const(v);
                self.heights[id as usize] = 1;
            }
        }
        Ok(id)
    }
}

fn is_comparison(t: Tok<'_>) -> bool {
    matches!(t, Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge)
}

/// The environment of constant folding: folded calls read no variable and draw nothing.
struct NoEnv(crate::workload::pg_prng::PgPrng);

impl Env for NoEnv {
    fn var(&mut self, _slot: usize) -> Result<Value, String> {
        Err("no variables while folding constants".to_string())
    }

    fn rng(&mut self) -> &mut crate::workload::pg_prng::PgPrng {
        &mut self.0
    }

    fn debug(&mut self, _value: &Value) {}
}
