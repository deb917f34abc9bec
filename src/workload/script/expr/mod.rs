//! pgbench's `\set` expression language, as PostgreSQL 15's pgbench defines it: the values
//! ([`Value`]), the parser ([`parse`], giving a compiled [`Expr`]) and the evaluator
//! ([`Expr::eval`], asking the client for variables and randomness through [`Env`]).
//!
//! Scripts written for pgbench must give the same values and the same errors here, so every
//! rule follows pgbench 15 rather than what would look tidier: its precedence table (with its
//! quirks, e.g. `~` binding looser than `+`), its NULL propagation and its `AND`/`OR` that
//! return NULL as soon as the left side is NULL, its error wording, and its exact hash and
//! `permute` outputs. Where pgbench's behaviour rests on undefined C, we copy what pgbench 15
//! does on x86-64 Linux (and say so where it happens).
//!
//! Files: `lexer` (tokens), `parser` (grammar, function table, argument counts), `eval`
//! (operators and functions), `value` (text forms of values), `hash` (hashes and `permute`),
//! `random` (the random distributions), `tests` and `tests_parse`
//! (behaviour checked against a real pgbench 15).

mod eval;
mod hash;
mod lexer;
mod parser;
mod random;
mod value;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_parse;
#[cfg(test)]
mod tests_random;
#[cfg(test)]
mod tests_seeded;

use std::fmt;

/// A value of the expression language. A variable set by `\set` holds one; a variable set
/// from text (`-D`, `\gset`, `\setshell`) is read as one by [`Value::from_text`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

/// A parse error: pgbench's message (e.g. `unexpected function name (foo)`, `syntax error`)
/// and the byte offset in the parsed text where pgbench puts its `^ error found here` caret:
/// the last byte of the token it had just read (so the `)` for a wrong argument count, the
/// last letter of an unknown function's name), or the end of the text when the text ended
/// too early. An offset inside a multi-byte character is moved back to the character's start.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// A compiled expression: variables are slots, functions are resolved, and parts made only of
/// constants are computed once here (unless computing them fails: then the error is left for
/// run time, where pgbench reports it). Evaluating it allocates nothing unless it fails.
#[derive(Debug, Clone)]
pub struct Expr {
    nodes: Vec<Node>,
    /// Arguments of every call, as node indices; a call names its slice of this.
    args: Vec<u32>,
    root: u32,
}

/// One node of an expression tree; children come before their parents in `Expr::nodes`.
#[derive(Debug, Clone, Copy)]
enum Node {
    Const(Value),
    Var(usize),
    Call { func: Func, first: u32, len: u32 },
}

/// Every operation of the language. Operators are calls too, as in pgbench: `-x` is
/// `0 - x`, `~x` is `-1 # x`, `a > b` is `b < a`, `x IS NOT NULL` is `NOT (x IS NULL)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Abs,
    Least,
    Greatest,
    Debug,
    Pi,
    Sqrt,
    Ln,
    Exp,
    Int,
    Double,
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Pow,
    And,
    Or,
    Not,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Le,
    Lt,
    Is,
    Case,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

/// Parses the text of one expression (what follows the variable name of a `\set`, or an
/// `\if`/`\elif` condition). Variables are written `:name`; `intern` maps a name to the slot
/// the caller keeps its value in. `hash(x)`, `hash_murmur2(x)`, `hash_fnv1a(x)` and
/// `permute(i, n)` take their seed from the variable `:default_seed`, interned for them.
///
/// As in pgbench, a line continuation (`\` at the end of a line) is white space and a bare
/// newline ends the expression: the caller passes one command's text.
pub fn parse(text: &str, intern: &mut dyn FnMut(&str) -> usize) -> Result<Expr, ParseError> {
    parser::parse(text, intern)
}

/// What an evaluation needs from its client.
pub trait Env {
    /// The value of variable `slot`, or the error message (e.g. `undefined variable "x"`, or
    /// a malformed value).
    fn var(&mut self, slot: usize) -> Result<Value, String>;
    /// The client's pg_prng state (pgbench's `cs_func_rs`) for `random()`,
    /// `random_exponential()`, `random_gaussian()` and `random_zipfian()`.
    fn rng(&mut self) -> &mut crate::workload::pg_prng::PgPrng;
    /// `debug(x)`: pgbench prints the value to stderr; here the caller decides. Called with the
    /// value, which `debug` then returns.
    fn debug(&mut self, value: &Value);
}

impl Expr {
    /// Evaluates the expression; `Err` is pgbench's run-time error message (`division by
    /// zero`, `bigint add out of range`, `gaussian parameter must be at least 2.000000 (not
    /// 1.500000)`, `cannot coerce boolean to int`, ...).
    pub fn eval(&self, env: &mut dyn Env) -> Result<Value, String> {
        self.eval_node(self.root, env)
    }
}
