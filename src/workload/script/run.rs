//! One execution of a compiled script on a session: pgbench's interpreter. Variables are
//! slots whose text and value are kept side by side (a `\set` writes both, a `\gset` the text,
//! read as a value on first use); buffers live with the client, so a transaction allocates
//! nothing once they have grown.

use std::time::{Duration, Instant};

use pgwire::{Connection, Param, Protocol};

use super::compile::{valid_name, Amount, Command, Part, Sql, Store, VarNames};
use super::expr::{Env, Expr, Value};
use crate::event::{Event, PrepareFailed, Sink};
use crate::results::CommandSums;
use crate::workload::pg_prng::PgPrng;
use crate::workload::TxnEnd;

/// A compiled script, its name (the transaction type's), each command as written and its
/// number as pgbench counts commands (see [`super::compile::Compiled`]).
#[derive(Debug)]
pub struct Code {
    pub name: String,
    /// As pgbench names the script in its output (the file as given, `<builtin: ...>`).
    pub shown: String,
    pub commands: Vec<Command>,
    pub labels: Vec<String>,
    pub numbers: Vec<usize>,
}

impl Code {
    /// Whether the script has a `\startpipeline`.
    pub fn has_pipeline(&self) -> bool {
        self.commands
            .iter()
            .any(|c| matches!(c, Command::StartPipeline))
    }
}

/// One variable of one client.
#[derive(Debug, Clone, Default)]
pub struct Slot {
    pub text: String,
    /// The value of `text` once read as one (or as `\set` made it).
    pub value: Option<Value>,
    pub defined: bool,
}

/// A client's variables and buffers.
#[derive(Debug)]
pub struct ClientVars {
    pub slots: Vec<Slot>,
    /// The SQL text the simple protocol sends, rebuilt per command.
    sql: String,
    /// A `\gset` column's variable name, built per column.
    name: String,
    /// The client's function state (pgbench's `cs_func_rs`), which `random*()` draw from.
    pub rng: PgPrng,
    /// Per script and command, this client's time in it (`--report-per-command` only).
    pub per_command: Option<Vec<Vec<CommandSums>>>,
    /// The command whose server error ended the last try (set only on such an error).
    pub failed_at: Option<u32>,
    /// With pgbench's `-d` trace on: this client's number, which its trace lines start with.
    pub trace: Option<u32>,
    /// This client's number (pgbench's), which a failed PREPARE's event names.
    pub client: u32,
}

impl ClientVars {
    pub fn new(count: usize, rng: PgPrng) -> ClientVars {
        ClientVars {
            slots: vec![Slot::default(); count],
            sql: String::new(),
            name: String::new(),
            rng,
            per_command: None,
            failed_at: None,
            trace: None,
            client: 0,
        }
    }

    /// Sets a variable to text as given (`-D`, `\gset`, `\setshell`).
    pub fn set_text(&mut self, slot: usize, text: &str) {
        let s = &mut self.slots[slot];
        s.text.clear();
        s.text.push_str(text);
        s.value = None;
        s.defined = true;
    }

    pub fn set_value(&mut self, slot: usize, value: Value) {
        let s = &mut self.slots[slot];
        s.text.clear();
        value.write_text(&mut s.text);
        s.value = Some(value);
        s.defined = true;
    }
}

/// `\shell` / `\setshell` on this client's variables.
fn shell_step(
    set: Option<usize>,
    argv: &[super::compile::Arg],
    names: &VarNames,
    vars: &mut ClientVars,
) -> Result<(), String> {
    let slots = &vars.slots;
    let text_of = |slot: usize| {
        let s = &slots[slot];
        s.defined.then_some(s.text.as_str())
    };
    let got = super::shell::run_shell(set, argv, names, &text_of)?;
    if let (Some(text), Some(slot)) = (got, set) {
        vars.set_text(slot, &text);
    }
    Ok(())
}

/// Where a command's `debug()` values go: the run's events, with pgbench's prefix.
#[derive(Clone, Copy)]
pub struct Debug<'a> {
    pub events: Option<&'a dyn Sink>,
    pub script: usize,
    pub command: usize,
}

/// What an expression sees: the client's variables and random source.
struct Eval<'a> {
    slots: &'a mut [Slot],
    names: &'a VarNames,
    rng: &'a mut PgPrng,
    debug: Debug<'a>,
}

