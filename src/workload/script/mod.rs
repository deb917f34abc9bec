//! pgbench scripts as a workload (`-f FILE[@W]`, `-b NAME[@W]`, `-D NAME=VALUE`): the user's
//! own SQL with pgbench's script language and semantics, each script a transaction type.
//!
//! Files: `lex` (text → commands, as pgbench's lexer splits them), `expr` (the `\set`
//! expression language), `compile` (slots, jumps, SQL for each protocol) with `meta` (one
//! function per meta-command), `run` (the
//! interpreter), `builtin` (`-b`), `sources` (reading and errors with a caret), `plugin`.

pub mod builtin;
mod compile;
pub mod expr;
mod lex;
mod meta;
mod plugin;
mod run;
mod shell;
mod sources;

pub use compile::MAX_PARAMS;
pub use plugin::{ScriptKind, SCRIPT};
pub use sources::wide_statement;
