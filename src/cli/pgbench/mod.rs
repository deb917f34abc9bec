//! `tidebench pgbench ARGS...`: the drop-in for pgbench 15's command line (issue 38, item 2).
//!
//! Files, in the order a command line goes through them: `argv` (pgbench's argv read as
//! getopt_long reads it), `values` (built-in names, weights, the connection string),
//! `plan` (the reading turned into `run`/`prepare` arguments and the summary block's facts),
//! `refusal` (pgbench's words for what it will not run), `script_error` (pgbench's shape for
//! a script it will not read), `cmd` (runs it), `block` (pgbench's summary block and `-P`
//! lines), `abort` (pgbench's lines for an aborted client).
//!
//! The drop-in stands on tidebench's own grammar (`cli::args`) and commands; nothing there
//! reaches back into it.

mod abort;
mod argv;
mod block;
mod cmd;
mod plan;
mod refusal;
mod script_error;
mod values;

pub use cmd::pgbench;