impl Env for Eval<'_> {
    fn var(&mut self, slot: usize) -> Result<Value, String> {
        read_var(&mut self.slots[slot], self.names.name(slot))
    }

    fn rng(&mut self) -> &mut PgPrng {
        self.rng
    }

    /// pgbench prints the value on stderr; here it is an event the terminal prints the same.
    fn debug(&mut self, value: &Value) {
        let Some(events) = self.debug.events else {
            return;
        };
        let shown = match value {
            Value::Null => "null".to_string(),
            Value::Bool(b) => format!("boolean {b}"),
            Value::Int(i) => format!("int {i}"),
            Value::Double(_) => {
                let mut text = String::new();
                value.write_text(&mut text);
                format!("double {text}")
            }
        };
        events.send(Event::ScriptDebug(format!(
            "debug(script={},command={}): {shown}",
            self.debug.script, self.debug.command
        )));
    }
}

/// pgbench's `-d` trace for one client: each line is an event, so it costs nothing when off
/// (the client's `Option` is checked once per command).
#[derive(Clone, Copy)]
struct Trace<'a> {
    events: &'a dyn Sink,
    client: u32,
}

impl Trace<'_> {
    fn line(self, what: std::fmt::Arguments<'_>) {
        self.events
            .send(Event::Trace(format!("client {} {what}", self.client)));
    }

    /// A meta-command as pgbench 15 shows it: its words, but for `\set` only the variable
    /// and for `\if`/`\elif` none (their expression is not a word).
    fn meta(self, label: &str) {
        let mut words = label.split_whitespace();
        let first = words.next().unwrap_or_default();
        let keep = match first {
            "\\set" => 1,
            "\\if" | "\\elif" => 0,
            _ => usize::MAX,
        };
        let mut shown = first.to_string();
        for w in words.take(keep) {
            shown.push(' ');
            shown.push_str(w);
        }
        self.line(format_args!("executing {shown}"));
    }
}

/// pgbench's name for the prepared statement of the SQL command at `pc`: `P_` and the
/// number of SQL commands before it in the script.
fn prepared_name(code: &Code, pc: usize) -> String {
    let before = code.commands[..pc]
        .iter()
        .filter(|c| matches!(c, Command::Sql(_)))
        .count();
    format!("P_{before}")
}

/// `expr` over the client's variables and random source.
fn evaluate(
    expr: &Expr,
    names: &VarNames,
    vars: &mut ClientVars,
    debug: Debug<'_>,
) -> Result<Value, String> {
    expr.eval(&mut Eval {
        slots: &mut vars.slots,
        names,
        rng: &mut vars.rng,
        debug,
    })
}

fn read_var(slot: &mut Slot, name: &str) -> Result<Value, String> {
    if !slot.defined {
        return Err(format!("undefined variable \"{name}\""));
    }
    if let Some(v) = slot.value {
        return Ok(v);
    }
    let v = Value::from_text(&slot.text)
        .ok_or_else(|| format!("malformed variable \"{name}\" value: \"{}\"", slot.text))?;
    slot.value = Some(v);
    Ok(v)
}

/// Runs `code` (script `script` of the workload) once. A script's own error (pgbench's
/// runtime errors) comes back as a [`pgwire::ErrorKind::Client`] naming the script and
/// command. With per-command figures on, each command's time is added to the client's sums.
pub async fn run(
    code: &Code,
    script: usize,
    names: &VarNames,
    vars: &mut ClientVars,
    conn: &mut Connection,
    protocol: Protocol,
    events: Option<&dyn Sink>,
) -> Result<TxnEnd, pgwire::Error> {
    let number = |pc: usize| code.numbers.get(pc).copied().unwrap_or(pc + 1);
    let at = |pc: usize| Debug {
        events,
        script,
        command: number(pc),
    };
    let trace = vars
        .trace
        .zip(events)
        .map(|(client, events)| Trace { events, client });
    if let Some(t) = trace {
        t.line(format_args!("executing script \"{}\"", code.shown));
    }
    let mut pc = 0;
    while let Some(command) = code.commands.get(pc) {
        if let Some(t) = trace {
            if !matches!(command, Command::Sql(_)) {
                t.meta(code.labels.get(pc).map_or("", String::as_str));
            }
        }
        let began = vars.per_command.is_some().then(Instant::now);
        // One command, inline in this future (a nested async fn per command measurably
        // cost select-only at 64 clients); `break 'step` carries its failure out.
        let step: Result<Flow, Failed> = 'step: {
            match command {
                Command::Sql(sql) => {
                    let said = Said {
                        events,
                        trace,
                        code,
                        pc,
                    };
                    if let Err(e) = sql_step(sql, names, vars, conn, protocol, said).await {
                        break 'step Err(e);
                    }
                }
                Command::Set { slot, expr } => match evaluate(expr, names, vars, at(pc)) {
                    Ok(v) => vars.set_value(*slot, v),
                    Err(m) => break 'step Err(Failed::Script(m)),
                },
                Command::Sleep { amount, unit_us } => {
                    match sleep_us(*amount, *unit_us, names, vars) {
                        Ok(us) if us > 0 => evloop::sleep(Duration::from_micros(us)).await,
                        Ok(_) => {}
                        Err(m) => break 'step Err(Failed::Script(m)),
                    }
                }
                Command::Shell { set, argv } => {
                    if let Err(m) = shell_step(*set, argv, names, vars) {
                        break 'step Err(Failed::Script(m));
                    }
                }
                Command::Branch { cond, otherwise } => match evaluate(cond, names, vars, at(pc)) {
                    Ok(v) if !v.truth() => break 'step Ok(Flow::Goto(*otherwise)),
                    Ok(_) => {}
                    Err(m) => break 'step Err(Failed::Script(m)),
                },
                Command::Jump(to) => break 'step Ok(Flow::Goto(*to)),
                Command::StartPipeline if protocol == Protocol::Simple => {
                    break 'step Err(Failed::Script(
                        "cannot use pipeline mode with the simple query protocol".into(),
                    ));
                }
                Command::StartPipeline => {
                    if let Err(e) = conn.start_pipeline().await {
                        break 'step Err(e.into());
                    }
                }
                Command::SyncPipeline => {
                    if let Err(e) = conn.queue_sync() {
                        break 'step Err(e.into());
                    }
                }
                Command::EndPipeline => {
                    if let Err(e) = conn.end_pipeline().await {
                        break 'step Err(e.into());
                    }
                }
                // Only ever reached once per client: it ends the client.
                Command::Fail(m) => break 'step Err(Failed::Script(m.clone())),
            }
            Ok(Flow::Next)
        };
        if let (Some(began), Some(sums)) = (began, vars.per_command.as_mut()) {
            let ns = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
            sums[script][pc].add(ns, step.is_err());
        }
        pc = match step {
            Ok(Flow::Next) => pc + 1,
            Ok(Flow::Goto(to)) => to,
            Err(Failed::Server(e)) => {
                vars.failed_at = u32::try_from(pc).ok();
                return Err(e);
            }
            Err(Failed::Script(m)) => {
                return Err(pgwire::Error::client(format!(
                    "script \"{}\" command {} ({}): {m}",
                    code.name,
                    number(pc),
                    kind(code.labels.get(pc).map_or("", String::as_str))
                )))
            }
        };
    }
    end_of_script(code, conn)
}

/// A command's kind as pgbench names it in an abort line: the meta-command's name (`set`,
/// `shell`...), or `SQL`.
fn kind(label: &str) -> &str {
    match label.strip_prefix('\\') {
        Some(meta) => meta.split_whitespace().next().unwrap_or(meta),
        None => "SQL",
    }
}

/// A script that ran to its end: pgbench 15 ends a client whose script ends in a pipeline
/// (an error, the message starting with pgbench's words) or inside a transaction block
/// (counted first, then the client ends: `LeftOpen`), rather than run its next transaction
/// inside the same one.
fn end_of_script(code: &Code, conn: &Connection) -> Result<TxnEnd, pgwire::Error> {
    if conn.in_pipeline() {
        return Err(pgwire::Error::client(format!(
            "end of script reached with pipeline open (script \"{}\"); end the pipeline \
             with \\endpipeline in the script",
            code.name
        )));
    }
    if conn.tx_status() != pgwire::TxStatus::Idle {
        return Ok(TxnEnd::LeftOpen);
    }
    Ok(TxnEnd::Committed)
}

/// Where a script goes on after a command.
enum Flow {
    Next,
    Goto(usize),
}

/// A `\sleep`'s length in microseconds.
fn sleep_us(
    amount: Amount,
    unit_us: i64,
    names: &VarNames,
    vars: &mut ClientVars,
) -> Result<u64, String> {
    let n = match amount {
        Amount::Fixed(n) => n,
        Amount::Var(slot) => match read_var(&mut vars.slots[slot], names.name(slot))
            .map_err(|m| format!("sleep: {m}; execution of meta-command failed"))?
        {
            Value::Int(n) => n,
            Value::Double(d) => d as i64,
            other => return Err(format!("sleep: \\sleep needs a number, not {other:?}")),
        },
    };
    Ok(u64::try_from(n.saturating_mul(unit_us)).unwrap_or(0))
}

enum Failed {
    Server(pgwire::Error),
    Script(String),
}

impl From<pgwire::Error> for Failed {
    fn from(e: pgwire::Error) -> Failed {
        Failed::Server(e)
    }
}

/// Parameters kept on the stack up to this many (pgbench's statements rarely have more).
const STACK_PARAMS: usize = 16;

/// Where an SQL command's words go: the run's events (the server's notices, a failed
/// PREPARE), the `-d` trace when it is on, and the script and the command's place they name.
#[derive(Clone, Copy)]
struct Said<'a> {
    events: Option<&'a dyn Sink>,
    trace: Option<Trace<'a>>,
    code: &'a Code,
    pc: usize,
}

/// An SQL command, and under `-M prepared` what pgbench would say of a statement whose
/// PREPARE failed.
async fn sql_step(
    sql: &Sql,
    names: &VarNames,
    vars: &mut ClientVars,
    conn: &mut Connection,
    protocol: Protocol,
    said: Said<'_>,
) -> Result<(), Failed> {
    let name = sql.statement.name;
    let fresh = protocol == Protocol::Prepared && !conn.in_pipeline() && !conn.is_prepared(name);
    let done = run_sql(sql, names, vars, conn, protocol, said).await;
    if let (Err(Failed::Server(e)), true, false) = (&done, fresh, conn.is_prepared(name)) {
        // Its Parse failed: the statement was never prepared.
        said_prepare_failed(e, sql, vars.client, said);
    }
    done
}

async fn run_sql(
    sql: &Sql,
    names: &VarNames,
    vars: &mut ClientVars,
    conn: &mut Connection,
    protocol: Protocol,
    said: Said<'_>,
) -> Result<(), Failed> {
    let trace = said.trace;
    let ClientVars {
        slots, sql: text, ..
    } = vars;
    if let Some(t) = trace {
        trace_sending(t, sql, conn, protocol, said.code, said.pc);
    }
    let result = match protocol {
        Protocol::Simple => {
            interpolate(text, sql, slots, names);
            if let Some(t) = trace {
                t.line(format_args!("sending {text}"));
                t.line(format_args!("receiving"));
            }
            conn.simple_query(text).await?
        }
        Protocol::Extended | Protocol::Prepared => {
            let param = |slot: &usize| {
                let s = &slots[*slot];
                // An undefined variable is sent as NULL, as pgbench 15 does.
                if s.defined {
                    Param::Text(&s.text)
                } else {
                    Param::Null
                }
            };
            let describe = sql.store.is_some();
            let mut stack = [Param::Null; STACK_PARAMS];
            let heap: Vec<Param<'_>>;
            let params: &[Param<'_>] = if sql.params.len() <= STACK_PARAMS {
                for (p, slot) in stack.iter_mut().zip(&sql.params) {
                    *p = param(slot);
                }
                &stack[..sql.params.len()]
            } else {
                heap = sql.params.iter().map(param).collect();
                &heap
            };
            if conn.in_pipeline() {
                // Queued: its answer is read at \endpipeline (no \gset in a pipeline).
                conn.queue(protocol, &sql.statement, params)?;
                return Ok(());
            }
            if let Some(t) = trace {
                t.line(format_args!("receiving"));
            }
            if describe {
                conn.query(protocol, &sql.statement, params).await?
            } else {
                conn.execute(protocol, &sql.statement, params).await?
            }
        }
    };
    // pgbench says `receiving` each time it looks for the answer: as it starts waiting
    // (above) and once the answer is there (more often where the answer comes in pieces).
    if let Some(t) = trace {
        t.line(format_args!("receiving"));
    }
    if let Some(events) = said.events {
        for notice in result.notices() {
            events.send(Event::ServerNotice(notice.clone()));
        }
    }
    match &sql.store {
        Some(store) => store_result(&result, store, names, vars),
        None => Ok(()),
    }
}

/// Tells of a statement whose PREPARE failed (see [`Event::PrepareFailed`]): the server's
/// error as libpq words it, with the line of the statement it points into.
fn said_prepare_failed(e: &pgwire::Error, sql: &Sql, client: u32, said: Said<'_>) {
    let (
        Some(events),
        pgwire::ErrorKind::Db {
            severity, message, ..
        },
    ) = (said.events, &e.kind)
    else {
        return;
    };
    let full = crate::metrics::errors::server_text(severity, message, e.more());
    let pointed = e
        .more()
        .and_then(|m| m.position)
        .and_then(|at| pgwire::pointed_lines(sql.statement.sql, at));
    // libpq's order: the message, the pointed line, then DETAIL, HINT and CONTEXT.
    let text = match (pointed, full.split_once('\n')) {
        (Some(lines), Some((first, rest))) => format!("{first}\n{lines}\n{rest}"),
        (Some(lines), None) => format!("{full}\n{lines}"),
        (None, _) => full,
    };
    events.send(Event::PrepareFailed(PrepareFailed {
        client,
        txn_type: said.code.name.clone(),
        command: u32::try_from(said.pc).unwrap_or(u32::MAX),
        statement: prepared_name(said.code, said.pc),
        text,
    }));
}

/// Says what a traced client sends next (pgbench's `-d` lines); the simple protocol's text
/// is said once it is built.
fn trace_sending(
    t: Trace<'_>,
    sql: &Sql,
    conn: &Connection,
    protocol: Protocol,
    code: &Code,
    pc: usize,
) {
    match protocol {
        Protocol::Simple => {}
        Protocol::Extended => t.line(format_args!("sending {}", sql.statement.sql)),
        Protocol::Prepared => {
            let name = prepared_name(code, pc);
            if !conn.is_prepared(sql.statement.name) {
                t.line(format_args!("preparing {name}"));
            }
            t.line(format_args!("sending {name}"));
        }
    }
}

/// Writes `sql` with its variables' values into `text` (the simple protocol), reusing
/// `text`'s buffer.
fn interpolate(text: &mut String, sql: &Sql, slots: &[Slot], names: &VarNames) {
    text.clear();
    for part in &sql.parts {
        match part {
            Part::Text(t) => text.push_str(t),
            Part::Var(slot) if slots[*slot].defined => text.push_str(&slots[*slot].text),
            // pgbench leaves a variable it does not know as written.
            Part::Var(slot) => {
                text.push(':');
                text.push_str(names.name(*slot));
            }
        }
    }
}

/// `\gset` / `\aset`: sets variables from the columns of `result`'s last row (of its last
/// result set, or of every set with `\aset`). The result borrows the session, not the
/// variables, so they can be set from it.
fn store_result(
    result: &pgwire::QueryResult<'_>,
    store: &Store,
    names: &VarNames,
    vars: &mut ClientVars,
) -> Result<(), Failed> {
    let sets = result.result_sets();
    let chosen = if store.all {
        0..sets
    } else {
        sets.saturating_sub(1)..sets
    };
    if !store.all {
        let rows = sets
            .checked_sub(1)
            .map_or(0, |last| result.set_rows(last).len());
        if rows != 1 {
            return Err(Failed::Script(format!(
                "\\gset: expected one row, got {rows}"
            )));
        }
    }
    for set in chosen {
        let Some(last) = result.set_rows(set).last() else {
            // \aset skips a query without rows.
            continue;
        };
        for (col, column) in result.set_columns(set).enumerate() {
            vars.name.clear();
            vars.name.push_str(&store.prefix);
            vars.name.push_str(column);
            // pgbench 15 aborts the client on a column whose name is no variable name.
            if !valid_name(&vars.name) {
                let command = if store.all { "aset" } else { "gset" };
                return Err(Failed::Script(format!(
                    "{command}: invalid variable name: \"{0}\"; error storing into variable \
                     {0} (name the column with AS)",
                    vars.name
                )));
            }
            // A column no command reads has no slot: nothing to keep.
            if let Some(slot) = names.get(&vars.name) {
                vars.set_text(slot, result.get_str(last, col).unwrap_or(""));
            }
        }
    }
    Ok(())
}
